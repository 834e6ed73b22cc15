"""EasyTier 2.0 (EasyTier/EasyTier): a mesh whose nodes join a named network with a shared
secret, over UDP (or TCP, WireGuard, WebSocket, QUIC) links, routing packets between peers.

Its data encryption is AES-128-GCM (ring) under one static key that each node derives from the
network secret alone (two SipHash-1-3 outputs of it, global_ctx.rs get_128_key): no key exchange,
no forward secrecy; a packet gets a random 12-byte nonce. `encryption = false` sends packets in
clear (the wire proof then must see its marker, as for the baseline). The peer handshake carries
the network name and a digest of name and secret, in clear either way.

Per bring-up the network's name and secret are new (secrets module). Each node's configuration
(TOML) holds them, is written 0600 into the run's directory on its host, is given as a path
(`--config-file`; never a secret on a command line), and is wiped at down(). easytier-core prints
its whole configuration, secret included, to stdout when it starts: vpnbench overwrites the secret
in the daemon's log (0600) with asterisks of the same length as soon as it is printed, so neither
the log nor the evidence taken from it holds it. Peers are set explicitly (the client's one peer
is the server's listener); no DHCP of addresses (each node's ipv4 is given), no public nodes, no
peer-to-peer discovery or UDP hole punching, no IPv6 wildcard listener, no RPC portal. 2.0.3 has
no switch for its STUN probe of public servers (stun.miwifi.com ...): in the testbed's namespaces
they are unreachable, and nothing is sent to them.

On the wire (tunnel/packet_def.rs) a UDP datagram is the UDP tunnel header 8 (connection id 4,
message type 1, padding 1, length 2), the peer manager header 16 (from and to peer ids, packet
type, flags with bit 0 "encrypted", forward counter, reserved, length 4), the packet, and, with
encryption, the GCM tag 16 and the nonce 12. Over TCP the frame has a length 4 instead of the UDP
tunnel header, in a stream. easytier-core sets its TUN MTU to its `mtu` flag (1380 by default)
less 20 when encryption is on: 1360, below the 1420 an IPv4 underlay of 1500 would carry.
"""

import json
import re
import secrets
import time
from pathlib import Path
from typing import Literal

from pydantic import Field, StrictBool

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Family, TechniqueParams
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, Proc, stop_all
from vpnbench.techniques.base import BuiltTunDaemon, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import IP_HEADER, TCP_HEADER, UDP_HEADER, Expectation, expectation_of

NAME = "easytier"
PROGRAM = "easytier-core"
ROLES = ("server", "client")
INNER = {"client": "10.93.0.1", "server": "10.93.0.2"}
UDP_TUNNEL_HEADER = 8  # UDPTunnelHeader: conn_id 4, msg_type 1, padding 1, len 2
TCP_TUNNEL_HEADER = 4  # TCPTunnelHeader: len 4
PEER_MANAGER_HEADER = 16  # PeerManagerHeader: from 4, to 4, type 1, flags 1, forward counter 1, reserved 1, len 4
AES_GCM_TAIL = 16 + 12  # AesGcmTail: tag 16, nonce 12
DEFAULT_MTU = 1380  # Flags::mtu's default
ENCRYPTION_MTU_CUT = 20  # virtual_nic.rs: the TUN MTU is the flag less 20 when encryption is on
START_TIMEOUT = 20.0
CONFIG_PRINTED = "-----------------------------------"  # the line after the configuration it prints at start
PEER_ADDED = "new peer added"


def easytier_outer(inner: int, family: str, transport: str, encryption: bool) -> int:
    sealed = AES_GCM_TAIL if encryption else 0
    if transport == "tcp":
        return inner + IP_HEADER[family] + TCP_HEADER + TCP_TUNNEL_HEADER + PEER_MANAGER_HEADER + sealed
    return inner + IP_HEADER[family] + UDP_HEADER + UDP_TUNNEL_HEADER + PEER_MANAGER_HEADER + sealed


def device_mtu(encryption: bool) -> int:
    return DEFAULT_MTU - (ENCRYPTION_MTU_CUT if encryption else 0)


class EasyTierParams(TechniqueParams):
    kind: Literal["easytier"] = "easytier"
    version: builds.version_type(NAME) = None
    # AES-128-GCM under the key from the network secret, or the packets in clear (--disable-encryption)
    encryption: StrictBool = True
    # --multi-thread: a tokio runtime of 2 worker threads instead of the one thread it runs by default
    multi_thread: StrictBool = False
    transport: Literal["udp", "tcp"] = "udp"  # the server's listener and the client's peer link
    family: Family = "ipv4"  # underlay family
    port: int | None = Field(None, ge=1, le=65535)  # None: a port of this run's own (run_port)


