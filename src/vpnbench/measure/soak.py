"""Soak: hold a tunnel under a steady load for hours (S3 held encryptors 2, 6 and 20 hours) and
watch it stall, lose packets and drift.

UDP at a set rate with iperf3, whose server reports every second as it goes (-i 1 --forceflush),
plus a ping probe; every second's throughput, loss and round trip goes to the store while the
soak runs (ctx.live), never into memory. A stall is no received byte for `stall_after` seconds;
the cell fails only when one lasts beyond `stall_limit`. Every `drift_interval` each end's daemon
memory (the processes of its namespace other than the soak's own tools), kernel slab and error
counters are sampled. A killed soak resumed with --resume runs only what is left, as a new
segment of the same cell; the metrics cover every segment (computed from the stored series).
"""

import dataclasses
import json
import math
import os
import re
import statistics
import time
from typing import Literal

from pydantic import Field, model_validator

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params, Rate
from vpnbench.foundation.units import format_rate
from vpnbench.hosts.base import Host, Proc
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.drift import StallDetector, by_segment, growth, parse_counters, pooled_slope, process_rss
from vpnbench.measure.fping import REPLY_TIMEOUT_S
from vpnbench.measure.ping import rtts
from vpnbench.measure.traffic import Iperf3Load, PingProbe, TimeAxis
from vpnbench.store.live import Live, MemoryLive
from vpnbench.store.records import SeriesPoint

TICK_S = 0.2  # how often the soak reads its tools' output
FINISH_GRACE_S = 10.0  # after the load's end, how long the server's last report may take
MIN_SEGMENT_S = 2.0  # a resumed soak killed in its last seconds still runs this long
OWN_TOOLS = frozenset({"iperf3", "ping", "cat", "ip"})  # not the technique's: left out of daemon RSS
# iperf3 -f k server interval line: [  5]   3.00-4.00   sec  1.17 KBytes  9.60 Kbits/sec  0.015 ms  0/1 (0%)
INTERVAL = re.compile(r"\]\s+([\d.]+)-([\d.]+)\s+sec\s.*?([\d.]+) Kbits/sec\s.*?(\d+)/(\d+) \(")
NO_ANSWER = re.compile(r"no answer yet for icmp_seq=(\d+)")
REPLY_SEQ = re.compile(r"icmp_seq=(\d+).*time=")
LOAD_SERIES = ("throughput_bps", "lost_packets", "packets", "rtt_ms", "ping_loss_pct")
DRIFT_SERIES = ("daemon_rss_bytes", "slab_bytes", "udp_rcvbuf_errors", "udp_in_errors", "xfrm_errors")
COUNTER_NAMES = {"udp_RcvbufErrors": "udp_rcvbuf_errors", "udp_InErrors": "udp_in_errors",
                 "slab_bytes": "slab_bytes", "xfrm_errors": "xfrm_errors"}


class SoakParams(Params):
    kind: Literal["soak"] = "soak"
    rate: Rate = 10_000_000  # UDP bits/s: a steady load, not a saturating one
    length: int = Field(1200, ge=16, le=65507)  # datagram payload bytes
    duration: Duration = 3600.0
    stall_after: Duration = 3.0  # no byte received for this long is a stall
    stall_limit: Duration = 60.0  # a stall longer than this fails the cell
    probe_interval: Duration = 0.2  # ping's interval
    drift_interval: Duration = 10.0  # how often memory and error counters are sampled
    family: Family = "ipv4"

    @model_validator(mode="after")
    def _bounds(self) -> "SoakParams":
        if self.rate <= 0:
            raise ValueError("rate: 0 is not allowed (a soak holds a set rate); allowed: a positive rate, e.g. '10M'")
        if self.stall_limit < self.stall_after:
            raise ValueError(f"stall_limit: {self.stall_limit:g} s is below stall_after ({self.stall_after:g} s); "
                             "allowed: at least stall_after")
        if self.stall_after < 2.0:
            raise ValueError(f"stall_after: {self.stall_after:g} s is too short for iperf3's 1 s reports; "
                             "allowed: 2 s or more")
        if self.probe_interval < 0.01:
            raise ValueError(f"probe_interval: {self.probe_interval:g} s is not allowed; allowed: 0.01 s or more")
        return self


