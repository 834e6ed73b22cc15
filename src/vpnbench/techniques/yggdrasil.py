"""Yggdrasil (yggdrasil-network/yggdrasil-go 0.5): an end-to-end encrypted IPv6 overlay whose
addresses come from each node's Ed25519 key (200::/7), routed by ironwood over peerings.

Two nodes, the server and the client, peer explicitly: the server listens on one underlay
address and port of this run's own and admits only the client's public key
(AllowedPublicKeys); the client names the server in Peers. Multicast discovery is off (no
MulticastInterfaces), so nothing on the testbed's links is found or joined by chance; the admin
socket is a UNIX socket in the run's private directory, never /var/run/yggdrasil.sock.

Per bring-up each node makes its own key (`yggdrasil -genconf -json`, on its host, through a
pipe); its configuration (JSON, which is HJSON) holds it and is written 0600 into the run's
directory on that host, passed as a path (never on a command line), and wiped at down(). The
overlay carries IPv6 only (0.5 dropped IPv4 routing): measurements through it run over IPv6 where
the campaign leaves their family unset (overlay_family).

On the wire a peering is a TCP connection (or TLS over it, transport = "tls") carrying ironwood
frames: a uvarint length, a type byte (1 keep-alive ... 9 traffic), the frame. A traffic frame
carries the two paths, both nodes' public keys and a watermark before the payload, which the
ironwood session encrypts end to end (the peering's TLS, if any, is a second layer).
"""

import json
import time
from pathlib import Path
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Family, TechniqueParams
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.techniques.base import BuiltTunDaemon, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import IP_HEADER, TCP_HEADER, Expectation, expectation_of

NAME = "yggdrasil"
ROLES = ("server", "client")  # the listener first: the client's peering finds it
START_TIMEOUT = 20.0
CONNECTED = "Connected "  # "Connected tcp: <address>@<ip:port>, source <ip:port>": a peering is up
MAX_MTU = 65535  # yggdrasil's IfMTU default and ceiling on Linux (src/config/defaults_linux.go)
# The fixed bytes of a traffic frame carrying one inner packet between two directly peered nodes
# (for packets of 126 to 16 259 bytes, whose frame length takes a 2-byte uvarint): the length 2,
# type 1, both paths 2 (each a lone 0), source and destination keys 64, watermark 1, and 54 of
# the ironwood session's own (its header and tag). Measured in captures of IPv6 pings of 200 and
# 1000 bytes (248 -> 372, 1048 -> 1172); tests/test_yggdrasil.py checks it on every run.
FRAME_OVERHEAD = 124
TLS13_RECORD = 5 + 1 + 16  # record header, inner content type, AEAD tag


def yggdrasil_outer(inner: int, family: str, transport: str) -> int:
    return inner + IP_HEADER[family] + TCP_HEADER + FRAME_OVERHEAD + (TLS13_RECORD if transport == "tls" else 0)


class YggdrasilParams(TechniqueParams):
    kind: Literal["yggdrasil"] = "yggdrasil"
    # A version vpnbench builds (builds.RECIPES); Debian's 0.4.7 speaks the older protocol.
    version: builds.version_type(NAME) = None
    transport: Literal["tcp", "tls"] = "tcp"  # the peering: ironwood frames over TCP, or over TLS
    family: Family = "ipv4"  # underlay family of the peering
    port: int | None = Field(None, ge=1, le=65535)  # None: a port of this run's own (run_port)
    mtu: int = Field(MAX_MTU, ge=1280, le=MAX_MTU)  # the TUN device's (IfMTU); TCP segments the frames


