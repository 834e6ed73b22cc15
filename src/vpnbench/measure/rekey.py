"""Rekey impact: a long flow (iperf3 TCP, or UDP at a set rate) plus a ping probe through the
tunnel while the technique renews its keys every `rekey_every` seconds (Technique.rekey: strongSwan
`swanctl --rekey --child`, WireGuard a forced new handshake). Every rekey is an event with the
throughput in the second before it, the lowest throughput in the 2 s after, the dip between them,
and the probe's highest RTT and lost pings in those 2 s.

On the baseline (no keys to renew) the same flow and probe run as the control: the same moments
are marked `rekey-control` events, nothing is done at them, and their "dips" are what a flow
through this path wobbles by anyway — the floor the tunnels' dips are compared with.

Times are seconds since the flow's client started; iperf3's intervals count from its test start,
a few ms later (its control connection), which is well inside one interval.
"""

import time
from typing import Literal

from pydantic import Field, model_validator

from vpnbench.foundation.errors import MeasurementError, VpnbenchError
from vpnbench.foundation.params import Duration, Family, Params, Rate
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.iperf import parse_iperf_json, throughput_series
from vpnbench.measure.ping import parse_ping
from vpnbench.measure.traffic import Iperf3Load, PingProbe, TimeAxis
from vpnbench.techniques import is_reference

AFTER_S = 2.0  # the window after a rekey in which its dip and RTT are looked for


class RekeyParams(Params):
    kind: Literal["rekey"] = "rekey"
    duration: Duration = Field(20.0, gt=0, le=86_400)  # seconds of load
    rekey_every: Duration = Field(5.0, gt=0)  # a rekey at every multiple of this, while 2 s of load remain after it
    load: Literal["tcp", "udp"] = "tcp"
    rate: Rate = Field(100_000_000, gt=0)  # UDP only: offered bits/s
    length: int = Field(1200, ge=16, le=65_000)  # UDP only: datagram payload bytes
    probe_interval: Duration = Field(0.05, ge=0.002, le=1)  # seconds between pings
    family: Family = "ipv4"

    @model_validator(mode="after")
    def _room_for_a_rekey(self) -> "RekeyParams":
        if self.rekey_every + AFTER_S > self.duration:
            raise ValueError(f"duration: {self.duration:g} s leaves no rekey at {self.rekey_every:g} s with "
                             f"{AFTER_S:g} s of load after it; allowed: at least rekey_every + {AFTER_S:g} s")
        return self


