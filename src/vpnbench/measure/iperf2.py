"""iperf 2 (Debian package `iperf`, 2.1) as a second engine for `tcp` and `udp`: streams are
threads (-P), so S3's 4-16 parallel streams use more than one core, which iperf3 3.12 cannot.

Read from its enhanced text report (-e -i 1 -f b: whole bytes and bits/s) rather than -y C,
whose CSV drops the enhanced fields (retransmits, loss, jitter) and the [SUM] lines. Both ends'
reports are read: the sender's for what was sent, the receiver's for what arrived, so the
client's relayed "Server Report" (missing when the last datagram's ack is lost) is not needed.

Traps handled: a long-lived 2.1.8 UDP server crashed (segfault) on the second parallel test here,
so every test gets a one-off server on a fresh port, with a listen time limit (-t) so it can never
outlive its test; report lines of different streams interleave, and a stream's first line can come
before the header; every line that is not a report line is ignored.
"""

import dataclasses
import re
import time

from vpnbench.foundation.errors import MeasurementError
from vpnbench.measure.base import MeasureContext

# [  1] 0.0000-1.0000 sec  13110500 Bytes  104884000 bits/sec <the rest: enhanced fields>
# A reverse (-R) test's receiving end marks its streams with a star: [ *1].
_LINE = re.compile(r"^\[\s*\*?(\d+|SUM(?:-\d+)?)\]\s+(\d+(?:\.\d+)?)-\s*(\d+(?:\.\d+)?)\s+sec\s+(\d+)\s+Bytes\s+"
                   r"(\d+(?:\.\d+)?)\s+bits/sec(.*)$")
_LOST = re.compile(r"(\d+(?:\.\d+)?)\s+ms\s+(-?\d+)/(\d+)\s+\(")  # jitter ms lost/total (pct)
_TCP_SENT = re.compile(r"^\s*(\d+)/(\d+)\s+(\d+)")  # Write/Err Rtry
_SENT_DATAGRAMS = re.compile(r"^\[\s*\*?(\d+)\]\s+Sent\s+(\d+)\s+datagrams")
SERVER_GRACE = 10.0  # seconds the server listens beyond the test


@dataclasses.dataclass
class Line:
    stream: str  # "1", "2", ... or "SUM"
    start: float
    end: float
    bytes: int
    bps: float
    rest: str

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclasses.dataclass
class Report:
    lines: list[Line]
    sent_datagrams: dict[str, int]

    def finals(self) -> dict[str, Line]:
        """Each stream's (and SUM's) whole-test line: the one from 0 with the latest end."""
        finals: dict[str, Line] = {}
        for line in self.lines:
            if line.start == 0 and (line.stream not in finals or line.end >= finals[line.stream].end):
                finals[line.stream] = line
        return finals

    def streams(self) -> dict[str, Line]:
        return {k: v for k, v in self.finals().items() if not k.startswith("SUM")}

    def total(self) -> tuple[int, float, float]:
        """(bytes, bits/s, seconds) of the whole test: the SUM line, or the single stream's."""
        finals = self.finals()
        if "SUM" in finals:
            line = finals["SUM"]
            return line.bytes, line.bps, line.seconds
        streams = list(self.streams().values())
        if not streams:
            raise ValueError("no iperf2 report lines")
        seconds = max(s.seconds for s in streams)
        return sum(s.bytes for s in streams), sum(s.bps for s in streams), seconds

    def interval_series(self) -> list[tuple[float, float]]:
        """(end of interval, bits/s) of the per-second reports: the SUM lines when there are several streams."""
        several = len(self.streams()) > 1
        points = {}
        for line in self.lines:
            if line.seconds <= 1.5 and (line.stream == "SUM") == several:
                points[round(line.end, 3)] = line.bps
        return sorted(points.items())


def parse_iperf2(text: str, skip_server_reports: bool = True) -> Report:
    """The report lines of one end's output. The client's relayed server reports (after
    "Server Report:") are left out by default: the server's own output is read instead."""
    lines: list[Line] = []
    sent: dict[str, int] = {}
    in_server_report = set()
    for raw in text.splitlines():
        if "Server Report:" in raw:
            match = re.match(r"^\[\s*(\d+)\]", raw)
            if match:
                in_server_report.add(match.group(1))
            continue
        datagrams = _SENT_DATAGRAMS.match(raw)
        if datagrams:
            sent[datagrams.group(1)] = int(datagrams.group(2))
            continue
        match = _LINE.match(raw.strip())
        if not match:
            continue
        stream = match.group(1)
        if stream.startswith("SUM-"):
            continue
        if skip_server_reports and stream in in_server_report:
            in_server_report.discard(stream)  # exactly one relayed line follows the marker
            continue
        lines.append(Line(stream, float(match.group(2)), float(match.group(3)), int(match.group(4)),
                          float(match.group(5)), match.group(6)))
    return Report(lines, sent)


def tcp_metrics2(sender: Report, receiver: Report) -> dict[str, float]:
    sent_bytes, sent_bps, _ = sender.total()
    received_bytes, received_bps, _ = receiver.total()
    retransmits = 0
    for line in sender.streams().values():
        match = _TCP_SENT.match(line.rest)
        if match:
            retransmits += int(match.group(3))
    return {"throughput_bps": received_bps, "sender_throughput_bps": sent_bps,
            "retransmits": float(retransmits), "bytes_received": float(received_bytes)}