class Soak(Measurement):
    kind = "soak"
    Params = SoakParams
    tools = ("iperf3", "ping")
    server_tools = ("iperf3", "ss")
    packages = {"iperf3": "iperf3", "ping": "iputils-ping"}
    columns = (Column("throughput_mean_bps", "mean Mbit/s", 1e-6), Column("stalls", "stalls"),
               Column("stall_seconds", "stalled s"), Column("loss_pct", "loss %"),
               Column("rss_slope_mb_per_h", "RSS MB/h"), Column("slab_growth_mb", "slab +MB"),
               Column("udp_rcvbuf_errors", "rcvbuf errors"))
    headline = Headline(("throughput_mean_bps",), "mean throughput over the soak (Mbit/s)", 1e-6)
    resumable = True
    repeats = False

    def expected_seconds(self) -> float:
        return self.params.duration

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        """A minute at most: long enough for a drift sample or two and one stall check."""
        duration = min(params.duration, max(10 * seconds, 20.0))
        return params.model_copy(update={"duration": duration, "drift_interval": min(params.drift_interval, 5.0),
                                         "stall_limit": min(params.stall_limit, duration)})

    def default_label(self) -> str:
        return f"soak_{format_rate(self.params.rate)}" + ("_v6" if self.params.family == "ipv6" else "")

    def run(self, ctx: MeasureContext) -> MeasureResult:
        live = ctx.live or MemoryLive()
        seconds = max(self.params.duration - live.offset, MIN_SEGMENT_S)
        session = Session(ctx, self.params, live, seconds)
        raw = session.run()
        return MeasureResult(soak_metrics(live), raw)


@dataclasses.dataclass
class PingSecond:
    """The ping probe's replies within one second of the soak."""

    second: int = 0
    rtts: list[float] = dataclasses.field(default_factory=list)
    unanswered: int = 0

    def points(self) -> list[SeriesPoint]:
        t = float(self.second + 1)
        sent = len(self.rtts) + self.unanswered
        points = [SeriesPoint("rtt_ms", t, statistics.fmean(self.rtts))] if self.rtts else []
        return points + ([SeriesPoint("ping_loss_pct", t, 100.0 * self.unanswered / sent)] if sent else [])


