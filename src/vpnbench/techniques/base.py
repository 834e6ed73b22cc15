"""The Technique interface: bring an encrypted (or plain) path up between client and server."""

import abc
import dataclasses
import ipaddress
import logging
from collections.abc import Sequence
from typing import Callable, ClassVar, Literal

from vpnbench.foundation.errors import TechniqueError, VpnbenchError
from vpnbench.foundation.params import Params
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds
from vpnbench.hosts.base import Host, Proc
from vpnbench.hosts.resources import RunResources
from vpnbench.techniques.overhead import Expectation
from vpnbench.testbeds.mesh_spec import direct_path_possible
from vpnbench.testbeds.probe import KernelProbe

Protection = Literal["none", "encrypted", "integrity-only"]

log = logging.getLogger(__name__)


class Cleanup:
    """The undo of a bring-up, as kselftests' `defer` keeps it: each step of up() registers its
    undo right after it succeeds, and unwind() runs them newest first, each once. So down() after
    an up() that failed midway undoes exactly what was done, and no technique has to ask how far
    up() got. An undo that fails does not stop the others; the first failure is raised after all ran."""

    def __init__(self) -> None:
        self._undos: list[tuple[Callable[..., object], tuple, dict]] = []

    def defer(self, undo: Callable[..., object], *args: object, **kwargs: object) -> None:
        """Register undo(*args, **kwargs), to run at unwind()."""
        self._undos.append((undo, args, kwargs))

    def __len__(self) -> int:
        return len(self._undos)

    def unwind(self) -> None:
        first: Exception | None = None
        while self._undos:
            undo, args, kwargs = self._undos.pop()  # popped first: never run twice, even if it raises
            try:
                undo(*args, **kwargs)
            except (VpnbenchError, OSError) as exc:  # the others still run: a key file left behind is worse
                log.warning("undo %r failed: %s", undo, exc)
                first = first or exc
        if first is not None:
            raise first


@dataclasses.dataclass(frozen=True)
class Ends:
    """One tunnel's inner addresses: family -> address, on the client and on the server."""

    client: dict[str, str]
    server: dict[str, str]

    def nth(self, index: int) -> "Ends":
        """Tunnel `index`'s inner addresses (0: these, the first tunnel's), counted on from these:
        IPv4 in steps of 4 (each pair its own /30), IPv6 in steps of 16 (its own /124, the
        narrowest OpenVPN's --ifconfig-ipv6 takes), so 10 000 tunnels stay in the first's /16 and /64."""
        step = {"ipv4": 4, "ipv6": 16}
        def moved(addrs: dict[str, str]) -> dict[str, str]:
            return {family: str(ipaddress.ip_address(addr) + step[family] * index) for family, addr in addrs.items()}
        return Ends(moved(self.client), moved(self.server))


@dataclasses.dataclass
class Tunnel:
    """What a technique hands to measurements: where to send traffic, and what to expect on the wire."""

    backend: str
    server_addrs: dict[str, str]  # family -> address of the server inside the tunnel
    client_addrs: dict[str, str]
    protection: Protection
    wire_filter: str | None  # tcpdump filter that the protected traffic matches on the underlay
    # The protocol the wire proof must recognise in those packets (a name in wirecheck.RECOGNISERS),
    # so it says "WireGuard" from the bytes seen, not from the port alone; None: the filter only.
    wire_protocol: str | None = None
    negotiated: dict = dataclasses.field(default_factory=dict)
    procs: list[Proc] = dataclasses.field(default_factory=list)
    # Which end of the path the wire proof captures next to: a technique that protects only
    # the router-server link (MACsec there) must be watched on that link.
    capture_near: Literal["client", "server"] = "client"
    compresses: bool = False  # IPComp: the wire proof must send packets too small to be compressed
    # Tunnels 2..N of a bring-up with tunnels = N (the first is client_addrs/server_addrs): each its
    # own inner addresses through the same daemons (IPsec child SAs, WireGuard peers, ...).
    more: list[Ends] = dataclasses.field(default_factory=list)
    # A mesh technique's every node: node name (n0, n1, ...) -> its inner address, IPv4 or IPv6 (n0's and
    # n1's are client_addrs' and server_addrs'); empty for a tunnel between two hosts.
    overlay: dict[str, str] = dataclasses.field(default_factory=dict)

    def every(self) -> list[Ends]:
        """All its tunnels' inner addresses, the first one first."""
        return [Ends(self.client_addrs, self.server_addrs), *self.more]

    @property
    def family(self) -> str:
        """The inner family set-up timing and the wire proof use: IPv4 unless the tunnel carries
        only IPv6 (e.g. IPsec transport mode over an IPv6 underlay)."""
        return "ipv4" if "ipv4" in self.server_addrs else next(iter(self.server_addrs))