def udp_metrics2(sender: Report, receiver: Report) -> dict[str, float]:
    """Loss against the sender's own count, as udp.udp_metrics does for iperf3: the receiver's
    Lost/Total misses every datagram after the last one that arrived, and a receiver that got
    nothing prints no report at all. "Sent N datagrams" counts the closing datagram too (N is
    the receiver's Total + 1 on a lossless path: tests/data/iperf2_udp_*)."""
    _, sent_bps, _ = sender.total()
    lost = seen = 0
    jitters = []
    for line in receiver.streams().values():
        match = _LOST.search(line.rest)
        if match:
            jitters.append(float(match.group(1)))
            lost += max(int(match.group(2)), 0)  # iperf2 can print a negative count after reordering
            seen += int(match.group(3))
    if receiver.lines and not seen:
        raise ValueError("no Lost/Total in the receiver's iperf2 report")
    sent = sum(max(count - 1, 0) for count in sender.sent_datagrams.values()) or seen
    if not sent:
        raise ValueError("neither the sender's Sent datagrams nor the receiver's Lost/Total in the iperf2 reports")
    arrived = min(max(seen - lost, 0), sent)
    metrics = {"throughput_bps": receiver.total()[1] if receiver.lines else 0.0, "sender_throughput_bps": sent_bps,
               "sent_packets": float(sent), "lost_packets": float(sent - arrived), "received_packets": float(arrived),
               "tail_lost_packets": float(max(sent - seen, 0)), "loss_pct": 100.0 * (sent - arrived) / sent}
    if jitters:
        metrics["jitter_ms"] = max(jitters)  # the worst stream's
    return metrics


def run_iperf2(ctx: MeasureContext, family: str, client_args: list[str], seconds: float, udp: bool,
               reverse: bool) -> tuple[Report, Report, dict[str, str]]:
    """One-off server, one client run; returns (sender's report, receiver's report, raw outputs)."""
    port = ctx.ports.next()
    common = ["-e", "-i", "1", "-f", "b"] + (["-u"] if udp else []) + (["-V"] if family == "ipv6" else [])
    server = ctx.server.spawn(["iperf", "-s", "-B", ctx.target(family), "-p", str(port),
                               "-t", f"{seconds + SERVER_GRACE:g}", *common],
                              name="iperf2-server")
    raw: dict[str, str] = {}
    try:
        _wait_listening(ctx, server, port, udp)
        argv = ["iperf", "-c", ctx.target(family), "-p", str(port), *common, *client_args]
        result = ctx.client.run(argv, timeout=seconds + 20, check=False)
        raw["iperf2_client"] = result.stdout + result.stderr
        time.sleep(0.3)  # the server prints its final report as the stream ends
    finally:
        server.stop(1)
        raw["iperf2_server"] = server.output()
    client, server_report = parse_iperf2(raw["iperf2_client"]), parse_iperf2(raw["iperf2_server"])
    if not client.lines:
        raise MeasurementError(f"iperf2 client printed no report ({result.describe_failure()})", raw)
    return (server_report, client, raw) if reverse else (client, server_report, raw)


def _wait_listening(ctx: MeasureContext, server, port: int, udp: bool, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.alive():
            raise MeasurementError(f"iperf2 server exited: {server.output().strip()[-200:]}",
                                   {"iperf2_server": server.output()})
        out = ctx.server.run(["ss", "-Hlun" if udp else "-Hltn", f"sport = :{port}"], check=False).stdout
        if out.strip():
            return
        time.sleep(0.02)
    raise MeasurementError(f"iperf2 server not listening on port {port} after {timeout:g} s",
                           {"iperf2_server": server.output()})


def run_tcp(ctx: MeasureContext, p) -> tuple[dict[str, float], dict[str, str], dict[str, list]]:
    args = ["-t", f"{p.duration:g}", "-P", str(p.streams)] + (["-R"] if p.reverse else []) + \
        (["-w", str(p.window)] if p.window else [])
    sender, receiver, raw = run_iperf2(ctx, p.family, args, p.duration, udp=False, reverse=p.reverse)
    try:
        metrics = tcp_metrics2(sender, receiver)
    except ValueError as exc:
        raise MeasurementError(f"iperf2 TCP: {exc}", raw) from None
    return metrics, raw, _series(sender, receiver)


def run_udp(ctx: MeasureContext, p, streams: int = 1) -> tuple[dict[str, float], dict[str, str], dict[str, list]]:
    args = ["-t", f"{p.duration:g}", "-b", str(p.rate), "-l", str(p.length), "-P", str(streams)] + \
        (["-R"] if p.reverse else [])
    sender, receiver, raw = run_iperf2(ctx, p.family, args, p.duration, udp=True, reverse=p.reverse)
    try:
        metrics = udp_metrics2(sender, receiver)
    except ValueError as exc:
        raise MeasurementError(f"iperf2 UDP: {exc}", raw) from None
    return metrics, raw, _series(sender, receiver)


def _series(sender: Report, receiver: Report) -> dict[str, list[tuple[float, float]]]:
    series = {"sender_throughput_bps": sender.interval_series(), "throughput_bps": receiver.interval_series()}
    return {name: points for name, points in series.items() if points}