class Session:
    """One segment of a soak: its tools, its clock, the stall detector and the drift sampler."""

    def __init__(self, ctx: MeasureContext, params: SoakParams, live: Live, seconds: float):
        self.ctx, self.p, self.live, self.seconds = ctx, params, live, seconds
        self.detector = StallDetector(params.stall_after)
        self.ping = PingSecond()
        # ping -O says "no answer yet" when the next ping is due, also for a reply that is only
        # slower than the interval (a 300 ms round trip at 0.2 s: 9 of 10 pings, none lost). A ping
        # is unanswered once it has had no reply for REPLY_TIMEOUT_S after that: seq -> first said.
        self.outstanding: dict[int, float] = {}
        self.counters: dict[str, list[dict]] = {}  # role -> [first sample, last sample]
        self.pending: list[SeriesPoint] = []
        self.clock = TimeAxis()

    def now(self) -> float:
        return self.clock.now()

    def run(self) -> dict[str, str]:
        ctx, p = self.ctx, self.p
        whole_seconds = math.ceil(self.seconds)  # both tools take whole seconds
        # The server reports each second as text (read as it comes); the client sends at the rate.
        load = Iperf3Load(ctx, p.family, ["-u", "-b", str(p.rate), "-l", str(p.length), "-t", str(whole_seconds)],
                          self.seconds, server_args=("-i", "1", "-f", "k", "--forceflush"), json=False,
                          interactive=True)
        ping = PingProbe(ctx, p.family, p.probe_interval, whole_seconds, flags=("-O",), interactive=True)
        failure: MeasurementError | None = None
        try:
            load.start_server()
            self.clock = TimeAxis()
            load.start()
            ping.start()
            try:
                self._loop({"iperf3_server": load.server.proc, "ping": ping.proc})
            except MeasurementError as exc:  # a stall beyond the limit: keep what the tools said
                failure = exc
        finally:
            load.stop()
            ping.stop()
        procs = {"iperf3_server": load.server.proc, "iperf3_client": load.client, "ping": ping.proc}
        raw = {name: proc.output()[-4000:] for name, proc in procs.items() if proc is not None}
        raw["counters"] = json.dumps(self.counters)
        if failure is not None:
            failure.raw = raw
            raise failure
        return raw

    def _loop(self, procs: dict[str, Proc]) -> None:
        server, ping = procs["iperf3_server"], procs["ping"]
        next_drift = 0.0
        open_procs = {server, ping}
        while True:
            now = self.now()
            for line in drain(server, open_procs):
                self._on_interval(line, now)
            for line in drain(ping, open_procs):
                self._on_ping(line, now)
            if now >= next_drift:
                self._sample_drift(now)
                next_drift += self.p.drift_interval
            self._check_stall(now)
            self.live.add(self.pending)
            self.pending = []
            if server not in open_procs or now > self.seconds + FINISH_GRACE_S:
                break
            time.sleep(TICK_S)
        self._sample_drift(self.now())
        self.pending += self.ping.points()
        self.live.add(self.pending)
        end = self.detector.finish(min(self.now(), self.seconds))
        if end is not None:
            self._record_stall(end)

    def _on_interval(self, line: str, now: float) -> None:
        match = INTERVAL.search(line)
        if not match or "sender" in line or "receiver" in line:
            return
        start, end, kbps, lost, total = match.groups()
        if float(end) - float(start) > 1.5:  # a summary line, not an interval
            return
        t = round(now, 3)
        self.pending += [SeriesPoint("throughput_bps", t, float(kbps) * 1000.0),
                         SeriesPoint("lost_packets", t, float(lost)), SeriesPoint("packets", t, float(total))]
        if float(kbps) > 0:
            stall = self.detector.progress(now)
            if stall is not None:
                self._record_stall(stall)

    def _on_ping(self, line: str, now: float) -> None:
        second = int(now)
        if second != self.ping.second:
            self.pending += self.ping.points()
            self.ping = PingSecond(second)
        if "no answer yet" in line:
            if (match := NO_ANSWER.search(line)) is not None:
                self.outstanding.setdefault(int(match[1]), now)
        else:
            self.ping.rtts += rtts(line)  # a reply line gives its RTT, any other line nothing
            if (match := REPLY_SEQ.search(line)) is not None:
                self.outstanding.pop(int(match[1]), None)
        for seq in [seq for seq, said in self.outstanding.items() if now - said >= REPLY_TIMEOUT_S]:
            del self.outstanding[seq]
            self.ping.unanswered += 1  # in the second it was given up: a loss shows REPLY_TIMEOUT_S late

    def _check_stall(self, now: float) -> None:
        stalled = self.detector.stalled_for(now)
        if stalled > self.p.stall_limit:
            stall = self.detector.finish(now)
            self._record_stall(stall)
            raise MeasurementError(f"stalled: no traffic received for {stalled:.0f} s "
                                   f"(stall_limit {self.p.stall_limit:g} s)", metrics=soak_metrics(self.live))

    def _record_stall(self, stall) -> None:
        offset = self.live.offset
        self.live.event(stall.start, "stall", {
            "start_s": round(stall.start + offset, 3), "end_s": round(stall.end + offset, 3),
            "duration_s": round(stall.duration, 3), "recovered": stall.recovered})

    def _sample_drift(self, now: float) -> None:
        for role, host in (("client", self.ctx.client), ("server", self.ctx.server)):
            counters = sample_host(host)
            first_last = self.counters.setdefault(role, [counters])
            first_last[1:] = [counters]
            self.pending += [SeriesPoint(name, round(now, 3), value, role) for name, value in counters.items()]


