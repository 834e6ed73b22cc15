"""VpnCloud 2 (dswd/vpncloud): a peer-to-peer mesh over UDP; each node an Ed25519 key pair and a
list of trusted public keys, an ECDH handshake per peer, then AES-128-GCM, AES-256-GCM or
ChaCha20-Poly1305 (ring) on the data path, or nothing at all ("plain").

Per bring-up each node makes its own key pair (`vpncloud genkey`, on its host, through a pipe);
both nodes trust exactly the two public keys. Each node's configuration (YAML; JSON is YAML)
holds its private key, is written 0600 into the run's directory on its host, is given as a path
(never a key on a command line), and is wiped at down(). Port forwarding (UPnP), beacons, the
stats file and the pid file are off: nothing is written outside the run, nothing is asked of
the network beyond the peer. Both nodes offer exactly the campaign's one `algorithm`, so the
handshake can agree on nothing else.

On the wire a data packet is UDP: a key id 1 and the nonce's 7 low bytes, then (encrypted) the
message type 1 and the packet, then the AEAD tag 16; with "plain" it is the message type and
the packet in clear. Handshake messages begin with 0xff. VpnCloud sets its TUN MTU itself, to the
underlay's MTU less 73 (an outer IPv6 header 40 whatever the peers speak, UDP 8, 8 + 16 + 1).
"""

import json
import re
import time
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Family, TechniqueParams
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.hosts.route import route_device
from vpnbench.techniques.base import BuiltTunDaemon, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import IP_HEADER, POLY1305_TAG, UDP_HEADER, Expectation, expectation_of

NAME = "vpncloud"
ROLES = ("server", "client")
INNER = {"client": "10.97.0.1", "server": "10.97.0.2"}
AEADS = {"aes128": "AES-128-GCM", "aes256": "AES-256-GCM", "chacha20": "ChaCha20-Poly1305", "plain": "none"}
EXTRA = 8  # key id 1 + the nonce's low 7 bytes (crypto/core.rs EXTRA_LEN)
TAG = POLY1305_TAG  # 16 for each AEAD (TAG_LEN)
MESSAGE_TYPE = 1
# What vpncloud subtracts from the underlay's MTU for its TUN device (device.rs get_overhead):
# an IPv6 header whatever the peers speak, UDP, EXTRA, TAG and the message type.
MTU_RESERVE = 40 + UDP_HEADER + EXTRA + TAG + MESSAGE_TYPE
START_TIMEOUT = 20.0
ADDED = "Added peer"  # the handshake with that peer is done


def vpncloud_outer(inner: int, family: str, algorithm: str) -> int:
    sealed = EXTRA + TAG if algorithm != "plain" else 0
    return inner + IP_HEADER[family] + UDP_HEADER + MESSAGE_TYPE + sealed


class VpnCloudParams(TechniqueParams):
    kind: Literal["vpncloud"] = "vpncloud"
    version: builds.version_type(NAME) = None
    # the one algorithm both nodes offer; "plain" sends the packets in clear (the wire proof then
    # must see its marker, as for the baseline)
    algorithm: Literal["aes128", "aes256", "chacha20", "plain"] = "aes128"
    family: Family = "ipv4"  # underlay family
    port: int | None = Field(None, ge=1, le=65535)  # None: a port of this run's own (run_port)


