"""WireGuard as a static full mesh: every node of a mesh testbed lists every other node as a peer,
at the address the internet sees it (its own, or its NAT's outside address) and WireGuard's port.

It is the control of the mesh comparison (issue 41): no control plane, no discovery, no hole
punching, no relay. What reaches what follows from WireGuard's own rules and the NATs alone: a
peer's endpoint is the configured one until an authenticated packet arrives from elsewhere
(WireGuard roams to it), so a node behind a NAT reaches every open node (it sends first; the
reply is its NAT's conntrack reply), and an open node reaches it once it has sent (or through an
endpoint-independent filter, as long as the NAT kept the port: nftables' `snat` keeps it where
it is free). Two nodes behind NATs reach each other only where each NAT lets the other's first
packet in at the configured address: mesh_spec.direct_path_possible() says where, from RFC 4787's
terms (the configured port is the node's mapping only where its NAT keeps it).

The implementations are WireGuard's (kernel, wireguard-go, boringtun; techniques/wireguard.py),
each node one interface configured by one `wg setconf` from a 0600 file and one `ip -batch`.
up() returns once every pair that can reach each other has answered a ping (_wait_sessions): every
node sends its handshakes at once as its interface comes up (PersistentKeepalive), and two
initiations that cross each other both fail (each side's own handshake state is replaced by the
other's), so such a pair waits REKEY_TIMEOUT (5 s) for the next try. A measurement right after
up() met that: a ring of 10 pings over four nodes, two pairs silent throughout (CI, stop 52). The
wait is part of the set-up time, and `negotiated.mesh.sessions` says how long it took.
wireguard-go holds an inotify instance per daemon, of the machine's 128 (wireguard.TUNNEL_CEILINGS):
100 nodes fit, 120 do not.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import evidence
from vpnbench.hosts.base import stop_all
from vpnbench.techniques.base import MeshTechnique, TechniqueContext, Tunnel
from vpnbench.techniques.wireguard import (
    WireGuard,
    WireGuardParams,
    _x25519_keypair,
    make_socket_dir,
    reclaim_socket_dir,
)

OVERLAY_PREFIX = "10.77"  # node i: 10.77.(i // 250).(i % 250 + 1)/16, a /16 for the 250 nodes a mesh may have
PARALLEL = 8  # nodes brought up at once: each is a daemon start, a `wg setconf` and an `ip -batch`
REKEY_TIMEOUT = 5.0  # WireGuard's wait before it sends a handshake initiation again (the paper's, every implementation's)
# Up to three initiations per pair, each a REKEY_TIMEOUT apart (plus up to 1/3 s of jitter): a pair
# that has not answered by then will not answer soon, and is left to the measurements to report.
SESSIONS_WAIT = 3 * REKEY_TIMEOUT + 1.0


def overlay_address(index: int) -> str:
    return f"{OVERLAY_PREFIX}.{index // 250}.{index % 250 + 1}"


class WireGuardMeshParams(WireGuardParams):
    kind: Literal["wireguard-mesh"] = "wireguard-mesh"  # type: ignore[assignment]
    # Without a keepalive a node behind a NAT is reached only while it sends; 25 s is what
    # WireGuard's documentation suggests behind a NAT, and what wg-quick users set.
    keepalive: int | None = Field(25, ge=1, le=65535)


class WireGuardMesh(MeshTechnique, WireGuard):
    kind = "wireguard-mesh"
    reach = "direct"  # no relay: a pair answers only where a direct path exists
    Params = WireGuardMeshParams
    packages = {**WireGuard.packages, "fping": "fping"}  # _wait_sessions
    description = "WireGuard as a static full mesh of a mesh testbed's nodes (no control plane: the control)"

    def __init__(self, params: WireGuardMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.node_ifaces: dict[str, str] = {}  # node name -> its interface
        self.node_public: dict[str, str] = {}  # node name -> its public key (its peers name it by it)
        self.node_procs: dict[str, object] = {}  # node name -> its userspace daemon (leave stops it)
        self.out: set[str] = set()  # nodes out of the mesh since leave() (churn), until they join again

    def up(self, backend: str) -> Tunnel:
        p, res, nodes = self.params, self.ctx.resources, self.ctx.nodes
        self.implementation = p.implementation_for(backend)
        self._ran = self._ran or self._what_runs()
        self.node_ifaces = {node.name: res.iface_name(f"m{i}") for i, node in enumerate(nodes)}
        keys = [_x25519_keypair() for _ in nodes]
        self.node_public = {node.name: keys[i][1] for i, node in enumerate(nodes)}
        self.out = set()
        overlay = {node.name: overlay_address(i) for i, node in enumerate(nodes)}
        self.tunnel = self._new_tunnel(backend)
        self.tunnel.client_addrs, self.tunnel.server_addrs = {"ipv4": overlay["n0"]}, {"ipv4": overlay["n1"]}
        self.tunnel.overlay = overlay
        self.tunnel.negotiated["mesh"] = {"nodes": len(nodes), "peers_per_node": len(nodes) - 1,
                                          "discovery": "none (static endpoints)", "relay": "none"}
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))
        if self.implementation != "kernel":
            make_socket_dir(nodes[0].host, self.undo)  # one directory for every namespace: made once, not raced for

        def start(i: int) -> None:
            node = nodes[i]
            self._write_conf(node, keys[i][0])
            if proc := self._create_interface(node.host, self.node_ifaces[node.name], reclaim=False):
                self.node_procs[node.name] = proc

        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(start, range(len(nodes))))  # list(): the first failure is raised here
            if self.implementation != "kernel":
                # every daemon listens (and every boringtun has chowned it): the directory root's
                # again, each socket root's, before any key goes through one (`wg setconf`)
                reclaim_socket_dir(nodes[0].host, list(self.node_ifaces.values()))
            list(pool.map(self._configure, nodes))
        self.tunnel.negotiated["mesh"]["sessions"] = self._wait_sessions(overlay)
        return self.tunnel

    def _peer_section(self, node) -> str:
        p = self.params
        return (f"[Peer]\nPublicKey = {self.node_public[node.name]}\nEndpoint = {node.public}:{p.port}\n"
                f"AllowedIPs = {self.tunnel.overlay[node.name]}/32\nPersistentKeepalive = {p.keepalive}\n")

    def _write_conf(self, node, private_key: str) -> None:
        """The node's `wg setconf` file (0600, wiped at down()): its key and every other node as a peer."""
        conf = (f"[Interface]\nPrivateKey = {private_key}\nListenPort = {self.params.port}\n"
                + "".join(self._peer_section(other) for other in self.ctx.nodes if other.name != node.name))
        path = self.ctx.resources.path(f"wgm-{node.name}.conf")
        node.host.write_file(path, conf, 0o600)
        self.undo.defer(wipe, node.host, path)

    def _configure(self, node) -> None:
        iface = self.node_ifaces[node.name]
        node.host.run(["wg", "setconf", iface, str(self.ctx.resources.path(f"wgm-{node.name}.conf"))])
        node.host.run(["ip", "-batch", "-"], input=f"addr add {self.tunnel.overlay[node.name]}/16 dev {iface}\n"
                                                   f"link set {iface} mtu {self.params.mtu} up\n")

    @classmethod
    def cannot_churn(cls, params) -> str | None:
        return None

    def leave(self, name: str) -> dict:
        """The node's interface deleted (its userspace daemon stopped) and its configuration wiped.
        The other nodes keep it as a peer, as a static mesh's configuration does until someone
        edits it: it is their handshakes that go unanswered."""
        node = self._node(name)
        iface = self.node_ifaces[name]
        self.out.add(name)  # first: a join told in another thread meanwhile finds its `wg set` here failing, and why
        if proc := self.node_procs.pop(name, None):
            self._stop_node_daemon(proc)
        node.host.run(["ip", "link", "del", iface], check=False)  # a userspace daemon's TUN went with it
        wipe(node.host, self.ctx.resources.path(f"wgm-{name}.conf"))
        return {"node": name, "interface": iface, "removed": True}

    def join(self, name: str) -> dict:
        """A newcomer as a static mesh takes one: a fresh key pair; every node in the mesh gets it
        as a peer (one `wg set` each, the old key of that address removed), as an operator's push of
        the new configuration would; then its own interface, listing every node. Returns once it
        is up; the first handshakes are the mesh's (each side's keepalive starts one)."""
        node = self._node(name)
        private, public = _x25519_keypair()
        old = self.node_public[name]
        self.node_public[name] = public
        p = self.params
        told = [other for other in self.ctx.nodes if other.name != name and other.name not in self.out]

        def tell(other) -> None:
            told = other.host.run(["wg", "set", self.node_ifaces[other.name], "peer", old, "remove",
                                   "peer", public, "endpoint", f"{node.public}:{p.port}", "allowed-ips",
                                   f"{self.tunnel.overlay[name]}/32", "persistent-keepalive", str(p.keepalive)],
                                  check=False)
            if told.returncode != 0 and other.name not in self.out:  # one that left meanwhile has no interface
                raise TechniqueError(f"{self.kind}: wg set on {other.name}: {told.stderr.strip()[-300:]}")
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(tell, told))
        # the newcomer last: its first handshakes (one per peer as its interface comes up) find
        # every node knowing its key; told after, a node behind a NAT that keeps no port (whose
        # peers cannot start a session to it) would wait WireGuard's 5 s retry for each peer
        self._write_conf(node, private)
        if proc := self._create_interface(node.host, self.node_ifaces[name]):
            self.node_procs[name] = proc
        self._configure(node)
        self.out.discard(name)
        return {"node": name, "peers_told": len(told)}

    def _node(self, name: str):
        for node in self.ctx.nodes:
            if node.name == name:
                return node
        raise TechniqueError(f"{self.kind}: no node {name} in this mesh")

    def _wait_sessions(self, overlay: dict[str, str]) -> dict:
        """Until every pair of nodes that can reach each other (pair_can_answer: reach "direct") has
        answered one ping, or SESSIONS_WAIT: rounds of one fping per node to the later nodes it has
        no answer from yet (an echo and its reply prove the session both ways). Returns how many
        pairs, how many answered and when."""
        nodes = list(self.ctx.nodes)
        pending = {node.name: [later.name for later in nodes[i + 1:] if self.pair_can_answer(node.nat, later.nat)]
                   for i, node in enumerate(nodes)}
        pairs = sum(len(peers) for peers in pending.values())
        host_of = {node.name: node.host for node in nodes}
        started = time.monotonic()

        def answered(name: str) -> set[str]:  # fping -a: the targets that answered, one per line
            result = host_of[name].run(["fping", "-a", "-q", "-r", "0", "-t", "500",
                                        *(overlay[peer] for peer in pending[name])], timeout=10, check=False)
            return set(result.stdout.split())
        with ThreadPoolExecutor(PARALLEL) as pool:
            while any(pending.values()) and time.monotonic() - started < SESSIONS_WAIT:
                senders = [name for name, peers in pending.items() if peers]
                for name, alive in zip(senders, pool.map(answered, senders)):
                    pending[name] = [peer for peer in pending[name] if overlay[peer] not in alive]
        silent = sum(len(peers) for peers in pending.values())
        return {"pairs": pairs, "answered": pairs - silent, "within_s": round(time.monotonic() - started, 3)}

    @classmethod
    def cannot_rekey(cls, params: WireGuardMeshParams) -> str | None:
        return "wireguard-mesh: vpnbench renews the keys of a pair (technique wireguard), not of a mesh"

    def evidence(self) -> dict[str, str]:
        """`wg show` of the first four nodes (keys print as "(hidden)"), and their daemons' logs."""
        nodes = list(self.ctx.nodes)[:4]
        pieces = [(f"{node.name}: wg show", lambda node=node: evidence.command(node.host, ["wg", "show", self.node_ifaces[node.name]]))
                  for node in nodes if node.name in self.node_ifaces]
        procs = self.tunnel.procs[:4] if self.tunnel else []
        pieces += [(f"daemon {n}: log", lambda proc=proc: evidence.log_tail(proc)) for n, proc in enumerate(procs)]
        return evidence.gather(pieces)
