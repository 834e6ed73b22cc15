"""Tunnel set-up rate (draft-ietf-bmwg-ipsec-term's Tunnel Setup Rate, in Tunnels Per Second): the
cell's technique brought down and up `count` times, all its N tunnels initiated at once as its
up() initiates them, then one fping through every tunnel until each has answered.

Per cycle, from the moment the cycle started (before the technique went down — down() is part of
what an operator waits for, and it is short beside up()): each tunnel's time to its first reply;
the first and the last of them; and the rate, N / the time to the last. A tunnel's time is when
fping really started (the client's clock, printed as fping was exec'd, put on the controller's by
Host.clock_offset: never when it was asked to start, which over ssh or in a TCG guest is tens of
ms earlier) plus fping's own seconds from its start to the reply (one host's clock: fping.py). The distribution across tunnels is kept in each cycle's Trial.
The technique is up when the cell ends: the next cells use it.
"""

import time
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError, VpnbenchError
from vpnbench.foundation.params import Duration
from vpnbench.measure.base import Column, Cycled, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.fping import PACKAGES, EveryTunnelParams, first_replies, parse_first_replies
from vpnbench.measure.ping import percentile
from vpnbench.store.records import Trial


class SetupRateParams(EveryTunnelParams):
    kind: Literal["setup_rate"] = "setup_rate"
    count: int = Field(5, ge=1, le=1000)  # down-and-up cycles
    timeout: Duration = Field(30.0, gt=0, le=600)  # longest wait for the last tunnel's first reply


class SetupRate(Measurement):
    kind = "setup_rate"
    Params = SetupRateParams
    tools = ("fping",)
    packages = PACKAGES
    columns = (Column("setup_rate_p50", "tunnels/s"), Column("last_p50_s", "last tunnel ms", 1e3),
               Column("first_p50_s", "first tunnel ms", 1e3), Column("tunnels", "tunnels"),
               Column("last_p95_s", "last p95 ms", 1e3))
    headline = Headline(("setup_rate_p50",), "tunnels established per second")
    figures = ("headline", "time_series")

    def expected_seconds(self) -> float:
        return self.params.count * 2.0

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"count": min(params.count, 2)})

    def run(self, ctx: MeasureContext) -> MeasureResult:
        if ctx.cycle is None:
            raise MeasurementError("setup_rate: this runner cannot bring the technique down and up")
        cycles: list[dict] = []
        raw: dict[str, str] = {}
        series: dict[str, list[tuple[float, float]]] = {"setup_rate": [], "last_s": []}
        started = time.monotonic()
        for number in range(1, self.params.count + 1):
            at = round(time.monotonic() - started, 3)
            try:
                cycle, raw[f"cycle{number}_fping"] = self._cycle(ctx)
            except MeasurementError as exc:
                raise MeasurementError(f"cycle {number} of {self.params.count}: {exc}", {**raw, **exc.raw},
                                       rate_summary(cycles) if cycles else {}) from None
            except (VpnbenchError, OSError) as exc:  # a daemon that did not come back fails the cell
                raise MeasurementError(f"cycle {number} of {self.params.count}: {exc}", raw,
                                       rate_summary(cycles) if cycles else {}) from None
            cycles.append(cycle)
            series["setup_rate"].append((at, cycle["setup_rate"]))
            series["last_s"].append((at, cycle["last_s"]))
        trials = [Trial(n, duration_s=c["last_s"], data=c) for n, c in enumerate(cycles, start=1)]
        raw["cycles"] = "\n".join(" ".join(f"{k}={v}" for k, v in c.items() if k != "tunnel_s") for c in cycles)
        return MeasureResult(rate_summary(cycles), raw, series=series, trials=trials)

    def _cycle(self, ctx: MeasureContext) -> tuple[dict, str]:
        p = self.params
        offset, _ = ctx.client.clock_offset()  # the client's clock less ours: fping's start on the cycle's clock
        began = time.monotonic()
        cycled: Cycled = ctx.cycle()
        addresses = [ends.server[p.family] for ends in cycled.tunnel.every()]
        replies, output = first_replies(ctx.client, addresses, p.family, p.timeout, p.probe_interval, p.reply_timeout)
        fping_started, _ = parse_first_replies(output)  # the client's clock as fping was exec'd
        probe_at = fping_started - (offset + began)  # when fping really started, not when it was asked to
        cycle = cycle_rates([probe_at + replies[address] for address in addresses])
        cycle.update(up_s=round(cycled.up_s, 6), probe_at_s=round(probe_at, 6), handshake_s=cycled.handshake_s,
                     wall_s=round(time.monotonic() - began, 6))
        return cycle, output


def cycle_rates(tunnel_s: list[float]) -> dict:
    """One cycle's numbers from each tunnel's seconds (since the cycle started) to its first
    reply: the first and the last, the median, and tunnels per second (N / the last)."""
    ordered = [round(s, 6) for s in sorted(tunnel_s)]  # µs: fping's timestamps are 10 µs
    last = ordered[-1]
    return {"tunnels": len(ordered), "first_s": ordered[0], "last_s": last,
            "median_s": round(percentile(ordered, 0.5), 6),
            "setup_rate": len(ordered) / last,  # last > 0: it includes the cycle itself
            "tunnel_s": ordered}


def rate_summary(cycles: list[dict]) -> dict[str, float]:
    """The distribution over cycles: rate, first and last tunnel (p50, p95), and the medians of the
    technique's own up() and of the key exchange where known."""
    metrics: dict[str, float] = {"cycles": float(len(cycles)), "tunnels": float(cycles[0]["tunnels"])}
    for name in ("setup_rate", "first_s", "last_s"):
        values = sorted(c[name] for c in cycles)
        stem = name.removesuffix("_s")
        suffix = "_s" if name.endswith("_s") else ""
        metrics[f"{stem}_p50{suffix}"] = percentile(values, 0.5)
        metrics[f"{stem}_p95{suffix}"] = percentile(values, 0.95)
        metrics[f"{stem}_min{suffix}"] = values[0]
        metrics[f"{stem}_max{suffix}"] = values[-1]
    for part in ("up_s", "handshake_s"):
        values = sorted(c[part] for c in cycles if c.get(part) is not None)
        if values:
            metrics[part.replace("_s", "_p50_s")] = percentile(values, 0.5)
    return metrics
