"""TCP throughput with iperf3; over a mesh, the flows of a traffic pattern at once (patterns.py)."""

import json
from typing import Literal

from pydantic import Field, model_validator

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params, Size, set_family
from vpnbench.measure import iperf2
from vpnbench.measure.base import CPU_FIGURES, Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.fairness import tunnel_metrics
from vpnbench.measure.iperf import (
    IPERF3_TUNNELS_MAX,
    interval_rate,
    run_iperf,
    run_iperf_pattern,
    run_iperf_per_tunnel,
    throughput_series,
)
from vpnbench.measure.patterns import (
    Pattern,
    pair_summary,
    refused_pattern,
    silent_pairs,
)
from vpnbench.store.records import Trial
from vpnbench.testbeds.spec import TestbedSpec


class TcpParams(Params):
    kind: Literal["tcp"] = "tcp"
    duration: Duration = 10.0
    streams: int = Field(1, ge=1, le=128)
    omit: Duration | None = None  # warm-up seconds left out of the result (iperf3 -O)
    reverse: bool = False  # server sends (iperf3 -R)
    window: Size | None = None  # socket buffer / window (iperf3 -w)
    family: Family = "ipv4"
    tool: Literal["iperf3", "iperf2"] = "iperf3"  # iperf2 runs its streams as threads (S3)
    # Over a mesh: which pairs of nodes send at once (patterns.py); "pair" is client -> server alone
    pattern: Pattern = "pair"

    @model_validator(mode="after")
    def _iperf2_has_no_omit(self):
        if self.tool == "iperf2" and self.omit:
            raise ValueError("omit: iperf2 has no warm-up omission; leave omit out or use tool = \"iperf3\"")
        return self


