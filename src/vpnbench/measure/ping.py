"""Round-trip time with ping; percentiles from the per-packet RTTs."""

import re
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult

_REPLY = re.compile(r"icmp_seq=(\d+).*?time=([\d.]+) ms")
_SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_RTT = re.compile(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
_DUPLICATES = re.compile(r"\+(\d+) duplicates")


class PingParams(Params):
    kind: Literal["ping"] = "ping"
    count: int = Field(100, ge=1, le=1_000_000)
    interval: Duration = 0.2
    size: int = Field(56, ge=0, le=65000)  # ICMP payload bytes (ping -s)
    timeout: Duration = 2.0  # how long to wait for the last reply
    family: Family = "ipv4"


class Ping(Measurement):
    kind = "ping"
    Params = PingParams
    tools = ("ping",)
    packages = {"ping": "iputils-ping"}
    columns = (Column("rtt_avg_ms", "avg ms"), Column("rtt_p50_ms", "p50 ms"), Column("rtt_p99_ms", "p99 ms"),
               Column("rtt_mdev_ms", "mdev ms"), Column("loss_pct", "loss %"))
    headline = Headline(("rtt_avg_ms",), "RTT avg (ms)", log=True)  # a baseline's 0.05 ms beside a tunnel's 3 ms

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        return f"rtt {metrics['rtt_avg_ms']:.3f} ms" if "rtt_avg_ms" in metrics else ""

    def expected_seconds(self) -> float:
        return self.params.count * self.params.interval

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        argv = ["ping", "-n", "-c", str(p.count), "-i", f"{p.interval:g}", "-s", str(p.size),
                "-W", f"{p.timeout:g}", ctx.target(p.family)]
        result = ctx.client.run(argv, timeout=self.expected_seconds() + p.timeout + 10, check=False)
        raw = {"ping": result.stdout + result.stderr}
        metrics = parse_ping(result.stdout)
        if metrics is None:
            raise MeasurementError(f"could not read ping output ({result.describe_failure()})", raw)
        if metrics["received"] == 0:
            raise MeasurementError("no ping replies (100% loss)", raw, metrics)
        return MeasureResult(metrics, raw, series={"rtt_ms": rtt_series(result.stdout, p.interval)})

    def default_label(self) -> str:
        label = "ping" if self.params.size == 56 else f"ping_{self.params.size}"
        return label + ("_v6" if self.params.family == "ipv6" else "")


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q
    low = int(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def rtts(text: str) -> list[float]:
    """Per-packet RTTs in order of arrival (duplicates included)."""
    return [float(rtt) for _, rtt in _REPLY.findall(text)]


def rtt_series(text: str, interval: float) -> list[tuple[float, float]]:
    """(send time, RTT) of every reply, the send time taken from its sequence number."""
    return [((int(seq) - 1) * interval, float(rtt)) for seq, rtt in _REPLY.findall(text)]


def parse_ping(text: str) -> dict[str, float] | None:
    """iputils ping output -> metrics; None when there is no summary line at all."""
    summary = _SUMMARY.search(text)
    if not summary:
        return None
    sent, received = int(summary.group(1)), int(summary.group(2))
    duplicates = _DUPLICATES.search(text)
    metrics = {"sent": float(sent), "received": float(received),
               "loss_pct": 100.0 * (sent - received) / sent if sent else 100.0,
               "duplicates": float(duplicates.group(1)) if duplicates else 0.0}
    # Duplicates (DUP!) repeat a sequence number; count each packet once.
    rtts_by_seq = {}
    for seq, rtt in _REPLY.findall(text):
        rtts_by_seq.setdefault(int(seq), float(rtt))
    rtts = sorted(rtts_by_seq.values())
    rtt = _RTT.search(text)
    if rtt:
        for name, value in zip(("min", "avg", "max", "mdev"), rtt.groups()):
            metrics[f"rtt_{name}_ms"] = float(value)
    if rtts:
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
            metrics[f"rtt_{name}_ms"] = percentile(rtts, q)
    return metrics
