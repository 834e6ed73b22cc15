"""UDP with vpnbench-gen (gen/, Rust): many times iperf3's packet rate, and per-packet counts.

iperf3 sends one datagram per system call (about 0.3 Mpps of 64-byte UDP per core here), so
a rate search with it measures iperf3. vpnbench-gen batches with sendmmsg/recvmmsg and UDP
GSO/GRO, paces with a token bucket, and stamps every datagram with a sequence number and
its send time, so the receiver counts loss, duplicates, reordering and one-way delay.

Its control connection is TCP with every wait bounded, so, unlike iperf3 3.12, a lost first
datagram is one lost packet and never a hang: no retry loop is needed here.
"""

import json
import os
import secrets
import shutil
import weakref
from pathlib import Path

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts.arch import gen_arch_problem
from vpnbench.hosts.base import Host
from vpnbench.measure.base import MeasureContext, MeasureResult
from vpnbench.measure.fairness import tunnel_metrics

GEN_NAME = "vpnbench-gen"
REPO_GEN = Path(__file__).resolve().parents[3] / "gen" / "target" / "release" / GEN_NAME

# The client's own waits: connect (10 s), READY (10 s), the test, the server's drain (<= 5 s)
# and its RESULT (<= the test, at most 60 s, + 15 s). Beyond those it is stuck: kill it.
FIXED_WAITS_S = 45.0
GEN_MIN_LENGTH = 24  # magic, stream, sequence number, send time (gen/src/wire.rs)
ACCEPT_TIMEOUT_S = 30.0