@dataclasses.dataclass
class BackendStatus:
    name: str
    available: bool
    reason: str = ""


class TechniqueContext:
    """What a technique may use: the two hosts, the underlay addresses and a private directory;
    on a mesh testbed also its nodes (testbeds/mesh.py's MeshNode, n0 and n1 being client and
    server) and the control node, where a mesh technique runs its control plane or relay."""

    def __init__(self, client: Host, server: Host, underlay: dict[str, dict[str, str]],
                 resources: RunResources, probe_kernel: KernelProbe, router: Host | None = None,
                 nodes: Sequence = (), control: Host | None = None):
        self.nodes = nodes
        self.control = control
        self.client = client
        self.server = server
        self.router = router  # for techniques that protect one link of the path (MACsec)
        self.underlay = underlay  # role -> family -> address
        self.resources = resources
        self.probe_kernel = probe_kernel


# The keys of a negotiated record that hold warnings about it (a weak group kept as asked, a
# deprecated mode): the report shows them as a badge beside the agreed line.
NEGOTIATED_WARNINGS = ("warning", "warnings")


def negotiated_warnings(negotiated: dict) -> list[str]:
    """The warnings a technique put in its negotiated record, in order."""
    found = []
    for key in NEGOTIATED_WARNINGS:
        value = negotiated.get(key)
        found += [value] if isinstance(value, str) else list(value or [])
    return found


