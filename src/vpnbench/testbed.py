"""The testbed: client and server hosts, optionally a router between them, and the underlay.

Local kind: one network namespace per host, veth links created directly inside the
namespaces (nothing ever appears in the root namespace), IPv4 and IPv6 on every link, the
router forwarding both families.

ssh kind: machines of an inventory ([testbed.hosts.<role>]) whose underlay already exists;
vm kind: QEMU VMs booted for the run (hosts/vm.py), reached over ssh the same way.
"""

import dataclasses
import os
import re
import shlex
import subprocess
import time
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, model_validator

from vpnbench import evidence
from vpnbench.errors import HostError, TestbedError
from vpnbench.hosts.base import Host
from vpnbench.hosts.netns import NetnsHost
from vpnbench.hosts.ssh import SshConnection, SshHost, SshSettings, SshTarget
from vpnbench.impair.registry import BackendName, allowed_here, wrong_kind
from vpnbench.params import Duration
from vpnbench.resources import RunResources, delete_netns
from vpnbench.scaling import MAX_MTU, MIN_MTU, core_range_error
from vpnbench.sysctls import apply_sysctls, restore_sysctls


class VmSettings(BaseModel):
    """The VMs of kind = "vm": one per role, booted from the distribution kernel."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(1024, ge=256, le=65536)
    vcpus: int = Field(1, ge=1, le=64)
    pin: bool = False  # pin each VM's QEMU to its own core (client 0, server 1, router 2, modulo the cores)
    accel: Literal["auto", "kvm", "tcg"] = "auto"  # auto: KVM when it starts a guest here, else TCG
    boot_timeout: Duration = 300.0


def _whole_numbers(low: int, high: int, why: str):
    """A number or a list of numbers, each from low to high: one of S3's scaling axes."""
    def check(value):
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise ValueError(f"{v!r} is not allowed; allowed values: whole numbers from {low} to {high}{why}")
        return values
    return BeforeValidator(check)


class TestbedSpec(BaseModel):
    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["local", "ssh", "vm"] = "local"
    router: bool = True
    pin: Literal["auto", "on", "off"] = "auto"
    monitor_interval: Duration = 0.5
    setup_timeout: Duration | None = None  # a bring-up's deadline to the first packet through; default 15 s, scaled on slow testbeds
    impairment_backend: BackendName = "auto"
    sysctls: dict[Annotated[str, StringConstraints(pattern=r"^net\.[a-z0-9_.]+$")], str | int] = {}
    ssh: SshSettings = SshSettings()
    hosts: dict[Literal["client", "server", "router"], SshTarget] = {}
    vm: VmSettings = VmSettings()
    # S3's scaling axes, each a list that multiplies the matrix (scaling.py): how many cores the
    # client's and the server's processes may use, and the MTU of every underlay interface.
    cores: Annotated[list[int], _whole_numbers(1, 4096, "")] = []
    # more cores than a host may use: an error, or (skip: presets made for bigger machines) left out
    cores_above: Literal["error", "skip"] = "error"
    mtu: Annotated[list[int], _whole_numbers(MIN_MTU, MAX_MTU, " (IPv4's minimum to veth's maximum)")] = []

    @model_validator(mode="after")
    def _scaling_fits(self):
        """cores no host can give, and an MTU on an underlay vpnbench does not build, are refused here."""
        if self.mtu and self.kind != "local":
            raise ValueError(f"mtu: only for kind = 'local' (the underlay of a {self.kind} testbed is not "
                             "vpnbench's to change); allowed here: leave mtu out")
        available, who = self._core_share()
        if self.cores_above == "skip" and any(n <= available for n in self.cores):
            return self.model_copy(update={"cores": [n for n in self.cores if n <= available]})
        error = core_range_error(self.cores, available, who)
        if error:
            raise ValueError(error)
        return self

    def _core_share(self) -> tuple[int, str]:
        """How many cores each host may use, as far as the spec tells (ssh without cpus: at run time)."""
        if self.kind == "vm":
            return self.vm.vcpus, "the VMs' vcpus"
        if self.kind == "ssh":
            pinned = [len(t.cpus) for t in self.hosts.values() if t.cpus]
            return (min(pinned), "the inventory's cpus") if pinned else (4096, "")
        cpu_count = os.cpu_count() or 1
        cpus, _ = plan_pinning(self.pin, cpu_count)
        if cpus:
            return len(cpus["client"]), f"each host's share of this machine's {cpu_count} cores; pin = \"off\" gives each all"
        return cpu_count, "this machine's cores"

    @model_validator(mode="after")
    def _inventory_matches_kind(self):
        if self.kind != "ssh":
            if self.hosts:
                raise ValueError(f"hosts: only for kind = 'ssh' (here kind = {self.kind!r})")
            return self
        roles = ("client", "server") + (("router",) if self.router else ())
        for role in roles:
            if role not in self.hosts:
                raise ValueError(f"hosts.{role}: required for kind = 'ssh'; give host, iface and ipv4")
            if role != "router" and not self.hosts[role].ipv4:
                raise ValueError(f"hosts.{role}.ipv4: required (the underlay address of the {role})")
        if "router" in self.hosts and not self.router:
            raise ValueError("hosts.router: given, but router = false")
        if self.router and not self.hosts["router"].iface_server:
            raise ValueError("hosts.router.iface_server: required (the router's server-facing interface)")
        if reason := wrong_kind(self.impairment_backend, self.kind):
            raise ValueError(f"impairment_backend: {reason}; allowed here: {allowed_here(self.kind)}")
        return self


