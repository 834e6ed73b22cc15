"""VpnCloud 2 as a mesh: a vpncloud node on every node of a mesh testbed, each with one configured
peer, a rendezvous node on the control node (testbeds/mesh.CONTROL_ADDR), and every other peer
learnt by VpnCloud's peer exchange.

What VpnCloud 2.3.0 does, and this relies on (its cloud.rs): a node keeps each peer under the
address its packets come from and tells every peer, in its node info (at the handshake and then
every `keepalive` seconds), each peer's addresses: the one it sees (the peer's NAT mapping towards
it) and those the peer says it listens on. A node that learns of a peer it has not got sends its
handshake (Init, retried for a few seconds) to each of those addresses. Two nodes that learn of
each other from the rendezvous at about the same time so punch a hole, each at the mapping the
rendezvous saw: that is exactly the "configured endpoint or the mapping a lighthouse saw" of
mesh_spec.direct_path_possible(). VpnCloud has no relay (a node writes what it receives to its
device and never forwards it to another peer; the rendezvous has no address on its device), so
a pair whose NATs leave no direct path never answers, and a udp-blocked node (VpnCloud speaks UDP
only) answers nobody. Why the control node and not n0 as the rendezvous: it is the one node on
the open segment in every mesh testbed; n0 may itself be behind a NAT.

Everything else as the pair technique (techniques/vpncloud.py) makes it: each node's Ed25519 key
pair fresh per bring-up (`vpncloud genkey` on its host, through a pipe), every node trusting every
node's public key (the rendezvous's too), the one `algorithm` offered by all, each configuration
0600 in the run's directory, given as a path and wiped at down(); no UPnP, beacons, stats or pid
files. A node claims its overlay address (/32); vpnbench sets the address on the TUN device.
up() returns once every node has the rendezvous as a peer and, where the two may go direct, n0
has its first echo reply from n1 (the pair the runner's first packet and two-host measurements
use); the other pairs are the convergence kind's to count.
"""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.hosts.reach import MESH_INTERVAL, wait_reachable
from vpnbench.techniques.base import MeshTechnique, TechniqueContext, Tunnel
from vpnbench.techniques.vpncloud import (
    ADDED,
    AEADS,
    NAME,
    START_TIMEOUT,
    VpnCloud,
    VpnCloudParams,
    _endpoint,
    _genkey,
    _tail,
    node_config,
    run_port,
    wait_for_log,
)
from vpnbench.testbeds.mesh import CONTROL_ADDR

RENDEZVOUS = "control"  # the rendezvous node's name among the nodes
OVERLAY_PREFIX = "10.79"  # node i: 10.79.(i // 250).(i % 250 + 1)/16, as tinc-mesh's 10.78
PARALLEL = 8  # nodes brought up at once: each a genkey, a daemon start and an `ip -batch`
OPENED = "Opened device"


def overlay_address(index: int) -> str:
    return f"{OVERLAY_PREFIX}.{index // 250}.{index % 250 + 1}"


class VpnCloudMeshParams(VpnCloudParams):
    kind: Literal["vpncloud-mesh"] = "vpncloud-mesh"  # type: ignore[assignment]
    family: Literal["ipv4"] = "ipv4"  # type: ignore[assignment]  # the mesh testbed's underlay
    # s between a node's node infos (its peer list) and keepalives: a node behind a filtering NAT
    # learns of a peer that joined after it at the rendezvous's next one, so this bounds how
    # long such a pair waits for its hole punch (VpnCloud's own default is 240 s)
    keepalive: int = Field(5, ge=1, le=240)