class VpnCloud(BuiltTunDaemon):
    BUILD = NAME
    kind = "vpncloud"
    kernel_features = {"userspace": "TUN (/dev/net/tun)"}
    Params = VpnCloudParams
    description = "VpnCloud 2 (Ed25519 trust, ECDH; AES-GCM or ChaCha20-Poly1305 over UDP)"
    versions = {NAME: f"{builds.program(NAME, NAME, builds.RECIPES[NAME].default)} --version 2>/dev/null"}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "a VpnCloud node has one device and one address; N tunnels would be N nodes"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        family, algorithm = settings.get("family", "ipv4"), settings.get("algorithm", "aes128")
        return expectation_of(lambda n: vpncloud_outer(n, family, algorithm), underlay_mtu,
                              underlay_mtu - MTU_RESERVE, False,
                              f"VpnCloud {algorithm} over {family}: its TUN MTU is the underlay's less {MTU_RESERVE} "
                              f"(it reserves an IPv6 header 40 + UDP 8 + key id and nonce {EXTRA} + tag {TAG} + type "
                              f"{MESSAGE_TYPE}); a packet takes IP {IP_HEADER[family]} + UDP 8 + type 1"
                              + (f" + {EXTRA} + tag {TAG}" if algorithm != "plain" else " (in clear)"))

    def __init__(self, params: VpnCloudParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes: dict[str, Host] = {"server": ctx.server, "client": ctx.client}
        self.procs: dict = {}
        self.ifaces: dict[str, str] = {}
        self.build_record: dict | None = None

    def up(self, backend: str) -> Tunnel:
        p, res = self.params, self.ctx.resources
        program = builds.program(NAME, NAME, p.version)
        port = p.port or run_port(res.run_id)
        self.ifaces = {role: res.iface_name("v" + role[0]) for role in ROLES}
        keys = {role: _genkey(self.nodes[role], program) for role in ROLES}
        trusted = [keys[role][1] for role in ROLES]
        server_at = _endpoint(self.ctx.underlay["server"][p.family], port)
        configs = {role: res.path(f"vpncloud-{role}.yml") for role in ROLES}
        for role in ROLES:
            mine = self.ctx.underlay[role][p.family]
            config = node_config(self.ifaces[role], [f"{INNER[role]}/32"], _endpoint(mine, port),
                                 [server_at] if role == "client" else [], keys[role], trusted, p.algorithm)
            self.nodes[role].write_file(configs[role], json.dumps(config, indent=1), 0o600)
            self.undo.defer(wipe, self.nodes[role], configs[role])
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs={"ipv4": INNER["server"]},
            client_addrs={"ipv4": INNER["client"]},
            protection="none" if p.algorithm == "plain" else "encrypted",
            wire_filter=f"udp port {port}",
            wire_protocol="vpncloud",
            negotiated={"implementation": NAME, "algorithm": p.algorithm, "aead": AEADS[p.algorithm],
                        "key_exchange": "ECDH, Ed25519-signed, keys per bring-up", "port": port,
                        "underlay_family": p.family, "mode": "normal (tun)", "trusted_keys": len(trusted)},
        )
        self.undo.defer(stop_all, self.tunnel.procs)  # before their files are wiped
        for role, peer in (("server", "client"), ("client", "server")):
            route_for_own_address(self.nodes[role], self.ctx.underlay[peer][p.family], self.undo)
        for role in ROLES:
            if role == "client":
                started = time.monotonic()
            self.procs[role] = proc = self.nodes[role].spawn([program, "--config", str(configs[role])], name=NAME)
            self.tunnel.procs.append(proc)
            self._wait(role, lambda log: "Opened device" in log and ("Setting MTU" in log or "Error setting" in log))
            self.nodes[role].run(["ip", "-batch", "-"], input=f"addr add {INNER[role]}/24 dev {self.ifaces[role]}\n"
                                                           f"link set {self.ifaces[role]} up\n")
        for role in ROLES:
            self._wait(role, lambda log: ADDED in log)
        self.handshake_s = round(time.monotonic() - started, 3)  # the client's start to both peers added (10 ms polls)
        self.tunnel.negotiated.update(self._what_ran())
        return self.tunnel

    def _wait(self, role: str, ready) -> None:
        wait_for_log(self.procs[role], role, ready)

    def _what_ran(self, role: str = "client") -> dict:
        """The version, build record and TUN MTU the node `role` ran with."""
        found: dict = {}
        client = self.nodes[role]
        said = client.run([builds.program(NAME, NAME, self.params.version), "--version"], timeout=10, check=False)
        version = re.search(r"v(\S+)", said.stdout)
        found["version"] = version.group(1) if version else None
        if self.build_record is None:
            result = client.run(builds.record_command(NAME, self.params.version), timeout=10, check=False)
            try:
                self.build_record = json.loads(result.stdout)
            except ValueError:
                self.build_record = {"unreadable": (result.stderr or result.stdout).strip()[-200:]}
        found["build"] = self.build_record
        mtu = re.search(r"Setting MTU (\d+)", self.procs[role].output())
        found["mtu"] = int(mtu.group(1)) if mtu else None
        return found

    def evidence(self) -> dict[str, str]:
        pieces = [(f"{role}: vpncloud log", lambda proc=proc: evidence.log_tail(proc)) for role, proc in self.procs.items()]
        pieces += [(f"{role}: ip addr (vpncloud tun)", lambda role=role, iface=iface: evidence.command(
            self.nodes[role], ["ip", "addr", "show", "dev", iface])) for role, iface in self.ifaces.items()]
        return evidence.gather(pieces)