class Tcp(Measurement):
    kind = "tcp"
    Params = TcpParams
    tools = ("iperf3",)
    packages = {"iperf3": "iperf3", "iperf": "iperf"}  # iperf: iperf 2, tool = "iperf2"
    server_tools = ("iperf3", "ss")
    columns = (Column("throughput_bps", "Mbit/s", 1e-6), Column("retransmits", "retrans"),
               Column("jain_index", "Jain (tunnels)"))  # over tunnels = N: how evenly they were served
    headline = Headline(("throughput_bps",), "throughput (Mbit/s)", 1e-6, log=True)
    figures = (*Measurement.figures, *CPU_FIGURES)
    captions = ("congestion_control",)

    @classmethod
    def refused(cls, params: Params, techniques: list[Params], testbed: TestbedSpec) -> str | None:
        if params.pattern != "pair" and params.tool != "iperf3":
            return f"tool: pattern = \"{params.pattern}\" runs iperf3 flows; allowed with it: tool = \"iperf3\""
        if params.pattern != "pair" and params.reverse:
            return (f"reverse: pattern = \"{params.pattern}\" names each flow's direction (\"n0>n1\": n0 sends; "
                    "hub runs both ways already); allowed with it: reverse = false")
        return refused_pattern(params.pattern, set_family(params), techniques, testbed, max_flows=IPERF3_TUNNELS_MAX)

    def needed_tools(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self.params.tool == "iperf2":
            return ("iperf",), ("iperf", "ss")
        return super().needed_tools()

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        return f"{metrics['throughput_bps'] / 1e6:.1f} Mbit/s"

    def expected_seconds(self) -> float:
        return self.params.duration + (self.params.omit or 0)

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        if p.tool == "iperf2":
            metrics, raw, series = iperf2.run_tcp(ctx, p)
            return MeasureResult(metrics, raw, series=series)
        args = ["-t", f"{p.duration:g}", "-P", str(p.streams)]
        if p.omit:
            args += ["-O", f"{p.omit:g}"]
        if p.reverse:
            args.append("-R")
        if p.window:
            args += ["-w", str(p.window)]
        if p.pattern != "pair":
            return self._pattern(ctx, args)
        if ctx.tunnel.more:
            return self._per_tunnel(ctx, args)
        doc, raw = run_iperf(ctx, p.family, args, self.expected_seconds())
        try:
            metrics = tcp_metrics(doc, p.duration)
        except (KeyError, TypeError) as exc:
            raise MeasurementError(f"unexpected iperf3 TCP JSON: missing {exc}", raw) from None
        return MeasureResult(metrics, raw, series=throughput_series(doc, raw, p.reverse))

    def _per_tunnel(self, ctx: MeasureContext, args: list[str]) -> MeasureResult:
        """Over tunnels = N: a test through each tunnel at once (iperf.IPERF3_TUNNELS_MAX of them at
        most); the aggregate is their sum, with each one's share and Jain's index over them."""
        docs, raw = run_iperf_per_tunnel(ctx, self.params.family, args, self.expected_seconds())
        try:
            each = [tcp_metrics(doc, self.params.duration) for doc in docs]
        except (KeyError, TypeError) as exc:
            raise MeasurementError(f"unexpected iperf3 TCP JSON: missing {exc}", raw) from None
        metrics = {name: sum(one[name] for one in each) for name in each[0]}
        rates = [one["throughput_bps"] for one in each]
        raw["per_tunnel"] = "".join(f"{index} {ends.server[self.params.family]} {rate:.0f}\n"
                                    for index, (ends, rate) in enumerate(zip(ctx.tunnel.every(), rates)))
        every = len(ctx.tunnel.every())
        if every > len(rates):
            raw["per_tunnel"] += f"# tunnels {len(rates) + 1}-{every} not measured (at most {len(rates)} iperf3 pairs)\n"
        return MeasureResult({**metrics, **tunnel_metrics(rates, of=every)}, raw)

    def _pattern(self, ctx: MeasureContext, args: list[str]) -> MeasureResult:
        """Every pair of the pattern at once, each an iperf3 flow (run_iperf_pattern). The aggregate
        is the pairs' sum; each pair is a trial (and in raw `pairs`), with Jain's index over the
        pairs' received rates and the pairs that carried nothing."""
        names, docs, raw = run_iperf_pattern(ctx, self.params.pattern, self.params.family, args, self.expected_seconds())
        try:
            each = {name: tcp_metrics(doc, self.params.duration) for name, doc in zip(names, docs)}
        except (KeyError, TypeError) as exc:
            raise MeasurementError(f"unexpected iperf3 TCP JSON: missing {exc}", raw) from None
        metrics = {metric: sum(one[metric] for one in each.values()) for metric in next(iter(each.values()))}
        rates = {name: one["throughput_bps"] for name, one in each.items()}
        raw["pairs"] = json.dumps({"pattern": self.params.pattern, "pairs": each, "silent": silent_pairs(rates)})
        trials = [Trial(number, duration_s=self.params.duration, data={"pair": name, **one})
                  for number, (name, one) in enumerate(each.items(), start=1)]
        return MeasureResult({**metrics, **pair_summary(rates, "bps")}, raw, trials=trials)

    def default_label(self) -> str:
        parts = ["tcp"]
        if self.params.streams > 1:
            parts.append(f"P{self.params.streams}")
        if self.params.reverse:
            parts.append("reverse")
        if self.params.family == "ipv6":
            parts.append("v6")
        if self.params.tool != "iperf3":
            parts.append(self.params.tool)
        if self.params.pattern != "pair":
            parts.append(self.params.pattern)
        return "_".join(parts)


def tcp_metrics(doc: dict, duration: float) -> dict[str, float]:
    end = doc["end"]
    received, sent = end["sum_received"], end["sum_sent"]
    throughput = received["bits_per_second"]
    # Some iperf3 versions count the omitted warm-up in the summary: its span then exceeds
    # the requested duration, and the non-omitted intervals are the honest number.
    if received.get("seconds", 0) > duration * 1.1:
        throughput = interval_rate(doc) or throughput
    if throughput is None:
        raise TypeError("'bits_per_second'")
    return {
        "throughput_bps": float(throughput),
        "sender_throughput_bps": float(sent["bits_per_second"] or 0),
        "retransmits": float(sent.get("retransmits") or 0),
        "bytes_received": float(received.get("bytes") or 0),
    }
