"""EasyTier 2.0 as a mesh: an easytier-core on every node of a mesh testbed, each dialling one
public peer, an easytier-core on the control node (testbeds/mesh.CONTROL_ADDR) that has no TUN
(`no_tun`: it only forwards) and listens over `transport` (UDP or TCP).

Everything as the pair technique (techniques/easytier.py) makes it: a fresh network name and
secret per bring-up, each node's TOML 0600 in the run's directory and passed as a path, wiped at
down(); the secret the daemons print at start overwritten in their logs; AES-128-GCM from the
secret, or clear (`encryption = false`); `multi_thread`; the same framing and TUN MTU.

What EasyTier 2.0.3 does across NATs (peers/peer_ospf_route.rs, connector/direct.rs,
connector/udp_hole_punch.rs): every node learns every other from the public peer's route sync,
including each peer's listeners (here one, over `transport`, on its own underlay address). Its
direct connector dials, at start and every DIRECT_ROUND s, each peer it has no connection to, at
the addresses that peer has on its own interfaces; its UDP hole punching needs both ends' public
mappings from STUN, and the STUN servers are built in (stun.miwifi.com, ...), unreachable in the
testbed, so no hole is punched. So a pair goes direct exactly where one end is on the open segment
(nat = "none"): the NAT'd end dials it. Two nodes both behind NATs are relayed, even where
mesh_spec.direct_path_possible() says a path exists (a full cone and another): worse than the
arithmetic. The relay is any node both hold a connection to (routes are shortest paths, and those
tie at cost 2): the public peer or an open node; the underlay observer, which counts only the
control node as a relay, then sees such a pair as "unseen". Over transport = "tcp" a udp-blocked
node joins and goes direct to the open nodes, which the arithmetic (UDP paths) does not count:
better than it; over "udp" it never joins. EasyTier's own view, `easytier-cli route` on every node
(next hop DIRECT, or the node it goes through), is recorded by ordered pair in
negotiated["mesh"]["routes"] ("direct", "relay:control", "relay:n1", ...).

path = "relayed" sets `disable_p2p` on every node (and no node listens): each keeps its one
connection, to the public peer, and every pair is relayed.

up() returns once n0 has an echo reply from n1 (the pair the runner's first packet and two-host
measurements use) and, with path = "auto", once the direct connector has had two rounds with the
whole mesh known and the routes held still one round more (_settled_view: 15 s here), so that the
convergence kind observes the paths EasyTier settles on: its convergence time is then that, and
the first reply is negotiated["first_reply_n0_n1_s"].
"""

import re
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.hosts.reach import MESH_INTERVAL, wait_reachable
from vpnbench.techniques.base import MeshTechnique, TechniqueContext, Tunnel
from vpnbench.techniques.easytier import (
    CONFIG_PRINTED,
    NAME,
    PROGRAM,
    WIRE_PROTOCOLS,
    EasyTier,
    EasyTierParams,
    _blank,
    device_mtu,
    node_config,
    run_port,
)
from vpnbench.testbeds.mesh import CONTROL_ADDR

CONTROL = "control"  # the public peer's name among the nodes
OVERLAY_PREFIX = "10.96"  # node i: 10.96.(i // 250).(i % 250 + 1)/16, as tinc-mesh's 10.78
PARALLEL = 8  # nodes started at once
REACH_TIMEOUT = 20.0  # s for n0's first echo reply from n1
RPC_PORTAL = "127.0.0.1:15888"  # each node's management port, inside its own namespace
CLI = "easytier-cli"
DIRECT_ROUND = 5.0  # s between the direct connector's rounds (connector/direct.rs run_as_client)
SETTLE_TIMEOUT = 30.0  # s more for EasyTier's own view of the paths to stop changing


def overlay_address(index: int) -> str:
    return f"{OVERLAY_PREFIX}.{index // 250}.{index % 250 + 1}"


def route_view(table: str) -> dict[str, str]:
    """`easytier-cli route`'s table (tabled's modern style: cells between "│"; columns ipv4,
    hostname, proxy_cidrs, next_hop_ipv4, next_hop_hostname, ...) -> {overlay address: "direct" or
    "relay:NEXT HOP"} (the next hop's node name: control, n0, ...); the node's own row (next hop
    "Local") and the public peer (no address) are left out."""
    view = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in re.split(r"[│|]", line)[1:-1]]
        if len(cells) < 5 or not re.fullmatch(r"\d+\.\d+\.\d+\.\d+(/\d+)?", cells[0]) or cells[4] == "Local":
            continue
        next_hop = "direct" if cells[3] == "DIRECT" else "relay:" + cells[4].removeprefix("vpnbench-")
        view[cells[0].split("/")[0]] = next_hop
    return view


class EasyTierMeshParams(EasyTierParams):
    kind: Literal["easytier-mesh"] = "easytier-mesh"  # type: ignore[assignment]
    family: Literal["ipv4"] = "ipv4"  # type: ignore[assignment]  # the mesh testbed's underlay
    # auto: EasyTier's direct connections where it finds one, else through the public peer;
    # relayed: every pair through the public peer (disable_p2p on every node)
    path: Literal["auto", "relayed"] = "auto"


