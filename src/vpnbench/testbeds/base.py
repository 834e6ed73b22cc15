"""The testbed interface every kind implements: local namespaces, ssh hosts, QEMU VMs.

A testbed is built in three steps, the same for every kind: `connect()` (reach or boot the
machines; nothing to do for namespaces), `up()` (the underlay ready: client reaches server),
`down()` (everything it made, gone). Between them the runner asks it for its `hosts`, its
`probe` (what the hosts' kernels and tool sets can do), its `facts` (recorded with the run)
and, when a bring-up fails, its `evidence`.
"""

import abc
import dataclasses
import re
from typing import Literal

from vpnbench.foundation.errors import TestbedError
from vpnbench.hosts import evidence
from vpnbench.hosts.base import Host
from vpnbench.hosts.reach import wait_reachable
from vpnbench.hosts.resources import RunResources
from vpnbench.testbeds.probe import KernelProbe
from vpnbench.testbeds.spec import TestbedSpec


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

    def end(self, role: str) -> tuple[str, str]:
        """(side, interface) of role on this link."""
        return ("a", self.a_iface) if self.a == role else ("b", self.b_iface)


BUMP_IFACES = ("lka", "lkb")  # the emulator's two sides: a faces the client, b the server


def plan_links(router: bool, bump: bool = False) -> list[Link]:
    """The underlay. With bump, the link next to the server is cut in two and bridged by
    linkem: in the router when there is one, else in a namespace of its own ("link")."""
    if router:
        return [Link("router", "r0", "client", "c0", "10.201.1", "fd00:201:1"),
                Link("router", "r1", "server", "s0", "10.201.2", "fd00:201:2", "router" if bump else None)]
    return [Link("client", "c0", "server", "s0", "10.201.0", "fd00:201:0", "link" if bump else None)]


