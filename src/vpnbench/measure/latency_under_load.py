"""Latency under load, as Flent's RRUL asks it: how much does a saturated link delay everything
else? irtt probes round-trip and one-way delay through an idle phase, then while TCP flows fill
the link both ways (iperf3: one client per direction with -P flows, -R for the download, each
its own server and port, running at once). The loaded phase leaves out its first second (TCP's
slow start) so the percentiles describe the standing queue, not the ramp.
"""

import time
from typing import Literal

from pydantic import Field, model_validator

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params
from vpnbench.measure.base import CPU_FIGURES, Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.iperf import interval_series, parse_iperf_json
from vpnbench.measure.irtt import Packet, packet_series, percentile
from vpnbench.measure.tcp import tcp_metrics
from vpnbench.measure.traffic import Iperf3Load, IrttProbe, TimeAxis

RAMP_S = 1.0  # loaded packets sent in the first second of load are left out
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


class LatencyUnderLoadParams(Params):
    kind: Literal["latency_under_load"] = "latency_under_load"
    flows_up: int = Field(1, ge=0, le=64)  # TCP flows client -> server
    flows_down: int = Field(1, ge=0, le=64)  # TCP flows server -> client
    idle: Duration = 3.0  # seconds of probing before the load starts
    duration: Duration = 10.0  # seconds of load
    interval: Duration = 0.020  # irtt probe interval
    size: int = Field(64, ge=60, le=1472)  # irtt probe bytes
    family: Family = "ipv4"

    @model_validator(mode="after")
    def _some_load(self) -> "LatencyUnderLoadParams":
        if self.flows_up + self.flows_down == 0:
            raise ValueError("flows_up, flows_down: both are 0; allowed: at least one flow in all")
        if self.duration <= RAMP_S:
            raise ValueError(f"duration: {self.duration:g} s leaves nothing after the {RAMP_S:g} s ramp; "
                             f"allowed: more than {RAMP_S:g} s")
        return self


class LatencyUnderLoad(Measurement):
    kind = "latency_under_load"
    Params = LatencyUnderLoadParams
    tools = ("irtt", "iperf3")
    server_tools = ("irtt", "iperf3", "ss")
    packages = {"irtt": "irtt", "iperf3": "iperf3"}
    columns = (Column("rtt_idle_p99_ms", "idle p99 ms"), Column("rtt_loaded_p99_ms", "loaded p99 ms"),
               Column("induced_latency_p99_ms", "induced p99 ms"), Column("owd_up_induced_p99_ms", "up +p99 ms"),
               Column("owd_down_induced_p99_ms", "down +p99 ms"), Column("throughput_up_bps", "up Mbit/s", 1e-6),
               Column("throughput_down_bps", "down Mbit/s", 1e-6))
    headline = Headline(("rtt_idle_p99_ms", "rtt_loaded_p99_ms"), "RTT p99 (ms)", log=True,
                        names=("idle", "loaded"))
    figures = (*Measurement.figures, *CPU_FIGURES)

    def expected_seconds(self) -> float:
        return self.params.idle + self.params.duration + 1

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"idle": min(params.idle, 1.0), "duration": min(params.duration, seconds + RAMP_S)})

    def default_label(self) -> str:
        p = self.params
        return f"lul_up{p.flows_up}_down{p.flows_down}" + ("_v6" if p.family == "ipv6" else "")

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        probe = IrttProbe(ctx, p.family, p.interval, p.size, p.idle + p.duration + 0.5)
        loads = self._loads(ctx)
        raw: dict[str, str] = {}
        try:
            probe.start_server()
            for load in loads.values():
                load.start_server()
            clock = TimeAxis()
            probe.start()
            time.sleep(p.idle)
            load_at = clock.now()
            for load in loads.values():
                load.start()
            pkts = probe.series(clock, probe.finish(raw))
            throughput = self._finish_load(loads, clock, raw)
        finally:
            probe.stop()
            raw.update(probe.outputs())
            for way, load in loads.items():
                load.stop()
                raw[f"iperf3_server_{way}"] = load.outputs()["iperf3_server"]
        metrics = phase_metrics(pkts, load_at, p.duration)
        metrics.update({f"throughput_{way}_bps": value for way, (value, _) in throughput.items()})
        series = {f"throughput_{way}_bps": points for way, (_, points) in throughput.items()}
        series.update(packet_series(pkts))
        events = [(load_at, "load-start", {"flows_up": p.flows_up, "flows_down": p.flows_down}),
                  (load_at + p.duration, "load-end", {})]
        return MeasureResult(metrics, raw, series=series, events=events)

    def _loads(self, ctx: MeasureContext) -> dict[str, Iperf3Load]:
        """One iperf3 test per direction that has flows, each with its own server."""
        p = self.params
        loads = {}
        for way, flows in (("up", p.flows_up), ("down", p.flows_down)):
            if flows:
                args = ["-t", f"{p.duration:g}", "-P", str(flows)] + (["-R"] if way == "down" else [])
                loads[way] = Iperf3Load(ctx, p.family, args, p.duration)
        return loads

    def _finish_load(self, loads: dict[str, Iperf3Load], clock: TimeAxis, raw: dict) -> dict[str, tuple[float, list]]:
        """Each direction's receiver throughput and its per-second series on the clock."""
        result = {}
        for way, load in loads.items():
            output, _ = load.finish()
            raw[f"iperf3_client_{way}"] = output
            try:
                doc = parse_iperf_json(output)
                result[way] = (tcp_metrics(doc, self.params.duration)["throughput_bps"],
                               load.series(clock, interval_series(doc)))
            except (ValueError, KeyError, TypeError) as exc:
                raise MeasurementError(f"iperf3 {way}load: {exc}", raw) from None
        return result


def phase_metrics(pkts: list[Packet], load_at: float, duration: float) -> dict[str, float]:
    """Percentiles of RTT and one-way delays idle (before the load) and loaded (after the ramp),
    and the latency the load induced (loaded minus idle, per quantile)."""
    idle = [pk for pk in pkts if pk.t < load_at]
    loaded = [pk for pk in pkts if load_at + RAMP_S <= pk.t <= load_at + duration]
    if not idle or not loaded:
        raise MeasurementError(f"irtt sent {len(idle)} probes before the load and {len(loaded)} under it")
    metrics: dict[str, float] = {"probes_idle": float(len(idle)), "probes_loaded": float(len(loaded))}
    for field, prefix in (("rtt_ms", "rtt"), ("up_ms", "owd_up"), ("down_ms", "owd_down")):
        for phase, group in (("idle", idle), ("loaded", loaded)):
            values = [getattr(pk, field) for pk in group if getattr(pk, field) is not None]
            for name, q in QUANTILES:
                if values:
                    metrics[f"{prefix}_{phase}_{name}_ms"] = percentile(values, q)
        for name, _ in QUANTILES:
            before, during = metrics.get(f"{prefix}_idle_{name}_ms"), metrics.get(f"{prefix}_loaded_{name}_ms")
            if before is not None and during is not None:
                key = f"induced_latency_{name}_ms" if prefix == "rtt" else f"{prefix}_induced_{name}_ms"
                metrics[key] = during - before
    lost = sum(1 for pk in loaded if pk.rtt_ms is None)
    metrics["probe_loss_loaded_pct"] = 100 * lost / len(loaded)
    return metrics
