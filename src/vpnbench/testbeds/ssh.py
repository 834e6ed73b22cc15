"""kind = "ssh": machines of an inventory ([testbed.hosts.<role>]) whose underlay already exists.

What an ssh testbed and the VM testbed share (hosts reached over ssh: connecting them, the
tool check, sysctls, closing) is SshHosts, which both hold.
"""

from vpnbench.foundation.errors import TestbedError
from vpnbench.hosts.base import Host
from vpnbench.hosts.resources import RunResources
from vpnbench.hosts.ssh import SshConnection, SshHost, SshSettings, SshTarget
from vpnbench.testbeds.base import Link, Testbed
from vpnbench.testbeds.probe import RemoteKernelProbe
from vpnbench.testbeds.spec import TestbedSpec

BASE_TOOLS = ["ip", "ping", "sysctl", "unshare"]  # what every run needs on every host


class SshHosts:
    """Hosts reached over ssh, one ControlMaster each (prefix: how to reach their control
    addresses, e.g. the VM testbed's namespace)."""

    def __init__(self, targets: dict[str, SshTarget], settings: SshSettings, resources: RunResources,
                 prefix: list[str] = ()):
        self.targets = targets
        self.hosts: dict[str, SshHost] = {
            role: SshHost(role, SshConnection(target, settings, resources.path(f"ssh-{role}.sock"), list(prefix)),
                          resources.dir, target.cpus)
            for role, target in targets.items()}

    def connect(self) -> None:
        for host in self.hosts.values():
            host.connect()

    def check_tools(self, capture_hosts: list[Host]) -> None:
        """Fail before the first cell when a host lacks what every run needs."""
        for role, host in self.hosts.items():
            needed = BASE_TOOLS + (["taskset"] if host.cpus is not None else [])
            needed += ["tcpdump"] if host in capture_hosts else []
            missing = host.missing_commands(needed)
            if missing:
                raise TestbedError(f"{role} ({self.targets[role].host}): {', '.join(missing)} not found")

    def apply_sysctls(self, settings: dict) -> dict[str, dict]:
        applied = {}
        for key, raw in settings.items():
            value = " ".join(str(raw).split())
            for host in self.hosts.values():
                host.set_sysctl(key, value)  # the host records the old value: close (or cleanup) restores it
            applied[key] = {"value": value, "scope": "hosts"}
        return applied

    def close(self) -> None:
        for host in self.hosts.values():
            host.close()


class SshTestbed(Testbed):
    """Machines reached over ssh; the inventory names their underlay interfaces and addresses."""

    def __init__(self, spec: TestbedSpec, resources: RunResources):
        self.spec = spec
        self.resources = resources
        self.targets = dict(spec.hosts)
        self.remote = SshHosts(self.targets, spec.ssh, resources)
        self.hosts = dict(self.remote.hosts)
        self.links = self._links()
        cpus = {role: t.cpus for role, t in self.targets.items() if t.cpus is not None}
        self.pin_note = ("pinned: " + ", ".join(f"{r} on CPU {','.join(map(str, c))}" for r, c in cpus.items())
                         if cpus else "not pinned (no cpus in the inventory)")
        self.sysctls: dict[str, dict] = {}
        self._probe = RemoteKernelProbe([self.client, self.server])

    @property
    def probe(self) -> RemoteKernelProbe:
        return self._probe

    def _links(self) -> list[Link]:
        t = self.targets
        if "router" in t:
            return [Link("router", t["router"].iface, "client", t["client"].iface, "", ""),
                    Link("router", t["router"].iface_server, "server", t["server"].iface, "", "")]
        return [Link("client", t["client"].iface, "server", t["server"].iface, "", "")]

    def underlay_addr(self, role: str, family: str) -> str:
        target = self.targets[role]
        address = target.ipv4 if family == "ipv4" else target.ipv6
        if not address:
            raise KeyError(f"{role} has no {family} underlay address")
        return address

    def families(self) -> tuple[str, ...]:
        return tuple(f for f in ("ipv4", "ipv6") if all(getattr(self.targets[r], f) for r in ("client", "server")))

    def connect(self) -> None:
        """Open the ssh connections."""
        self.remote.connect()

    def up(self) -> None:
        self.remote.check_tools([point.host for point in self.capture_points()])
        self.sysctls = self.remote.apply_sysctls(self.spec.sysctls)
        self.wait_ready()

    def down(self) -> None:
        self.remote.close()