class Testbed(abc.ABC):
    """Client and server hosts, optionally a router between them, and the underlay of one run."""

    __test__ = False

    spec: TestbedSpec
    resources: RunResources
    hosts: dict[str, Host]  # role -> host: client, server, and router (or link) where there is one
    links: list[Link]
    pin_note: str = ""  # how the hosts' processes are placed on cores, for the terminal and the run
    # Can the router's kernel run netem? Not when the router is a namespace of a machine without
    # sch_netem (the VM testbed's): netem then acts on the endpoints (impair_backends.py).
    netem_on_router: bool = True
    sysctls: dict[str, dict]  # what up() applied, for the run's record
    # A mesh testbed's nodes (testbeds/mesh.py's MeshNode: name, host, NAT, addresses) and the host
    # of the control planes; a two-host testbed has neither.
    nodes: tuple = ()
    control: Host | None = None

    @abc.abstractmethod
    def connect(self) -> None:
        """Reach (or boot) the machines, so that `probe` can ask them; nothing is changed on them yet."""

    @abc.abstractmethod
    def up(self) -> None:
        """Make the underlay ready: every host configured, the client reaches the server."""

    @abc.abstractmethod
    def down(self) -> None:
        """Remove everything connect() and up() made (safe to call after a partial connect)."""

    @property
    @abc.abstractmethod
    def probe(self) -> KernelProbe:
        """What the kernels (and tool sets) of the hosts that run a technique can do."""

    @property
    def facts(self) -> dict:
        """What the run records about the testbed beside its kind (the VMs' accelerator, ...)."""
        return {}

    @property
    def connect_note(self) -> str:
        """What connect() is about to do, for the terminal ("" when it has nothing to do)."""
        return f"connecting to the {self.spec.kind} testbed: {', '.join(self.hosts)}"

    @property
    def setup_timeout_scale(self) -> float:
        """How much longer than natively work on the hosts may take (bring-up deadlines scale by it)."""
        return 1.0

    # -- the layout ---------------------------------------------------------------------------
    @property
    def client(self) -> Host:
        return self.hosts["client"]

    @property
    def server(self) -> Host:
        return self.hosts["server"]

    @property
    def router(self) -> Host | None:
        return self.hosts.get("router")

    def families(self) -> tuple[str, ...]:
        return ("ipv4", "ipv6")

    def underlay_addr(self, role: str, family: str) -> str:
        for link in self.links:
            if role in (link.a, link.b):
                return link.addr(link.end(role)[0], family)
        raise KeyError(role)

    def underlay_map(self) -> dict[str, dict[str, str]]:
        """role -> family -> underlay address, for client and server."""
        return {role: {family: self.underlay_addr(role, family) for family in self.families()}
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

    def observed_paths(self, window: float) -> dict[tuple[str, str], str]:
        """A mesh testbed's pairs and the path each took over the underlay in the next `window`
        seconds (testbeds/mesh.py); a two-host testbed has none to tell."""
        return {}

    def wait_ready(self, timeout: float = 10.0) -> None:
        """The underlay is ready when the client reaches the server over every family
        (with a bump, only once its emulator forwards)."""
        timeout *= self.setup_timeout_scale
        for family in self.families():
            target = self.underlay_addr("server", family)
            if wait_reachable(self.client, target, timeout) is None:
                raise TestbedError(f"testbed: client cannot reach server at {target} within {timeout:g} s")

    def add_bump(self) -> None:
        """Cut the link next to the server in two, bridged by a userspace emulator (linkem's bump),
        before up(). Only where vpnbench builds the underlay: the registry lets a backend that
        needs a bump run on such testbeds only."""
        raise TestbedError(f"a {self.spec.kind} testbed has no bump-in-the-wire hop")

    def set_mtu(self, mtu: int) -> None:
        """The MTU scaling axis: only where vpnbench builds the underlay (the spec refuses it elsewhere)."""
        raise TestbedError(f"mtu: the underlay of a {self.spec.kind} testbed is not vpnbench's to change")

    # -- evidence -----------------------------------------------------------------------------
    def evidence(self) -> dict[str, str]:
        """The underlay as it was when a bring-up failed: links (with counters), addresses,
        routes and xfrm SAs of every host, and the kernel log(s). Best effort, never raises."""
        pieces = [(f"{role}: {' '.join(argv)}", lambda host=host, argv=argv: _hide_keys(evidence.command(host, argv)))
                  for role, host in self.hosts.items() for argv in EVIDENCE_COMMANDS]
        return evidence.gather(pieces + self.kernel_log_pieces())

    def kernel_log_pieces(self) -> list:
        """One kernel per machine: each one's log, once (namespaces of one machine share it)."""
        machines: dict[object, tuple[str, Host]] = {}
        for role, host in self.hosts.items():
            machines.setdefault(host.machine or role, (role, host))
        if len(machines) == 1:
            host = next(iter(machines.values()))[1]
            return [("kernel: dmesg | tail", lambda: evidence.command(host, ["sh", "-c", DMESG_TAIL]))]
        return [(f"{role}: dmesg | tail", lambda host=host: evidence.command(host, ["sh", "-c", DMESG_TAIL]))
                for role, host in machines.values()]


EVIDENCE_COMMANDS = (["ip", "-d", "link"], ["ip", "-s", "link"], ["ip", "addr"], ["ip", "route"], ["ip", "-6", "route"],
                     ["ip", "xfrm", "state", "list", "nokeys"])  # nokeys: iproute2 leaves the keys out
DMESG_TAIL = "dmesg 2>&1 | tail -n 40"  # fixed text, no config values in it
# The second layer under nokeys: an algorithm's key, on a line of its own or inside `ip -o`'s one line
# per SA (fields joined by "\"), and any hex run as long as a key (SPIs and marks are 8 digits).
_XFRM_KEY = re.compile(r"(?<![\w-])((?:auth-trunc|auth|enc|aead|comp)\s+\S+\s+)0x[0-9a-fA-F]+")
_LONG_HEX = re.compile(r"0x[0-9a-fA-F]{24,}")


def _hide_keys(text: str) -> str:
    """`ip xfrm state` prints the SAs' keys: evidence keeps the algorithms, never the keys."""
    return _LONG_HEX.sub("(key hidden)", _XFRM_KEY.sub(r"\1(key hidden)", text))