def node_config(iface: str, claims: list[str], listen: str, peers: list[str], key: tuple[str, str],
                trusted: list[str], algorithm: str, keepalive: int | None = None) -> dict:
    """A node's configuration (YAML; JSON is YAML): its TUN device, the addresses it claims, where
    it listens, the peers it connects to, its key pair (private, public), the public keys it trusts
    and the one algorithm it offers; keepalive (s) also sets how often it sends its peer list."""
    config = {
        "device": {"type": "tun", "name": iface},
        # Not vpncloud's own `ip`: 2.3.0's ioctl gives the device 0.1.0.0/8 for 10.97.0.1/24 here
        # (its "Auto-claiming 0.0.0.1/32" follows from that); vpnbench sets the address, and the
        # node claims its one address, once the device is open.
        "claims": claims,
        "auto-claim": False,
        "listen": listen,
        "peers": peers,
        "crypto": {"private-key": key[0], "public-key": key[1], "trusted-keys": trusted, "algorithms": [algorithm]},
        "mode": "normal",
        "port-forwarding": False,  # no UPnP: nothing but the peers is asked anything
    }
    if keepalive is not None:
        config["keepalive"] = keepalive
    return config


# vpncloud 2.3.0 finds its own address by connecting a UDP socket to this one (net.rs get_ip, no
# packet sent) and panics ("Network is unreachable") on a host with no route there: a testbed
# without a router has none. It runs at start and whenever it lists its own addresses.
OWN_ADDRESS_PROBE = "8.8.8.8"


def route_for_own_address(host: Host, peer: str, undo) -> None:
    """Where `host` has no route to OWN_ADDRESS_PROBE: one for that address alone, on the device
    that reaches `peer` (on-link: nothing is sent to it, vpncloud only connects), removed at down().
    vpncloud then reads the address it has on that device, the one its peers see."""
    if route_device(host, OWN_ADDRESS_PROBE) is not None:
        return
    device = route_device(host, peer)
    if device is None:
        raise TechniqueError(f"vpncloud: the {host.role} has no route to its peer {peer}")
    host.run(["ip", "route", "add", f"{OWN_ADDRESS_PROBE}/32", "dev", device, "scope", "link"])
    undo.defer(host.run, ["ip", "route", "del", f"{OWN_ADDRESS_PROBE}/32", "dev", device], check=False)


def wait_for_log(proc, who: str, ready, timeout: float = START_TIMEOUT) -> None:
    """Until ready(proc's output) holds (10 ms polls); TechniqueError if it exits or times out first."""
    deadline = time.monotonic() + timeout
    while not ready(proc.output()):
        if not proc.alive():
            raise TechniqueError(f"vpncloud ({who}) exited: {_tail(proc.output())}")
        if time.monotonic() > deadline:
            raise TechniqueError(f"vpncloud ({who}) not ready within {timeout:g} s: {_tail(proc.output())}")
        time.sleep(0.01)


BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # vpncloud's util.rs alphabet
KEY_BYTES = 32  # an Ed25519 seed and a public key
GENKEY_TRIES = 8  # each pair is refused with p ~ 2/256: eight in a row ~ 1e-17


def keeps_its_length(key: str) -> bool:
    """Whether a base62 key decodes to its 32 bytes. vpncloud 2.3.0's base62 writes a number, so a key
    whose first byte is 0 comes back one byte short: a seed or public key of 31 bytes, and the node
    panics at start ("Keys rejected by crypto library"), or every peer refuses its public key."""
    value = 0
    for char in key:
        value = value * 62 + BASE62.index(char)
    return value >> (8 * (KEY_BYTES - 1)) > 0


def _genkey(host: Host, program: str) -> tuple[str, str]:
    """A new key pair (private, public; base62), made by vpncloud on the host (stdout, a pipe); made
    again while either half would not survive vpncloud's own base62 (keeps_its_length): about one
    pair in 128, so about one bring-up in 18 of a six-node mesh (seven pairs) failed."""
    for _ in range(GENKEY_TRIES):
        result = host.run([program, "genkey"], timeout=30, check=False)
        private = re.search(r"^Private key: ([0-9A-Za-z]+)$", result.stdout, re.M)
        public = re.search(r"^Public key: ([0-9A-Za-z]+)$", result.stdout, re.M)
        if not result.ok or not private or not public:
            raise TechniqueError(f"vpncloud genkey made no key pair on the {host.role}: "
                                 f"{_tail(result.stderr or 'no output')}")
        if keeps_its_length(private.group(1)) and keeps_its_length(public.group(1)):
            return private.group(1), public.group(1)
    raise TechniqueError(f"vpncloud genkey made {GENKEY_TRIES} key pairs on the {host.role}, each with a half "
                         "its own base62 shortens")


def run_port(run_id: str) -> int:
    """This run's UDP port (5700-6399) for both nodes, from the run id."""
    return 5700 + (int(run_id, 16) >> 8) % 700


def _endpoint(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _tail(output: str, lines: int = 5) -> str:
    return " | ".join(output.strip().splitlines()[-lines:]) or "no output"
