"""No encryption: measurements go straight over the underlay (the reference every study used)."""

from typing import Literal

from vpnbench.overhead import Expectation
from vpnbench.params import TechniqueParams
from vpnbench.probe import KernelProbe
from vpnbench.techniques.base import BackendStatus, Technique, Tunnel


class BaselineParams(TechniqueParams):
    kind: Literal["baseline"] = "baseline"


class Baseline(Technique):
    kind = "baseline"
    Params = BaselineParams
    description = "no encryption: plain IP over the underlay"
    is_reference = True

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        return Expectation(underlay_mtu, 0, None, False, f"{cls.kind}: no encapsulation")

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        return [BackendStatus("kernel", True)]

    @classmethod
    def cannot_rekey(cls, params: Params) -> str | None:
        return "baseline has no keys to renew"

    def up(self, backend: str) -> Tunnel:
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs=dict(self.ctx.underlay["server"]),
            client_addrs=dict(self.ctx.underlay["client"]),
            protection="none",
            wire_filter=None,
        )
        return self.tunnel
