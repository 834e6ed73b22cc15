"""NetBird as a mesh: netbird-server (management, signal, relay, STUN) on a mesh testbed's control
node (testbeds/mesh.CONTROL_ADDR), the netbird daemon on every node, all joined with one setup key.

Everything as the pair technique (techniques/netbird.py) makes it: the server's fresh configuration
and SQLite stores in the run's 0700 directory with metrics and GeoLite downloads off, its owner and
setup key made through its own API from 0600 files, each daemon contained (its profile, state
directory and socket in the run's directory, no SSH or DNS configuration, NB_LAZY_CONN=false so
every pair connects at once, not at its first packet), its interface and WireGuard port the run's.

Each daemon learns its peers from management and exchanges ICE offers with each through signal;
its candidates are its own address and the mapping STUN saw on the server's port. ICE (pion)
checks every candidate pair from both ends at once, so a pair whose NATs leave a direct path
(mesh_spec.direct_path_possible) can go "P2P"; any pair ICE does not join stays on NetBird's relay,
which the daemon dials on the server's port (QUIC or WebSocket over TCP) before ICE is done: a
udp-blocked node reaches the relay over TCP and every peer through it. path = "relayed" sets
NB_FORCE_RELAY on every daemon: no ICE, every pair relayed.

NetBird reports each pair's path itself (`netbird status --json`: connectionType "P2P" or
"Relayed"); the node's view at up()'s return is recorded beside the underlay's (negotiated
mesh.routes, the convergence kind's own_view).

up() returns once every node has joined and n0 holds n1 Connected over any path (the pair the
runner's first packet and two-host measurements use); the other pairs are the convergence kind's
to count.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import make_dir, wipe
from vpnbench.hosts import evidence
from vpnbench.hosts.base import Host
from vpnbench.techniques.base import MeshTechnique, TechniqueContext, Tunnel
from vpnbench.techniques.netbird import (
    NAME,
    PATH_TIMEOUT,
    SERVER,
    START_TIMEOUT,
    WIREGUARD_OVERHEAD,
    Netbird,
    NetbirdParams,
    run_port,
)
from vpnbench.testbeds.mesh import CONTROL_ADDR
from vpnbench.testbeds.mesh_spec import direct_path_possible

PARALLEL = 8  # nodes brought up at once: each a daemon start and a `netbird up` (mostly waiting on the server)
UNDERLAY_MTU = 1500  # the mesh testbed's links
FORCE_RELAY = "NB_FORCE_RELAY"
PATHS = {"P2P": "direct", "Relayed": "relay"}  # NetBird's connectionType, in the convergence kind's words


class NetbirdMeshParams(NetbirdParams):
    kind: Literal["netbird-mesh"] = "netbird-mesh"  # type: ignore[assignment]
    # auto: direct where ICE joins the pair through the NATs, else through the relay;
    # relayed: every pair through the relay (NB_FORCE_RELAY on every daemon)
    path: Literal["auto", "relayed"] = "auto"


class NetbirdMesh(MeshTechnique, Netbird):
    kind = "netbird-mesh"
    Params = NetbirdMeshParams
    CONTROL = "control"
    description = "NetBird as a mesh of a mesh testbed's nodes (netbird-server with its relay and STUN on the control node)"

    def __init__(self, params: NetbirdMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes = {}  # node name -> its host
        self.overlay: dict[str, str] = {}

    def _control_host(self) -> Host:
        return self.ctx.control

    def _client_env(self, role: str) -> dict[str, str]:
        env = super()._client_env(role)
        if self.params.path == "relayed":
            env[FORCE_RELAY] = "true"
        return env

    def up(self, backend: str) -> Tunnel:
        p, res, nodes = self.params, self.ctx.resources, list(self.ctx.nodes)
        self.backend = backend
        port = p.port or run_port(res.run_id)
        self.wg_port = wg_port = port + 1  # every node in its own namespace: one port for all
        self.nodes = {node.name: node.host for node in nodes}
        self.ifaces = {node.name: res.iface_name(f"nb{i}") for i, node in enumerate(nodes)}
        self.mtu = p.mtu or UNDERLAY_MTU - WIREGUARD_OVERHEAD
        for where, host in {self.CONTROL: self.ctx.control, **self.nodes}.items():
            self.dirs[where] = make_dir(host, res.path(f"netbird-{where}"))
            host.remember_dir(self.dirs[where])  # cleanup after a kill -9 wipes it too
            self.undo.defer(wipe, host, self.dirs[where])  # after the daemons stop (undo runs newest first)
        self.url = f"http://{CONTROL_ADDR}:{port}"
        # The wire proof watches n0's link while n0 and n1 talk: WireGuard over UDP where they can go
        # direct; else the relay's stream on the server's port, WireGuard's packets inside it (no
        # recogniser for the relay's framing: the filter alone, and the marker must stay unseen)
        direct_pair = p.path == "auto" and direct_path_possible(nodes[0].nat, nodes[1].nat)
        self.tunnel = Tunnel(backend=backend, server_addrs={}, client_addrs={}, protection="encrypted",
                             wire_filter=f"udp port {wg_port}" if direct_pair else f"host {CONTROL_ADDR} and port {port}",
                             wire_protocol="WireGuard" if direct_pair else None)
        started = time.monotonic()
        self._start_server(CONTROL_ADDR, port)
        self._key = self._setup_key(usage_limit=0)  # in memory only: a churn's newcomers join with it too
        self.undo.defer(self._down_interfaces)  # after the daemons stop (newest first)
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(self._up_node, self.nodes))  # list(): the first failure is raised here
        self.handshake_s = round(time.monotonic() - started, 3)  # the server, the key and every join
        with ThreadPoolExecutor(PARALLEL) as pool:
            self.overlay = dict(zip(self.nodes, pool.map(
                lambda name: self._peer_status(name)["netbirdIp"].split("/")[0], self.nodes)))
        self.tunnel.overlay = self.overlay
        self.tunnel.client_addrs, self.tunnel.server_addrs = {"ipv4": self.overlay["n0"]}, {"ipv4": self.overlay["n1"]}
        # n0 and n1 first meet through the relay; where they can go direct, up() waits until ICE has
        # joined them (the wire proof looks for WireGuard between them), as the pair technique does
        peer, connected_s = self._connected("n0", "n1", "P2P" if direct_pair else None)
        self.tunnel.negotiated = {
            "implementation": NAME, "backend": backend, "control": SERVER, "control_url": self.url,
            "server": "control node", "join_s": self.handshake_s, "path_asked": p.path,
            "first_connection_n0_n1": {"path": PATHS.get(peer.get("connectionType"), peer.get("connectionType")),
                                       "s": round(connected_s, 3)},
            "wireguard_port": wg_port, "mtu": self.mtu,
            "keys": "per bring-up (each peer's WireGuard key made by its daemon; one reusable setup key, no usage "
                    "limit: a churn's newcomers join with it too)",
            "mesh": {"nodes": len(nodes), "discovery": "management's network map, ICE offers through signal, STUN",
                     "relay": "netbird-server's relay on the control node", "routes": self.routes()},
            **self._what_ran("n0"),
        }
        if p.path == "relayed":
            self.tunnel.negotiated["forced_by"] = FORCE_RELAY
        return self.tunnel

    def _up_node(self, name: str) -> None:
        """name's daemon started with an empty state directory (so a WireGuard key of its own) and
        joined with the setup key: `netbird up` returns once management has registered the peer."""
        self._start_daemon(name)
        key_file = self.dirs[name] / "setup-key"
        self.nodes[name].write_file(key_file, self._key, 0o600)
        try:
            self._netbird(name, "up", "--setup-key-file", str(key_file), "--management-url", self.url,
                          "--disable-dns", "--interface-name", self.ifaces[name], "--wireguard-port", str(self.wg_port),
                          "--mtu", str(self.mtu), "--hostname", f"vpnbench-{name}",
                          timeout=self.join_wait(START_TIMEOUT + 10))  # grows with N (base.JOIN_S_PER_NODE)
        finally:
            self.nodes[name].remove_file(key_file)  # the peer is registered: its WireGuard key is its identity

    @classmethod
    def cannot_churn(cls, params) -> str | None:
        return None

    def leave(self, name: str) -> dict:
        """The node's daemon stopped (it takes its interface down as it exits; what it leaves is
        removed here), its directory (profile, WireGuard key, state) wiped: management keeps the
        peer, offline, and the others are told as it notices."""
        done = self._take_node_out(name, self.daemons, self.nodes[name], self.dirs[name], NAME)
        self._down_interfaces([name])
        return done

    def join(self, name: str) -> dict:
        """A newcomer: a fresh directory, so the daemon makes a new WireGuard key, and `netbird up`
        with the run's setup key; management registers a new peer with an address of its own, which
        the overlay (and the churn's probes) then use. Returns once it is registered and has its
        address; the others learn of it from management's network map, and reaching it is the mesh's
        part, measured."""
        if name in self.daemons or name not in self.nodes:
            raise TechniqueError(f"{self.kind}: node {name} is not out of the mesh")
        make_dir(self.nodes[name], self.dirs[name])
        self._up_node(name)
        self.overlay[name] = self._peer_status(name)["netbirdIp"].split("/")[0]
        return {"node": name, "started": NAME, "key": "a new WireGuard key (a new peer in management)",
                "address": self.overlay[name]}

    def _connected(self, name: str, other: str, connection_type: str | None) -> tuple[dict, float]:
        """Until `name` holds `other` Connected (over this connectionType; None: any): its view of
        that peer, and how long."""
        started, peer = time.monotonic(), {}
        while time.monotonic() - started < PATH_TIMEOUT:
            peer = self._peers(name).get(self.overlay[other], {})
            if peer.get("status") == "Connected" and connection_type in (None, peer.get("connectionType")):
                return peer, time.monotonic() - started
            time.sleep(0.1)
        raise TechniqueError(f"netbird-mesh: {name} did not hold {other} connected{' ' + connection_type if connection_type else ''} "
                             f"within {PATH_TIMEOUT:g} s (last: {peer.get('status')} {peer.get('connectionType')})")

    def _peers(self, name: str) -> dict[str, dict]:
        """The node's peers by overlay address (`netbird status --json`)."""
        details = self._peer_status(name)["peers"].get("details") or []
        return {peer.get("netbirdIp"): peer for peer in details}

    def routes(self) -> dict[str, str]:
        """NetBird's own view now, by ordered pair ("n0>n3"): "direct" where n0 holds n3 connected peer
        to peer, "relay:control" where it holds it through the relay, else n0's status word for n3
        ("Connecting", "Idle"; "unknown" where n3 is not among its peers)."""
        by_address = {address: name for name, address in self.overlay.items()}

        def view(name: str) -> dict[str, str]:
            found = {}
            for address, peer in self._peers(name).items():
                if address in by_address:
                    kind = PATHS.get(peer.get("connectionType"))
                    connected = peer.get("status") == "Connected" and kind
                    found[by_address[address]] = ("relay:control" if kind == "relay" else kind) if connected \
                        else str(peer.get("status") or "unknown")
            return found
        with ThreadPoolExecutor(PARALLEL) as pool:
            views = dict(zip(self.overlay, pool.map(view, self.overlay)))
        return {f"{a}>{b}": views[a].get(b, "unknown") for a in self.overlay for b in self.overlay if a != b}

    def down(self) -> None:
        # `netbird down` on every node at once (each says goodbye to management); then the undo
        alive = [name for name, proc in self.daemons.items() if proc.alive()]
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(lambda name: self._netbird(name, "down", check=False, timeout=20), alive))
        super(Netbird, self).down()  # the undo; not the pair's down(), which asks each node again in turn

    def evidence(self) -> dict[str, str]:
        """The server's log, and the first four nodes' daemon logs and `netbird status -d`."""
        shown = list(self.daemons)[:4]
        pieces = [("control: netbird-server log", lambda: evidence.log_tail(self.server_proc))]
        pieces += [(f"{name}: netbird daemon log", lambda name=name: evidence.log_tail(self.daemons[name]))
                   for name in shown]
        pieces += [(f"{name}: netbird status", lambda name=name: evidence.command(
            self.nodes[name], [self._program(NAME), "status", "-d", "--daemon-addr", self._daemon_addr(name),
                               "--log-file", "console"])) for name in shown]
        return evidence.gather(pieces)
