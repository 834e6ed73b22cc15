"""An encryptor vpnbench does not configure: hardware boxes, firewalls, a bump in the wire.

The path is measured as it is. What the tester knows about the device (model, cipher,
notes) is stored with every cell; the inner addresses say where the protected path ends.
Optional hooks bring the device up and down: argv lists run on the controller (no shell)
with the testbed described in VPNBENCH_* environment variables. A path that stops passing
traffic is reported as "no traffic for N s" by failure(), which the runner consults after a
failed measurement and before every cell.
"""

import ipaddress
import os
import subprocess
import sys
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Duration, TechniqueParams
from vpnbench.hosts.reach import wait_reachable
from vpnbench.techniques.base import BackendStatus, Technique, Tunnel
from vpnbench.techniques.overhead import Expectation
from vpnbench.testbeds.probe import KernelProbe

ANY_IP = "ip or ip6"


class ExternalParams(TechniqueParams):
    kind: Literal["external"] = "external"
    device: str = "unspecified"  # free text, e.g. "Juniper SRX345, Junos 21.4"
    cipher: str = "unknown"  # what the device is configured for, as the tester knows it
    notes: str = ""
    # Inner addresses: where the protected path ends (default: the testbed's own addresses).
    server_ipv4: ipaddress.IPv4Address | None = None
    server_ipv6: ipaddress.IPv6Address | None = None
    client_ipv4: ipaddress.IPv4Address | None = None
    client_ipv6: ipaddress.IPv6Address | None = None
    protection: Literal["encrypted", "integrity-only", "none"] = "encrypted"  # what the proof must find
    wire_filter: str | None = None  # tcpdump filter of the device's packets (default: any IP packet)
    up_hook: list[str] | None = None
    down_hook: list[str] | None = None
    hook_timeout: Duration = Field(60.0, gt=0)
    stall_timeout: Duration = Field(5.0, gt=0, le=300)  # the N of "no traffic for N s"


class External(Technique):
    kind = "external"
    Params = ExternalParams
    description = "an external encryptor on the path (not configured by vpnbench)"

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "vpnbench does not configure the device: the campaign names one pair of inner addresses"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        # Its encapsulation is the device's own and unknown here: the underlay's MTU is expected.
        return Expectation(underlay_mtu, 0, None, False, f"{cls.kind}: no encapsulation")

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        return [BackendStatus("external", True)]

    def up(self, backend: str) -> Tunnel:
        p = self.params
        underlay = self.ctx.underlay
        server = {"ipv4": str(p.server_ipv4 or underlay["server"]["ipv4"]),
                  "ipv6": str(p.server_ipv6 or underlay["server"]["ipv6"])}
        client = {"ipv4": str(p.client_ipv4 or underlay["client"]["ipv4"]),
                  "ipv6": str(p.client_ipv6 or underlay["client"]["ipv6"])}
        self.addrs = (server, client)
        try:
            self._hook(p.up_hook, "up_hook", server, client)
        except TechniqueError:
            self._down_hook()  # a half-configured device is taken down before the error is reported
            raise
        self.undo.defer(self._down_hook)
        self.tunnel = Tunnel(
            backend=backend, server_addrs=server, client_addrs=client, protection=p.protection,
            wire_filter=(p.wire_filter or ANY_IP) if p.protection != "none" else None,
            negotiated={"device": p.device, "cipher": p.cipher, "notes": p.notes},
        )
        return self.tunnel

    def _hook(self, argv: list[str] | None, name: str, server: dict, client: dict) -> None:
        if not argv:
            return
        env = dict(os.environ, **self._environment(server, client))
        try:
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=self.params.hook_timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise TechniqueError(f"{name} did not finish within {self.params.hook_timeout:g} s") from None
        except OSError as exc:
            raise TechniqueError(f"{name}: cannot run {argv[0]!r}: {exc.strerror}") from None
        if proc.returncode != 0:
            tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:]) or "no output"
            raise TechniqueError(f"{name} exited with {proc.returncode}: {tail}")

    def _environment(self, server: dict, client: dict) -> dict[str, str]:
        """What a hook needs to find the testbed: namespaces (local testbed), addresses, a private dir."""
        env = {"VPNBENCH_RUN_ID": self.ctx.resources.run_id, "VPNBENCH_RUN_DIR": str(self.ctx.resources.dir)}
        for role, host in (("CLIENT", self.ctx.client), ("SERVER", self.ctx.server)):
            if host.netns:
                env[f"VPNBENCH_{role}_NETNS"] = host.netns
            for family in ("ipv4", "ipv6"):
                env[f"VPNBENCH_{role}_UNDERLAY_{family.upper()}"] = self.ctx.underlay[role.lower()][family]
                env[f"VPNBENCH_{role}_INNER_{family.upper()}"] = (server if role == "SERVER" else client)[family]
        return env

    def failure(self) -> str | None:
        """A stalled path is a failure even though no daemon of ours died."""
        if self.tunnel is None:
            return "not up"
        wait = self.params.stall_timeout
        target = self.tunnel.server_addrs["ipv4"]
        if wait_reachable(self.ctx.client, target, wait) is None:
            return f"no traffic for {wait:g} s through {self.params.device} (to {target})"
        return None

    def _down_hook(self) -> None:
        """down() must not raise (it runs in cleanup paths): a failing hook is reported on stderr."""
        try:
            self._hook(self.params.down_hook, "down_hook", *self.addrs)
        except TechniqueError as exc:
            print(f"vpnbench: warning: external technique: {exc}", file=sys.stderr)