class Technique(abc.ABC):
    """A technique declares, beside how it comes up, what it needs: the commands (and the
    Debian package of each) on both hosts, the kernel features each backend relies on, the
    commands that tell its software's versions, its doctor rows and the per-packet arithmetic
    of its encapsulation. doctor, the testbed's tool check, the install hints, host facts and
    the MTU expectation read these, so a new technique is this one class and its registration."""

    kind: ClassVar[str]
    Params: ClassVar[type[Params]]
    description: ClassVar[str]
    packages: ClassVar[dict[str, str]] = {}  # command -> Debian package, needed on client and server

    kernel_features: ClassVar[dict[str, str]] = {}  # backend -> the kernel feature it needs
    # Host facts: name -> a fixed shell command printing that software's version (first line
    # kept). Run on every host; a missing tool is recorded as absent. Never a campaign value.
    versions: ClassVar[dict[str, str]] = {}
    # The reference every other technique is compared with (the unencrypted baseline).
    is_reference: ClassVar[bool] = False
    # Brings up every node of a mesh testbed (TechniqueContext.nodes), not a pair: it needs one,
    # and its nodes may sit behind NATs (campaign/spec.py checks both before anything runs).
    mesh: ClassVar[bool] = False
    # The family of the addresses measured through it (a mesh's: of its nodes' overlay addresses,
    # Tunnel.overlay, which the traffic patterns send to): a measurement whose `family` is left
    # unset runs over it (campaign/plan.py), so an IPv6-only overlay sits beside the others
    overlay_family: ClassVar[str] = "ipv4"

    @classmethod
    def kernel_rows(cls, probe: KernelProbe) -> dict[str, bool]:
        """doctor's kernel feature rows for this technique: row name -> does the kernel have it."""
        return {}

    @classmethod
    @abc.abstractmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        """What its encapsulation leaves of underlay_mtu (vpnbench.techniques.overhead's arithmetic):
        settings are a cell's technique_params (kind, its settings, backend)."""

    def __init__(self, params: Params, ctx: TechniqueContext):
        self.params = params
        self.ctx = ctx
        self.tunnel: Tunnel | None = None
        # The last up()'s key exchange in seconds, where the daemon lets it be timed (its log):
        # the `setup` measurement reports it beside the set-up time.
        self.handshake_s: float | None = None
        # The longest up() waits for its key exchange, where the daemon lets that be bounded (the
        # `setup` kind's timeout, so a cycle under loss gives up when it no longer counts); None:
        # the technique's own limit.
        self.exchange_timeout: float | None = None
        self.undo = Cleanup()  # what up() did so far, each step's undo (down() runs them)

    @classmethod
    def agreed(cls, negotiated: dict) -> str:
        """What the ends agreed, in one line for the report's technique table (the whole record
        stays one click away): its short top-level facts; the warnings are shown apart."""
        return ", ".join(f"{key} {value}" for key, value in negotiated.items()
                         if key not in NEGOTIATED_WARNINGS and isinstance(value, (str, int, float, bool)))

    def handshake_attempts(self) -> dict[str, int]:
        """What the running daemons' logs count of the current key exchange so far, by name
        (strongSwan's IKE retransmissions, wireguard-go's handshake initiations); empty where the
        daemon's log counts nothing of it. The `setup` kind records it per cycle."""
        return {}

    @classmethod
    def tunnel_ceiling(cls, params: Params) -> tuple[int, str]:
        """The most tunnels one bring-up of these params holds between the same two hosts
        (TechniqueParams.tunnels), and why not more: checked with the campaign, before anything runs."""
        return 1, f"vpnbench brings up one {cls.kind} tunnel between two hosts"

    @classmethod
    def refused_on(cls, params: Params, testbed_kind: str) -> str | None:
        """Why these params must not run on a testbed of this kind (one whose hosts are real
        machines vpnbench did not make, say): "field: why; allowed ...", checked with the
        campaign before anything runs, or None."""
        return None

    @classmethod
    def cannot_rekey(cls, params: Params) -> str | None:
        """None when rekey() can renew this technique's keys on demand; otherwise why not (checked
        with the campaign, before anything runs)."""
        return f"{cls.kind}: vpnbench cannot renew its keys on demand"

    def rekey(self) -> dict:
        """Renew the keys of the running tunnel now; return what changed (old and new SPIs, ...).
        Raises TechniqueError when it did not happen."""
        raise TechniqueError(self.cannot_rekey(self.params) or f"{self.kind}: rekey not implemented")

    @classmethod
    def cannot_restart_server(cls, params: Params) -> str | None:
        """None when restart_server() can kill the server's daemon and start it again; otherwise
        why not (checked with the campaign, before anything runs)."""
        return f"{cls.kind}: vpnbench cannot restart its server daemon"

    def restart_server(self) -> dict:
        """Kill the server's daemon and start it again with the same configuration (the client
        left as it is); return what was done. Raises TechniqueError when it did not happen."""
        raise TechniqueError(self.cannot_restart_server(self.params) or f"{self.kind}: restart not implemented")

    # How two mesh nodes behind NATs reach each other at all, by the mesh's design: "relay" (through
    # a relay every node reaches, over TCP too), "udp-relay" (a relay reached over UDP only: never a
    # node behind udp-blocked), "direct" (no relay: only where mesh_spec.direct_path_possible says).
    reach: Literal["relay", "udp-relay", "direct"] = "relay"  # a class's, or (EasyTier) a bring-up's

    def pair_can_answer(self, nat_a: str, nat_b: str) -> bool:
        """Whether two mesh nodes behind these NAT types can answer each other at all (`reach`): what
        a measurement stops waiting for once every pair that can has answered (churn), never what
        judges a result. "relay", the default, waits for every pair."""
        if self.reach == "direct":
            return direct_path_possible(nat_a, nat_b)
        return self.reach == "relay" or "udp-blocked" not in (nat_a, nat_b)

    @classmethod
    def cannot_churn(cls, params: Params | None) -> str | None:
        """None when a mesh node can leave() and a newcomer join() while the mesh runs (the churn
        kind); otherwise why not (checked with the campaign, before anything runs)."""
        return (f"{cls.kind}: a node's leave and a newcomer's join are not built for it" if cls.mesh
                else f"{cls.kind} runs between two hosts, not as a mesh of nodes")

    def leave(self, name: str) -> dict:
        """Take mesh node `name` out: its daemon stopped, its keys wiped, its peers left to notice
        (a node that goes away). Returns what was done; TechniqueError when it was not."""
        raise TechniqueError(self.cannot_churn(self.params) or f"{self.kind}: leave not implemented")

    def join(self, name: str) -> dict:
        """Bring mesh node `name` (out since leave()) in as a newcomer: fresh keys, its daemon
        started, the mesh told as it would be of a new node. Returns what was done once the node's
        own part is done (reaching it is the mesh's, and measured); TechniqueError when it failed."""
        raise TechniqueError(self.cannot_churn(self.params) or f"{self.kind}: join not implemented")

    def _stop_node_daemon(self, proc: Proc) -> None:
        """Stop one of the tunnel's daemons for good (a node that left the mesh) and drop it from
        tunnel.procs, which failure() watches: its exit is no failure."""
        proc.stop()
        self.tunnel.procs.remove(proc)

    def _take_node_out(self, name: str, daemons: dict[str, Proc], host: Host, state, daemon: str) -> dict:
        """A leave() as most meshes take one: node `name`'s daemon (daemons[name], dropped from
        it) stopped for good and its state (configuration, keys: a path on its host) wiped."""
        proc = daemons.pop(name, None) if name in self.tunnel.overlay else None
        if proc is None:
            raise TechniqueError(f"{self.kind}: node {name} is not in the mesh")
        self._stop_node_daemon(proc)
        wipe(host, state)
        return {"node": name, "stopped": daemon}

    @classmethod
    @abc.abstractmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        """Every data path this technique has, and whether this machine can run it."""

    @classmethod
    def resolve_backend(cls, params: Params, probe: KernelProbe) -> str:
        """Which backend a run of these params really uses; raises ValueError when none can."""
        statuses = {status.name: status for status in cls.backends(probe)}
        wanted = getattr(params, "backend", "auto")
        if wanted == "auto":
            for status in statuses.values():
                if status.available:
                    return status.name
            reasons = "; ".join(f"{s.name}: {s.reason}" for s in statuses.values())
            raise ValueError(f"no backend available ({reasons})")
        status = statuses[wanted]
        if not status.available:
            raise ValueError(f"backend {wanted!r} is not available: {status.reason}")
        return wanted

    @abc.abstractmethod
    def up(self, backend: str) -> Tunnel:
        """Bring the technique up with fresh keys; return the tunnel."""

    def down(self) -> None:
        """Stop daemons, remove interfaces, wipe key files: the undos up() registered, newest
        first, as far as up() got. Safe to call twice."""
        self.tunnel = None
        self.undo.unwind()

    def evidence(self) -> dict[str, str]:
        """This technique's own state on both ends, for a bring-up that failed: key ("client: wg
        show") -> text. Call it after up() raised and before down() (which removes the state).
        Best effort: never raises, every command short and bounded (see vpnbench.hosts.evidence)."""
        return {}

    def failure(self) -> str | None:
        """None while healthy; otherwise why the technique stopped working (e.g. a daemon died)."""
        if self.tunnel is None:
            return "not up"
        for proc in self.tunnel.procs:
            if not proc.alive():
                tail = "\n".join(proc.output().strip().splitlines()[-5:])
                return f"{proc.name} exited: {tail or 'no output'}"
        return None


