"""Tailscale as a mesh: tailscaled on every node of a mesh testbed, joined to one Headscale (with
its embedded DERP relay and STUN server) on the control node.

Everything as the pair technique (techniques/tailscale.py) makes it: Headscale's fresh
configuration, database and keys in the run's directory, https with a certificate from a CA made
per bring-up (its key never leaves this process), `derp.urls: []` (its own relay the only
region), one reusable pre-auth key reaching each `tailscale up` as `--auth-key=file:PATH` (a 0600
file per node, wiped at down), and every tailscaled contained (its own state directory, socket
and TUN; no log upload, no port mapper, no name lookup). Here Headscale listens on the control
node's address on the open internet (testbeds/mesh.CONTROL_ADDR), which every node reaches
through its NAT.

Each node learns its NAT's mapping from the STUN server and its peers' endpoints from the
netmap; tailscale's disco pings then try every candidate endpoint from both sides at once, so a
pair whose NATs leave a direct path (mesh_spec.direct_path_possible) goes direct, and any other
pair stays on the DERP relay (TLS over TCP to the control node): a udp-blocked node is reached
too, through DERP alone. path = "relayed" sets TS_DEBUG_NEVER_DIRECT_UDP on every daemon, so
every pair is relayed.

up() returns once every node has joined and n0 has its first pong from n1 over any path (the
pair the runner's first packet and two-host measurements use); the other pairs are the
convergence kind's to count.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from vpnbench.foundation.errors import TechniqueError
from vpnbench.hosts import evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.techniques.base import MeshTechnique, TechniqueContext, Tunnel
from vpnbench.techniques.tailscale import (
    PATH_TIMEOUT,
    PONG,
    TUN_MTU,
    Tailscale,
    TailscaleParams,
    control_certificate,
)
from vpnbench.testbeds.mesh import CONTROL_ADDR
from vpnbench.testbeds.mesh_spec import direct_path_possible

PARALLEL = 8  # nodes brought up at once: each a tailscaled start and a `tailscale up` (mostly waiting on Headscale)


class TailscaleMeshParams(TailscaleParams):
    kind: Literal["tailscale-mesh"] = "tailscale-mesh"  # type: ignore[assignment]
    # auto: direct where disco finds a path through the NATs, else through the DERP relay;
    # relayed: every pair through the relay (TS_DEBUG_NEVER_DIRECT_UDP on every daemon)
    path: Literal["auto", "relayed"] = "auto"  # type: ignore[assignment]


class TailscaleMesh(MeshTechnique, Tailscale):
    kind = "tailscale-mesh"
    Params = TailscaleMeshParams
    description = "Tailscale as a mesh of a mesh testbed's nodes (Headscale, its DERP relay and STUN on the control node)"

    def __init__(self, params: TailscaleMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.node_hosts: dict[str, Host] = {}  # node name -> its host
        self.node_index: dict[str, int] = {}
        self.server_url = ""  # Headscale's, for a newcomer's join (churn)

    def _host(self, role: str) -> Host:
        return self.node_hosts[role]

    @property
    def node_start_timeout(self) -> float:
        return self.join_wait(super().node_start_timeout)  # grows with N (base.JOIN_S_PER_NODE)

    def _tun_name(self, role: str) -> str:
        return self.ctx.resources.iface_name(f"t{self.node_index[role]}")

    def up(self, backend: str) -> Tunnel:
        p, res, nodes = self.params, self.ctx.resources, list(self.ctx.nodes)
        self.control_host = self.ctx.control
        self.node_hosts = {node.name: node.host for node in nodes}
        self.node_index = {node.name: i for i, node in enumerate(nodes)}
        # The wire proof watches n0's link while n0 and n1 talk: WireGuard over UDP where they can
        # go direct, else TLS to the relay.
        direct_pair = p.path == "auto" and direct_path_possible(nodes[0].nat, nodes[1].nat)
        self.tunnel = Tunnel(backend=backend, server_addrs={}, client_addrs={}, protection="encrypted",
                             wire_filter=f"udp port {p.port}" if direct_pair else f"tcp port {p.control_port}",
                             wire_protocol="WireGuard" if direct_pair else "TLS")
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))  # whatever a failed start left
        ca_pem, cert_pem, key_pem = control_certificate(CONTROL_ADDR)
        server_url = self.server_url = f"https://{CONTROL_ADDR}:{p.control_port}"
        started = time.monotonic()
        auth_key = self._start_headscale(CONTROL_ADDR, server_url, cert_pem, key_pem)

        def bring_up(name: str) -> None:
            host = self.node_hosts[name]
            ca_file, key_file = res.path(f"tailscale-ca-{name}.pem"), res.path(f"tailscale-auth-{name}.key")
            self._private_file(host, ca_file, ca_pem)
            self._private_file(host, key_file, auth_key)
            self._start_tailscaled(name, ca_file)
            self._join(name, server_url, key_file)
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(bring_up, self.node_hosts))  # list(): the first failure is raised here
        self.handshake_s = round(time.monotonic() - started, 3)  # Headscale up and every node joined
        with ThreadPoolExecutor(PARALLEL) as pool:
            overlay = dict(zip(self.node_hosts, pool.map(lambda name: self._tailnet_addresses(name)["ipv4"],
                                                         self.node_hosts)))
        self.tunnel.overlay = overlay
        self.tunnel.client_addrs, self.tunnel.server_addrs = {"ipv4": overlay["n0"]}, {"ipv4": overlay["n1"]}
        via, pong_s = self._first_pong("n0", overlay["n1"])
        self.tunnel.negotiated = {
            "implementation": "tailscaled", **self._versions("n0"),
            "control": "headscale (control node)", "control_url": server_url, "join_s": self.handshake_s,
            "path_asked": p.path, "first_pong_n0_n1": {"via": via, "s": round(pong_s, 3)},
            "cipher": "chacha20poly1305", "key_exchange": "x25519 (Noise IK)", "tun_mtu": TUN_MTU,
            "derp": "Headscale's embedded relay (TLS, run-local CA)",
            "mesh": {"nodes": len(nodes), "discovery": "headscale netmap, STUN, disco pings",
                     "relay": "DERP on the control node"},
        }
        if p.path == "relayed":
            self.tunnel.negotiated["forced_by"] = "TS_DEBUG_NEVER_DIRECT_UDP"
        return self.tunnel

    @classmethod
    def cannot_churn(cls, params) -> str | None:
        return None

    def leave(self, name: str) -> dict:
        """The node's tailscaled stopped and its state directory (node and machine keys) wiped.
        Headscale keeps the node, offline, as it keeps any node that went away."""
        return self._take_node_out(name, self.daemons, self.node_hosts[name],
                                   self.ctx.resources.path(f"tailscaled-{name}"), "tailscaled")

    def join(self, name: str) -> dict:
        """A newcomer: a fresh tailscaled (new state directory, so new node and machine keys)
        joined with the run's reusable pre-auth key; Headscale registers it as a new node with an
        address of its own, which the tunnel's overlay then names (the churn kind asks the new
        one). Returns once `tailscale up` has returned and the address is known."""
        if name in self.daemons:
            raise TechniqueError(f"{self.kind}: node {name} is already in the mesh")
        res = self.ctx.resources
        self._start_tailscaled(name, res.path(f"tailscale-ca-{name}.pem"))
        self._join(name, self.server_url, res.path(f"tailscale-auth-{name}.key"))
        address = self._tailnet_addresses(name)["ipv4"]
        self.tunnel.overlay[name] = address
        if name in ("n0", "n1"):  # the two-host measurements' ends
            (self.tunnel.client_addrs if name == "n0" else self.tunnel.server_addrs)["ipv4"] = address
        return {"node": name, "address": address}

    def _first_pong(self, role: str, target: str) -> tuple[str, float]:
        """Ping target over tailscale's disco pings until a pong comes over any path; (via, seconds)."""
        started = time.monotonic()
        via = "no pong"
        while time.monotonic() - started < PATH_TIMEOUT:
            result = self._tailscale(role, "ping", "-c", "1", "--timeout=1s", "--until-direct=false", target,
                                     check=False, timeout=5)
            pong = PONG.search(result.stdout)
            if pong:
                return pong.group(2), time.monotonic() - started
            via = (result.stdout + result.stderr).strip()[-200:] or via
            time.sleep(0.1)
        raise TechniqueError(f"tailscale-mesh: no pong from n1 to n0 within {PATH_TIMEOUT:g} s (last: {via})")

    def evidence(self) -> dict[str, str]:
        """The first four nodes' `tailscale status`, Headscale's nodes, and the daemons' logs."""
        shown = list(self.sockets)[:4]
        pieces = [(f"{name}: tailscale status", lambda name=name: evidence.command(
            self._host(name), [self._tailscale_program("tailscale"), f"--socket={self.sockets[name]}", "status"]))
            for name in shown]
        if self.headscale_config is not None:
            pieces.append(("control: headscale nodes list", lambda: evidence.command(self.control_host, [
                self._headscale_program(), "-c", str(self.headscale_config), "nodes", "list"])))
        procs = self.tunnel.procs[:5] if self.tunnel else []  # Headscale first, then the first daemons started
        pieces += [(f"{proc.name} {n}: log", lambda proc=proc: evidence.log_tail(proc)) for n, proc in enumerate(procs)]
        return evidence.gather(pieces)

