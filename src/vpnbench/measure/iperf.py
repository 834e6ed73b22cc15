"""Running iperf3 defensively and reading its JSON.

Known traps handled here: UDP defaults to 1 Mbit/s unless -b is given (callers always
pass it); one server serves one test at a time, so every test gets its own one-off server
on its own port; text may be printed before or after the -J document; values can be
"-nan"; and some versions count the omitted warm-up in the end summary.
"""

import json
import re
import time

from vpnbench.errors import MeasurementError
from vpnbench.measure.base import MeasureContext

_NAN = re.compile(r"(?<![\w\"])-?(nan|inf)(?![\w\"])", re.IGNORECASE)


def parse_iperf_json(text: str) -> dict:
    """The first JSON document in text, with nan/inf read as null."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in iperf3 output")
    cleaned = _NAN.sub("null", text[start:])
    doc, _ = json.JSONDecoder().raw_decode(cleaned)
    if not isinstance(doc, dict):
        raise ValueError("iperf3 output is not a JSON object")
    if doc.get("error"):
        raise ValueError(f"iperf3: {doc['error']}")
    if "end" not in doc:
        raise ValueError("iperf3 JSON has no 'end' section")
    return doc


def run_iperf(ctx: MeasureContext, family: str, client_args: list[str], seconds: float) -> tuple[dict, dict[str, str]]:
    """Start a one-off server, run the client, return (client JSON, raw outputs)."""
    port = ctx.ports.next()
    server = ctx.server.spawn(["iperf3", "-s", "-1", "-J", "-p", str(port)], name="iperf3-server")
    raw: dict[str, str] = {}
    try:
        _wait_listening(ctx, server, port)
        argv = ["iperf3", "-c", ctx.target(family), "-p", str(port), "-J", "--connect-timeout", "3000", *client_args]
        result = ctx.client.run(argv, timeout=seconds + 20, check=False)
        raw["iperf3_client"] = result.stdout + result.stderr
        server.wait(3)
    finally:
        server.stop(1)
        raw["iperf3_server"] = server.output()
    try:
        doc = parse_iperf_json(result.stdout)
    except ValueError as exc:
        reason = str(exc) if result.ok else f"{exc} ({result.describe_failure()})"
        raise MeasurementError(reason, raw) from None
    return doc, raw


def _wait_listening(ctx: MeasureContext, server, port: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.alive():
            raise MeasurementError(f"iperf3 server exited: {server.output().strip()[-200:]}",
                                   {"iperf3_server": server.output()})
        out = ctx.server.run(["ss", "-Hltn", f"sport = :{port}"], check=False).stdout
        if out.strip():
            return
        time.sleep(0.02)
    raise MeasurementError(f"iperf3 server not listening on port {port} after {timeout:g} s",
                           {"iperf3_server": server.output()})


def interval_rate(doc: dict) -> float | None:
    """Throughput over the intervals that were not omitted (bits/s)."""
    kept = [i["sum"] for i in doc.get("intervals", []) if not i.get("sum", {}).get("omitted")]
    seconds = sum(s.get("seconds") or 0 for s in kept)
    if not kept or seconds <= 0:
        return None
    return sum(s.get("bytes") or 0 for s in kept) * 8 / seconds
