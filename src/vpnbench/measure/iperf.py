"""Running iperf3 defensively and reading its JSON.

Known traps handled here: UDP defaults to 1 Mbit/s unless -b is given (callers always
pass it); one server serves one test at a time, so every test gets its own one-off server
on its own port; text may be printed before or after the -J document; values can be
"-nan"; and some versions count the omitted warm-up in the end summary.
"""

import dataclasses
import json
import re

from vpnbench.foundation.errors import MeasurementError
from vpnbench.hosts.base import CommandResult
from vpnbench.measure.base import MeasureContext
from vpnbench.measure.patterns import nodes_of, pair_context, pair_name, pattern_pairs
from vpnbench.measure.traffic import Iperf3Server, iperf3_client_argv
from vpnbench.techniques.base import Ends

# Over tunnels = N, one iperf3 client and one server per tunnel, all at once: at most this many
# tunnels (two processes each) are measured, the first ones; beyond it the processes, not the
# tunnels, would be what is measured on a 2-core host.
IPERF3_TUNNELS_MAX = 32

_NAN = re.compile(r"(?<![\w\"])-?(nan|inf)(?![\w\"])", re.IGNORECASE)


def first_json_object(text: str) -> dict:
    """The first JSON document in iperf3's output (text may surround it), nan/inf read as null."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in iperf3 output")
    cleaned = _NAN.sub("null", text[start:])
    doc, _ = json.JSONDecoder().raw_decode(cleaned)
    if not isinstance(doc, dict):
        raise ValueError("iperf3 output is not a JSON object")
    return doc


def parse_iperf_json(text: str) -> dict:
    """The client's result document: the first JSON object, which must hold no error and an end."""
    doc = first_json_object(text)
    if doc.get("error"):
        raise ValueError(f"iperf3: {doc['error']}")
    if "end" not in doc:
        raise ValueError("iperf3 JSON has no 'end' section")
    return doc


UDP_ATTEMPTS = 3


def run_iperf(ctx: MeasureContext, family: str, client_args: list[str], seconds: float) -> tuple[dict, dict[str, str]]:
    """Start a one-off server, run the client, return (client JSON, raw outputs).

    A UDP test whose opening datagram was lost is run again (at most UDP_ATTEMPTS times in
    all); the raw outputs of the lost attempts are kept under their attempt number."""
    raw: dict[str, str] = {}
    for attempt in range(1, UDP_ATTEMPTS + 1):
        result, outputs = _attempt(ctx, family, client_args, seconds)
        lost = "-u" in client_args and udp_handshake_lost(result, outputs["iperf3_server"])
        if not lost or attempt == UDP_ATTEMPTS:
            break
        raw.update({f"{name}_attempt{attempt}": text for name, text in outputs.items()})
    raw.update(outputs)
    try:
        doc = parse_iperf_json(result.stdout)
    except ValueError as exc:
        reason = str(exc) if result.ok else f"{exc} ({result.describe_failure()})"
        if lost:
            reason += f"; the UDP stream's opening datagram was lost in all {UDP_ATTEMPTS} attempts"
        raise MeasurementError(reason, raw) from None
    return doc, raw


def tunnel_context(ctx: MeasureContext, ends: Ends) -> MeasureContext:
    """The measurement's context narrowed to one tunnel of many: its addresses are the target."""
    tunnel = dataclasses.replace(ctx.tunnel, server_addrs=ends.server, client_addrs=ends.client, more=[])
    return dataclasses.replace(ctx, tunnel=tunnel)


def run_iperf_per_tunnel(ctx: MeasureContext, family: str, client_args: list[str],
                         seconds: float) -> tuple[list[dict], dict[str, str]]:
    """One iperf3 test per tunnel (the first IPERF3_TUNNELS_MAX), all at once, each against its own
    server bound to that tunnel's server address: (each client's JSON, raw outputs)."""
    contexts = [tunnel_context(ctx, ends) for ends in ctx.tunnel.every()[:IPERF3_TUNNELS_MAX]]
    return run_iperf_flows(contexts, family, client_args, seconds, [f"tunnel {i}" for i in range(len(contexts))])


def run_iperf_flows(contexts: list[MeasureContext], family: str, client_args: list[str], seconds: float,
                    names: list[str]) -> tuple[list[dict], dict[str, str]]:
    """One iperf3 test per context, all at once: each its own server on the context's server host,
    bound to its target, and its client on the context's client host. (each client's JSON, raw
    outputs; the raw names numbered in the order of `contexts`, `names` say which flow failed).

    As run_iperf does for one test: a UDP run in which a flow's opening datagram was lost is run
    again, every flow (they are measured overlapping), at most UDP_ATTEMPTS times in all; the raw
    outputs of the lost attempts are kept under their attempt number."""
    raw: dict[str, str] = {}
    for attempt in range(1, UDP_ATTEMPTS + 1):
        results, outputs = _flows_attempt(contexts, family, client_args, seconds)
        lost = "-u" in client_args and any(udp_handshake_lost(result, outputs[f"iperf3_server_{index}"])
                                           for index, result in enumerate(results))
        if not lost or attempt == UDP_ATTEMPTS:
            break
        raw.update({f"{name}_attempt{attempt}": text for name, text in outputs.items()})
    raw.update(outputs)
    docs = []
    for name, result in zip(names, results):
        try:
            docs.append(parse_iperf_json(result.stdout))
        except ValueError as exc:
            lost_all = f"; a UDP stream's opening datagram was lost in all {UDP_ATTEMPTS} attempts" if lost else ""
            raise MeasurementError(f"{name}: {exc}{lost_all}", raw) from None
    return docs, raw