class Rekey(Measurement):
    kind = "rekey"
    Params = RekeyParams
    tools = ("iperf3", "ping")
    server_tools = ("iperf3", "ss")
    packages = {"iperf3": "iperf3", "ping": "iputils-ping"}
    columns = (Column("dip_max_pct", "worst dip %"), Column("rekey_rtt_max_ms", "RTT max ms"),
               Column("rekeys", "rekeys"), Column("throughput_bps", "Mbit/s", 1e-6))
    headline = Headline(("dip_max_pct",), "throughput dip at a rekey (%)")

    @classmethod
    def renews_keys(cls, params: Params) -> Literal["control", "required"] | None:
        return "control"  # the baseline runs the same flow without rekeys: the floor of the dips

    def expected_seconds(self) -> float:
        return self.params.duration + 1

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"duration": min(params.duration, params.rekey_every + AFTER_S + 1)})

    def default_label(self) -> str:
        return f"rekey_{self.params.load}" + ("_v6" if self.params.family == "ipv6" else "")

    def run(self, ctx: MeasureContext) -> MeasureResult:
        control = is_reference(ctx.technique_params)
        if ctx.rekey is None and not control:
            raise MeasurementError("rekey: this runner cannot rekey the technique")
        p = self.params
        load = Iperf3Load(ctx, p.family, self._client_args(), p.duration)
        ping = PingProbe(ctx, p.family, p.probe_interval, p.duration + 1)
        raw: dict[str, str] = {}
        try:
            load.start_server()
            ping.start()
            load.start()
            clock = TimeAxis(load.started)  # the flow's start is 0 (its intervals count from there)
            rekeys = self._rekey_while_loaded(None if control else ctx.rekey, clock, raw)
            raw["iperf3_client"], raw["iperf3_server"] = load.finish()
            raw["ping"] = ping.finish()
        finally:
            load.stop()
            ping.stop()
        try:
            doc = parse_iperf_json(raw["iperf3_client"])
        except ValueError as exc:
            raise MeasurementError(f"iperf3: {exc}", raw) from None
        throughput = load.series(clock, throughput_series(doc, raw, reverse=False).get("throughput_bps") or [])
        probe = ping.series(clock, ping.rtts(raw["ping"]))
        sent = (parse_ping(raw["ping"]) or {}).get("sent", 0.0)
        probe_sent = [t for t, _ in ping.series(clock, ping.sent(int(sent)))]
        events = [(at, "rekey-control" if control else "rekey", impact(at, took, detail, throughput, probe, probe_sent))
                  for at, took, detail in rekeys]
        series = {"throughput_bps": throughput, "rtt_ms": probe}
        return MeasureResult(rekey_metrics(events, throughput, probe), raw, series=series, events=events)

    def _client_args(self) -> list[str]:
        p = self.params
        return ["-t", f"{p.duration:g}"] + (["-u", "-b", str(p.rate), "-l", str(p.length)] if p.load == "udp" else [])

    def _rekey_while_loaded(self, renew, clock: TimeAxis, raw: dict) -> list[tuple[float, float, dict]]:
        """A rekey (`renew()`; None: the baseline's control, nothing done) at every multiple of
        rekey_every that leaves AFTER_S of load after it: (seconds since the flow started, seconds
        the rekey took, what changed)."""
        p = self.params
        rekeys = []
        number = 1
        while number * p.rekey_every + AFTER_S <= p.duration:
            time.sleep(max(0.0, number * p.rekey_every - clock.now()))
            at = clock.now()
            try:
                detail = renew() if renew else {"control": True}
            except (VpnbenchError, OSError) as exc:
                raise MeasurementError(f"rekey {number} at {at:.1f} s: {exc}", raw) from None
            rekeys.append((round(at, 3), round(clock.now() - at, 3), detail))
            number += 1
        return rekeys


def impact(at: float, took: float, detail: dict, throughput: list[tuple[float, float]],
           probe: list[tuple[float, float]], probe_sent: list[float]) -> dict:
    """One rekey's cost: throughput in the interval that ended last before it vs the lowest of the
    intervals overlapping the AFTER_S after it; the probe's highest RTT and lost pings there."""
    before = [bps for end, bps in throughput if end <= at]
    step = throughput[0][0] if throughput else 1.0  # the interval length (the first ends at it)
    after = [bps for end, bps in throughput if at < end < at + AFTER_S + step]
    rtts = [rtt for t, rtt in probe if at <= t <= at + AFTER_S]
    answered = {round(t, 6) for t, _ in probe}
    lost = sum(1 for t in probe_sent if at <= t <= at + AFTER_S and round(t, 6) not in answered)
    result = {"rekey_seconds": took, **detail,
              "throughput_before_bps": before[-1] if before else None,
              "throughput_after_min_bps": min(after) if after else None,
              "rtt_max_ms": max(rtts) if rtts else None, "pings_lost": lost}
    if before and after and before[-1] > 0:
        result["dip_pct"] = round(max(0.0, 100 * (1 - min(after) / before[-1])), 2)
    return result


def rekey_metrics(events: list[tuple[float, str, dict]], throughput: list[tuple[float, float]],
                  probe: list[tuple[float, float]]) -> dict[str, float]:
    details = [detail for _, _, detail in events]
    dips = [d["dip_pct"] for d in details if d.get("dip_pct") is not None]
    rtts = [d["rtt_max_ms"] for d in details if d.get("rtt_max_ms") is not None]
    metrics = {"rekeys": float(sum(1 for d in details if not d.get("control"))),
               "rekey_seconds_mean": sum(d["rekey_seconds"] for d in details) / len(details) if details else 0.0,
               "pings_lost_rekey": float(sum(d["pings_lost"] for d in details))}
    if throughput:
        metrics["throughput_bps"] = sum(bps for _, bps in throughput) / len(throughput)
    if dips:
        metrics.update(dip_max_pct=max(dips), dip_mean_pct=sum(dips) / len(dips))
    if rtts:
        metrics["rekey_rtt_max_ms"] = max(rtts)
    if probe:
        ordered = sorted(rtt for _, rtt in probe)
        metrics["rtt_p50_ms"] = ordered[len(ordered) // 2]
    return metrics
