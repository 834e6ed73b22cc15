"""Nebula as a mesh: every node of a mesh testbed, the lighthouse (and relay) on the control node.

The lighthouse listens on the control node's public address, with its TUN disabled (it forwards
no overlay traffic of its own). Every node knows only the lighthouse (static_host_map) and asks
it where a peer is; the lighthouse then tells both sides, and with `punchy` both send at once, so
a pair whose NATs keep a mapping for the other's packets goes direct. With `relays` (nebula's
relay.use_relays, the lighthouse's relay.am_relay) a pair that cannot punch through is carried
by the lighthouse: nebula tries direct first and falls back to the relay after its handshake
retries. Certificates as the two-host technique makes them (nebula.nebula_pki), fresh per bring-up.

The TUN MTU leaves room for a relayed packet, which carries a second nebula header and tag
inside the relay's: an overlay packet that fits direct must fit relayed too.
"""

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import stop_all
from vpnbench.techniques.base import TechniqueContext, Tunnel
from vpnbench.techniques.nebula import (
    AEAD_TAG,
    CIPHERS,
    CURVE,
    NEBULA_HEADER,
    Nebula,
    NebulaParams,
    handshake_seconds,
    log_entries,
    nebula_outer,
    nebula_pki,
    overlay_subnet,
    run_port,
)
from vpnbench.techniques.overhead import max_inner
from vpnbench.testbeds.mesh import CONTROL_ADDR

LIGHTHOUSE_HOST = 254  # the lighthouse's host number in the overlay /24; nodes are 1..250
UNDERLAY_MTU = 1500  # the mesh testbed's links
PARALLEL = 8  # nebula daemons started at once


class NebulaMeshParams(NebulaParams):
    kind: Literal["nebula-mesh"] = "nebula-mesh"  # type: ignore[assignment]
    lighthouse: Literal["control"] = "control"  # type: ignore[assignment]  # the mesh testbed's control node
    punch: bool = True  # punchy.punch and punchy.respond: hole punching through the nodes' NATs
    relays: bool = True  # the lighthouse relays (am_relay) the pairs that cannot go direct (use_relays)