def _flows_attempt(contexts: list[MeasureContext], family: str, client_args: list[str],
                   seconds: float) -> tuple[list[CommandResult], dict[str, str]]:
    """The flows run once: each client's result (returncode -9 where it had to be stopped) and the
    raw outputs."""
    servers = [Iperf3Server(one, family) for one in contexts]
    argvs, clients, codes = [], [], []
    try:
        for server in servers:
            server.start()
        # every server listens before the first client starts: the flows overlap from their start
        argvs = [iperf3_client_argv(one, family, server.port, client_args) for one, server in zip(contexts, servers)]
        clients = [one.client.spawn(argv, name="iperf3-client") for one, argv in zip(contexts, argvs)]
        codes = [client.wait(seconds + 20) for client in clients]
    finally:
        for client in clients:
            client.stop(1)
        for server in servers:
            server.stop(1)
    results, outputs = [], {}
    for index, (argv, client, code, server) in enumerate(zip(argvs, clients, codes, servers)):
        outputs[f"iperf3_client_{index}"], outputs[f"iperf3_server_{index}"] = client.output(), server.output()
        results.append(CommandResult(argv, -9 if code is None else code, client.output(), ""))
    return results, outputs


def run_iperf_pattern(ctx: MeasureContext, pattern: str, family: str, client_args: list[str],
                      seconds: float) -> tuple[list[str], list[dict], dict[str, str]]:
    """Every pair of a traffic pattern over a mesh tunnel at once (patterns.py), each an iperf3 flow
    from its sender's node to a server of its own on the receiver's node, bound to the receiver's
    overlay address: (the pairs' names, "n0>n1", each client's JSON, raw outputs)."""
    if not ctx.tunnel.overlay:
        raise MeasurementError(f"pattern: \"{pattern}\" needs a mesh tunnel (Tunnel.overlay)")
    hosts, overlay = nodes_of(ctx, ctx.tunnel)
    pairs = pattern_pairs(pattern, list(overlay))
    names = [pair_name(pair) for pair in pairs]
    docs, raw = run_iperf_flows([pair_context(ctx, hosts, overlay, pair, family) for pair in pairs], family,
                                client_args, seconds, names)
    return names, docs, raw


def _attempt(ctx: MeasureContext, family: str, client_args: list[str], seconds: float):
    server = Iperf3Server(ctx, family)
    outputs: dict[str, str] = {}
    try:
        server.start()
        argv = iperf3_client_argv(ctx, family, server.port, client_args)
        result = ctx.client.run(argv, timeout=seconds + 20, check=False)
        outputs["iperf3_client"] = result.stdout + result.stderr
        server.wait(3)
    finally:
        server.stop(1)
        outputs["iperf3_server"] = server.output()
    return result, outputs


def udp_handshake_lost(client: CommandResult, server_output: str) -> bool:
    """iperf3 (3.12) opens a UDP stream with one small datagram each way and waits for the
    reply with no timeout: when the link loses either, the client hangs until it is killed
    (so it printed no JSON at all) while the server receives no data. True for exactly that."""
    if client.ok or "{" in client.stdout:
        return False
    try:
        server = first_json_object(server_output)
    except ValueError:
        return False
    return all((i.get("sum") or {}).get("bytes", 0) == 0 for i in server.get("intervals") or [])


def interval_rate(doc: dict) -> float | None:
    """Throughput over the intervals that were not omitted (bits/s)."""
    kept = [i["sum"] for i in doc.get("intervals", []) if not i.get("sum", {}).get("omitted")]
    seconds = sum(s.get("seconds") or 0 for s in kept)
    if not kept or seconds <= 0:
        return None
    return sum(s.get("bytes") or 0 for s in kept) * 8 / seconds


def interval_series(doc: dict) -> list[tuple[float, float]]:
    """(end of interval in seconds, bits/s) of every interval in an iperf3 JSON document, warm-up
    (omitted) intervals included: a series shows what happened, the summary what counts."""
    points = []
    for interval in doc.get("intervals") or []:
        summed = interval.get("sum") or {}
        if summed.get("end") is not None and summed.get("bits_per_second") is not None:
            points.append((float(summed["end"]), float(summed["bits_per_second"])))
    return points


def throughput_series(client_doc: dict, raw: dict[str, str], reverse: bool) -> dict[str, list[tuple[float, float]]]:
    """Per-interval throughput as the sender and as the receiver saw it. The client's document
    holds the client's intervals; the server's (its own -J output) the server's. The receiver
    is the server unless the test ran in reverse."""
    try:
        server_doc = first_json_object(raw.get("iperf3_server", ""))
    except ValueError:
        server_doc = {}
    sender, receiver = (server_doc, client_doc) if reverse else (client_doc, server_doc)
    series = {"sender_throughput_bps": interval_series(sender), "throughput_bps": interval_series(receiver)}
    return {name: points for name, points in series.items() if points}