class Yggdrasil(BuiltTunDaemon):
    BUILD = NAME
    kind = "yggdrasil"
    kernel_features = {"userspace": "TUN (/dev/net/tun)"}
    Params = YggdrasilParams
    description = "Yggdrasil (Ed25519-keyed IPv6 overlay, ironwood sessions over TCP or TLS peerings)"
    overlay_family = "ipv6"  # 200::/7, from each node's key; 0.5 routes no IPv4
    versions = {NAME: f"{builds.program(NAME, NAME, builds.RECIPES[NAME].default)} -version 2>/dev/null | tail -1"}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "a Yggdrasil node has one address, from its key; N tunnels would be N nodes"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        family, transport = settings.get("family", "ipv4"), settings.get("transport", "tcp")
        mtu = settings.get("mtu") or MAX_MTU
        return expectation_of(lambda n: yggdrasil_outer(n, family, transport), underlay_mtu, mtu, True,
                              f"Yggdrasil over {transport}/{family}: its TUN MTU (IfMTU) {mtu}; each packet is a "
                              f"traffic frame ({FRAME_OVERHEAD} bytes of framing, keys and session encryption"
                              + (f", in a TLS 1.3 record {TLS13_RECORD}" if transport == "tls" else "")
                              + f") in a TCP stream (IP {IP_HEADER[family]} + TCP {TCP_HEADER}), which segments "
                              "larger packets")

    def __init__(self, params: YggdrasilParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes: dict[str, Host] = {"server": ctx.server, "client": ctx.client}
        self.procs: dict = {}  # role -> its yggdrasil
        self.ifaces: dict[str, str] = {}
        self.build_record: dict | None = None  # asked of the client's host at the first up()

    def up(self, backend: str) -> Tunnel:
        p, res = self.params, self.ctx.resources
        program = builds.program(NAME, NAME, p.version)
        port = p.port or run_port(res.run_id)
        listen = _uri(p.transport, self.ctx.underlay["server"][p.family], port)
        self.ifaces = {role: res.iface_name("y" + role[0]) for role in ROLES}
        configs = {role: res.path(f"yggdrasil-{role}.json") for role in ROLES}
        nodes: dict[str, dict] = {}
        for role in ROLES:  # each node's own key, made on its host; its configuration 0600 there
            host = self.nodes[role]
            config = _fresh_config(host, program)
            config.update({"Listen": [listen] if role == "server" else [], "Peers": [listen] if role == "client" else [],
                           "InterfacePeers": {}, "MulticastInterfaces": [], "AllowedPublicKeys": [],
                           "AdminListen": f"unix://{res.path(f'yggdrasil-{role}.sock')}", "IfName": self.ifaces[role],
                           "IfMTU": p.mtu, "NodeInfoPrivacy": True, "NodeInfo": {}})
            host.write_file(configs[role], json.dumps(config, indent=1), 0o600)
            self.undo.defer(wipe, host, configs[role])  # on the host that holds it, at down()
            nodes[role] = {"config": config, "public_key": _ask(host, program, configs[role], "-publickey"),
                           "address": _ask(host, program, configs[role], "-address")}
        # only the client may peer with the server (its key); rewritten before either starts
        server = nodes["server"]["config"]
        server["AllowedPublicKeys"] = [nodes["client"]["public_key"]]
        self.nodes["server"].write_file(configs["server"], json.dumps(server, indent=1), 0o600)
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs={"ipv6": nodes["server"]["address"]},
            client_addrs={"ipv6": nodes["client"]["address"]},
            protection="encrypted",
            wire_filter=f"tcp port {port}",
            wire_protocol="TLS" if p.transport == "tls" else "yggdrasil",
            negotiated={"implementation": NAME, "transport": p.transport, "underlay_family": p.family, "port": port,
                        "overlay": "200::/7 (addresses from the nodes' Ed25519 keys)", "peering": "explicit",
                        "multicast_discovery": False, "public_keys": {r: nodes[r]["public_key"] for r in ROLES}},
        )
        self.undo.defer(stop_all, self.tunnel.procs)  # before their files are wiped
        for role in ROLES:
            if role == "client":
                started = time.monotonic()
            self.procs[role] = proc = self.nodes[role].spawn(
                [program, "-useconffile", str(configs[role]), "-logto", "stdout"], name=NAME)
            self.tunnel.procs.append(proc)
            if role == "server":
                self._wait(role, lambda log: "listener started" in log)
        for role in ROLES:
            self._wait(role, lambda log: CONNECTED in log and "Interface MTU" in log)
        # the client's start to both ends of the peering up, as polled (10 ms steps)
        self.handshake_s = round(time.monotonic() - started, 3)
        self.tunnel.negotiated.update(self._what_ran())
        return self.tunnel

    def _wait(self, role: str, ready) -> None:
        proc = self.procs[role]
        deadline = time.monotonic() + START_TIMEOUT
        while not ready(proc.output()):
            if not proc.alive():
                raise TechniqueError(f"yggdrasil ({role}) exited: {_tail(proc.output())}")
            if time.monotonic() > deadline:
                raise TechniqueError(f"yggdrasil ({role}) not ready within {START_TIMEOUT:g} s: {_tail(proc.output())}")
            time.sleep(0.01)

    def _what_ran(self, role: str = "client") -> dict:
        """The version the build on role's host reports, its build record (read on that host), and
        the TUN MTU yggdrasil set there (its log's "Interface MTU")."""
        found: dict = {}
        client = self.nodes[role]
        said = client.run([builds.program(NAME, NAME, self.params.version), "-version"], timeout=10, check=False).stdout
        found["version"] = next((line.split(":", 1)[1].strip() for line in said.splitlines()
                                 if line.startswith("Build version:")), None)
        if self.build_record is None:
            result = client.run(builds.record_command(NAME, self.params.version), timeout=10, check=False)
            try:
                self.build_record = json.loads(result.stdout)
            except ValueError:
                self.build_record = {"unreadable": (result.stderr or result.stdout).strip()[-200:]}
        found["build"] = self.build_record
        mtu = next((line.rsplit(":", 1)[1].strip() for line in self.procs[role].output().splitlines()
                    if "Interface MTU:" in line), None)
        found["mtu"] = int(mtu) if mtu and mtu.isdigit() else None
        return found

    def evidence(self) -> dict[str, str]:
        """Each node's log (it never logs its private key) and the TUN devices."""
        pieces = [(f"{role}: yggdrasil log", lambda proc=proc: evidence.log_tail(proc)) for role, proc in self.procs.items()]
        pieces += [(f"{role}: ip addr (yggdrasil tun)", lambda role=role, iface=iface: evidence.command(
            self.nodes[role], ["ip", "addr", "show", "dev", iface])) for role, iface in self.ifaces.items()]
        return evidence.gather(pieces)