def drain(proc: Proc, open_procs: set[Proc]) -> list[str]:
    """Every line the process has written so far, without waiting for more; at its end of
    output it leaves open_procs."""
    lines = []
    while proc in open_procs:
        try:
            lines.append(proc.read_line(0.001))
        except TimeoutError:
            break
        except EOFError:
            open_procs.discard(proc)
    return lines


def sample_host(host: Host) -> dict[str, float]:
    """The host's kernel counters and its daemons' memory, in one command run inside it."""
    pids = host.pids()
    result = host.run(["cat", "/proc/meminfo", "/proc/net/snmp", "/proc/net/xfrm_stat",
                       *[f"/proc/{pid}/stat" for pid in pids]], timeout=10, check=False)
    counters = {COUNTER_NAMES[k]: v for k, v in parse_counters(result.stdout).items() if k in COUNTER_NAMES}
    counters["daemon_rss_bytes"] = process_rss(result.stdout, os.sysconf("SC_PAGE_SIZE"), OWN_TOOLS)
    return counters


def soak_metrics(live: Live) -> dict[str, float]:
    """The soak's metrics over every segment so far, from the series it stored."""
    starts = live.segment_starts() or [0.0]
    series: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for point in live.history([*LOAD_SERIES, *DRIFT_SERIES]):
        series.setdefault((point.host, point.name), []).append((point.t, point.value))
    own = {name: [v for _, v in series.get(("", name), [])] for name in LOAD_SERIES}
    stalls = [e.detail.get("duration_s", 0.0) for e in live.events("stall")]
    metrics: dict[str, float] = {"segments": float(len(starts)), "stalls": float(len(stalls)),
                                 "stall_seconds": round(sum(stalls), 3), "longest_stall_s": max(stalls, default=0.0)}
    if own["throughput_bps"]:
        metrics["throughput_mean_bps"] = statistics.fmean(own["throughput_bps"])
        metrics["throughput_min_bps"] = min(own["throughput_bps"])
    if sum(own["packets"]):
        metrics["loss_pct"] = 100.0 * sum(own["lost_packets"]) / sum(own["packets"])
    if own["rtt_ms"]:
        metrics["rtt_mean_ms"] = statistics.fmean(own["rtt_ms"])
        metrics["rtt_max_ms"] = max(own["rtt_ms"])
    if own["ping_loss_pct"]:
        metrics["ping_loss_pct"] = statistics.fmean(own["ping_loss_pct"])
    metrics.update(drift_metrics(series, starts))
    return metrics


def drift_metrics(series: dict[tuple[str, str], list[tuple[float, float]]], starts: list[float]) -> dict[str, float]:
    """Memory slope (both ends' daemons, MB/h), slab growth (MB; the largest of the ends, which
    share one kernel on a local testbed) and error counts (both ends), segment by segment."""
    metrics: dict[str, float] = {}
    roles = sorted({host for host, _ in series if host})
    slopes = [pooled_slope(by_segment(series[(role, "daemon_rss_bytes")], starts))
              for role in roles if (role, "daemon_rss_bytes") in series]
    if any(s is not None for s in slopes):
        metrics["rss_slope_mb_per_h"] = sum(s for s in slopes if s is not None) * 3600 / 1e6
    slab = [growth(by_segment(series[(role, "slab_bytes")], starts)) for role in roles if (role, "slab_bytes") in series]
    if slab:
        metrics["slab_growth_mb"] = max(slab) / 1e6
    for name in ("udp_rcvbuf_errors", "udp_in_errors", "xfrm_errors"):
        deltas = [growth(by_segment(series[(role, name)], starts)) for role in roles if (role, name) in series]
        if deltas:
            metrics[name] = sum(deltas)
    return metrics
