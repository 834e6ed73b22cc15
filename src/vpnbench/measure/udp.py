"""UDP at a fixed target rate with iperf3 or vpnbench-gen: the sender's and the receiver's view.
Over a mesh, the pairs of a traffic pattern at once (patterns.py), each at `rate`."""

import json
import os
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params, Rate, set_family
from vpnbench.foundation.units import format_rate
from vpnbench.hosts.route import path_mtu
from vpnbench.measure import iperf2
from vpnbench.measure.base import CPU_FIGURES, Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.gen import GEN_MIN_LENGTH, run_gen
from vpnbench.measure.iperf import IPERF3_TUNNELS_MAX, run_iperf, run_iperf_pattern, throughput_series
from vpnbench.measure.patterns import Pattern, pair_summary, refused_pattern, silent_pairs
from vpnbench.measure.scaling import auto_length
from vpnbench.store.records import Trial
from vpnbench.testbeds.spec import TestbedSpec


def _length(value):
    """Datagram payload bytes, or "auto" (resolved against the tunnel's MTU when the cell runs)."""
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and 16 <= value <= 65507):
        return value
    raise ValueError(f"{value!r} is not allowed; allowed values: a whole number from 16 to 65507, or 'auto'")


class UdpParams(Params):
    kind: Literal["udp"] = "udp"
    rate: Rate = 1_000_000  # iperf3's own default, written out so it is never implicit
    # datagram payload bytes; "auto": the tunnel's MTU minus the IP and UDP headers (follows [testbed] mtu)
    length: Annotated[int | str, BeforeValidator(_length)] = 1300
    duration: Duration = 10.0
    reverse: bool = False
    family: Family = "ipv4"
    # iperf2 runs streams as threads (S3); gen: vpnbench-gen (gen/), many times iperf3's packet rate
    tool: Literal["iperf3", "iperf2", "gen"] = "iperf3"
    streams: int = Field(1, ge=1, le=128)  # parallel streams (iperf3/iperf2 -P; a list in the file sweeps it)
    threads: int = Field(1, ge=1)  # gen's sending threads (one core each)
    gso: bool = True  # gen: UDP GSO batches (off: every datagram its own trip through the sender's stack)
    # Over a mesh: which pairs of nodes send at once, each at `rate` (patterns.py); "pair" is client -> server alone
    pattern: Pattern = "pair"

    @model_validator(mode="after")
    def _gen_only(self):
        if self.tool != "gen":
            if self.threads > 1:
                raise ValueError("threads: only vpnbench-gen sends from several threads; set tool = \"gen\"")
            if not self.gso:
                raise ValueError("gso: only vpnbench-gen uses UDP GSO; set tool = \"gen\"")
            return self
        if self.streams > 1:
            raise ValueError("streams: vpnbench-gen sends one stream per thread; use threads with tool = \"gen\"")
        if self.reverse:
            raise ValueError("reverse: vpnbench-gen sends from the client only; allowed values: false")
        if self.length != "auto" and self.length < GEN_MIN_LENGTH:
            raise ValueError(f"length: {self.length} is not allowed with tool = \"gen\"; allowed values: "
                             f"{GEN_MIN_LENGTH} to 65507 (its sequence number and timestamp header)")
        cores = os.cpu_count() or 1
        if self.threads > cores:
            raise ValueError(f"threads: {self.threads} is not allowed; allowed values: 1 to {cores} (this machine's cores)")
        return self