def _fresh_config(host: Host, program: str) -> dict:
    """A new configuration with a new private key, made by yggdrasil on the host (stdout, a pipe)."""
    result = host.run([program, "-genconf", "-json"], timeout=30, check=False)
    try:
        config = json.loads(result.stdout)
    except ValueError:
        config = None
    if not isinstance(config, dict) or not config.get("PrivateKey"):
        raise TechniqueError(f"yggdrasil -genconf made no configuration on the {host.role}: "
                             f"{_tail(result.stderr or 'no output')}")
    return config


def _ask(host: Host, program: str, config: Path, flag: str) -> str:
    """What yggdrasil derives from a configuration's key: -publickey or -address."""
    result = host.run([program, "-useconffile", str(config), flag], timeout=10, check=False)
    answer = result.stdout.strip()
    if not result.ok or not answer or "\n" in answer:
        raise TechniqueError(f"yggdrasil {flag} failed on the {host.role}: {_tail(result.stderr or result.stdout)}")
    return answer


def run_port(run_id: str) -> int:
    """This run's TCP port (5000-5699) for the server's listener, from the run id."""
    return 5000 + (int(run_id, 16) >> 8) % 700


def _uri(transport: str, address: str, port: int) -> str:
    return f"{transport}://[{address}]:{port}" if ":" in address else f"{transport}://{address}:{port}"


def _tail(output: str, lines: int = 5) -> str:
    return " | ".join(output.strip().splitlines()[-lines:]) or "no output"
