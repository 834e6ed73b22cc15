"""The effective MTU through the tunnel (S1's table): don't-fragment ping bisection, beside the
MTU protocol arithmetic expects (vpnbench.techniques.overhead) and the underlay's.

A probe of SIZE bytes is one `ping -M do -s SIZE-header -c 1`: passed when the reply came back;
too big when the kernel refused it locally ("message too long") or it was lost twice — a lost
probe is retried once so that ordinary loss does not read as "too big".
"""

import re
from typing import Literal

from pydantic import Field, model_validator

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params
from vpnbench.hosts.route import device_mtu, global_addresses, lower_device, route_device, route_mtu
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.techniques import expect
from vpnbench.techniques.overhead import Expectation

ICMP_HEADERS = {"ipv4": 20 + 8, "ipv6": 40 + 8}
_RECEIVED = re.compile(r"(\d+) (?:packets )?received")


class MtuParams(Params):
    kind: Literal["mtu"] = "mtu"
    family: Family = "ipv4"  # the inner family probed
    min_mtu: int = Field(576, ge=576, le=65535)  # the search's floor: a packet this big must pass
    max_mtu: int | None = Field(None, ge=576, le=65535)  # its ceiling; default the larger of underlay and tunnel MTU
    timeout: Duration = 1.0  # per probe

    @model_validator(mode="after")
    def _ordered(self):
        if self.max_mtu is not None and self.max_mtu < self.min_mtu:
            raise ValueError(f"max_mtu: {self.max_mtu} is below min_mtu {self.min_mtu}; allowed values: min_mtu..65535")
        return self


class Mtu(Measurement):
    kind = "mtu"
    Params = MtuParams
    tools = ("ping", "ip")
    packages = {"ping": "iputils-ping", "ip": "iproute2"}
    server_tools = ("ip",)
    columns = (Column("mtu_bytes", "MTU"), Column("mtu_expected_bytes", "expected"),
               Column("mtu_difference_bytes", "diff"), Column("overhead_bytes", "overhead B"),
               Column("underlay_mtu_bytes", "underlay MTU"))
    headline = Headline(("mtu_bytes", "mtu_expected_bytes"), "MTU (bytes)", names=("measured", "expected"))

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        if "mtu_bytes" not in metrics:
            return ""
        return (f"MTU {metrics['mtu_bytes']:.0f} (expected {metrics.get('mtu_expected_bytes', float('nan')):.0f}, "
                f"underlay {metrics.get('underlay_mtu_bytes', float('nan')):.0f})")

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params

    def expected_seconds(self) -> float:
        return 12 * self.params.timeout

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        target = ctx.target(p.family)
        raw: dict[str, str] = {}
        underlay = underlay_mtu(ctx)
        tunnel_dev, tunnel_mtu = route_mtu(ctx.client, target)
        raw["interfaces"] = f"underlay MTU {underlay}; route to {target}: dev {tunnel_dev} MTU {tunnel_mtu}\n"
        floor = max(p.min_mtu, 1280 if p.family == "ipv6" else p.min_mtu)
        ceiling = p.max_mtu or max(underlay or 0, tunnel_mtu or 0) or 1500
        probes: list[str] = []
        prober = Prober(ctx, target, p.family, p.timeout, probes)
        try:
            mtu = bisect(prober.passes, floor, ceiling)
        finally:
            raw["probes"] = "\n".join(probes) + "\n"
        if mtu is None:
            raise MeasurementError(f"even a {floor}-byte don't-fragment ping did not pass through the tunnel", raw)
        metrics = {"mtu_bytes": float(mtu), "probes": float(prober.count)}
        if underlay:
            metrics["underlay_mtu_bytes"] = float(underlay)
            expectation = expect(ctx.technique_params, underlay)
            metrics.update(expected_metrics(expectation, mtu))
            raw["expected"] = explain(expectation, mtu, tunnel_dev, tunnel_mtu)
        if tunnel_mtu:
            metrics["interface_mtu_bytes"] = float(tunnel_mtu)
        return MeasureResult(metrics, raw)

    def default_label(self) -> str:
        return "mtu" + ("_v6" if self.params.family == "ipv6" else "")


class Prober:
    def __init__(self, ctx: MeasureContext, target: str, family: str, timeout: float, log: list[str]):
        self.ctx, self.target, self.family, self.timeout, self.log = ctx, target, family, timeout, log
        self.count = 0

    def passes(self, size: int) -> bool:
        for attempt in (1, 2):
            verdict = self._probe(size)
            self.log.append(f"{size} attempt {attempt}: {verdict}")
            if verdict != "lost":
                return verdict == "passed"
        return False

    def _probe(self, size: int) -> str:
        self.count += 1
        argv = ["ping", "-n", "-M", "do", "-s", str(size - ICMP_HEADERS[self.family]), "-c", "1",
                "-W", f"{self.timeout:g}", self.target]
        result = self.ctx.client.run(argv, timeout=self.timeout + 10, check=False)
        return probe_verdict(result.stdout + result.stderr)


def probe_verdict(output: str) -> str:
    """passed, too-big (refused locally: the route's or device's MTU) or lost."""
    received = _RECEIVED.search(output)
    if received and int(received.group(1)) > 0:
        return "passed"
    if "message too long" in output.lower() or "frag needed" in output.lower() or "packet too big" in output.lower():
        return "too-big"
    return "lost"


def bisect(passes, low: int, high: int) -> int | None:
    """The largest size in [low, high] that passes, assuming every smaller size passes too;
    None when low itself does not."""
    if passes(high):
        return high
    if not passes(low):
        return None
    while high - low > 1:  # low passes, high does not
        middle = (low + high) // 2
        if passes(middle):
            low = middle
        else:
            high = middle
    return low


def expected_metrics(expectation: Expectation, mtu: int) -> dict[str, float]:
    return {"mtu_expected_bytes": float(expectation.expected_mtu),
            "mtu_protocol_bytes": float(expectation.protocol_mtu),
            "overhead_bytes": float(expectation.overhead),
            "mtu_difference_bytes": float(mtu - expectation.expected_mtu)}


def explain(expectation: Expectation, mtu: int, device: str | None, device_mtu: int | None) -> str:
    lines = [f"protocol: {expectation.how}",
             f"largest inner packet in one outer packet: {expectation.protocol_mtu} (overhead {expectation.overhead} B)"]
    if expectation.device_mtu is not None:
        lines.append(f"the technique's settings give the tunnel device MTU {expectation.device_mtu}"
                     + ("; bigger packets are carried in fragmented outer packets" if expectation.fragments_outer
                        else ""))
    lines.append(f"expected {expectation.expected_mtu}, measured {mtu}")
    if mtu != expectation.expected_mtu:
        why = f"the route's device {device} has MTU {device_mtu}" if device_mtu == mtu else \
            "neither the arithmetic nor the device's MTU explains it"
        lines.append(f"difference {mtu - expectation.expected_mtu:+d} B: {why}")
    return "\n".join(lines) + "\n"


def underlay_mtu(ctx: MeasureContext) -> int | None:
    """The MTU of the client's underlay interface: the one its route to the server's underlay
    address leaves through (the server's global addresses that are not the tunnel's). A layer-2
    technique's device (macsec0@c0) is looked through to its parent."""
    inner = set(ctx.tunnel.server_addrs.values())
    addresses = global_addresses(ctx.server)
    # The baseline's "tunnel" addresses are the underlay's own: try them last.
    for address in sorted(addresses, key=lambda a: a in inner):
        dev = route_device(ctx.client, address)
        if dev is None:
            continue
        return device_mtu(ctx.client, lower_device(ctx.client, dev))
    return None
