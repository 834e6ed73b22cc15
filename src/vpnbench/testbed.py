"""The testbed: client and server hosts, optionally a router between them, and the underlay.

Local kind: one network namespace per host, veth links created directly inside the
namespaces (nothing ever appears in the root namespace), IPv4 and IPv6 on every link, the
router forwarding both families.
"""

import dataclasses
import os
import subprocess
import time
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from vpnbench.hosts.base import Host
from vpnbench.hosts.netns import NetnsHost
from vpnbench.params import Duration
from vpnbench.resources import RunResources, delete_netns
from vpnbench.sysctls import apply_sysctls, restore_sysctls


class TestbedSpec(BaseModel):
    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["local"] = "local"
    router: bool = True
    pin: Literal["auto", "on", "off"] = "auto"
    monitor_interval: Duration = 0.5
    impairment_backend: Literal["auto", "netem", "linkem"] = "auto"
    sysctls: dict[Annotated[str, StringConstraints(pattern=r"^net\.[a-z0-9_.]+$")], str | int] = {}


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


BUMP_IFACES = ("lka", "lkb")  # the emulator's two sides: a faces the client, b the server


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
        self.sysctls: dict[str, dict] = {}

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

    def capture_point(self) -> tuple[Host, str]:
        """Where the underlay is watched: the router's client-facing side, else the server's link."""
        link = self.links[0]
        if self.router is not None:
            return self.router, link.a_iface
        return self.server, link.b_iface

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

    def wait_ready(self, timeout: float = 10.0) -> None:
        """The underlay is ready when the client reaches the server over both families
        (with a bump, only once its emulator forwards)."""
        for family in ("ipv4", "ipv6"):
            target = self.underlay_addr("server", family)
            deadline = time.monotonic() + timeout
            while not self.client.run(["ping", "-n", "-c", "1", "-W", "0.2", target], check=False).ok:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"testbed: client cannot reach server at {target}")

    def _build_link(self, link: Link) -> None:
        a_ns, b_ns = self.hosts[link.a].netns, self.hosts[link.b].netns
        if link.bump:
            self._build_bump(link)
        else:
            _ip("-n", a_ns, "link", "add", link.a_iface, "type", "veth", "peer", "name", link.b_iface, "netns", b_ns)
        for side, netns, iface in (("a", a_ns, link.a_iface), ("b", b_ns, link.b_iface)):
            _ip("-n", netns, "addr", "add", f"{link.addr(side, 'ipv4')}/24", "dev", iface)
            _ip("-n", netns, "-6", "addr", "add", f"{link.addr(side, 'ipv6')}/64", "dev", iface, "nodad")
            _ip("-n", netns, "link", "set", iface, "up")

    def _build_bump(self, link: Link) -> None:
        """a_iface <-> lka | linkem | lkb <-> b_iface: two veth pairs, the middle ends unaddressed."""
        a_ns, b_ns, bump_ns = (self.hosts[role].netns for role in (link.a, link.b, link.bump))
        lka, lkb = BUMP_IFACES
        _ip("-n", a_ns, "link", "add", link.a_iface, "type", "veth", "peer", "name", lka, "netns", bump_ns)
        _ip("-n", bump_ns, "link", "add", lkb, "type", "veth", "peer", "name", link.b_iface, "netns", b_ns)
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

    def down(self) -> None:
        for netns in reversed(self._created):
            delete_netns(netns)
        self._created.clear()
        restore_sysctls(self.resources.dir)


def _sysctl(netns: str, *settings: str) -> None:
    """Per-namespace sysctls: they vanish with the namespace, nothing to restore."""
    subprocess.run(["ip", "netns", "exec", netns, "sysctl", "-qw", *settings], check=True, capture_output=True)


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
