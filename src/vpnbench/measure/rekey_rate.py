"""Rekey rate (draft-ietf-bmwg-ipsec-term's Tunnel Rekeys Per Second; for IPsec, whose rekey here
is a CHILD SA's, its Phase 2 Rekey Rate): the technique's keys renewed back to back
(Technique.rekey, each call renewing every tunnel of the bring-up) for `duration` seconds; the
rate is the tunnels rekeyed over the seconds it took (a technique's rekey that does not say how
many tunnels it renewed renewed one). Each rekey's time is kept as a distribution and
as an event; a light fping through every tunnel meanwhile shows whether traffic survived them.

A technique whose handshake only traffic starts sends that traffic itself (WireGuard's rekey pings
through every tunnel after re-adding its peers), so a rekey's time does not wait for the probe.

The baseline has no keys to renew: the campaign refuses this kind on it (Measurement.renews_keys).
"""

import time
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError, VpnbenchError
from vpnbench.foundation.params import Duration
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.fping import PACKAGES, EveryTunnelParams, FpingProbe, parse_losses
from vpnbench.measure.ping import percentile

PROBE_MARGIN_S = 60.0  # the probe's pings beyond `duration`, for the last rekey (stopped when it ends)


class RekeyRateParams(EveryTunnelParams):
    kind: Literal["rekey_rate"] = "rekey_rate"
    duration: Duration = Field(10.0, gt=0, le=3600)  # seconds of rekeys back to back (the last one may end after)


class RekeyRate(Measurement):
    kind = "rekey_rate"
    Params = RekeyRateParams
    tools = ("fping",)
    packages = PACKAGES
    columns = (Column("rekey_rate", "rekeys/s"), Column("rekey_p50_s", "rekey p50 ms", 1e3),
               Column("tunnels_rekeyed", "tunnels rekeyed"), Column("pings_lost", "pings lost"),
               Column("rekey_p95_s", "rekey p95 ms", 1e3))
    headline = Headline(("rekey_rate",), "tunnel rekeys per second")
    figures = ("headline", "time_series")

    @classmethod
    def renews_keys(cls, params: Params) -> Literal["control", "required"] | None:
        return "required"  # a rate of nothing renewed is no control

    def expected_seconds(self) -> float:
        return self.params.duration + 1

    def run(self, ctx: MeasureContext) -> MeasureResult:
        if ctx.rekey is None:
            raise MeasurementError("rekey_rate: this runner cannot rekey the technique")
        p = self.params
        addresses = [ends.server[p.family] for ends in ctx.tunnel.every()]
        # Until the last rekey has ended: one started just before `duration` may wait for its handshake
        probe = FpingProbe(ctx.client, addresses, p.family, p.probe_interval, p.duration + PROBE_MARGIN_S,
                           p.reply_timeout)
        raw: dict[str, str] = {}
        try:
            probe.start()
            rekeys, elapsed = self._rekey_back_to_back(ctx.rekey, raw)
            raw["fping"] = probe.finish()
        finally:
            probe.stop()
        metrics = rekey_rate_metrics([(took, detail.get("tunnels_rekeyed", 1)) for _, took, detail in rekeys], elapsed)
        metrics.update(probe_losses(parse_losses(raw["fping"]), addresses))
        events = [(at, "rekey", {"rekey_seconds": took, **detail}) for at, took, detail in rekeys]
        raw["rekeys"] = "\n".join(f"at={at} seconds={took} {detail}" for at, took, detail in rekeys)
        return MeasureResult(metrics, raw, series={"rekey_seconds": [(at, took) for at, took, _ in rekeys]},
                             events=events)

    def _rekey_back_to_back(self, renew, raw: dict) -> tuple[list[tuple[float, float, dict]], float]:
        """(seconds since the start, seconds it took, what changed) of each rekey, and the seconds
        from the start until the last one ended."""
        rekeys: list[tuple[float, float, dict]] = []
        started = time.monotonic()
        while (at := time.monotonic() - started) < self.params.duration:
            try:
                detail = renew()
            except (VpnbenchError, OSError) as exc:
                raise MeasurementError(f"rekey {len(rekeys) + 1} at {at:.2f} s: {exc}", raw) from None
            rekeys.append((round(at, 4), round(time.monotonic() - started - at, 4), detail))
        return rekeys, time.monotonic() - started


def rekey_rate_metrics(rekeys: list[tuple[float, int]], elapsed: float) -> dict[str, float]:
    """From each rekey's (seconds, tunnels it renewed) and the seconds they all took: tunnels
    rekeyed per second, and the distribution of one rekey's time."""
    seconds = sorted(took for took, _ in rekeys)
    renewed = sum(tunnels for _, tunnels in rekeys)
    return {"rekeys": float(len(rekeys)), "tunnels_rekeyed": float(renewed), "elapsed_s": elapsed,
            "rekey_rate": renewed / elapsed, "rekey_p50_s": percentile(seconds, 0.5),
            "rekey_p95_s": percentile(seconds, 0.95), "rekey_max_s": seconds[-1],
            "rekey_mean_s": sum(seconds) / len(seconds)}


def probe_losses(losses: dict[str, tuple[int, int]], addresses: list[str]) -> dict[str, float]:
    """The probe's pings sent and lost over every tunnel, and how many tunnels lost any; a tunnel
    fping did not summarise lost every ping (none counted as sent: unknown)."""
    sent = sum(losses.get(address, (0, 0))[0] for address in addresses)
    received = sum(losses.get(address, (0, 0))[1] for address in addresses)
    hit = sum(1 for address in addresses if address not in losses or losses[address][1] < losses[address][0])
    return {"pings_sent": float(sent), "pings_lost": float(sent - received), "tunnels_with_loss": float(hit)}