class EasyTier(BuiltTunDaemon):
    BUILD = NAME
    PROGRAM = PROGRAM
    kind = "easytier"
    kernel_features = {"userspace": "TUN (/dev/net/tun)"}
    Params = EasyTierParams
    description = "EasyTier 2 (network name and shared secret; AES-128-GCM from the secret, or clear; UDP or TCP)"
    versions = {PROGRAM: f"{builds.program(NAME, PROGRAM, builds.RECIPES[NAME].default)} --version 2>/dev/null"}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "an EasyTier node has one device and one address; N tunnels would be N nodes"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        family, transport = settings.get("family", "ipv4"), settings.get("transport", "udp")
        encryption = settings.get("encryption", True)
        framing = (f"length {TCP_TUNNEL_HEADER} in a TCP stream (IP {IP_HEADER[family]} + TCP {TCP_HEADER}), which "
                   "segments larger packets" if transport == "tcp" else
                   f"IP {IP_HEADER[family]} + UDP {UDP_HEADER} + tunnel header {UDP_TUNNEL_HEADER}")
        return expectation_of(lambda n: easytier_outer(n, family, transport, encryption), underlay_mtu,
                              device_mtu(encryption), transport == "tcp",
                              f"EasyTier over {transport}/{family}, encryption {'on' if encryption else 'off'}: its TUN "
                              f"MTU is its mtu flag {DEFAULT_MTU}" + (f" less {ENCRYPTION_MTU_CUT}" if encryption else "")
                              + f"; a packet takes {framing} + peer manager header {PEER_MANAGER_HEADER}"
                              + (f" + GCM tag and nonce {AES_GCM_TAIL}" if encryption else " (in clear)"))

    def __init__(self, params: EasyTierParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes: dict[str, Host] = {"server": ctx.server, "client": ctx.client}
        self.procs: dict[str, Proc] = {}
        self.ifaces: dict[str, str] = {}
        self.build_record: dict | None = None
        self._secret = ""

    def up(self, backend: str) -> Tunnel:
        p, res = self.params, self.ctx.resources
        program = builds.program(NAME, PROGRAM, p.version)
        port = p.port or run_port(res.run_id)
        self.ifaces = {role: res.iface_name("e" + role[0]) for role in ROLES}
        network = f"vpnbench-{secrets.token_hex(8)}"
        self._secret = secrets.token_hex(24)
        server_at = f"{p.transport}://{_endpoint(self.ctx.underlay['server'][p.family], port)}"
        configs = {role: res.path(f"easytier-{role}.toml") for role in ROLES}
        for role in ROLES:
            config = _config(role, network, self._secret, self.ifaces[role], server_at, p.encryption)
            self.nodes[role].write_file(configs[role], config, 0o600)
            self.undo.defer(wipe, self.nodes[role], configs[role])
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs={"ipv4": INNER["server"]},
            client_addrs={"ipv4": INNER["client"]},
            protection="encrypted" if p.encryption else "none",
            wire_filter=f"{p.transport} port {port}",
            wire_protocol=WIRE_PROTOCOLS[p.transport],
            negotiated={"implementation": NAME, "encryption": p.encryption,
                        "cipher": "AES-128-GCM (ring), random 96-bit nonces" if p.encryption else "none",
                        "key_exchange": "none: one static key from the network secret (SipHash-1-3), new per bring-up"
                        if p.encryption else "none", "transport": p.transport, "port": port,
                        "underlay_family": p.family, "multi_thread": p.multi_thread},
        )
        self.undo.defer(stop_all, self.tunnel.procs)  # before their files are wiped
        for role in ROLES:
            if role == "client":
                started = time.monotonic()
            argv = [program, "--config-file", str(configs[role])] + (["--multi-thread"] if p.multi_thread else [])
            self.procs[role] = proc = self.nodes[role].spawn(argv, name=PROGRAM)
            self.tunnel.procs.append(proc)
            self._wait(role, lambda log: CONFIG_PRINTED in log)
            _blank(proc, self._secret)
            if role == "server":
                self._wait(role, lambda log: "new listener added" in log)
        for role in ROLES:
            self._wait(role, lambda log: "tun device ready" in log and PEER_ADDED in log)
        self.handshake_s = round(time.monotonic() - started, 3)  # the client's start to both peers added (10 ms polls)
        self.tunnel.negotiated.update(self._what_ran())
        return self.tunnel

    def _wait(self, role: str, ready) -> None:
        proc = self.procs[role]
        deadline = time.monotonic() + START_TIMEOUT
        while not ready(proc.output()):
            if not proc.alive():
                raise TechniqueError(f"easytier-core ({role}) exited: {self._tail(proc)}")
            if time.monotonic() > deadline:
                raise TechniqueError(f"easytier-core ({role}) not ready within {START_TIMEOUT:g} s: {self._tail(proc)}")
            time.sleep(0.01)

    def _tail(self, proc: Proc, lines: int = 5) -> str:
        _blank(proc, self._secret)  # a daemon that failed early may have printed it since
        return " | ".join(proc.output().strip().splitlines()[-lines:]) or "no output"

    def _what_ran(self) -> dict:
        found: dict = {}
        client = self.nodes["client"]
        said = client.run([builds.program(NAME, PROGRAM, self.params.version), "--version"], timeout=10, check=False)
        version = re.search(r"easytier-core (\S+)", said.stdout)
        found["version"] = version.group(1) if version else None
        if self.build_record is None:
            result = client.run(builds.record_command(NAME, self.params.version), timeout=10, check=False)
            try:
                self.build_record = json.loads(result.stdout)
            except ValueError:
                self.build_record = {"unreadable": (result.stderr or result.stdout).strip()[-200:]}
        found["build"] = self.build_record
        link = client.run(["ip", "-j", "link", "show", "dev", self.ifaces["client"]], timeout=10, check=False)
        try:
            found["mtu"] = json.loads(link.stdout)[0]["mtu"]
        except (ValueError, LookupError):
            found["mtu"] = None
        # "new peer connection added. conn_info: ... tunnel_info: Some(TunnelInfo { tunnel_type: "udp", ... })"
        tunnel = re.search(r'tunnel_type: "(\w+)"', self.procs["client"].output())
        found["peer_link"] = tunnel.group(1) if tunnel else None
        return found

    def failure(self) -> str | None:
        for proc in self.procs.values():
            _blank(proc, self._secret)
        return super().failure()

    def evidence(self) -> dict[str, str]:
        for proc in self.procs.values():
            _blank(proc, self._secret)
        pieces = [(f"{role}: easytier-core log", lambda proc=proc: evidence.log_tail(proc))
                  for role, proc in self.procs.items()]
        pieces += [(f"{role}: ip addr (easytier tun)", lambda role=role, iface=iface: evidence.command(
            self.nodes[role], ["ip", "addr", "show", "dev", iface])) for role, iface in self.ifaces.items()]
        return evidence.gather(pieces)