class VpnCloudMesh(MeshTechnique, VpnCloud):
    kind = "vpncloud-mesh"
    reach = "direct"  # no relay: a pair answers only where a direct path exists
    Params = VpnCloudMeshParams
    description = ("VpnCloud 2 as a mesh of a mesh testbed's nodes (a rendezvous on the control node, peer exchange "
                   "and hole punching; no relay)")

    def __init__(self, params: VpnCloudMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes = {}
        self.ifaces = {}
        self.configs: dict[str, dict] = {}  # name -> its configuration (its key pair made at set-up)

    def up(self, backend: str) -> Tunnel:
        p, res, nodes = self.params, self.ctx.resources, list(self.ctx.nodes)
        program = builds.program(NAME, NAME, p.version)
        port = p.port or run_port(res.run_id)
        rendezvous_at = _endpoint(CONTROL_ADDR, port)
        self.nodes = {RENDEZVOUS: self.ctx.control} | {node.name: node.host for node in nodes}
        self.ifaces = {name: res.iface_name(f"k{i}") for i, name in enumerate(self.nodes)}
        overlay = {node.name: overlay_address(i) for i, node in enumerate(nodes)}
        self.procs, self.configs = {}, {}
        with ThreadPoolExecutor(PARALLEL) as pool:
            keys = dict(zip(self.nodes, pool.map(lambda name: _genkey(self.nodes[name], program), self.nodes)))
        trusted = [public for _, public in keys.values()]
        self.tunnel = Tunnel(
            backend=backend, server_addrs={"ipv4": overlay["n1"]}, client_addrs={"ipv4": overlay["n0"]},
            protection="none" if p.algorithm == "plain" else "encrypted", wire_filter=f"udp port {port}",
            wire_protocol="vpncloud", overlay=overlay,
            negotiated={"implementation": NAME, "algorithm": p.algorithm, "aead": AEADS[p.algorithm],
                        "key_exchange": "ECDH, Ed25519-signed, keys per bring-up", "port": port,
                        "underlay_family": p.family, "mode": "normal (tun)", "trusted_keys": len(trusted),
                        "keepalive_s": p.keepalive,
                        "mesh": {"nodes": len(nodes), "rendezvous": f"control node ({rendezvous_at}, no address)",
                                 "discovery": "peer exchange (node info: each peer's seen and listen addresses)",
                                 "punch": "both ends send their handshake on learning of each other",
                                 "relay": "none"}})
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))  # before their files are wiped

        def configure(name: str) -> None:
            if name == RENDEZVOUS:
                config = node_config(self.ifaces[name], [], rendezvous_at, [], keys[name], trusted, p.algorithm,
                                     p.keepalive)
            else:
                mine = next(node.address for node in nodes if node.name == name)
                config = node_config(self.ifaces[name], [f"{overlay[name]}/32"], _endpoint(mine, port), [rendezvous_at],
                                     keys[name], trusted, p.algorithm, p.keepalive)
            self.configs[name] = config
            self._write_config(name)
            self.undo.defer(wipe, self.nodes[name], self._config_path(name))  # once: a join rewrites the same path
        for name in self.nodes:
            configure(name)

        self._start(RENDEZVOUS)
        started = time.monotonic()
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(self._start, overlay))  # the first failure is raised here
        reachable = [node.name for node in nodes if node.nat != "udp-blocked"]
        for name in reachable:  # every node that can send UDP has the rendezvous as a peer
            wait_for_log(self.procs[name], name, lambda log: ADDED in log)
        self.handshake_s = round(time.monotonic() - started, 3)  # the nodes' start to every rendezvous peering
        self.tunnel.negotiated["join_s"] = self.handshake_s
        if self.pair_can_answer(nodes[0].nat, nodes[1].nat):  # reach "direct": only where the NATs allow
            self.tunnel.negotiated["first_reply_n0_n1_s"] = self._first_reply("n0", overlay["n1"])
        self.tunnel.negotiated.update(self._what_ran("n0"))
        return self.tunnel

    def _write_config(self, name: str) -> None:
        self.nodes[name].write_file(self._config_path(name), json.dumps(self.configs[name], indent=1), 0o600)

    def _config_path(self, name: str):
        return self.ctx.resources.path(f"vpncloud-mesh-{name}.yml")

    def _start(self, name: str) -> None:
        """name's vpncloud started with its configuration; returns once its device is open and
        (a node) has its overlay address."""
        program = builds.program(NAME, NAME, self.params.version)
        self.procs[name] = proc = self.nodes[name].spawn([program, "--config", str(self._config_path(name))], name=NAME)
        self.tunnel.procs.append(proc)
        wait_for_log(proc, name, lambda log: OPENED in log and ("Setting MTU" in log or "Error setting" in log))
        if name != RENDEZVOUS:
            iface = self.ifaces[name]
            self.nodes[name].run(["ip", "-batch", "-"], input=f"addr add {self.tunnel.overlay[name]}/16 dev {iface}\n"
                                                              f"link set {iface} up\n")

    @classmethod
    def cannot_churn(cls, params) -> str | None:
        return None

    def leave(self, name: str) -> dict:
        """The node's vpncloud stopped and its configuration (its key) wiped; the rendezvous and the
        other nodes are left to notice (their peer times out)."""
        return self._take_node_out(name, self.procs, self.nodes[name], self._config_path(name), NAME)

    def join(self, name: str) -> dict:
        """The node's vpncloud started again with the configuration made at set-up: its key pair is
        the one every node trusts (VpnCloud reads its trusted keys at start only, so a new key would
        mean restarting the whole mesh). Returns once it has the rendezvous as a peer (a udp-blocked
        node never does: once its device is open); the others learn of it from the rendezvous's
        next node info, and their reaching it is the mesh's part, measured."""
        if name in self.procs or name not in self.configs:
            raise TechniqueError(f"{self.kind}: node {name} is not out of the mesh")
        self._write_config(name)
        self._start(name)
        if next(node.nat for node in self.ctx.nodes if node.name == name) != "udp-blocked":
            wait_for_log(self.procs[name], name, lambda log: ADDED in log)
        return {"node": name, "started": NAME, "key": "made at set-up (trusted by every node)"}

    def _first_reply(self, name: str, target: str) -> float:
        """Seconds until name's echo request to target is answered (one a second)."""
        seconds = wait_reachable(self.nodes[name], target, START_TIMEOUT, MESH_INTERVAL)
        if seconds is not None:
            return round(seconds, 3)
        logs = "; ".join(f"{role}: {_tail(self.procs[role].output(), 3)}" for role in (RENDEZVOUS, "n0", "n1"))
        raise TechniqueError(f"vpncloud-mesh: {name} had no echo reply from {target} within {START_TIMEOUT:g} s "
                             f"(logs: {logs})")

    def evidence(self) -> dict[str, str]:
        """The rendezvous's and the first four nodes' logs (vpncloud never logs a key), and two nodes' devices."""
        shown = [RENDEZVOUS, *[name for name in self.procs if name != RENDEZVOUS][:4]]
        host_of: dict[str, Host] = self.nodes
        pieces = [(f"{name}: vpncloud log", lambda proc=self.procs[name]: evidence.log_tail(proc))
                  for name in shown if name in self.procs]
        pieces += [(f"{name}: ip addr (vpncloud tun)", lambda name=name: evidence.command(
            host_of[name], ["ip", "addr", "show", "dev", self.ifaces[name]])) for name in shown[1:3]]
        return evidence.gather(pieces)