class Udp(Measurement):
    kind = "udp"
    Params = UdpParams
    tools = ("iperf3",)
    packages = {"iperf3": "iperf3", "iperf": "iperf"}  # iperf: iperf 2, tool = "iperf2"
    server_tools = ("iperf3", "ss")
    columns = (Column("throughput_bps", "recv Mbit/s", 1e-6), Column("sender_throughput_bps", "sent Mbit/s", 1e-6),
               Column("loss_pct", "loss %"), Column("jitter_ms", "jitter ms"),
               Column("jain_index", "Jain (tunnels)"))  # over tunnels = N: how evenly they were served
    headline = Headline(("sender_throughput_bps", "throughput_bps"), "sent vs received (Mbit/s)", 1e-6, log=True,
                        names=("sent", "received"))
    figures = (*Measurement.figures, *CPU_FIGURES)

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        return f"{metrics['throughput_bps'] / 1e6:.1f} Mbit/s, loss {metrics.get('loss_pct', float('nan')):.2f} %"

    def expected_seconds(self) -> float:
        return self.params.duration

    @classmethod
    def refused(cls, params: Params, techniques: list[Params], testbed: TestbedSpec) -> str | None:
        if params.pattern != "pair":
            for field, value, allowed in (("tool", params.tool, "iperf3"), ("reverse", params.reverse, False)):
                if value != allowed:
                    shown = json.dumps(allowed)
                    return (f"{field}: pattern = \"{params.pattern}\" runs iperf3 flows over the mesh's overlay, "
                            f"each pair naming who sends; allowed with it: {field} = {shown}")
        return refused_pattern(params.pattern, set_family(params), techniques, testbed, max_flows=IPERF3_TUNNELS_MAX)

    def needed_tools(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self.params.tool == "gen":  # run_gen finds its binary itself and says how to build it
            return (), ()
        if self.params.tool == "iperf2":
            return ("iperf",), ("iperf", "ss")
        return super().needed_tools()

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        if p.length == "auto":
            p = p.model_copy(update={"length": self._auto_length(ctx, p.family)})
        result = self._run(ctx, p)
        result.metrics["length_bytes"] = float(p.length)  # what was sent, "auto" resolved
        return result

    @staticmethod
    def _auto_length(ctx: MeasureContext, family: str) -> int:
        mtu = path_mtu(ctx.client, ctx.target(family))
        if mtu is None:
            raise MeasurementError(f"length = \"auto\": no route to {ctx.target(family)} to take the MTU from")
        return auto_length(mtu, family)

    def _run(self, ctx: MeasureContext, p: UdpParams) -> MeasureResult:
        if p.tool == "gen":
            return run_gen(ctx, p.family, p.rate, p.length, p.duration, p.threads, gso=p.gso)
        if p.tool == "iperf2":
            metrics, raw, series = iperf2.run_udp(ctx, p, p.streams)
            return MeasureResult(metrics, raw, series=series)
        args = ["-u", "-b", str(p.rate), "-l", str(p.length), "-t", f"{p.duration:g}", "-P", str(p.streams)]
        if p.reverse:
            args.append("-R")
        if p.pattern != "pair":
            return self._pattern(ctx, p, args)
        doc, raw = run_iperf(ctx, p.family, args, p.duration)
        try:
            metrics = udp_metrics(doc)
        except (KeyError, TypeError) as exc:
            raise MeasurementError(f"unexpected iperf3 UDP JSON: missing {exc}", raw) from None
        return MeasureResult(metrics, raw, series=throughput_series(doc, raw, p.reverse))

    def _pattern(self, ctx: MeasureContext, p: UdpParams, args: list[str]) -> MeasureResult:
        """Every pair of the pattern at once, each an iperf3 UDP flow at `rate` (run_iperf_pattern):
        the rates and packets summed over the pairs, the loss pooled (lost over sent), the jitter
        the worst pair's; each pair a trial, Jain's index over the pairs' received rates (every
        pair offered the same, so the raw rates are the shares), and the pairs that got nothing."""
        names, docs, raw = run_iperf_pattern(ctx, p.pattern, p.family, args, p.duration)
        try:
            each = {name: udp_metrics(doc) for name, doc in zip(names, docs)}
        except (KeyError, TypeError) as exc:
            raise MeasurementError(f"unexpected iperf3 UDP JSON: missing {exc}", raw) from None
        summed = ("throughput_bps", "sender_throughput_bps", "sent_packets", "lost_packets", "received_packets",
                  "tail_lost_packets")
        metrics = {metric: sum(one.get(metric, 0.0) for one in each.values()) for metric in summed}
        if metrics["sent_packets"]:
            metrics["loss_pct"] = 100.0 * metrics["lost_packets"] / metrics["sent_packets"]
        if jitters := [one["jitter_ms"] for one in each.values() if "jitter_ms" in one]:
            metrics["jitter_ms"] = max(jitters)
        rates = {name: one["throughput_bps"] for name, one in each.items()}
        raw["pairs"] = json.dumps({"pattern": p.pattern, "pairs": each, "silent": silent_pairs(rates)})
        trials = [Trial(number, offered_bps=float(p.rate), length=p.length, duration_s=p.duration,
                        sent_packets=one.get("sent_packets"), received_packets=one.get("received_packets"),
                        loss_ratio=one["loss_pct"] / 100 if "loss_pct" in one else None, data={"pair": name, **one})
                  for number, (name, one) in enumerate(each.items(), start=1)]
        return MeasureResult({**metrics, **pair_summary(rates, "bps")}, raw, trials=trials)

    def default_label(self) -> str:
        tool = "_gen" if self.params.tool == "gen" else ""
        label = f"udp{tool}_{format_rate(self.params.rate)}_{self.params.length}"
        label += f"_P{self.params.streams}" if self.params.streams > 1 else ""
        label += "_v6" if self.params.family == "ipv6" else ""
        label += "_iperf2" if self.params.tool == "iperf2" else ""
        return label + (f"_{self.params.pattern}" if self.params.pattern != "pair" else "")


def udp_metrics(doc: dict) -> dict[str, float]:
    """The sender's and the receiver's view of one iperf3 UDP test. Loss is counted against the
    sender's own count of what it sent: the receiver's count (the highest sequence number it saw)
    misses every packet lost after the last one that arrived, and is 0 when nothing arrived at
    all (esnet/iperf#698): 9 612 sent and 9 000 received is 6.4 % loss, not 0."""
    end = doc["end"]
    # iperf3 >= 3.11 reports both views; older versions only "sum" (the receiver's numbers
    # exchanged back to the client).
    received = end.get("sum_received") or end["sum"]
    sent = end.get("sum_sent") or end["sum"]
    seen = float(received.get("packets") or 0)  # the receiver's highest sequence number
    packets = float(sent.get("packets") or seen)
    arrived = min(max(seen - float(received.get("lost_packets") or 0), 0.0), packets)
    metrics = {
        "throughput_bps": received["bits_per_second"],
        "sender_throughput_bps": sent["bits_per_second"],
        "sent_packets": packets,
        "lost_packets": packets - arrived,
        "received_packets": arrived,
        "tail_lost_packets": max(packets - seen, 0.0),  # after the last one that arrived: no gap showed them
        "loss_pct": 100.0 * (packets - arrived) / packets if packets else None,
        "jitter_ms": received.get("jitter_ms"),
    }
    if metrics["throughput_bps"] is None:
        raise TypeError("'bits_per_second'")
    # A value iperf3 printed as nan is unknown, not zero: leave it out.
    return {name: float(value) for name, value in metrics.items() if value is not None}
