"""kind = "local": one network namespace per host on this machine.

veth links are created directly inside the namespaces (nothing ever appears in the root
namespace), IPv4 and IPv6 on every link, the router forwarding both families. The VM testbed
builds its router namespace with the same helpers (vm.py).

Set-up is batched, as the mesh testbed's: one `ip -batch` in the root namespace makes the
namespaces, another the veths, and each namespace is configured by one `ip -batch` of its own,
its sysctls written from a thread inside it (netns_thread): 5 or 6 processes where one `ip` or
`sysctl` per step took about 30 (issue 44: the harness's fixed cost). Tear-down is one pass over
/proc and one `ip -batch -force`.
"""

import os
import subprocess

from vpnbench.foundation.errors import HostError
from vpnbench.foundation.sysctls import apply_sysctls, restore_sysctls
from vpnbench.hosts.netns import NetnsHost
from vpnbench.hosts.resources import RunResources, remove_namespaces
from vpnbench.testbeds.base import BUMP_IFACES, Link, Testbed, plan_links
from vpnbench.testbeds.netns_thread import run_in_netns, write_sysctl
from vpnbench.testbeds.probe import LocalKernelProbe
from vpnbench.testbeds.spec import TestbedSpec, plan_pinning

FIRST_VETH_INDEX = 100  # see veth_lines
IPV6_MIN_MTU = 1280


class LocalTestbed(Testbed):
    """Builds and tears down the namespaces and the underlay of one run."""

    def __init__(self, spec: TestbedSpec, resources: RunResources, bump: bool = False):
        self.spec = spec
        self.resources = resources
        self.cpus, self.pin_note = plan_pinning(spec.pin, os.cpu_count() or 1)
        self._plan(bump)
        self._created: list[str] = []
        self.sysctls: dict[str, dict] = {}
        self._probe = LocalKernelProbe(resources)

    def _plan(self, bump: bool) -> None:
        """The links and the namespaces on them (with a bump and no router, one more: "link")."""
        self.links = plan_links(self.spec.router, bump)
        roles = ["client", "server"] + (["router"] if self.spec.router else []) + (["link"] if bump and not self.spec.router else [])
        self.hosts = {role: NetnsHost(role, self.resources.netns_name(role), self.resources.dir, self.cpus.get(role))
                      for role in roles}

    def add_bump(self) -> None:
        self._plan(bump=True)  # before up(): nothing is built yet

    @property
    def probe(self) -> LocalKernelProbe:
        return self._probe

    @property
    def setup_timeout_scale(self) -> float:
        """1 natively, 4 inside a TCG-emulated kernel VM (make test-kernel), whose CPU is slower."""
        return 4.0 if os.environ.get("VPNBENCH_VM_ACCEL") == "TCG" else 1.0

    @property
    def connect_note(self) -> str:
        return ""

    def connect(self) -> None:
        """Namespaces need no connection: they are made by up()."""

    def up(self) -> None:
        names = [host.netns for host in self.hosts.values()]
        self._created += names  # before they exist: down() removes those that do
        ip_batch(None, [f"netns add {name}" for name in names])
        router = self.router.netns if self.router is not None else None
        for name in names:  # before the veths exist (NO_DAD)
            run_in_netns(name, lambda forwards=name == router: write_sysctls(NO_DAD + (FORWARDING if forwards else [])))
        veths, lines = [], {name: ["link set lo up"] for name in names}  # veths: (a_ns, a_iface, b_ns, b_iface)
        bump_ifaces: dict[str, list[str]] = {}
        for link in self.links:
            a_ns, b_ns = self.hosts[link.a].netns, self.hosts[link.b].netns
            if link.bump:
                bump_ns = self.hosts[link.bump].netns
                lka, lkb = BUMP_IFACES
                veths += [(a_ns, link.a_iface, bump_ns, lka), (bump_ns, lkb, b_ns, link.b_iface)]
                # The bridge ends must stay silent: no IPv6 addresses, no neighbour discovery of
                # their own, and no ARP. Where the bump is the router's namespace, the kernel
                # answers ARP for the router's addresses on any interface: a server asking for its
                # gateway while linkem dropped the router's answer (loss 100 %) learned lkb's MAC,
                # and sent its frames to the bridge end itself, where the router's stack took them
                # past linkem.
                bump_ifaces.setdefault(bump_ns, []).extend((lka, lkb))
                lines[bump_ns] += [f"link set {iface} arp off up" for iface in (lka, lkb)]
            else:
                veths.append((a_ns, link.a_iface, b_ns, link.b_iface))
            lines[a_ns] += address_lines(link, "a")
            lines[b_ns] += address_lines(link, "b")
            if router is not None:
                lines[b_ns] += default_route_lines(link)
        ip_batch(None, veth_lines(veths))
        for name in names:
            run_in_netns(name, lambda name=name: (
                write_sysctls([f"net.ipv6.conf.{iface}.disable_ipv6=1" for iface in bump_ifaces.get(name, [])]),
                ip_batch(None, lines[name])))  # born in this thread's namespace
        self.sysctls = apply_sysctls(self.spec.sysctls, names, self.resources.dir)
        if self.bump_point() is None:
            self.wait_ready()  # with a bump, the caller starts the emulator first

    def set_mtu(self, mtu: int) -> None:
        """Every underlay interface, a bump's bridge ends included, to mtu (the scaling axis).
        Below 1280 the kernel drops an interface's IPv6 (addresses and routes); at or above it
        they are put back, so a small MTU before does not leave the next bring-up IPv4-only."""
        for link in self.links:
            ends = [(link.a, link.a_iface), (link.b, link.b_iface)]
            ends += [(link.bump, iface) for iface in BUMP_IFACES] if link.bump else []
            for role, iface in ends:
                ip("-n", self.hosts[role].netns, "link", "set", "dev", iface, "mtu", str(mtu))
        if mtu < IPV6_MIN_MTU:
            return
        for link in self.links:
            for side, role, iface in (("a", link.a, link.a_iface), ("b", link.b, link.b_iface)):
                ip("-n", self.hosts[role].netns, "-6", "addr", "replace", f"{link.addr(side, 'ipv6')}/64", "dev", iface,
                   "nodad")
        if self.router is not None:
            for link in self.links:
                ip("-n", self.hosts[link.b].netns, "-6", "route", "replace", "default", "via", link.addr("a", "ipv6"))

    def down(self) -> None:
        remove_namespaces(self._created)
        self._created.clear()
        restore_sysctls(self.resources.dir)