def gen_binary() -> str | None:
    """$VPNBENCH_GEN, then PATH, then the binary `make` builds in this checkout."""
    for candidate in (os.environ.get("VPNBENCH_GEN"), shutil.which(GEN_NAME), str(REPO_GEN)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


_COPIES: "weakref.WeakKeyDictionary[Host, str]" = weakref.WeakKeyDictionary()


def binary_on(host: Host, local_binary: str) -> str:
    """The vpnbench-gen that `host` runs. A namespace of this machine runs this machine's. A
    remote host (ssh, VM) runs its own when it has one on PATH, else a copy of this machine's,
    written once per run into the run's directory there (removed with it); that copy needs the
    same CPU architecture (checked: hosts/arch.py) and a compatible C library (it links only libc)."""
    if host.on_this_machine():
        return local_binary
    if host not in _COPIES:
        if host.has_command(GEN_NAME):
            _COPIES[host] = GEN_NAME
        else:
            problem = gen_arch_problem(host, local_binary)  # never a binary the host cannot execute
            if problem:
                raise MeasurementError(problem)
            copy = host.workdir / f"{GEN_NAME}-{host.role}"  # two hosts may share one filesystem
            host.write_file(copy, Path(local_binary).read_bytes(), 0o700)
            _COPIES[host] = str(copy)
    return _COPIES[host]


def client_args(targets: list[str], port: int, rate: int, length: int, duration: float,
                threads: int, interval: float, gso: bool = True) -> list[str]:
    # A rate of 0 means "as fast as it goes", as it does for iperf3's -b 0.
    return ["client", *(word for target in targets for word in ("--target", target)), "--port", str(port),
            "--rate", str(rate) if rate else "max",
            "--length", str(length), "--duration", f"{duration:g}", "--threads", str(threads),
            "--interval", f"{interval:g}", "--gso", "auto" if gso else "off"]


def run_gen(ctx: MeasureContext, family: str, rate: int, length: int, duration: float,
            threads: int = 1, interval: float = 1.0, gso: bool = True) -> MeasureResult:
    binary = gen_binary()
    if binary is None:
        raise MeasurementError(f"{GEN_NAME} is not built: `make` builds it (gen/), or set VPNBENCH_GEN")
    for host in (ctx.client, ctx.server):
        # The binary refuses more threads than the cores it may run on; say why up front.
        if host.cpus and threads > len(host.cpus):
            raise MeasurementError(f"threads: {threads} is more than the {host.role}'s {len(host.cpus)} pinned core(s); "
                                   f"allowed values: 1 to {len(host.cpus)}, or [testbed] pin = \"off\"")
    port = ctx.ports.next()
    tokens = token_files(ctx, port)
    # Over many tunnels, one stream to each tunnel's server address (the rate split evenly).
    targets = [ends.server[family] for ends in ctx.tunnel.every()]
    # Bound to the measured address only (over many tunnels, every address: there is no one to
    # bind to); it serves only a client that shows the token.
    bind = ["--bind", targets[0]] if len(set(targets)) == 1 else []
    server = ctx.server.spawn([binary_on(ctx.server, binary), "server", "--port", str(port), *bind,
                               "--accept-timeout", f"{ACCEPT_TIMEOUT_S:g}", "--token-file", str(tokens[ctx.server])],
                              name="gen-server")
    try:
        argv = [binary_on(ctx.client, binary), *client_args(targets, port, rate, length, duration, threads,
                                                            interval, gso), "--token-file", str(tokens[ctx.client])]
        result = ctx.client.run(argv, timeout=duration + min(duration, 60) + FIXED_WAITS_S, check=False)
        server.wait(5)
    finally:
        server.stop(1)
        for host, path in tokens.items():
            wipe(host, path)
    raw = {"gen_client": result.stdout + result.stderr, "gen_server": server.output()}
    try:
        doc = parse_gen_json(result.stdout)
        metrics = gen_metrics(doc)
        if len(targets) > 1:
            rates = per_tunnel_rates(doc, len(targets))
            metrics.update(many_tunnel_metrics(doc, len(targets)))
            raw["per_tunnel"] = "".join(f"{index} {target} {rate:.0f}\n"
                                        for index, (target, rate) in enumerate(zip(targets, rates)))
        return MeasureResult(metrics, raw, gen_series(doc))
    except (ValueError, KeyError, TypeError) as exc:
        reason = f"vpnbench-gen output: {exc}"
        if not result.ok:
            reason += f" ({result.describe_failure()})"
        raise MeasurementError(reason, raw) from None


def token_files(ctx: MeasureContext, port: int) -> dict[Host, Path]:
    """A fresh secret for one test, 0600 in each host's private run directory (never on a command
    line, where `ps` shows it): the server's control channel serves only the client that has it."""
    token = secrets.token_hex(16)
    files = {}
    for host in (ctx.server, ctx.client):
        files[host] = Path(host.workdir) / f"gen-token-{host.role}-{port}"  # two hosts may share one filesystem
        host.write_file(files[host], token + "\n", 0o600)
    return files


def parse_gen_json(text: str) -> dict:
    """The client's document: the last line that is a JSON object (one line of it is all it prints)."""
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            doc = json.loads(line)
            if isinstance(doc, dict):
                return doc
    raise ValueError("no JSON document")


def _section(doc: dict, name: str) -> dict:
    section = doc.get(name)
    if not isinstance(section, dict):
        raise ValueError(f"no {name} counts: {doc.get('error') or 'missing'}")
    return section


def _number(section: dict, key: str) -> float | None:
    """A number, or None when the tool printed null (unknown, e.g. no packet arrived)."""
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{key!r} is not a number: {value!r}")
    return float(value)


def _required(section: dict, key: str) -> float:
    value = _number(section, key)
    if value is None:
        raise KeyError(key)
    return value


# The one-way delay's distribution as the receiver's histogram gives it (gen/src/summary.rs), in ms.
OWD_STATS = ("min", "p50", "p90", "p99", "p999", "max")


def gen_metrics(doc: dict) -> dict[str, float]:
    """Named like udp_metrics (iperf3), plus what only per-packet numbers can tell."""
    sender, receiver = _section(doc, "sender"), _section(doc, "receiver")
    sent = _required(sender, "sent_packets")
    lost = _required(receiver, "lost_packets")
    metrics = {
        "throughput_bps": _required(receiver, "throughput_bps"),
        "sender_throughput_bps": _required(sender, "throughput_bps"),
        "sent_packets": sent,
        "lost_packets": lost,
        "received_packets": _required(receiver, "unique_packets"),
        "loss_pct": 100.0 * lost / sent if sent else None,
        "jitter_ms": _number(receiver, "jitter_ms"),
        "duplicate_packets": _required(receiver, "duplicate_packets"),
        "reordered_packets": _required(receiver, "reordered_packets"),
        "sent_pps": _required(sender, "pps"),
        "received_pps": _required(receiver, "pps"),
    }
    # One-way delay needs the two ends on one clock (network namespaces share the kernel's).
    if receiver.get("clock_shared") is True:
        for stat in OWD_STATS:  # a binary older than p90/p99.9 prints none of them: left out
            metrics[f"owd_{stat}_ms"] = _number(receiver, f"owd_{stat}_ms")
    return {name: value for name, value in metrics.items() if value is not None}


def per_tunnel_rates(doc: dict, tunnels: int) -> list[float]:
    """Each tunnel's received payload bits/s from the receiver's per-stream counts: stream i went
    to target i mod tunnels (gen/README.md), and the streams of one tunnel are added up."""
    receiver = _section(doc, "receiver")
    seconds, length = _required(receiver, "seconds"), _required(_section(doc, "params"), "length")
    received = [0.0] * tunnels
    for stream in receiver.get("streams") or []:
        received[int(_required(stream, "stream")) % tunnels] += _required(stream, "unique")
    return [count * length * 8 / seconds for count in received]


def many_tunnel_metrics(doc: dict, tunnels: int) -> dict[str, float]:
    """fairness.tunnel_metrics over the tunnels' received rates, Jain's index against each
    tunnel's offered load (what its streams sent)."""
    return tunnel_metrics(per_tunnel_rates(doc, tunnels), per_tunnel_sent(doc, tunnels))


def per_tunnel_sent(doc: dict, tunnels: int) -> list[float]:
    """Each tunnel's datagrams sent, from the receiver's per-stream `sent` (the client's DONE
    counts): with more streams than tunnels, tunnel i gets streams i, i + N, ..., so the loads
    differ (threads = 3 over 2 tunnels: 2:1)."""
    sent = [0.0] * tunnels
    for stream in _section(doc, "receiver").get("streams") or []:
        sent[int(_required(stream, "stream")) % tunnels] += _required(stream, "sent")
    return sent


SENDER_SERIES = {"sent_pps": "pps", "sender_throughput_bps": "throughput_bps"}
RECEIVER_SERIES = {"received_pps": "pps", "throughput_bps": "throughput_bps", "lost_packets": "lost",
                   "duplicate_packets": "duplicates", "reordered_packets": "reordered",
                   "jitter_ms": "jitter_ms", "owd_p50_ms": "owd_p50_ms", "owd_p99_ms": "owd_p99_ms"}


def _series(intervals, fields: dict[str, str]) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in fields}
    for item in intervals if isinstance(intervals, list) else []:
        t = _number(item, "t") if isinstance(item, dict) else None
        if t is None:
            continue
        for name, key in fields.items():
            value = _number(item, key)
            if value is not None:
                out[name].append((t, value))
    return {name: points for name, points in out.items() if points}


def gen_series(doc: dict) -> dict[str, list[tuple[float, float]]]:
    """Per-interval values: (seconds from the start, value); one-way delay only on a shared clock."""
    receiver = _section(doc, "receiver")
    fields = dict(RECEIVER_SERIES)
    if receiver.get("clock_shared") is not True:
        fields.pop("owd_p50_ms")
        fields.pop("owd_p99_ms")
    return {**_series(_section(doc, "sender").get("intervals"), SENDER_SERIES),
            **_series(receiver.get("intervals"), fields)}