WIRE_PROTOCOLS = {"udp": "easytier", "tcp": "easytier-tcp"}


def _config(role: str, network: str, secret: str, iface: str, server_at: str, encryption: bool) -> str:
    """One node's TOML: its address, its network, the server's one listener or the client's one peer."""
    # the server listens on its underlay address only; the client listens nowhere, it dials
    return node_config(f"vpnbench-{role}", f"{INNER[role]}/24", network, secret, iface,
                       listeners=[server_at] if role == "server" else [],
                       peers=[server_at] if role == "client" else [], encryption=encryption, p2p=False)


def node_config(name: str, address: str | None, network: str, secret: str, iface: str | None, listeners: list[str],
                peers: list[str], encryption: bool, p2p: bool, rpc_portal: str | None = None) -> str:
    """A node's TOML (the pair's two, the mesh's nodes and its public peer): its address (None: no
    TUN, it only forwards), its network, its listeners and the peers it dials. p2p False: no
    connections but the configured ones; True: EasyTier's direct connections and UDP hole punching."""
    lines = [
        f'instance_name = "{name}"',
        f'hostname = "{name}"',
        *([f'ipv4 = "{address}"'] if address else []),
        "dhcp = false",
        f"listeners = [{', '.join(json.dumps(listener) for listener in listeners)}]",
        *([f"rpc_portal = {json.dumps(rpc_portal)}"] if rpc_portal else []),
        "",
        "[network_identity]",
        f"network_name = {json.dumps(network)}",
        f"network_secret = {json.dumps(secret)}",
        "",
    ]
    for peer in peers:
        lines += ["[[peer]]", f"uri = {json.dumps(peer)}", ""]
    lines += ["[flags]", *([f'dev_name = "{iface}"'] if iface else ["no_tun = true"]),
              f"enable_encryption = {'true' if encryption else 'false'}",
              "enable_ipv6 = false"]  # no wildcard udp://[::]:0 listener beside ours
    if not p2p:
        lines += ["disable_p2p = true", "disable_udp_hole_punching = true"]
    return "\n".join(lines) + "\n"


def _blank(proc: Proc, secret: str) -> None:
    """Overwrite the secret in the daemon's log with asterisks of its length, in place: the daemon
    keeps writing at its own offset, which the file's length, unchanged, keeps valid."""
    log_path: Path | None = getattr(proc, "log_path", None)
    if not secret or log_path is None:
        return
    needle = secret.encode()
    try:
        with open(log_path, "r+b") as log:
            data = log.read()
            at = data.find(needle)
            while at >= 0:
                log.seek(at)
                log.write(b"*" * len(needle))
                at = data.find(needle, at + len(needle))
    except OSError:  # the log is gone with the run directory: nothing left to blank
        pass


def run_port(run_id: str) -> int:
    """This run's port (7100-7799) for the server's listener, from the run id."""
    return 7100 + (int(run_id, 16) >> 8) % 700


def _endpoint(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