class EasyTierMesh(MeshTechnique, EasyTier):
    kind = "easytier-mesh"
    Params = EasyTierMeshParams
    description = "EasyTier 2 as a mesh of a mesh testbed's nodes (each dialling a public peer on the control node)"

    def __init__(self, params: EasyTierMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        # every node dials the public peer over `transport`: over UDP one behind udp-blocked never joins
        self.reach = "relay" if params.transport == "tcp" else "udp-relay"
        self.nodes = {}
        self.overlay: dict[str, str] = {}
        self.configs: dict[str, str] = {}  # name -> its TOML (written at set-up, again at a join)

    def up(self, backend: str) -> Tunnel:
        p, res, nodes = self.params, self.ctx.resources, list(self.ctx.nodes)
        port = p.port or run_port(res.run_id)
        self.nodes = {CONTROL: self.ctx.control} | {node.name: node.host for node in nodes}
        self.ifaces = {node.name: res.iface_name(f"t{i}") for i, node in enumerate(nodes)}
        self.overlay = overlay = {node.name: overlay_address(i) for i, node in enumerate(nodes)}
        network, self._secret = f"vpnbench-{secrets.token_hex(8)}", secrets.token_hex(24)
        public_peer = f"{p.transport}://{CONTROL_ADDR}:{port}"
        p2p = p.path == "auto"
        self.tunnel = Tunnel(
            backend=backend, server_addrs={"ipv4": overlay["n1"]}, client_addrs={"ipv4": overlay["n0"]},
            protection="encrypted" if p.encryption else "none", wire_filter=f"{p.transport} port {port}",
            wire_protocol=WIRE_PROTOCOLS[p.transport], overlay=overlay,
            negotiated={"implementation": NAME, "encryption": p.encryption,
                        "cipher": "AES-128-GCM (ring), random 96-bit nonces" if p.encryption else "none",
                        "key_exchange": "none: one static key from the network secret (SipHash-1-3), new per bring-up"
                        if p.encryption else "none", "transport": p.transport, "port": port,
                        "underlay_family": p.family, "multi_thread": p.multi_thread, "path_asked": p.path,
                        "public_peer": f"control node ({public_peer}, no TUN)", "mtu": device_mtu(p.encryption),
                        "mesh": {"nodes": len(nodes),
                                 "discovery": "public peer (route sync: every node's listeners)",
                                 "punch": "none here (its UDP hole punching needs its built-in public STUN servers)"
                                 if p2p else "off (disable_p2p)",
                                 "relay": "public peer on the control node",
                                 # its direct connector dials again every round: convergence holds the paths that long
                                 **({"path_round_s": DIRECT_ROUND} if p2p else {})}})
        if not p2p:
            self.tunnel.negotiated["forced_by"] = "disable_p2p = true"
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))  # before their files are wiped

        def configure(name: str) -> None:
            host, path = self.nodes[name], self._config_path(name)
            own = CONTROL_ADDR if name == CONTROL else next(node.address for node in nodes if node.name == name)
            # every node listens on its own underlay address over `transport` alone (what peers dial
            # direct): one protocol on the wire, which the wire proof reads
            listeners = [f"{p.transport}://{own}:{port}"]
            text = node_config(f"vpnbench-{name}", None if name == CONTROL else f"{overlay[name]}/16", network,
                               self._secret, None if name == CONTROL else self.ifaces[name],
                               listeners=listeners if name == CONTROL or p2p else [],
                               peers=[] if name == CONTROL else [public_peer], encryption=p.encryption,
                               p2p=p2p, rpc_portal=RPC_PORTAL)
            self.configs[name] = text
            host.write_file(path, text, 0o600)
            self.undo.defer(wipe, host, path)  # once: a join rewrites the same path
        self.configs = {}
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(configure, self.nodes))  # the first failure is raised here
        self._start(CONTROL)
        self._wait(CONTROL, lambda log: "new listener added" in log)
        started = time.monotonic()
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(self._start, overlay))
        for name in ("n0", "n1"):  # the pair the first packet needs; the others are convergence's to count
            self._wait(name, lambda log: "tun device ready" in log)
        self.handshake_s = round(time.monotonic() - started, 3)  # the nodes' start to n0's and n1's TUN ready
        first = self._first_reply("n0", overlay["n1"])
        if p2p:  # EasyTier's own view once its direct connector has had its rounds (module docstring)
            self.tunnel.negotiated["mesh"]["routes"] = self._settled_view(started)
        self.tunnel.negotiated.update(self._what_ran_on("n0"))
        self.tunnel.negotiated.update(up_s=self.handshake_s, first_reply_n0_n1_s=round(self.handshake_s + first, 3))
        return self.tunnel

    def _config_path(self, name: str):
        return self.ctx.resources.path(f"easytier-mesh-{name}.toml")

    def _start(self, name: str) -> None:
        """name's easytier-core started with its configuration; returns once it has printed it (the
        secret in its log then blanked)."""
        program = builds.program(NAME, PROGRAM, self.params.version)
        argv = [program, "--config-file", str(self._config_path(name))] + (["--multi-thread"] if self.params.multi_thread
                                                                            else [])
        self.procs[name] = proc = self.nodes[name].spawn(argv, name=PROGRAM)
        self.tunnel.procs.append(proc)
        self._wait(name, lambda log: CONFIG_PRINTED in log)
        _blank(proc, self._secret)

    @classmethod
    def cannot_churn(cls, params) -> str | None:
        return None

    def leave(self, name: str) -> dict:
        """The node's easytier-core stopped (its TUN goes with it) and its configuration wiped; the
        public peer and the nodes it held connections to are left to notice."""
        return self._take_node_out(name, self.procs, self.nodes[name], self._config_path(name), PROGRAM)

    def join(self, name: str) -> dict:
        """The node's easytier-core started again with its configuration: a newcomer of this network
        as EasyTier has them, one that holds its name and secret (no key of its own; a peer id fresh
        at each start). Returns once its TUN is ready (a node that can reach the public peer; over
        UDP a udp-blocked one never does: once it has started); the others learn of it from the
        public peer's route sync, and their reaching it is the mesh's part, measured."""
        if name in self.procs or name not in self.configs:
            raise TechniqueError(f"{self.kind}: node {name} is not out of the mesh")
        self.nodes[name].write_file(self._config_path(name), self.configs[name], 0o600)
        self._start(name)
        nat = next(node.nat for node in self.ctx.nodes if node.name == name)
        if nat != "udp-blocked" or self.params.transport == "tcp":
            self._wait(name, lambda log: "tun device ready" in log)
        return {"node": name, "started": PROGRAM, "key": "none of its own: the network's secret, made at set-up"}

    def _first_reply(self, name: str, target: str) -> float:
        """Seconds until name's echo request to target is answered (one a second)."""
        seconds = wait_reachable(self.nodes[name], target, REACH_TIMEOUT, MESH_INTERVAL)
        if seconds is not None:
            return seconds
        raise TechniqueError(f"easytier-mesh: {name} had no echo reply from {target} within {REACH_TIMEOUT:g} s: "
                             f"{self._tail(self.procs[name])}")

    def _settled_view(self, started: float) -> dict[str, str]:
        """EasyTier's own paths (routes()) once its direct connector, which dials every peer it has no
        connection to at its start and then every DIRECT_ROUND s, has had two rounds with the whole
        mesh known, and two reads a round apart agree."""
        time.sleep(max(0.0, started + 2 * DIRECT_ROUND - time.monotonic()))
        view, deadline = self.routes(), time.monotonic() + SETTLE_TIMEOUT
        while time.monotonic() < deadline:
            time.sleep(DIRECT_ROUND)
            again = self.routes()
            if again == view:
                break
            view = again
        return view

    def _what_ran_on(self, name: str) -> dict:
        """The pair technique's record (version, build, the TUN's MTU), read on node `name`."""
        saved = self.nodes, self.procs, self.ifaces
        try:
            self.nodes, self.procs, self.ifaces = ({"client": saved[0][name]}, {"client": saved[1][name]},
                                                   {"client": saved[2][name]})
            return self._what_ran()
        finally:
            self.nodes, self.procs, self.ifaces = saved

    def routes(self) -> dict[str, str]:
        """EasyTier's own view now, by ordered pair ("n0>n3"): "direct" where n0 holds a connection to
        n3, "relay:NODE" where its route goes through NODE (control: the public peer), "unknown"
        where n3 is not in its table."""
        cli = builds.program(NAME, CLI, self.params.version)
        by_address = {address: name for name, address in self.overlay.items()}

        def view(name: str) -> dict[str, str]:
            said = self.nodes[name].run([cli, "-p", RPC_PORTAL, "route"], check=False, timeout=10)
            return {by_address[address]: path for address, path in route_view(said.stdout).items() if address in by_address}
        with ThreadPoolExecutor(PARALLEL) as pool:
            views = dict(zip(self.overlay, pool.map(view, self.overlay)))
        return {f"{a}>{b}": views[a].get(b, "unknown") for a in self.overlay for b in self.overlay if a != b}

    def evidence(self) -> dict[str, str]:
        """The public peer's and the first four nodes' logs (the secret blanked), and EasyTier's own
        peer tables on those nodes."""
        for proc in self.procs.values():
            _blank(proc, self._secret)
        shown = [CONTROL, *[name for name in self.procs if name != CONTROL][:4]]
        host_of: dict[str, Host] = self.nodes
        cli = builds.program(NAME, CLI, self.params.version)
        pieces = [(f"{name}: easytier-core log", lambda proc=self.procs[name]: evidence.log_tail(proc))
                  for name in shown if name in self.procs]
        pieces += [(f"{name}: easytier-cli route", lambda name=name: evidence.command(
            host_of[name], [cli, "-p", RPC_PORTAL, "route"])) for name in shown if name in self.procs]
        return evidence.gather(pieces)