# -- namespace helpers (the VM testbed's router namespace is built with them too) ------------
# No duplicate address detection: tentative link-local addresses would stall neighbour discovery,
# and so IPv6, for the first seconds of every run. Set before a namespace's interfaces are made:
# DAD is off only where both `all` and the interface (which copies `default` when made) say so.
NO_DAD = ["net.ipv6.conf.default.accept_dad=0", "net.ipv6.conf.all.accept_dad=0"]
FORWARDING = ["net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"]  # a router, both families


def veth_lines(veths: list[tuple[str, str, str, str]]) -> list[str]:
    """`ip -batch` lines making veth pairs, each (a_ns, a_iface, b_ns, b_iface), whose two ends
    have different interface indexes. In fresh namespaces both ends would get index 2, and the
    kernel takes a device whose index equals its peer's (iflink) for one without a lower device:
    its carrier change is not urgent, linkwatch batches it up to a second later, and IPv6 on that
    end ignores neighbour solicitations until then (measured: the first IPv6 ping answered after
    1.02 s, 4 ms with distinct indexes). Indexes only need to be unique within a namespace; these
    are unique among the pairs made together. Made from the root namespace with each end's
    `netns`, the kernel creates each end in its namespace directly."""
    return [f"link add name {a_iface} index {FIRST_VETH_INDEX + 2 * n} netns {a_ns} type veth "
            f"peer name {b_iface} index {FIRST_VETH_INDEX + 2 * n + 1} netns {b_ns}"
            for n, (a_ns, a_iface, b_ns, b_iface) in enumerate(veths)]


def write_sysctls(settings: list[str]) -> None:
    """name=value settings, in the calling thread's namespace (inside run_in_netns)."""
    for setting in settings:
        write_sysctl(*setting.split("=", 1))


def add_netns(netns: str, created: list[str]) -> None:
    """A fresh namespace, recorded in created (for down()) the moment it exists."""
    ip("netns", "add", netns)
    created.append(netns)
    ip("-n", netns, "link", "set", "lo", "up")
    sysctl(netns, *NO_DAD)


def address_lines(link: Link, side: str) -> list[str]:
    """The link's addresses on one end (both families), and the interface up, as `ip -batch` lines."""
    iface = link.a_iface if side == "a" else link.b_iface
    return [f"addr add {link.addr(side, 'ipv4')}/24 dev {iface}",
            f"addr add {link.addr(side, 'ipv6')}/64 dev {iface} nodad", f"link set {iface} up"]


def default_route_lines(link: Link) -> list[str]:
    """The default routes of a link's far end (b), both families, via the router's side (a)."""
    return [f"route add default via {link.addr('a', 'ipv4')}", f"route add default via {link.addr('a', 'ipv6')}"]


def address(netns: str, link: Link, side: str) -> None:
    ip_batch(netns, address_lines(link, side))


def forward(router_ns: str) -> None:
    """The router forwards both families."""
    sysctl(router_ns, *FORWARDING)


def sysctl(netns: str, *settings: str) -> None:
    """Per-namespace sysctls: they vanish with the namespace, nothing to restore."""
    subprocess.run(["ip", "netns", "exec", netns, "sysctl", "-qw", *settings], check=True, capture_output=True)


def ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise HostError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


def ip_batch(netns: str | None, lines: list[str]) -> None:
    """Several `ip` commands in one process (in netns, or the calling thread's namespace)."""
    proc = subprocess.run(["ip", *(["-n", netns] if netns else []), "-batch", "-"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise HostError(f"ip -batch{' in ' + netns if netns else ''}: {proc.stderr.strip()[-400:]}")
