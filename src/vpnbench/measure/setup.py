"""Set-up time: the cell's technique brought down and up `count` times.

A cycle is the technique's own down() and up() (daemons stopped and started, fresh keys,
interfaces and SAs re-created, the key exchange run) followed by pings until the first reply
comes back through the new tunnel. The runner's wire proof and tunnel facts are not repeated
(a capture per cycle would dominate the timing). Per cycle: `up_s` (until up() returned), the
first-packet time (from then to the first reply), their sum, the set-up time, and the key
exchange where the daemon's log times it (strongSwan, OpenVPN; WireGuard's log counts whole
seconds, so none). The technique is up when the cell ends: the next cells use it.
"""

import time
from typing import Literal

from pydantic import Field

from vpnbench.errors import MeasurementError, VpnbenchError
from vpnbench.measure.base import Column, Cycled, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.hosts.reach import wait_reachable
from vpnbench.measure.ping import percentile
from vpnbench.params import Duration, Params
from vpnbench.records import Trial


class SetupParams(Params):
    kind: Literal["setup"] = "setup"
    count: int = Field(20, ge=1, le=1000)  # down-and-up cycles
    timeout: Duration = Field(15.0, gt=0, le=300)  # longest wait for the first reply of a cycle


class Setup(Measurement):
    kind = "setup"
    Params = SetupParams
    tools = ("ping",)
    packages = {"ping": "iputils-ping"}
    columns = (Column("setup_p50_s", "setup p50 ms", 1e3), Column("setup_p95_s", "setup p95 ms", 1e3),
               Column("first_packet_p50_s", "1st packet ms", 1e3), Column("handshake_p50_s", "handshake ms", 1e3))
    headline = Headline(("setup_p50_s", "setup_p95_s"), "set-up time (ms)", 1e3, names=("p50", "p95"))

    def expected_seconds(self) -> float:
        return self.params.count * 1.0

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"count": min(params.count, 3)})

    def run(self, ctx: MeasureContext) -> MeasureResult:
        if ctx.cycle is None:
            raise MeasurementError("setup: this runner cannot bring the technique down and up")
        cycles: list[dict[str, float | None]] = []
        started = time.monotonic()
        series: dict[str, list[tuple[float, float]]] = {"setup_s": [], "first_packet_s": []}
        for number in range(1, self.params.count + 1):
            at = time.monotonic() - started
            try:
                cycle = self._cycle(ctx)
            except (VpnbenchError, OSError) as exc:  # a daemon that did not come back fails the cell
                raise MeasurementError(f"cycle {number} of {self.params.count}: {exc}", _raw(cycles),
                                       summary(cycles) if cycles else {}) from None
            cycles.append(cycle)
            series["setup_s"].append((at, cycle["setup_s"]))
            series["first_packet_s"].append((at, cycle["first_packet_s"]))
        trials = [Trial(n, duration_s=c["setup_s"], data=c) for n, c in enumerate(cycles, start=1)]
        return MeasureResult(summary(cycles), _raw(cycles), series=series, trials=trials)

    def _cycle(self, ctx: MeasureContext) -> dict[str, float | None]:
        cycled: Cycled = ctx.cycle()
        first = first_packet_seconds(ctx.client, cycled.tunnel.server_addrs[cycled.tunnel.family], self.params.timeout)
        return {"up_s": cycled.up_s, "first_packet_s": first, "setup_s": round(cycled.up_s + first, 4),
                "handshake_s": cycled.handshake_s}


def first_packet_seconds(client, address: str, timeout: float) -> float:
    """Pings every 10 ms (hosts/reach.py's resolution) until the first reply; the seconds from the
    start of ping, which includes starting it (a few ms)."""
    seconds = wait_reachable(client, address, timeout)
    if seconds is None:
        raise MeasurementError(f"no reply through the tunnel from {address} within {timeout:g} s")
    return round(seconds, 4)


def summary(cycles: list[dict[str, float | None]]) -> dict[str, float]:
    """The distribution of the set-up time, and the medians of its parts (handshake where known)."""
    setup = sorted(c["setup_s"] for c in cycles)
    metrics = {"cycles": float(len(cycles)), "setup_p50_s": percentile(setup, 0.5),
               "setup_p95_s": percentile(setup, 0.95), "setup_min_s": setup[0], "setup_max_s": setup[-1],
               "setup_mean_s": sum(setup) / len(setup)}
    for part in ("up_s", "first_packet_s", "handshake_s"):
        values = sorted(c[part] for c in cycles if c[part] is not None)
        if values:
            metrics[part.replace("_s", "_p50_s")] = percentile(values, 0.5)
    return metrics


def _raw(cycles: list[dict]) -> dict[str, str]:
    return {"cycles": "\n".join(" ".join(f"{k}={v}" for k, v in c.items()) for c in cycles)}
