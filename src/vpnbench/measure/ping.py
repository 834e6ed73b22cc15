"""Round-trip time with ping; percentiles from the per-packet RTTs. Over a mesh, the pairs of a
traffic pattern at once (patterns.py): one fping per sending node, to each of its receivers."""

import json
import re
import statistics
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params, set_family
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.patterns import (
    Pattern,
    nodes_of,
    pair_name,
    pair_summary,
    pattern_pairs,
    refused_pattern,
    silent_pairs,
)
from vpnbench.store.records import Trial
from vpnbench.testbeds.spec import TestbedSpec

_REPLY = re.compile(r"icmp_seq=(\d+).*?time=([\d.]+) ms")
_SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_RTT = re.compile(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
_DUPLICATES = re.compile(r"\+(\d+) duplicates")
# fping -C -q, at the end on stderr: "10.77.0.3 : 0.12 0.10 - 0.09" (a dash for an echo unanswered)
_FPING_COUNTS = re.compile(r"^(\S+)\s+: ((?:[\d.]+|-)(?: (?:[\d.]+|-))*)\s*$", re.MULTILINE)
PARALLEL = 8  # fpings started at once (one per sending node)


class PingParams(Params):
    kind: Literal["ping"] = "ping"
    count: int = Field(100, ge=1, le=1_000_000)
    interval: Duration = 0.2
    size: int = Field(56, ge=0, le=65000)  # ICMP payload bytes (ping -s)
    timeout: Duration = 2.0  # how long to wait for the last reply
    family: Family = "ipv4"
    # Over a mesh: which pairs of nodes ping at once (patterns.py); "pair" is client -> server alone
    pattern: Pattern = "pair"


class Ping(Measurement):
    kind = "ping"
    Params = PingParams
    tools = ("ping",)
    packages = {"ping": "iputils-ping", "fping": "fping"}  # fping: pattern != "pair"
    columns = (Column("rtt_avg_ms", "avg ms"), Column("rtt_p50_ms", "p50 ms"), Column("rtt_p99_ms", "p99 ms"),
               Column("rtt_mdev_ms", "mdev ms"), Column("loss_pct", "loss %"))
    headline = Headline(("rtt_avg_ms",), "RTT avg (ms)", log=True)  # a baseline's 0.05 ms beside a tunnel's 3 ms

    @classmethod
    def refused(cls, params: Params, techniques: list[Params], testbed: TestbedSpec) -> str | None:
        return refused_pattern(params.pattern, set_family(params), techniques, testbed)

    def needed_tools(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (("fping",), ()) if self.params.pattern != "pair" else super().needed_tools()

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        return f"rtt {metrics['rtt_avg_ms']:.3f} ms" if "rtt_avg_ms" in metrics else ""

    def expected_seconds(self) -> float:
        return self.params.count * self.params.interval

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        if p.pattern != "pair":
            return self._pattern(ctx)
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

    def _pattern(self, ctx: MeasureContext) -> MeasureResult:
        """Every pair of the pattern at once: on each sending node one fping (-C: every echo's RTT)
        to its receivers' overlay addresses. A reply later than `timeout` counts as lost, as with
        ping's -W. Per pair: sent, received, loss and RTTs (a trial each, and raw `pairs`); the
        cell's RTTs and loss pooled over the pairs, Jain's index over the pairs' delivered shares
        (received / sent), and the pairs that got no reply."""
        p = self.params
        hosts, overlay = nodes_of(ctx, ctx.tunnel)
        if not ctx.tunnel.overlay:
            raise MeasurementError(f"pattern: \"{p.pattern}\" needs a mesh tunnel (Tunnel.overlay)")
        pairs = pattern_pairs(p.pattern, list(overlay))
        senders = {sender: [receiver for s, receiver in pairs if s == sender] for sender, _ in pairs}

        def run_fping(sender: str):
            argv = ["fping", "-C", str(p.count), "-q", "-p", f"{p.interval * 1000:.0f}", "-b", str(p.size),
                    "-t", f"{p.timeout * 1000:.0f}", *(overlay[receiver] for receiver in senders[sender])]
            return hosts[sender].run(argv, timeout=self.expected_seconds() + p.timeout + 10, check=False)
        with ThreadPoolExecutor(PARALLEL) as pool:
            results = dict(zip(senders, pool.map(run_fping, senders)))
        raw = {f"fping_{sender}": result.stdout + result.stderr for sender, result in results.items()}
        by_address = {address: name for name, address in overlay.items()}
        each: dict[str, dict[str, float]] = {}
        samples: dict[str, list[float | None]] = {}
        for sender, result in results.items():
            for address, counts in _FPING_COUNTS.findall(result.stderr):
                values = [None if value == "-" else float(value) for value in counts.split()]
                samples[pair_name((sender, by_address.get(address, address)))] = values
        for pair in pairs:
            name = pair_name(pair)
            if name not in samples:
                raise MeasurementError(f"pattern: no fping summary for {name} "
                                       f"({results[pair[0]].describe_failure()})", raw)
            each[name] = pair_ping_metrics(samples[name])
        metrics = pooled_ping_metrics([samples[pair_name(pair)] for pair in pairs])
        delivered = {name: one["received"] / one["sent"] for name, one in each.items()}
        raw["pairs"] = json.dumps({"pattern": p.pattern, "pairs": each, "silent": silent_pairs(delivered)})
        metrics |= pair_summary(delivered, "delivered")
        if metrics["received"] == 0:
            raise MeasurementError("no ping replies from any pair (100% loss)", raw, metrics)
        trials = [Trial(number, sent_packets=one["sent"], received_packets=one["received"],
                        loss_ratio=one["loss_pct"] / 100, data={"pair": name, **one})
                  for number, (name, one) in enumerate(each.items(), start=1)]
        series = [((seq) * p.interval, rtt) for pair in pairs for seq, rtt in enumerate(samples[pair_name(pair)])
                  if rtt is not None]
        return MeasureResult(metrics, raw, series={"rtt_ms": sorted(series)}, trials=trials)

    def default_label(self) -> str:
        label = "ping" if self.params.size == 56 else f"ping_{self.params.size}"
        label += "_v6" if self.params.family == "ipv6" else ""
        return label + (f"_{self.params.pattern}" if self.params.pattern != "pair" else "")


def rtt_metrics(values: list[float]) -> dict[str, float]:
    """min, avg, max, mdev (ping's: the population standard deviation) and p50/p95/p99 of RTTs."""
    if not values:
        return {}
    ordered = sorted(values)
    metrics = {"rtt_min_ms": ordered[0], "rtt_avg_ms": statistics.fmean(ordered), "rtt_max_ms": ordered[-1],
               "rtt_mdev_ms": statistics.pstdev(ordered)}
    return metrics | {f"rtt_{name}_ms": percentile(ordered, q) for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))}


def pair_ping_metrics(samples: list[float | None]) -> dict[str, float]:
    """One pair's fping -C samples (None: no reply) -> sent, received, loss and its RTTs."""
    replies = [rtt for rtt in samples if rtt is not None]
    sent = len(samples)
    return {"sent": float(sent), "received": float(len(replies)),
            "loss_pct": 100.0 * (sent - len(replies)) / sent if sent else 100.0, **rtt_metrics(replies)}


def pooled_ping_metrics(per_pair: list[list[float | None]]) -> dict[str, float]:
    """Every pair's samples as one: the cell's sent, received, loss and RTT percentiles."""
    return pair_ping_metrics([rtt for samples in per_pair for rtt in samples])


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
