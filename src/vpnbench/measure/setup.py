"""Set-up time: the cell's technique brought down and up `count` times.

A cycle is the technique's own down() and up() (daemons stopped and started, fresh keys,
interfaces and SAs re-created, the key exchange run) followed by pings until the first reply
comes back through the new tunnel. The runner's wire proof and tunnel facts are not repeated
(a capture per cycle would dominate the timing). Per cycle: `up_s` (until up() returned), the
first-packet time (from then to the first reply), their sum, the set-up time, the key exchange
where the daemon's log times it (strongSwan, OpenVPN; WireGuard's log counts whole seconds, so
none), and what the daemons' logs count of its tries (Technique.handshake_attempts: strongSwan's
IKE retransmissions, wireguard-go's handshake initiations). The technique is up when the cell
ends, the next cells use it (unless its last up() failed: then the next cell brings it up).

A cycle not up within `timeout` (up() and the first reply together; the key exchange in up() is
bounded by it where the daemon allows) is censored, not a failure of the cell: under loss a
set-up that takes longer than T is the answer ("not up within T"), and the cycles that did come
up are still the distribution. The percentiles rank censored cycles above every completed one
(their set-up time is > T) and are left out where they would fall on one; `setups_failed` counts
them with each one's reason. Errors outside the bring-up (a ping that cannot run) still fail
the cell.
"""

import math
import time
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError, VpnbenchError
from vpnbench.foundation.params import Duration, Params
from vpnbench.hosts.reach import wait_reachable
from vpnbench.measure.base import Column, CycleFailed, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.ping import percentile
from vpnbench.store.records import Trial

# s: a rehearsal waits this long for a cycle at most (censored beyond): the kind's default, since
# at 10 s the mesh rehearsal censored every innernet cycle (10.5 s by design: its server holds each
# invitation's redeem 5 s for the key switch) and showed no set-up time for it at all
REHEARSAL_TIMEOUT = 15.0
REASON_CHARS = 1000  # of a failed up()'s error kept per cycle (a daemon's output can be long)


class SetupParams(Params):
    kind: Literal["setup"] = "setup"
    count: int = Field(20, ge=1, le=1000)  # down-and-up cycles
    # A cycle not up within this (up() and the first reply) is censored: under 30 % loss give it
    # IKE's and WireGuard's retries (30-60 s)
    timeout: Duration = Field(15.0, gt=0, le=300)


class Setup(Measurement):
    kind = "setup"
    Params = SetupParams
    tools = ("ping",)
    packages = {"ping": "iputils-ping"}
    columns = (Column("setup_p50_s", "setup p50 ms", 1e3), Column("setup_p95_s", "setup p95 ms", 1e3),
               Column("first_packet_p50_s", "1st packet ms", 1e3), Column("handshake_p50_s", "handshake ms", 1e3),
               Column("setups_failed", "not up"))
    # log allowed: a baseline's 7 ms beside NetBird's 5.5 s was a bar of 0.2 px (the mesh rehearsal)
    headline = Headline(("setup_p50_s", "setup_p95_s"), "set-up time (ms)", 1e3, log=True, names=("p50", "p95"))
    figures = ("headline", "setup_ecdf", "time_series", "host_cpu")
    captions = ("setups_censored",)

    def expected_seconds(self) -> float:
        return self.params.count * 1.0

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"count": min(params.count, 3),
                                         "timeout": min(params.timeout, REHEARSAL_TIMEOUT)})

    def run(self, ctx: MeasureContext) -> MeasureResult:
        if ctx.cycle is None:
            raise MeasurementError("setup: this runner cannot bring the technique down and up")
        cycles: list[dict] = []
        started = time.monotonic()
        series: dict[str, list[tuple[float, float]]] = {"setup_s": [], "first_packet_s": []}
        for number in range(1, self.params.count + 1):
            at = time.monotonic() - started
            try:
                cycle = self._cycle(ctx)
            except (VpnbenchError, OSError) as exc:  # not the bring-up: the measuring itself broke
                raise MeasurementError(f"cycle {number} of {self.params.count}: {exc}", _raw(cycles),
                                       summary(cycles, self.params.timeout) if cycles else {}) from None
            cycles.append(cycle)
            if not cycle["censored"]:
                series["setup_s"].append((at, cycle["setup_s"]))
                series["first_packet_s"].append((at, cycle["first_packet_s"]))
        trials = [Trial(n, duration_s=c["setup_s"], data=c) for n, c in enumerate(cycles, start=1)]
        return MeasureResult(summary(cycles, self.params.timeout), _raw(cycles), series=series, trials=trials)

    def _cycle(self, ctx: MeasureContext) -> dict:
        """One down-and-up; censored (with its reason) when it is not up within the timeout."""
        timeout = self.params.timeout
        try:
            cycled = ctx.cycle(timeout)
        except CycleFailed as exc:
            return censored(f"up() failed: {str(exc)[:REASON_CHARS]}", exc.attempts)
        if cycled.up_s >= timeout:
            return censored(f"up() took {cycled.up_s:g} s", cycled.attempts(), cycled.up_s)
        address = cycled.tunnel.server_addrs[cycled.tunnel.family]
        first = wait_reachable(ctx.client, address, timeout - cycled.up_s)
        if first is None:
            return censored(f"no reply from {address} within {timeout:g} s", cycled.attempts(), cycled.up_s)
        first = round(first, 4)
        return {"up_s": cycled.up_s, "first_packet_s": first, "setup_s": round(cycled.up_s + first, 4),
                "handshake_s": cycled.handshake_s, "censored": False, **cycled.attempts()}