class NebulaMesh(Nebula):
    kind = "nebula-mesh"
    reach = "udp-relay"  # its relay speaks UDP: a node behind udp-blocked answers no one
    Params = NebulaMeshParams
    description = "Nebula as a mesh of a mesh testbed's nodes (lighthouse and relay on the control node, hole punching)"
    mesh = True

    def __init__(self, params: NebulaMeshParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.node_procs: dict[str, object] = {}
        # node name -> its configuration, certificate and key included (held in memory only, as
        # long as the bring-up: its file is wiped at leave() and at down()), for join()
        self.node_configs: dict[str, dict] = {}

    def up(self, backend: str) -> Tunnel:
        p, res, nodes = self.params, self.ctx.resources, list(self.ctx.nodes)
        subnet = overlay_subnet(res.run_id)
        port = p.port or run_port(res.run_id)
        overlay = {node.name: f"{subnet}.{i + 1}" for i, node in enumerate(nodes)}
        lighthouse = f"{subnet}.{LIGHTHOUSE_HOST}"
        mtu = p.mtu or max_inner(lambda n: nebula_outer(n, "ipv4") + (NEBULA_HEADER + AEAD_TAG) * p.relays, UNDERLAY_MTU)
        self.tunnel = Tunnel(
            backend=backend, server_addrs={"ipv4": overlay["n1"]}, client_addrs={"ipv4": overlay["n0"]},
            protection="encrypted", wire_filter=f"udp port {port}", wire_protocol="nebula", overlay=overlay,
            negotiated={"implementation": "nebula", "cipher": p.cipher, "aead": CIPHERS[p.cipher], "curve": CURVE,
                        "lighthouse": "control node", "overlay": f"{subnet}.0/24", "port": port, "mtu": mtu,
                        "mesh": {"nodes": len(nodes), "discovery": "lighthouse", "punch": p.punch,
                                 "relay": "lighthouse" if p.relays else "none"},
                        "firewall": "any in, any out (benchmark)"})
        networks = {"lighthouse": f"{lighthouse}/24"} | {name: f"{address}/24" for name, address in overlay.items()}
        pems = nebula_pki(res.dir, builds.program("nebula", "nebula-cert", p.version), networks, res.run_id)
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))
        control = self.ctx.control
        self.nodes = {"lighthouse": control} | {node.name: node.host for node in nodes}
        self.procs["lighthouse"] = self._start("lighthouse", control, self._config_of("lighthouse", pems, port, lighthouse, mtu))
        self._wait("lighthouse", lambda log: any(entry.get("msg") == "Nebula interface is active" for entry in log))
        self._wait_listening("lighthouse", port)

        def start(node) -> None:
            config = self._config_of(node.name, pems, port, lighthouse, mtu)
            config["tun"]["dev"] = res.iface_name(f"n{node.name[1:]}")
            self.node_configs[node.name] = config
            self.procs[node.name] = self._start(node.name, node.host, config)
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(start, nodes))
        # Waited for: n0's and n1's handshakes with the lighthouse, the pair the runner's first packet
        # and the two-host measurements use (queried before n1 registered, the lighthouse has no
        # answer for n0, and nebula's retries outlast the bring-up's deadline). Not the others'
        # (a udp-blocked node never registers): the convergence kind counts them from here.
        for name in ("n0", "n1"):
            self._wait(name, lambda log: handshake_seconds(log) is not None)
        self.handshake_s = handshake_seconds(log_entries(self.procs["n0"].output()))
        return self.tunnel

    @classmethod
    def cannot_churn(cls, params) -> str | None:
        return None

    def leave(self, name: str) -> dict:
        """The node's nebula stopped and its configuration (certificate and key) wiped; the
        lighthouse and the other nodes are left to notice."""
        return self._take_node_out(name, self.procs, self.nodes[name], self.ctx.resources.path(f"nebula-{name}.yml"),
                                   "nebula")

    def join(self, name: str) -> dict:
        """The node's nebula started again with the certificate the CA signed for it at set-up (the
        CA's key is never kept past it): a daemon the others have no tunnel with, which registers
        with the lighthouse as up()'s nodes do. Returns once its interface is active; the lighthouse
        and the others reaching it is the mesh's part, measured."""
        if name in self.procs or name not in self.node_configs:
            raise TechniqueError(f"{self.kind}: node {name} is not out of the mesh")
        self.procs[name] = self._start(name, self.nodes[name], self.node_configs[name])
        self._wait(name, lambda log: any(entry.get("msg") == "Nebula interface is active" for entry in log))
        return {"node": name, "started": "nebula", "certificate": "signed at set-up"}

    def _start(self, name: str, host, config: dict):
        path = self.ctx.resources.path(f"nebula-{name}.yml")
        host.write_file(path, json.dumps(config, indent=1), 0o600)
        self.undo.defer(wipe, host, path)
        proc = host.spawn([builds.program("nebula", "nebula", self.params.version), "-config", str(path)], name="nebula")
        self.tunnel.procs.append(proc)
        return proc

    def _config_of(self, name: str, pems: dict[str, str], port: int, lighthouse: str, mtu: int) -> dict:
        """One node's configuration (nebula's examples/config.yml names every key)."""
        p = self.params
        config: dict = {
            "pki": {"ca": pems["ca.crt"], "cert": pems[f"{name}.crt"], "key": pems[f"{name}.key"]},
            "cipher": p.cipher,
            "listen": {"host": "0.0.0.0", "port": port},
            "punchy": {"punch": p.punch, "respond": p.punch},
            "logging": {"level": "info", "format": "json", "timestamp_format": "2006-01-02T15:04:05.000000Z07:00"},
            "firewall": {"outbound": [{"port": "any", "proto": "any", "host": "any"}],
                         "inbound": [{"port": "any", "proto": "any", "host": "any"}]},
        }
        if name == "lighthouse":
            config["lighthouse"] = {"am_lighthouse": True}
            config["relay"] = {"am_relay": p.relays, "use_relays": False}
            config["tun"] = {"disabled": True}
            return config
        config["static_host_map"] = {lighthouse: [f"{CONTROL_ADDR}:{port}"]}
        config["lighthouse"] = {"am_lighthouse": False, "hosts": [lighthouse]}
        config["relay"] = {"am_relay": False, "use_relays": p.relays, **({"relays": [lighthouse]} if p.relays else {})}
        config["tun"] = {"mtu": mtu}
        return config

    def evidence(self) -> dict[str, str]:
        """The lighthouse's and the first four nodes' logs (JSON lines: no key is ever logged)."""
        shown = ["lighthouse", *[name for name in self.procs if name != "lighthouse"][:4]]
        return evidence.gather([(f"{name}: nebula log", lambda proc=self.procs[name]: evidence.log_tail(proc))
                                for name in shown if name in self.procs])
