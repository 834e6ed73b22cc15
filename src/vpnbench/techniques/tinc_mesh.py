"""tinc 1.0 as a mesh: a tincd on every node of a mesh testbed, each with `ConnectTo = hub` only,
and the hub a tincd on the control node that carries no interface of its own (DeviceType =
dummy: it only forwards packets for the others).

What tinc 1.0 does, and this relies on (its manual, "The meta-protocol" and "Encryption of
network packets"): every node holds one meta connection (TCP, RSA-authenticated) to the hub,
which tells every node of every other's edge (ADD_EDGE, with the address the hub sees it at:
its NAT's outside address and its configured Port) and subnets (ADD_SUBNET). A node that wants
to send to another asks for its packet key over the meta connections (REQ_KEY, ANS_KEY, relayed
by the hub, which therefore sees every pair's key: the hub is trusted), so a node needs the RSA
public keys of the nodes it has a meta connection with only: each node gets the hub's host file,
the hub every node's. Until a pair's path MTU discovery gets a UDP probe answered, its packets
go to the next hop on the graph, the hub (over UDP where that works, else over the TCP meta
connection), which forwards them; once a probe is answered they go direct over UDP. tinc 1.0 has
no hole punching of its own: a node sends its probes to the address the hub's edge gives (the
peer's NAT's outside address at the peer's Port), and learns a peer's real UDP address only from
packets that peer's NAT let out to it. So a pair goes direct at most where
mesh_spec.direct_path_possible() says a direct path exists, and every other pair stays relayed;
a udp-blocked node is reached too, over its meta connection alone.

path = "relayed" sets IndirectData on every node: the others then send to it through the hub
(its edge is marked indirect), so every pair is relayed.

Keys as the pair technique makes them (tinc.py): each node's fresh RSA key pair made on its
host in its private net directory (0600, wiped at down), only host files (public keys) copied;
no tinc-up script (vpnbench addresses the interface itself), so no file of code run as root.
up() returns once every tincd is ready with its meta connection to the hub authenticated and
n0 reaches n1 (the pair the runner's first packet and the two-host measurements use); the other
pairs are the convergence kind's to count.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import make_dir, wipe
from vpnbench.hosts import evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.hosts.reach import MESH_INTERVAL, wait_reachable
from vpnbench.techniques.base import MeshTechnique, TechniqueContext, Tunnel
from vpnbench.techniques.tinc import ACTIVATED, READY, RSA_BITS, START_TIMEOUT, Tinc, TincParams, _tail, wire_filter
from vpnbench.testbeds.mesh import CONTROL_ADDR

HUB = "hub"  # the hub's tinc name (the nodes are n0, n1, ...: no clash)
OVERLAY_PREFIX = "10.78"  # node i: 10.78.(i // 250).(i % 250 + 1)/16, as wireguard-mesh's 10.77
PARALLEL = 8  # nodes brought up at once: each an RSA key generation, a tincd start and an `ip -batch`
REACH_TIMEOUT = 20.0  # s for n0's first echo reply from n1, once every meta connection is up
# The wait for every meta connection grows with N: the hub authenticates each node's connection
# (RSA) and tells every node of every other's edges and subnets, and a connection it has not
# authenticated within tinc's PingTimeout (5 s) it closes; the node retries 5 s later, then 10,
# 15, ... (tinc 1.0's retry_outgoing: timeout += 5). At N = 100 on a shared 2-core machine some nodes needed a retry,
# past the pair's 20 s (stop 58). tinc's own timers are left at their defaults: they are part of
# what is measured.
ACTIVATION_S_PER_NODE = 0.6
RETRY = "Trying to re-establish outgoing connection"  # what a node logs when its meta connection failed


def overlay_address(index: int) -> str:
    return f"{OVERLAY_PREFIX}.{index // 250}.{index % 250 + 1}"


class TincMeshParams(TincParams):
    kind: Literal["tinc-mesh"] = "tinc-mesh"  # type: ignore[assignment]
    # router: the hub forwards by the nodes' Subnets (switch mode would flood every broadcast through it)
    mode: Literal["router"] = "router"  # type: ignore[assignment]
    family: Literal["ipv4"] = "ipv4"  # type: ignore[assignment]  # the mesh testbed's underlay
    # auto: direct where a UDP probe gets through both NATs, else through the hub;
    # relayed: every pair through the hub (IndirectData = yes on every node)
    path: Literal["auto", "relayed"] = "auto"


class TincMesh(MeshTechnique, Tinc):
    kind = "tinc-mesh"
    Params = TincMeshParams
    description = "tinc 1.0 as a mesh of a mesh testbed's nodes (every node ConnectTo the hub on the control node, which forwards)"

    def __init__(self, params: TincMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.node_hosts: dict[str, Host] = {}  # tinc name (hub, n0, ...) -> its host
        self.procs: dict[str, object] = {}  # tinc name -> its tincd
        self.hub_file = ""  # the hub's host file (its address and public key), each node's one key

    def _host(self, role: str) -> Host:
        return self.node_hosts[role]

    def up(self, backend: str) -> Tunnel:
        p, res, nodes = self.params, self.ctx.resources, list(self.ctx.nodes)
        self.node_hosts = {HUB: self.ctx.control} | {node.name: node.host for node in nodes}
        self.ifaces = {node.name: res.iface_name(f"c{i}") for i, node in enumerate(nodes)}
        overlay = {node.name: overlay_address(i) for i, node in enumerate(nodes)}
        self.tunnel = Tunnel(
            backend=backend, server_addrs={"ipv4": overlay["n1"]}, client_addrs={"ipv4": overlay["n0"]},
            protection="encrypted", wire_filter=wire_filter(p.port, p.family, p.mac_length),
            wire_protocol="tinc 1.0", overlay=overlay,
            negotiated={"implementation": "tinc", "version": self._version(), "mode": p.mode, "device": "tun",
                        "cipher": p.cipher, "digest": p.digest, "mac_length": p.mac_length, "compression": 0,
                        "underlay_family": p.family, "meta_key": f"RSA-{RSA_BITS}, per bring-up", "path_asked": p.path,
                        "mesh": {"nodes": len(nodes), "discovery": "hub (meta connections: edges and subnets)",
                                 "punch": "none (UDP address learnt from a peer's packets)",
                                 "relay": "hub on the control node (UDP, else its TCP meta connections)"}})
        if p.path == "relayed":
            self.tunnel.negotiated["forced_by"] = "IndirectData = yes"
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))  # those started; before their directories go
        hub_dir = self._mesh_net_dir(HUB, None)
        self.hub_file = self._host_file(HUB, hub_dir)
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(self._prepare, overlay))  # the first failure is raised here
        started = time.monotonic()
        self._start(HUB)
        self._wait_for_marker(READY, [HUB])

        def start(name: str) -> None:
            self._start(name)
            self._wait_for_marker(READY, [name])
            self._address(name, overlay[name])
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(start, overlay))
        # every node's meta connection with the hub authenticated (each logs it, as the hub does)
        self._wait_for_marker(ACTIVATED, list(overlay), START_TIMEOUT + ACTIVATION_S_PER_NODE * len(overlay))
        self.handshake_s = round(time.monotonic() - started, 3)  # the hub's start to every meta connection up
        self.tunnel.negotiated["mesh"]["meta_retries"] = sum(
            self.procs[name].output().count(RETRY) for name in overlay)  # connections to the hub that failed first
        self.tunnel.negotiated["first_reply_n0_n1_s"] = self._first_reply("n0", overlay["n1"])
        return self.tunnel

    def _prepare(self, name: str) -> None:
        """A node's net directory with a fresh key pair, the hub's host file in it, and the node's
        host file (its public key) on the hub, which authenticates its meta connection by it (tinc
        1.0 reads a host file when the connection comes, so a node added later needs no reload)."""
        net_dir = self._mesh_net_dir(name, self.tunnel.overlay[name])
        self._host(name).write_file(net_dir / "hosts" / HUB, self.hub_file, 0o600)
        node_file = self._host_file(name, net_dir)
        self.ctx.control.write_file(self.ctx.resources.path(f"tinc-{HUB}") / "hosts" / name, node_file, 0o600)

    @classmethod
    def cannot_churn(cls, params) -> str | None:
        return None

    def leave(self, name: str) -> dict:
        """The node's tincd stopped (it closes its meta connection: the hub drops its edges and
        tells the others) and its net directory (its RSA key) wiped."""
        return self._take_node_out(name, self.procs, self._host(name), self.ctx.resources.path(f"tinc-{name}"),
                                   "tincd")

    def join(self, name: str) -> dict:
        """A newcomer as tinc takes one: a fresh RSA key pair on the node, its host file given to
        the hub (the old one replaced), its tincd started with ConnectTo = hub. Returns once its
        meta connection is authenticated; the hub tells the others of its edge and subnet, and their
        reaching it (through the hub, then direct where the NATs allow) is the mesh's part, measured."""
        if name in self.procs or name not in self.ifaces:
            raise TechniqueError(f"{self.kind}: node {name} is not out of the mesh")
        self._prepare(name)
        self._start(name)
        self._wait_for_marker(READY, [name])
        self._address(name, self.tunnel.overlay[name])
        self._wait_for_marker(ACTIVATED, [name])
        return {"node": name, "started": "tincd", "key": f"RSA-{RSA_BITS}, fresh"}

    def _mesh_net_dir(self, name: str, address: str | None):
        """The node's (or, address None, the hub's) private net directory (0700, fresh) with its
        tinc.conf, its own host file and its RSA key pair made there; wiped at down()."""
        p, host = self.params, self._host(name)
        net_dir = make_dir(host, self.ctx.resources.path(f"tinc-{name}"), 0o700)
        host.remember_dir(net_dir)  # its keys: `vpnbench cleanup` wipes them after a kill -9
        self.undo.defer(wipe, host, net_dir)
        make_dir(host, net_dir / "hosts", 0o700)
        bind = CONTROL_ADDR if address is None else self._underlay_address(name)
        conf = [f"Name = {name}", f"Mode = {p.mode}", f"AddressFamily = {p.family}", f"Port = {p.port}",
                f"BindToAddress = {bind}", f"PrivateKeyFile = {net_dir / 'rsa_key.priv'}",
                f"Cipher = {p.cipher}", f"Digest = {p.digest}", f"MACLength = {p.mac_length}", "Compression = 0"]
        if address is None:
            conf.append("DeviceType = dummy")  # no interface: it only forwards for the others
        else:
            conf += ["DeviceType = tun", f"Interface = {self.ifaces[name]}", f"ConnectTo = {HUB}"]
            if p.path == "relayed":
                conf.append("IndirectData = yes")
        host.write_file(net_dir / "tinc.conf", "\n".join(conf) + "\n", 0o600)
        own = [f"Port = {p.port}"]
        own += [f"Address = {CONTROL_ADDR} {p.port}"] if address is None else [f"Subnet = {address}/32"]
        host.write_file(net_dir / "hosts" / name, "\n".join(own) + "\n", 0o600)
        host.run(["tincd", "-c", str(net_dir), f"--generate-keys={RSA_BITS}"], input="", timeout=60)
        return net_dir

    def _underlay_address(self, name: str) -> str:
        return next(node.address for node in self.ctx.nodes if node.name == name)

    def _start(self, name: str) -> None:
        net_dir = self.ctx.resources.path(f"tinc-{name}")
        proc = self._host(name).spawn(["tincd", "-c", str(net_dir), "-D", "-d1", "--pidfile",
                                       str(net_dir / "tincd.pid")], name="tincd")
        self.procs[name] = proc
        self.tunnel.procs.append(proc)

    def _address(self, name: str, address: str) -> None:
        """The overlay address, set once tincd has opened its device (no tinc-up script)."""
        iface = self.ifaces[name]
        self._host(name).run(["ip", "-batch", "-"], input=f"addr add {address}/16 dev {iface}\nlink set {iface} up\n")

    def _wait_for_marker(self, marker: str, names: list[str], timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not all(marker in self.procs[name].output() for name in names):
            for name in names:
                if not self.procs[name].alive():
                    raise TechniqueError(f"tincd ({name}) exited: {_tail(self.procs[name])}")
            if time.monotonic() > deadline:
                waiting = next(name for name in names if marker not in self.procs[name].output())
                raise TechniqueError(f"tincd ({waiting}) did not log {marker!r} within {timeout:g} s: "
                                     f"{_tail(self.procs[waiting])}")
            time.sleep(0.01)

    def _first_reply(self, name: str, target: str) -> float:
        """Seconds until the node's echo request to target is answered (one a second)."""
        seconds = wait_reachable(self._host(name), target, REACH_TIMEOUT, MESH_INTERVAL)
        if seconds is None:
            raise TechniqueError(f"tinc-mesh: {name} had no echo reply from {target} within {REACH_TIMEOUT:g} s")
        return round(seconds, 3)

    def evidence(self) -> dict[str, str]:
        """The hub's and the first four nodes' tincd logs (no key is ever logged), and those nodes' interfaces."""
        shown = [name for name in self.procs][:5]  # the hub first, then the nodes in start order
        pieces = [(f"{name}: tincd log", lambda proc=self.procs[name]: evidence.log_tail(proc)) for name in shown]
        pieces += [(f"{name}: ip addr (tinc)", lambda name=name: evidence.command(
            self._host(name), ["ip", "-d", "addr", "show", "dev", self.ifaces[name]])) for name in shown if name in self.ifaces]
        return evidence.gather(pieces)