class BuiltTunDaemon(Technique):
    """A technique whose one data path is a daemon vpnbench builds (builds.RECIPES[BUILD], the
    campaign's `version`) on TUN: available where its build and /dev/net/tun are on the host."""

    BUILD: ClassVar[str]
    PROGRAM: ClassVar[str | None] = None  # the daemon's program, where it is not named as the build (easytier-core)

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        return [cls._status(probe, builds.RECIPES[cls.BUILD].default)]

    @classmethod
    def resolve_backend(cls, params, probe: KernelProbe) -> str:
        status = cls._status(probe, params.version)
        if not status.available:
            raise ValueError(f"backend 'userspace' is not available: {status.reason}")
        return status.name

    @classmethod
    def _status(cls, probe: KernelProbe, version: str) -> BackendStatus:
        lacking = probe.host_lacking(builds.program(cls.BUILD, cls.PROGRAM or cls.BUILD, version))
        if lacking is not None:
            return BackendStatus("userspace", False, builds.missing_reason(cls.BUILD, version, lacking))
        tun = probe.host_lacking("/dev/net/tun")
        if tun is not None:
            return BackendStatus("userspace", False, f"{tun} lacks TUN (/dev/net/tun)")
        return BackendStatus("userspace", True)


# A mesh with a control server: each join is a node the server registers and then a network map
# it sends every node already joined, each of which reconfigures its WireGuard for one more peer,
# so the k-th join costs work on k daemons, and a node's join waits grow with N. At N = 100 on a
# shared 2-core machine (load 48) a `tailscale up` of the pair's 20 s timed out (stop 58, n69), and
# a `netbird up` of the pair's 40 s (stop 67, n67 and n68); at N = 30 both came up well within.
# NetBird at N = 100 did not come up with 90 s either (stop 68: n59's `netbird up` timed out, n70's
# daemon gave up its own Up after its fixed 50 s, and a node whose daemon was then waited for was
# not connected to management 90 s after its start): there the host is the limit, not the wait.
JOIN_S_PER_NODE = 0.5


class MeshTechnique:
    """What every mesh technique says alike. First among a mesh class's bases, before the pair
    technique it builds on, whose tunnel ceiling and server restart speak of two hosts."""

    mesh: ClassVar[bool] = True

    def join_wait(self, pair_wait: float) -> float:
        """How long a node's join into a control server's mesh may take: the pair technique's
        wait and JOIN_S_PER_NODE for every node of the mesh."""
        return pair_wait + JOIN_S_PER_NODE * len(self.ctx.nodes)

    @classmethod
    def tunnel_ceiling(cls, params: Params) -> tuple[int, str]:
        return 1, f"{cls.kind}: its tunnels are the mesh's pairs (nodes in [testbed])"

    @classmethod
    def cannot_restart_server(cls, params: Params) -> str | None:
        return f"{cls.kind}: a mesh has no server to restart"
