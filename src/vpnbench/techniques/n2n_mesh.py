"""n2n 1.x as a mesh: the supernode on a mesh testbed's control node (testbeds/mesh.CONTROL_ADDR),
an edge on every node, all of one community, each edge a TAP device in one /16.

What n2n 1.x does across NATs, from its edge.c and supernode.c (1.3): every edge sends REGISTER
to the supernode (at start, then every 60 s), which records its MAC and the address and port it
came from (the node's NAT mapping towards the supernode). A frame for a MAC the edge has no
operational peer for (and every broadcast: ARP) goes to the supernode, which forwards it to the
edge registered with that MAC (broadcasts to every edge of the community), writing the sender's
address as the supernode saw it into the header. An edge receiving such a frame addressed to its
own MAC from an unknown peer sends that peer one REGISTER, directly, to that address, and puts it
in its pending list; the peer answers with REGISTER_ACK to where the REGISTER came from, and an
edge holding that ACK sends to the peer directly from then on. That is the whole traversal: no
hole punching coordinated by the supernode, no second address learnt, one REGISTER per pending
peer until the pending entry expires. So a direct path exists only where a packet sent to the
peer's supernode mapping gets through the peer's NAT: its mapping must be endpoint-independent,
and its filter must admit the sender (the peer's own REGISTER towards the sender, sent when the
sender's frames reached it, opens an address-dependent filter). That is what
mesh_spec.direct_path_possible() says; every other pair stays on the supernode, which relays the
whole frame (same size: it rewrites the header only). The two directions of a pair are learnt
apart (each edge its own REGISTER and ACK), so a pair may run direct one way and relayed back:
an open node's REGISTER to a peer behind an address-and-port-dependent NAT meets a port mapped
for the supernode alone and is dropped, while the peer's REGISTER to the open node gets through,
so the NAT'd end sends direct and the open end through the supernode (the underlay observer,
which needs packets both ways, calls that pair relayed). And a REGISTER dropped because it came
before the peer's own traffic opened its filter is not repeated until the pending entry expires.
So n2n 1.x goes direct at most where direct_path_possible() allows, often less.

And 1.3's edge binds an ACK to the wrong peer when more than one is pending: set_peer_operational
takes the first pending entry whose MAC differs from the ACK's destination MAC, which is always
zero, so the most recently pending peer, not the one that answered, is made operational at the
answerer's address (seen here: "=== new peer [mac=..:05][socket=<n3's NAT>]", then n3's own entry
at the same address). Frames for that peer then go to another edge, which drops them, until the
entry expires (not within 30 s here). Which pairs are hit depends on the order the ACKs arrive in:
every pair may go dark, or stay relayed, while many talk at once (the convergence kind pings
all pairs at once: of 6 nodes behind mixed NATs, 1, 6 and 3 of 30 ordered pairs never answered
in three runs here; of 10, 2 of the 56 not involving a udp-blocked node). n0 and n1 are bound
before any other pair talks (up() waits for n0's reply from n1), so they always answer.

n2n 1.x speaks UDP only to peers. Its edge has an experimental HTTP tunnelling to the supernode
(-t, TCP), not used here: a node behind a udp-blocked NAT never registers and never answers.

Everything else as the pair technique (techniques/n2n.py): a fresh community and key per
bring-up, each edge's options in a 0600 file read as `edge @FILE` (the key never in an argv or
the environment), wiped at down(); the TAP MTU the largest whose messages fit the 1500-byte
links in one packet (a relayed message is the same size).

up() returns once every edge is ready (its TAP configured, its socket bound), n0's and n1's
registrations acknowledged by the supernode, and n0 has a reply from n1 over the overlay (the
pair the runner's first packet and two-host measurements use); the other pairs are the
convergence kind's to count.
"""

import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import evidence
from vpnbench.hosts.base import stop_all
from vpnbench.hosts.reach import MESH_INTERVAL, wait_reachable
from vpnbench.techniques.base import MeshTechnique, TechniqueContext, Tunnel
from vpnbench.techniques.n2n import (
    COMMUNITY_LEN,
    KEY_CHARS,
    MAX_MTU,
    NAME,
    READY,
    SUPERNODE_READY,
    WARNINGS,
    N2n,
    N2nParams,
    run_port,
    what_ran,
)
from vpnbench.techniques.overhead import max_inner, n2n_outer
from vpnbench.testbeds.mesh import CONTROL_ADDR

OVERLAY_PREFIX = "10.95"  # node i: 10.95.(i // 250).(i % 250 + 1)/16, a /16 for the 250 nodes a mesh may have
UNDERLAY_MTU = 1500  # the mesh testbed's links
PARALLEL = 8  # edges started at once
REACH_TIMEOUT = 20.0  # s for n0's first reply from n1 (the ARP and the ping ride the supernode)


def overlay_address(index: int) -> str:
    return f"{OVERLAY_PREFIX}.{index // 250}.{index % 250 + 1}"


def mac_address(index: int) -> str:
    """A locally administered MAC per node ("n2n" in the middle, as the pair technique's)."""
    return f"02:6e:32:6e:{index >> 8:02x}:{index & 0xff:02x}"


class N2nMeshParams(N2nParams):
    kind: Literal["n2n-mesh"] = "n2n-mesh"  # type: ignore[assignment]