@dataclasses.dataclass(frozen=True)
class CapturePoint:
    """An interface where the encryption proof watches the underlay."""

    host: Host
    iface: str
    direction: Literal["in", "out"] | None = None  # tcpdump -Q; None: both

    def tcpdump_args(self) -> list[str]:
        return ["-i", self.iface] + (["-Q", self.direction] if self.direction else [])


@dataclasses.dataclass(frozen=True)
class Link:
    """One underlay link: the two ends (host role, interface) and their addresses."""

    a: str
    a_iface: str
    b: str
    b_iface: str
    net4: str  # e.g. "10.201.1" -> .1 for a, .2 for b
    net6: str  # e.g. "fd00:201:1" -> ::1 for a, ::2 for b
    bump: str | None = None  # role of the namespace where a userspace emulator bridges the link

    def addr(self, side: str, family: str) -> str:
        host_part = 1 if side == "a" else 2
        return f"{self.net4}.{host_part}" if family == "ipv4" else f"{self.net6}::{host_part}"


FIRST_VETH_INDEX = 100  # see Testbed._veth
BUMP_IFACES = ("lka", "lkb")  # the emulator's two sides: a faces the client, b the server
IPV6_MIN_MTU = 1280


def plan_links(router: bool, bump: bool = False) -> list[Link]:
    """The underlay. With bump, the link next to the server is cut in two and bridged by
    linkem: in the router when there is one, else in a namespace of its own ("link")."""
    if router:
        return [Link("router", "r0", "client", "c0", "10.201.1", "fd00:201:1"),
                Link("router", "r1", "server", "s0", "10.201.2", "fd00:201:2", "router" if bump else None)]
    return [Link("client", "c0", "server", "s0", "10.201.0", "fd00:201:0", "link" if bump else None)]


def plan_pinning(mode: str, cpu_count: int) -> tuple[dict[str, list[int] | None], str]:
    """Split the cores between client and server so per-host CPU means something on one machine."""
    if mode == "off":
        return {}, "not pinned (pin = \"off\"): per-host CPU shares all cores"
    if cpu_count < 2:
        return {}, f"cannot pin: only {cpu_count} CPU; per-host CPU shares all cores"
    half = cpu_count // 2
    cpus = {"client": list(range(half)), "server": list(range(half, cpu_count))}
    return cpus, f"pinned: client on CPU {_ranges(cpus['client'])}, server on CPU {_ranges(cpus['server'])}; router unpinned"


def _ranges(cpus: list[int]) -> str:
    return f"{cpus[0]}" if len(cpus) == 1 else f"{cpus[0]}-{cpus[-1]}"


