"""innernet as a mesh: innernet-server on a mesh testbed's control node (testbeds/mesh.CONTROL_ADDR),
every node a peer of one CIDR that joins by its invitation and then keeps fetching the peer list
(`innernet up --daemon`), as innernet's own systemd unit runs it.

What innernet 2.0.0 does, and this relies on (innernet-server's endpoint refresher, the client's
fetch and nat.rs): the server learns each peer's endpoint from its own WireGuard device every 10 s
(the address its handshakes come from: a NAT's mapping towards the control node) and each peer
reports its local addresses as candidates. At every fetch a node sets each new peer's endpoint,
then tries the candidates one after the other, 5 s each, until a handshake succeeds
(persistent keepalive 25 s, innernet's, so a set endpoint is tried at once). Both ends of a pair
fetch on their own clocks, so a pair behind two filtering NATs gets through only where the node's
mapping is the one the server saw (endpoint-independent mapping): exactly mesh_spec's
direct_path_possible(). innernet has no relay: every other pair never answers, and a node whose
NAT drops UDP cannot even join (its invitation is redeemed over WireGuard); up() records that and
goes on.

Everything else as the pair technique (techniques/innernet.py): a new network per bring-up,
every config and data directory 0700 in the run's directory and wiped at down(), every command
under umask 077, no hosts file written, no key in argv; the kernel's WireGuard where the kernel
has it, else vpnbench's wireguard-go build. `interval` is the fetch period (innernet's default 60 s:
a pair waits up to that long after both ends have joined; shorter for a test).
up() returns once every node that can join has, and n0 reaches n1 where their NATs allow it (the
pair the runner's first packet and two-host measurements use); the other pairs are the
convergence kind's to count.

Churn: a node leaves as one that goes away (daemon stopped, interface removed, keys wiped; the
server and the others keep its peer). A newcomer needs an invitation, so join() has the server add
a new peer (`n4-1`, the next free address) and the node install it: the others learn of it at
their next fetch.
"""

import ipaddress
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.hosts.reach import MESH_INTERVAL, wait_reachable
from vpnbench.techniques.base import MeshTechnique, TechniqueContext, Tunnel
from vpnbench.techniques.innernet import (
    NAME,
    NETWORK_CIDR,
    SERVER,
    START_TIMEOUT,
    WIREGUARD_OVERHEAD,
    Innernet,
    InnernetParams,
    _tail,
    run_port,
)
from vpnbench.testbeds.mesh import CONTROL_ADDR

PEERS_CIDR = "10.98.4.0/22"  # node i: its (i + 1)th address; room for 1 022 nodes
PARALLEL = 16  # nodes joined at once: each an install (redeeming its invitation, then 5 s idle, one fetch)
UNDERLAY_MTU = 1500  # the mesh testbed's links
REFRESH_S = 10  # innernet-server's endpoint refresher
JOIN_TIMEOUT = 60.0  # s for one `innernet install`: redeeming (innernet sleeps 5 s in it) and one fetch
# s for a udp-blocked node's: its redeem goes to the server over WireGuard (UDP), so its connect only
# times out, after innernet's own 30 s, which alone held up() past mesh-nat's 30 s deadline. Two of
# WireGuard's handshake tries (5 s apart) and the connect are 12 s: enough to show it cannot join.
BLOCKED_JOIN_TIMEOUT = 12.0


def overlay_address(index: int) -> str:
    return str(ipaddress.ip_network(PEERS_CIDR)[index + 1])


class InnernetMeshParams(InnernetParams):
    kind: Literal["innernet-mesh"] = "innernet-mesh"  # type: ignore[assignment]
    # s between a node's fetches of the peer list (`innernet up --daemon --interval`); innernet's own 60
    interval: int = Field(60, ge=1, le=3600)


