"""No encryption: measurements go straight over the underlay (the reference every study used)."""

from typing import Literal

from vpnbench.foundation.params import TechniqueParams
from vpnbench.techniques.base import BackendStatus, Ends, Technique, Tunnel
from vpnbench.techniques.overhead import Expectation
from vpnbench.testbeds.probe import KernelProbe


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
    def tunnel_ceiling(cls, params: Params) -> tuple[int, str]:
        return 10_000, ("N flows between the same two underlay addresses, one socket each: nothing in the path "
                        "holds state per flow; the axis's own limit")

    @classmethod
    def cannot_rekey(cls, params: Params) -> str | None:
        return "baseline has no keys to renew"

    def up(self, backend: str) -> Tunnel:
        """tunnels = N: the reference for "aggregate vs N" is N flows over the plain path, each
        its own socket (so its own source port: a 5-tuple of its own, as N tunnels' packets have)
        between the same two underlay addresses; the traffic tools send one flow per tunnel."""
        underlay = self.ctx.underlay
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs=dict(underlay["server"]),
            client_addrs=dict(underlay["client"]),
            protection="none",
            wire_filter=None,
            more=[Ends(dict(underlay["client"]), dict(underlay["server"])) for _ in range(self.params.tunnels - 1)],
        )
        return self.tunnel