class Testbed:
    """Builds and tears down the hosts and the underlay of one run."""

    __test__ = False

    def __init__(self, spec: TestbedSpec, resources: RunResources, bump: bool = False):
        self.spec = spec
        self.resources = resources
        self.links = plan_links(spec.router, bump)
        self.cpus, self.pin_note = plan_pinning(spec.pin, os.cpu_count() or 1)
        roles = ["client", "server"] + (["router"] if spec.router else []) + (["link"] if bump and not spec.router else [])
        self.hosts: dict[str, Host] = {
            role: NetnsHost(role, resources.netns_name(role), resources.dir, self.cpus.get(role))
            for role in roles
        }
        self._created: list[str] = []
        self._veths = 0
        self.sysctls: dict[str, dict] = {}

    @property
    def setup_timeout_scale(self) -> float:
        """How much longer than natively a bring-up may take here (the runner's SETUP_TIMEOUT is
        multiplied by this): 1 natively, 4 inside a TCG-emulated kernel VM, whose CPU is slower."""
        return 4.0 if os.environ.get("VPNBENCH_VM_ACCEL") == "TCG" else 1.0

    @property
    def client(self) -> Host:
        return self.hosts["client"]

    @property
    def server(self) -> Host:
        return self.hosts["server"]

    @property
    def router(self) -> Host | None:
        return self.hosts.get("router")

    def underlay_addr(self, role: str, family: str) -> str:
        for link in self.links:
            if link.b == role:
                return link.addr("b", family)
            if link.a == role:
                return link.addr("a", family)
        raise KeyError(role)

    def underlay_map(self) -> dict[str, dict[str, str]]:
        """role -> family -> underlay address, for client and server."""
        return {role: {family: self.underlay_addr(role, family) for family in ("ipv4", "ipv6")}
                for role in ("client", "server")}

    def bump_point(self) -> tuple[Host, str, str] | None:
        """(host, a-side iface, b-side iface) where linkem bridges the link, if there is a bump."""
        for link in self.links:
            if link.bump:
                return self.hosts[link.bump], *BUMP_IFACES
        return None

    def capture_points(self, near: str = "client") -> list[CapturePoint]:
        """Where the underlay is watched: the router's side of the link next to the client (or,
        near = "server", next to the server), both directions. Without a router, each end of the
        link for what it sends only: a host's own interface also shows what its kernel decrypted
        (xfrm tunnel mode re-injects the inner packet on the interface the ESP packet came in on),
        so its incoming side would show a marker the wire never carried in clear."""
        if self.router is not None:
            return [CapturePoint(self.router, (self.links[0] if near == "client" else self.links[-1]).a_iface)]
        link = self.links[0]
        return [CapturePoint(self.client, link.a_iface, "out"), CapturePoint(self.server, link.b_iface, "out")]

    def up(self) -> None:
        for host in self.hosts.values():
            _ip("netns", "add", host.netns)
            self._created.append(host.netns)
            _ip("-n", host.netns, "link", "set", "lo", "up")
            # No duplicate address detection: tentative link-local addresses would stall
            # neighbour discovery, and so IPv6, for the first seconds of every run.
            _sysctl(host.netns, "net.ipv6.conf.default.accept_dad=0", "net.ipv6.conf.all.accept_dad=0")
        for link in self.links:
            self._build_link(link)
        if self.router is not None:
            self._route_through_router()
        self.sysctls = apply_sysctls(self.spec.sysctls, [h.netns for h in self.hosts.values()], self.resources.dir)
        if self.bump_point() is None:
            self.wait_ready()  # with a bump, the caller starts the emulator first

    def families(self) -> tuple[str, ...]:
        return ("ipv4", "ipv6")

    def wait_ready(self, timeout: float = 10.0) -> None:
        """The underlay is ready when the client reaches the server over both families
        (with a bump, only once its emulator forwards)."""
        for family in self.families():
            target = self.underlay_addr("server", family)
            deadline = time.monotonic() + timeout
            while not self.client.run(["ping", "-n", "-c", "1", "-W", "0.2", target], check=False).ok:
                if time.monotonic() > deadline:
                    raise TestbedError(f"testbed: client cannot reach server at {target}")

    def _build_link(self, link: Link) -> None:
        a_ns, b_ns = self.hosts[link.a].netns, self.hosts[link.b].netns
        if link.bump:
            self._build_bump(link)
        else:
            self._veth(a_ns, link.a_iface, b_ns, link.b_iface)
        for side, netns, iface in (("a", a_ns, link.a_iface), ("b", b_ns, link.b_iface)):
            _ip("-n", netns, "addr", "add", f"{link.addr(side, 'ipv4')}/24", "dev", iface)
            _ip("-n", netns, "-6", "addr", "add", f"{link.addr(side, 'ipv6')}/64", "dev", iface, "nodad")
            _ip("-n", netns, "link", "set", iface, "up")

    def set_mtu(self, mtu: int) -> None:
        """Every underlay interface, a bump's bridge ends included, to mtu (the scaling axis).
        Below 1280 the kernel drops an interface's IPv6 (addresses and routes); at or above it
        they are put back, so a small MTU before does not leave the next bring-up IPv4-only."""
        for link in self.links:
            ends = [(link.a, link.a_iface), (link.b, link.b_iface)]
            ends += [(link.bump, iface) for iface in BUMP_IFACES] if link.bump else []
            for role, iface in ends:
                _ip("-n", self.hosts[role].netns, "link", "set", "dev", iface, "mtu", str(mtu))
        if mtu < IPV6_MIN_MTU:
            return
        for link in self.links:
            for side, role, iface in (("a", link.a, link.a_iface), ("b", link.b, link.b_iface)):
                _ip("-n", self.hosts[role].netns, "-6", "addr", "replace", f"{link.addr(side, 'ipv6')}/64", "dev", iface,
                    "nodad")
        if self.router is not None:
            for link in self.links:
                _ip("-n", self.hosts[link.b].netns, "-6", "route", "replace", "default", "via", link.addr("a", "ipv6"))

    def _veth(self, a_ns: str, a_iface: str, b_ns: str, b_iface: str) -> None:
        """A veth pair whose two ends have different interface indexes. In fresh namespaces both
        ends would get index 2, and the kernel takes a device whose index equals its peer's
        (iflink) for one without a lower device: its carrier change is not urgent, linkwatch
        batches it up to a second later, and IPv6 on that end ignores neighbour solicitations
        until then (measured: the first IPv6 ping answered after 1.02 s, 4 ms with distinct
        indexes). Indexes only need to be unique within a namespace; these are unique here."""
        first = FIRST_VETH_INDEX + 2 * self._veths
        self._veths += 1
        _ip("-n", a_ns, "link", "add", a_iface, "index", str(first), "type", "veth",
            "peer", "name", b_iface, "index", str(first + 1), "netns", b_ns)

    def _build_bump(self, link: Link) -> None:
        """a_iface <-> lka | linkem | lkb <-> b_iface: two veth pairs, the middle ends unaddressed."""
        a_ns, b_ns, bump_ns = (self.hosts[role].netns for role in (link.a, link.b, link.bump))
        lka, lkb = BUMP_IFACES
        self._veth(a_ns, link.a_iface, bump_ns, lka)
        self._veth(bump_ns, lkb, b_ns, link.b_iface)
        for iface in (lka, lkb):
            # The bridge ends must stay silent: no IPv6 addresses, no neighbour discovery of their own.
            _sysctl(bump_ns, f"net.ipv6.conf.{iface}.disable_ipv6=1")
            _ip("-n", bump_ns, "link", "set", iface, "up")

    def _route_through_router(self) -> None:
        _sysctl(self.hosts["router"].netns, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        for link in self.links:
            netns = self.hosts[link.b].netns
            _ip("-n", netns, "route", "add", "default", "via", link.addr("a", "ipv4"))
            _ip("-n", netns, "-6", "route", "add", "default", "via", link.addr("a", "ipv6"))

    def evidence(self) -> dict[str, str]:
        """The underlay as it was when a bring-up failed: links (with counters), addresses,
        routes and xfrm SAs of every host, and the kernel log. Best effort, never raises."""
        pieces = [(f"{role}: {' '.join(argv)}", lambda host=host, argv=argv: _hide_keys(evidence.command(host, argv)))
                  for role, host in self.hosts.items() for argv in EVIDENCE_COMMANDS]
        return evidence.gather(pieces + self._kernel_log_pieces())

    def _kernel_log_pieces(self) -> list:
        """One kernel here, shared by every namespace: its log once."""
        host = self.client
        return [("kernel: dmesg | tail", lambda: evidence.command(host, ["sh", "-c", DMESG_TAIL]))]

    def down(self) -> None:
        for netns in reversed(self._created):
            delete_netns(netns)
        self._created.clear()
        restore_sysctls(self.resources.dir)


EVIDENCE_COMMANDS = (["ip", "-d", "link"], ["ip", "-s", "link"], ["ip", "addr"], ["ip", "route"], ["ip", "-6", "route"],
                     ["ip", "xfrm", "state"])
DMESG_TAIL = "dmesg 2>&1 | tail -n 40"  # fixed text, no config values in it
_XFRM_KEY = re.compile(r"^(\s*(?:auth|auth-trunc|enc|aead|comp)\s+\S+\s+)0x[0-9a-fA-F]+", re.M)


def _hide_keys(text: str) -> str:
    """`ip xfrm state` prints the SAs' keys: evidence keeps the algorithms, never the keys."""
    return _XFRM_KEY.sub(r"\1(key hidden)", text)


def _sysctl(netns: str, *settings: str) -> None:
    """Per-namespace sysctls: they vanish with the namespace, nothing to restore."""
    subprocess.run(["ip", "netns", "exec", netns, "sysctl", "-qw", *settings], check=True, capture_output=True)


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise HostError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


class RemoteKernelProbe:
    """What the kernels of a remote testbed can do: tried on client and server, each in a
    throwaway network namespace (unshare -n), so nothing is left on the machines."""

    def __init__(self, hosts: list[Host]):
        self.hosts = hosts
        self._cache: dict[str, bool] = {}

    def _all(self, key: str, argv: list[str], batch: str | None = None) -> bool:
        if key not in self._cache:
            self._cache[key] = all(h.run(argv, timeout=30, check=False, input=batch).ok for h in self.hosts)
        return self._cache[key]

    def has_link_type(self, kind: str, on_ethernet: bool = False) -> bool:
        batch = (f"link add probe1 type veth\nlink add probe0 link probe1 type {kind}\n" if on_ethernet
                 else f"link add probe0 type {kind}\n")
        return self._all(f"link {kind}", ["unshare", "-n", "ip", "-batch", "-"], batch)

    def has_qdisc(self, kind: str) -> bool:
        return self._all(f"qdisc {kind}", ["unshare", "-n", "tc", "qdisc", "add", "dev", "lo", "root", kind])

    def accepts(self, commands: list[list[str]]) -> bool:
        """Do all these commands (vpnbench's own probes, never config values) succeed in a
        throwaway namespace on every host?"""
        script = " && ".join(shlex.join(argv) for argv in commands)
        return self._all(f"accepts {script}", ["unshare", "-n", "sh", "-c", script])


class SshTestbed(Testbed):
    """Machines reached over ssh. Their underlay exists already (kind = "ssh": the inventory
    names the interfaces and addresses), or the VM testbed built it before connecting."""

    def __init__(self, spec: TestbedSpec, resources: RunResources, targets: dict[str, SshTarget] | None = None,
                 settings: SshSettings | None = None, prefix: list[str] = ()):
        self.spec = spec
        self.resources = resources
        self.targets = targets or dict(spec.hosts)
        self.settings = settings or spec.ssh
        self.prefix = list(prefix)  # how to reach the hosts' control addresses (vm: the run's namespace)
        self.links = self._links()
        self.cpus = {role: t.cpus for role, t in self.targets.items() if t.cpus is not None}
        self.pin_note = ("pinned: " + ", ".join(f"{r} on CPU {','.join(map(str, c))}" for r, c in self.cpus.items())
                         if self.cpus else "not pinned (no cpus in the inventory)")
        self.hosts = {role: self._host(role, target) for role, target in self.targets.items()}
        self.sysctls: dict[str, dict] = {}
        self.probe = RemoteKernelProbe([self.client, self.server])

    def _host(self, role: str, target: SshTarget) -> SshHost:
        control = self.resources.path(f"ssh-{role}.sock")
        return SshHost(role, SshConnection(target, self.settings, control, self.prefix), self.resources.dir, target.cpus)

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

    def underlay_map(self) -> dict[str, dict[str, str]]:
        return {role: {f: self.underlay_addr(role, f) for f in self.families()} for role in ("client", "server")}

    def connect(self) -> None:
        """Open the ssh connections (the VM testbed boots its VMs first)."""
        for host in self.hosts.values():
            host.connect()

    def check_tools(self) -> None:
        """Fail before the first cell when a host lacks what every run needs."""
        capture_hosts = [point.host for point in self.capture_points()]
        for role, host in self.hosts.items():
            needed = ["ip", "ping", "sysctl", "unshare"] + (["taskset"] if host.cpus is not None else [])
            needed += ["tcpdump"] if host in capture_hosts else []
            missing = host.missing_commands(needed)
            if missing:
                raise TestbedError(f"{role} ({self.targets[role].host}): {', '.join(missing)} not found")

    def up(self) -> None:
        self.check_tools()
        self._apply_sysctls()
        self.wait_ready()

    def _apply_sysctls(self) -> None:
        for key, raw in self.spec.sysctls.items():
            value = " ".join(str(raw).split())
            for host in self.hosts.values():
                host.set_sysctl(key, value)  # the host records the old value: close (or cleanup) restores it
            self.sysctls[key] = {"value": value, "scope": "hosts"}

    def _kernel_log_pieces(self) -> list:
        """A kernel per machine (or VM): each one's log."""
        return [(f"{role}: dmesg | tail", lambda host=host: evidence.command(host, ["sh", "-c", DMESG_TAIL]))
                for role, host in self.hosts.items()]

    def down(self) -> None:
        for host in self.hosts.values():
            host.close()


def make_testbed(spec: TestbedSpec, resources: RunResources, bump: bool = False) -> Testbed:
    if spec.kind == "ssh":
        return SshTestbed(spec, resources)
    if spec.kind == "vm":
        from vpnbench.hosts.vm import VmTestbed  # boots QEMU: imported only when asked for
        return VmTestbed(spec, resources)
    return Testbed(spec, resources, bump)