def censored(reason: str, attempts: dict[str, int], up_s: float | None = None) -> dict:
    """A cycle not up within the timeout: its set-up time is only known to be longer."""
    return {"up_s": up_s, "first_packet_s": None, "setup_s": None, "handshake_s": None, "censored": True,
            "reason": reason, **attempts}


def summary(cycles: list[dict], timeout: float) -> dict[str, float]:
    """The distribution of the set-up time with the censored cycles ranked above every completed
    one, the medians of its parts (handshake where known) and of the daemons' counts."""
    done = sorted(c["setup_s"] for c in cycles if not c["censored"])
    failed = len(cycles) - len(done)
    metrics = {"cycles": float(len(cycles)), "setups_ok": float(len(done)), "setups_failed": float(failed),
               "setup_timeout_s": timeout}
    for name, q in (("setup_p50_s", 0.5), ("setup_p95_s", 0.95)):
        _put_censored(metrics, name, censored_percentile(done, failed, q))
    if done:
        metrics["setup_min_s"] = done[0]
    if done and not failed:  # with a censored cycle the largest and the mean are only bounded below
        metrics["setup_max_s"], metrics["setup_mean_s"] = done[-1], sum(done) / len(done)
    for part in ("up_s", "first_packet_s", "handshake_s"):
        known, unknown = part_values(cycles, part)
        if known or unknown:
            _put_censored(metrics, part.replace("_s", "_p50_s"), censored_percentile(known, unknown, 0.5))
    counted = {key for c in cycles for key, value in c.items() if key not in CYCLE_FIELDS and isinstance(value, int)}
    for name in sorted(counted):
        values = sorted(c[name] for c in cycles if name in c)
        metrics[f"{name}_p50"], metrics[f"{name}_max"] = percentile(values, 0.5), float(values[-1])
    return metrics


def part_values(cycles: list[dict], part: str) -> tuple[list[float], int]:
    """A part of the set-up time as the whole is treated: (its known values sorted, how many
    cycles it is censored in, ranked above them all). up() has a time wherever it returned (a
    cycle censored for want of a reply too), none where it failed; the first packet and the key
    exchange none in any censored cycle. A key exchange the daemon's log does not time (WireGuard)
    is left out, censored cycles too: nothing says it would have been timed."""
    if part == "up_s":
        known = [c["up_s"] for c in cycles if c.get("up_s") is not None]
        return sorted(known), len(cycles) - len(known)
    known = [c[part] for c in cycles if not c["censored"] and c.get(part) is not None]
    if not known and part == "handshake_s":
        return [], 0
    return sorted(known), sum(1 for c in cycles if c["censored"])


def _put_censored(metrics: dict[str, float], name: str, value: float | None) -> None:
    """The percentile, or `<name>_censored` = 1 where it is only known to exceed the timeout: the
    summaries across repetitions count that repetition as censored rather than leave it out."""
    if value is None:
        metrics[name + CENSORED] = 1.0
    else:
        metrics[name] = value


CENSORED = "_censored"  # a metric `x_censored` = 1: x's value is only known to lie above the timeout

# A cycle's own fields; any other integer in it is a daemon's count (handshake_attempts).
CYCLE_FIELDS = ("up_s", "first_packet_s", "setup_s", "handshake_s", "censored", "reason")


def censored_percentile(done: list[float], not_up: int, q: float) -> float | None:
    """The q-quantile (numpy's linear interpolation) of the completed times (sorted) and `not_up`
    censored ones above them all; None where it falls on or between censored ones: it is only
    known to be above the timeout."""
    ranked = done + [math.inf] * not_up
    position = (len(ranked) - 1) * q
    low = int(position)
    high = min(low + 1, len(ranked) - 1)
    if ranked[low] == math.inf or (position > low and ranked[high] == math.inf):
        return None
    return ranked[low] if position == low else percentile(ranked[low:high + 1], position - low)


def _raw(cycles: list[dict]) -> dict[str, str]:
    return {"cycles": "\n".join(" ".join(f"{k}={v}" for k, v in c.items()) for c in cycles)}