class InnernetMesh(MeshTechnique, Innernet):
    kind = "innernet-mesh"
    reach = "direct"  # no relay: a pair answers only where a direct path exists
    Params = InnernetMeshParams
    CONTROL = "control"
    description = ("innernet as a mesh of a mesh testbed's nodes (innernet-server on the control node, invitations, "
                   "NAT traversal by the server's endpoints and reported candidates; no relay)")

    def __init__(self, params: InnernetMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes = {}  # node name -> its host
        self.daemons: dict[str, object] = {}  # node name -> its `innernet up --daemon`
        self.network = ""  # the network's name (the server's interface's)
        self.joins = 0  # newcomers so far: each is a peer of its own, named and addressed after the N first
        self.blocked: set[str] = set()  # the nodes behind udp-blocked NATs: their install is given up sooner

    def _control_host(self) -> Host:
        return self.ctx.control

    def up(self, backend: str) -> Tunnel:
        p, res, nodes, control = self.params, self.ctx.resources, list(self.ctx.nodes), self.ctx.control
        self.backend = backend
        port = p.port or run_port(res.run_id)
        self.network = network = res.iface_name("in")  # the network's name is the server's interface's
        self.nodes = {node.name: node.host for node in nodes}
        self.ifaces = {self.CONTROL: network} | {node.name: res.iface_name(f"i{i}") for i, node in enumerate(nodes)}
        overlay = {node.name: overlay_address(i) for i, node in enumerate(nodes)}
        self.mtu = p.mtu or UNDERLAY_MTU - WIREGUARD_OVERHEAD
        for where, host in {self.CONTROL: control, **self.nodes}.items():
            self.dirs[where] = res.path(f"innernet-{where}")
            self.undo.defer(wipe, host, self.dirs[where])  # after the daemons stop (undo runs newest first)
            self._make_dirs(host, where)
            host.remember_dir(self.dirs[where])  # its keys: `vpnbench cleanup` wipes them after a kill -9
        self.tunnel = Tunnel(
            backend=backend, server_addrs={"ipv4": overlay["n1"]}, client_addrs={"ipv4": overlay["n0"]},
            protection="encrypted", wire_filter="udp", wire_protocol="WireGuard", overlay=overlay,
            negotiated={"implementation": NAME, "backend": backend, "network": NETWORK_CIDR, "peers_cidr": PEERS_CIDR,
                        "server": "control node", "server_port": port, "mtu": self.mtu, "underlay_family": "ipv4",
                        "fetch_interval_s": p.interval,
                        "keys": "per bring-up (each peer's invitation key replaced at install)",
                        "mesh": {"nodes": len(nodes), "discovery": f"innernet-server's peer list (endpoints refreshed "
                                                                   f"every {REFRESH_S} s), fetched every {p.interval} s",
                                 "punch": "NAT traversal at each fetch: the server-seen endpoint, then reported "
                                          "candidates, 5 s each",
                                 "relay": "none"}})
        started = time.monotonic()
        self._run(control, self._server_argv("new", "--network-name", network, "--network-cidr", NETWORK_CIDR,
                                             "--external-endpoint", f"{CONTROL_ADDR}:{port}", "--listen-port", str(port)),
                  "innernet-server new")
        self._run(control, self._server_argv("add-cidr", network, "--name", "peers", "--cidr", PEERS_CIDR,
                                             "--parent", network, "--yes"), "innernet-server add-cidr")
        invitations = {name: self._invitation(network, name, overlay[name]) for name in self.nodes}
        self.undo.defer(self._down_interfaces)  # after the daemons stop (newest first)
        self.undo.defer(stop_all, self.tunnel.procs)
        self.server_proc = control.spawn(self._server_argv("serve", network, "--backend", backend, "--mtu",
                                                           str(self.mtu), "--no-write-hosts"),
                                         name=SERVER, env={"RUST_LOG": "info"})
        self.tunnel.procs.append(self.server_proc)
        self._wait_serving(control, port)
        self.blocked = {node.name for node in nodes if node.nat == "udp-blocked"}
        with ThreadPoolExecutor(PARALLEL) as pool:
            refused = {name: why for name, why in zip(self.nodes, pool.map(self._install, self.nodes,
                                                                           invitations.values())) if why}
        # The fetching daemons start once every node has installed, so each one's first fetch already
        # holds every peer's reported candidates: an open pair meets at once, whatever the install
        # order (started with its install, a node that installed first waited a whole interval
        # for a peer that installed after it: the kill -9 test's 60 s, once in two runs here).
        joined = [name for name in self.nodes if name not in refused]
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(self._fetch_forever, joined))
        self.handshake_s = round(time.monotonic() - started, 3)  # the server's start to every install
        self.tunnel.negotiated["join_s"] = self.handshake_s
        if refused:
            self.tunnel.negotiated["mesh"]["not_joined"] = refused
        n0_port = self._listen_port("n0")
        self.tunnel.wire_filter = f"udp port {n0_port}"  # n0's WireGuard, on n0's own link
        if self.pair_can_answer(nodes[0].nat, nodes[1].nat):  # reach "direct": only where the NATs allow
            self.tunnel.negotiated["first_reply_n0_n1_s"] = self._first_reply("n0", overlay["n1"])
        self.tunnel.negotiated.update(self._what_ran("n0"))
        return self.tunnel

    def _make_dirs(self, host: Host, where: str) -> None:
        host.run(["mkdir", "-m", "0700", str(self.dirs[where]), str(self.dirs[where] / "config"),
                  str(self.dirs[where] / "data")])

    def _install(self, name: str, invitation: str) -> str | None:
        """The node's invitation installed: None, or why a node behind udp-blocked could not
        (innernet speaks UDP only)."""
        host, invite = self.nodes[name], self.dirs[name] / "invitation.toml"
        host.write_file(invite, invitation, 0o600)
        # Without NAT traversal: install's fetch would try each peer's candidates, 5 s a step, until
        # each answers or none is left, and at N = 10 behind NATs that made up() 36-41 s, past
        # mesh-nat's deadline (stop 62); the fetching daemons started next do the same traversal at
        # their first fetch, for every peer at once. Candidates are still reported.
        result = host.run(self._client_argv(name, "install", str(invite), "--name", self.ifaces[name],
                                            "--delete-invite", "--no-write-hosts", "--no-nat-traversal"),
                          timeout=BLOCKED_JOIN_TIMEOUT if name in self.blocked else JOIN_TIMEOUT, check=False)
        if result.ok:
            return None
        host.remove_file(invite)  # wiped with its directory anyway
        if name in self.blocked:
            return _tail(result.stderr + result.stdout, 2)
        raise TechniqueError(f"innernet: install failed on {name}: {_tail(result.stderr + result.stdout)}")

    def _fetch_forever(self, name: str) -> None:
        self.daemons[name] = daemon = self.nodes[name].spawn(
            self._client_argv(name, "up", self.ifaces[name], "--daemon", "--interval", str(self.params.interval),
                              "--no-write-hosts"), name=NAME, env={"RUST_LOG": "info"})
        self.tunnel.procs.append(daemon)

    @classmethod
    def cannot_churn(cls, params) -> str | None:
        return None

    def leave(self, name: str) -> dict:
        """The node's fetching daemon stopped, its WireGuard interface removed and its directory
        (keys, the network's configuration) wiped: the server keeps the peer, and the others keep
        it in their WireGuard until someone disables it, as a node that went away."""
        done = self._take_node_out(name, self.daemons, self.nodes[name], self.dirs[name], NAME)
        self._down_interfaces([name])
        return done

    def join(self, name: str) -> dict:
        """A newcomer: innernet has no way in without an administrator's invitation, so the server
        adds a new peer (its own name and the next free address of the peers' CIDR), the node
        installs the invitation (a new key pair) and its daemon starts fetching. Returns once it
        has installed; the others learn of it at their next fetch (`interval`), and reaching it is
        the mesh's part, measured."""
        if name in self.daemons or name not in self.nodes:
            raise TechniqueError(f"{self.kind}: node {name} is not out of the mesh")
        self.joins += 1
        peer, address = f"{name}-{self.joins}", overlay_address(len(self.nodes) - 1 + self.joins)
        self._make_dirs(self.nodes[name], name)
        if why := self._install(name, self._invitation(self.network, peer, address)):
            raise TechniqueError(f"{self.kind}: {name} could not join: {why}")
        self._fetch_forever(name)
        self.tunnel.overlay[name] = address
        return {"node": name, "started": NAME, "peer": peer, "address": address,
                "key": "a new invitation's (a new peer on the server)"}

    def _first_reply(self, name: str, target: str) -> float:
        """Seconds until name's echo request to target is answered: both must have fetched each other's
        endpoint, which the server knows within its refresh (one a second)."""
        limit = START_TIMEOUT + REFRESH_S + 2 * self.params.interval
        seconds = wait_reachable(self.nodes[name], target, limit, MESH_INTERVAL)
        if seconds is not None:
            return round(seconds, 3)
        logs = "; ".join(f"{role}: {_tail(self.daemons[role].output(), 3)}" for role in ("n0", "n1") if role in self.daemons)
        raise TechniqueError(f"innernet-mesh: {name} had no echo reply from {target} within {limit:g} s (logs: {logs})")

    def evidence(self) -> dict[str, str]:
        """The server's log, the first four nodes' fetching daemons' logs, and n0's and n1's `wg show`."""
        shown = list(self.daemons)[:4]
        pieces = [("control: innernet-server log", lambda: evidence.log_tail(self.server_proc))]
        pieces += [(f"{name}: innernet up --daemon log", lambda name=name: evidence.log_tail(self.daemons[name]))
                   for name in shown]
        pieces += [(f"{name}: wg show", lambda name=name: evidence.command(self.nodes[name], ["wg", "show", self.ifaces[name]]))
                   for name in shown[:2]]
        return evidence.gather(pieces)