class N2nMesh(MeshTechnique, N2n):
    kind = "n2n-mesh"
    reach = "udp-relay"  # its relay speaks UDP: a node behind udp-blocked answers no one
    Params = N2nMeshParams
    description = "n2n 1.x as a mesh of a mesh testbed's nodes (supernode on the control node, edges on TAP)"

    def __init__(self, params: N2nMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes = {}  # node name -> its host
        self.first_reply_s: float | None = None

    def up(self, backend: str) -> Tunnel:
        p, res, nodes = self.params, self.ctx.resources, list(self.ctx.nodes)
        port = p.port or run_port(res.run_id)
        supernode_port = port + 1
        self.supernode_host = self.ctx.control
        self.nodes = {node.name: node.host for node in nodes}
        self.ifaces = {node.name: res.iface_name(f"e{i}") for i, node in enumerate(nodes)}
        overlay = {node.name: overlay_address(i) for i, node in enumerate(nodes)}
        mtu = p.mtu or min(max_inner(n2n_outer, UNDERLAY_MTU), MAX_MTU)
        community, key = secrets.token_hex(COMMUNITY_LEN // 2), secrets.token_urlsafe(KEY_CHARS * 3 // 4)
        self.tunnel = Tunnel(
            backend=backend, server_addrs={"ipv4": overlay["n1"]}, client_addrs={"ipv4": overlay["n0"]},
            protection="encrypted", wire_filter=f"udp and (port {port} or port {supernode_port})",
            wire_protocol=NAME, overlay=overlay,
            negotiated={"implementation": NAME, "cipher": "Twofish-CBC", "cipher_asked": p.cipher,
                        "authentication": "none", "header_encryption": False, "compression": "LZO1X-1, always",
                        "key": f"pre-shared, {KEY_CHARS} characters, per bring-up", "community": "per bring-up",
                        "device": "tap", "mtu": mtu, "port": port, "supernode": "control node",
                        "supernode_port": supernode_port, "underlay_family": "ipv4", "overlay": f"{OVERLAY_PREFIX}.0.0/16",
                        "mesh": {"nodes": len(nodes), "discovery": "supernode (REGISTER, then one direct REGISTER per peer)",
                                 "relay": "supernode"},
                        "warnings": list(WARNINGS)})
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))  # before the option files are wiped
        self._start("supernode", self.supernode_host, ["supernode", "-l", str(supernode_port)],
                    lambda log: SUPERNODE_READY in log)
        acked = f"Received REGISTER_ACK from remote peer [ip={CONTROL_ADDR}:{supernode_port}]"
        started = time.monotonic()

        def start(i: int) -> None:
            node = nodes[i]
            path = res.path(f"n2n-mesh-{node.name}.conf")
            lines = [f"-d {self.ifaces[node.name]}", f"-a {overlay[node.name]}", "-s 255.255.0.0",
                     f"-m {mac_address(i)}", f"-M {mtu}", f"-p {port}", f"-l {CONTROL_ADDR}:{supernode_port}",
                     f"-c {community}", f"-k {key}"]
            node.host.write_file(path, "\n".join(lines) + "\n", 0o600)
            self.undo.defer(wipe, node.host, path)
            # n0 and n1 must be registered (the first packet needs both); a node that cannot reach the
            # supernode (udp-blocked) is the convergence kind's answer, not a failed bring-up
            ready = (lambda log: READY in log and acked in log) if node.name in ("n0", "n1") else (lambda log: READY in log)
            self._start(node.name, node.host, ["edge", f"@{path}"], ready)
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(start, range(len(nodes))))  # list(): the first failure is raised here
        self.handshake_s = round(time.monotonic() - started, 3)  # every edge ready, n0 and n1 registered
        self.first_reply_s = round(self._first_reply("n0", overlay["n1"]) + self.handshake_s, 3)
        self.tunnel.negotiated.update(what_ran(self.nodes["n0"]))
        self.tunnel.negotiated.update(up_s=self.handshake_s, first_reply_n0_n1_s=self.first_reply_s)
        return self.tunnel

    def _first_reply(self, name: str, target: str) -> float:
        """Seconds until an echo request from name to target is answered (ARP and ping through the
        supernode; one a second)."""
        seconds = wait_reachable(self.nodes[name], target, REACH_TIMEOUT, MESH_INTERVAL)
        if seconds is None:
            raise TechniqueError(f"n2n-mesh: no reply from n1 ({target}) to n0 within {REACH_TIMEOUT:g} s")
        return seconds

    def evidence(self) -> dict[str, str]:
        """The supernode's and the first four edges' logs (neither prints the key), their TAP devices."""
        shown = [name for name in self.procs if name != "supernode"][:4]
        pieces = [(f"{name}: {'supernode' if name == 'supernode' else 'edge'} log",
                   lambda proc=self.procs[name]: evidence.log_tail(proc))
                  for name in ["supernode", *shown] if name in self.procs]
        pieces += [(f"{name}: ip addr (n2n tap)", lambda name=name: evidence.command(
            self.nodes[name], ["ip", "addr", "show", "dev", self.ifaces[name]])) for name in shown]
        return evidence.gather(pieces)

