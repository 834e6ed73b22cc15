"""n2n 1.x (Debian's package `n2n`, 1.3.1~svn3789, which says "n2n v.1.3.2"): a supernode that
introduces edges and relays for them, and an edge per host on a TAP device, all of one community.

The supernode runs on the router when the testbed has one (else on the server), on a UDP port of
the run's own; each edge registers with it at the router's address on its own link (the server's
underlay address without a router), then the edges find each other through it and send directly.
Per bring-up a fresh community name (16 hex characters: exactly n2n's field, so no byte of the
edge's memory follows a shorter name onto the wire, as it does here) and a fresh key (32
characters, Twofish's 256-bit key) are made; both, with every other option, go into each edge's
option file (0600, in the run's directory on its host, wiped at down()), which the edge reads as
`edge @FILE`: the key is never in an argv or the environment (N2N_KEY, n2n's other way).

What Debian 12 ships is the last n2n 1.x, abandoned upstream (its README.Debian says so): its one
transform is Twofish, always on (no choice of cipher, no null cipher, no header encryption: those
came with n2n 2.x and 3.x, which Debian does not package), in CBC restarted from the same IV for
every packet, without a MAC; every message body is LZO-compressed, always. The community name
and both MAC addresses travel in clear, and each header carries 3 bytes the edge never wrote
(bytes 81-83 of its 84, its stack's leftovers: seen here holding bytes of earlier frames). These
go into the negotiated record's warnings.

On the wire a message is UDP: the 84-byte header (version 1, message type, TTL, supernode flag,
community, MACs, addresses, packet type, sequence id, CRC), then the LZO stream of the Twofish
ciphertext of the Ethernet frame (overhead.n2n_outer). The underlay is IPv4 only (n2n 1.x
resolves and binds IPv4); the TAP device carries IPv4 and IPv6. The edge sets its device's MTU
itself (-M): by default the largest whose messages fit the underlay in one packet.
"""

import re
import secrets
import time
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import TechniqueParams
from vpnbench.foundation.safe_files import wipe
from vpnbench.foundation.tools import missing_tool_reason
from vpnbench.hosts import evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.hosts.route import path_mtu
from vpnbench.techniques.base import BackendStatus, Technique, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import (
    ETHERNET_HEADER,
    IP_HEADER,
    N2N_V1_HEADER,
    UDP_HEADER,
    Expectation,
    expectation_of,
    max_inner,
    n2n_outer,
)
from vpnbench.testbeds.probe import KernelProbe

NAME = "n2n"
ROLES = ("server", "client")  # the server's edge first: the client's traffic finds it registered
INNER = {
    "client": {"ipv4": "10.94.0.1", "ipv6": "fd94::1"},
    "server": {"ipv4": "10.94.0.2", "ipv6": "fd94::2"},
}
# Locally administered MACs ("n2n" in the middle); fixed, so an edge restarted keeps its peers' ARP
# entries right (edge(8) recommends -m).
MACS = {"client": "02:6e:32:6e:00:01", "server": "02:6e:32:6e:00:02"}
COMMUNITY_LEN = 16  # n2n 1.x's community field (COMMUNITY_LEN)
KEY_CHARS = 32  # Twofish's 256-bit key (n2n repeats a shorter one to fill it)
# The largest TAP MTU the edge's buffers take: send_data compresses header and frame into 1650
# bytes on its stack without a bound, so 84 + lzo_literal_run(14 + MTU) must stay within 1650.
MAX_MTU = 1541
START_TIMEOUT = 20.0
READY = "Ready"  # the edge's TAP device is configured and its socket bound
SUPERNODE_READY = "Supernode ready"
VERSION = re.compile(r"n2n v\.(\S+)")
WARNINGS = [
    "n2n 1.x is abandoned upstream (Debian's README.Debian says so)",
    "Twofish-CBC restarts from the same IV for every packet (equal frame beginnings give equal ciphertext) "
    "and no MAC authenticates a packet",
    "each header carries 3 bytes of the edge's stack the edge never wrote (bytes 81-83), seen holding bytes "
    "of earlier frames; community name and MAC addresses travel in clear",
]


class N2nParams(TechniqueParams):
    kind: Literal["n2n"] = "n2n"
    # n2n 1.x has one transform; the choice n2n 3.x offers (-A1 none ... -A5 Speck) and its header
    # encryption (-H) are not in the version Debian 12 ships.
    cipher: Literal["twofish"] = "twofish"
    port: int | None = Field(None, ge=1, le=65534)  # the edges' UDP port, the supernode's the next; None: the run's own
    # The TAP device's MTU (edge -M); None: the largest whose messages fit the underlay in one packet.
    # Larger ones are carried in fragmented UDP packets.
    mtu: int | None = Field(None, ge=576, le=MAX_MTU)


class N2n(Technique):
    kind = "n2n"
    packages = {"edge": "n2n", "supernode": "n2n", "ifconfig": "net-tools"}  # the edge runs /sbin/ifconfig
    kernel_features = {"userspace": "TAP (/dev/net/tun)"}
    Params = N2nParams
    description = "n2n 1.x (Debian's: supernode and edges on TAP; Twofish, LZO, over UDP)"
    versions = {NAME: "edge -h 2>&1 | head -1"}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "an n2n edge has one TAP device and one address in its community; N tunnels would be N edges"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        mtu = settings.get("mtu")
        return expectation_of(n2n_outer, underlay_mtu, mtu, True,
                              f"n2n 1.x over ipv4: IP {IP_HEADER['ipv4']} + UDP {UDP_HEADER} + header {N2N_V1_HEADER} "
                              f"+ the Twofish ciphertext of the Ethernet frame ({ETHERNET_HEADER} + packet, its own "
                              f"length) LZO-compressed as one literal run (+1 byte up to 238, else 2 + 1 per 255 more, "
                              f"+ 3 of end marker); the TAP MTU is "
                              + (f"{mtu} (larger than that: the UDP packets are fragmented)" if mtu else
                                 "set to the largest that fits"))

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        return [BackendStatus("userspace", *_availability(probe))]

    def __init__(self, params: N2nParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes: dict[str, Host] = {"server": ctx.server, "client": ctx.client}
        self.supernode_host: Host | None = None
        self.procs: dict = {}  # "supernode", "server", "client" -> its process
        self.ifaces: dict[str, str] = {}

    def up(self, backend: str) -> Tunnel:
        p, res = self.params, self.ctx.resources
        port = p.port or run_port(res.run_id)
        supernode_port = port + 1
        self.supernode_host = self.ctx.router or self.ctx.server
        self.ifaces = {role: res.iface_name("n" + role[0]) for role in ROLES}
        mtu = p.mtu or self._fitting_mtu()
        community, key = secrets.token_hex(COMMUNITY_LEN // 2), secrets.token_urlsafe(KEY_CHARS * 3 // 4)
        options = {role: res.path(f"n2n-{role}.conf") for role in ROLES}
        for role in ROLES:
            lines = [f"-d {self.ifaces[role]}", f"-a {INNER[role]['ipv4']}", "-s 255.255.255.0", f"-m {MACS[role]}",
                     f"-M {mtu}", f"-p {port}", f"-l {self._supernode_address(role)}:{supernode_port}",
                     f"-c {community}", f"-k {key}"]
            self.nodes[role].write_file(options[role], "\n".join(lines) + "\n", 0o600)
            self.undo.defer(wipe, self.nodes[role], options[role])
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs=dict(INNER["server"]),
            client_addrs=dict(INNER["client"]),
            protection="encrypted",
            wire_filter=f"udp and (port {port} or port {supernode_port})",
            wire_protocol=NAME,
            negotiated={"implementation": NAME, "cipher": "Twofish-CBC", "cipher_asked": p.cipher,
                        "authentication": "none", "header_encryption": False, "compression": "LZO1X-1, always",
                        "key": f"pre-shared, {KEY_CHARS} characters, per bring-up",
                        "community": "per bring-up", "device": "tap", "mtu": mtu, "port": port,
                        "supernode": "router" if self.ctx.router else "server", "supernode_port": supernode_port,
                        "underlay_family": "ipv4", "warnings": list(WARNINGS)},
        )
        self.undo.defer(stop_all, self.tunnel.procs)  # before the option files are wiped
        self._start("supernode", self.supernode_host, ["supernode", "-l", str(supernode_port)],
                    lambda log: SUPERNODE_READY in log)
        registered = f"Received REGISTER_ACK from remote peer [ip={{address}}:{supernode_port}]"
        for role in ROLES:
            if role == "client":
                started = time.monotonic()
            acked = registered.format(address=self._supernode_address(role))
            self._start(role, self.nodes[role], ["edge", f"@{options[role]}"],
                        lambda log, acked=acked: READY in log and acked in log)
            # the IPv6 address beside the IPv4 one the edge's ifconfig gave the device (no DAD: a lone peer)
            self.nodes[role].run(["ip", "addr", "add", f"{INNER[role]['ipv6']}/64", "dev", self.ifaces[role], "nodad"])
        # the client edge's start to its registration acknowledged by the supernode, as polled (10 ms)
        self.handshake_s = round(time.monotonic() - started, 3)
        self.tunnel.negotiated.update(self._what_ran())
        return self.tunnel

    def _fitting_mtu(self) -> int:
        """The largest TAP MTU whose messages fit both edges' underlay path in one packet."""
        underlay = self.ctx.underlay
        mtus = [path_mtu(self.nodes[role], underlay[peer]["ipv4"]) for role, peer in (("client", "server"), ("server", "client"))]
        if None in mtus:
            raise TechniqueError(f"n2n: no route between the edges' underlay addresses to size the TAP MTU by ({mtus})")
        return min(max_inner(n2n_outer, min(mtus)), MAX_MTU)

    def _supernode_address(self, role: str) -> str:
        """Where role's edge reaches the supernode: the router's address on its link (the source the
        router reaches it from), or the server's underlay address when the server runs it."""
        if self.ctx.router is None:
            return self.ctx.underlay["server"]["ipv4"]
        route = self.ctx.router.run(["ip", "-o", "route", "get", self.ctx.underlay[role]["ipv4"]], timeout=5).stdout.split()
        if "src" not in route:
            raise TechniqueError(f"router: no source address towards the {role} in `ip route get`: {' '.join(route)}")
        return route[route.index("src") + 1]

    def _start(self, name: str, host: Host, argv: list[str], ready) -> None:
        proc = host.spawn(argv, name=argv[0])
        self.procs[name] = proc
        self.tunnel.procs.append(proc)
        deadline = time.monotonic() + START_TIMEOUT
        while not ready(proc.output()):
            if not proc.alive():
                raise TechniqueError(f"{argv[0]} ({name}) exited: {_tail(proc.output())}")
            if time.monotonic() > deadline:
                raise TechniqueError(f"{argv[0]} ({name}) not ready within {START_TIMEOUT:g} s: {_tail(proc.output())}")
            time.sleep(0.01)

    def _what_ran(self) -> dict:
        return what_ran(self.nodes["client"])

    def evidence(self) -> dict[str, str]:
        """The supernode's and the edges' logs (neither prints the key) and the TAP devices."""
        pieces = [(f"{name}: {name if name == 'supernode' else 'edge'} log", lambda proc=proc: evidence.log_tail(proc))
                  for name, proc in self.procs.items()]
        pieces += [(f"{role}: ip addr (n2n tap)", lambda role=role, iface=iface: evidence.command(
            self.nodes[role], ["ip", "addr", "show", "dev", iface])) for role, iface in self.ifaces.items()]
        return evidence.gather(pieces)


def what_ran(host: Host) -> dict:
    """The version an edge says ("Welcome to n2n v.1.3.2 ...") and its Debian package's."""
    said = host.run(["edge", "-h"], timeout=10, check=False).stdout
    version = VERSION.search(said)
    package = host.run(["dpkg-query", "-W", "-f", "${Version}", NAME], timeout=10, check=False)
    return {"version": version.group(1) if version else None,
            "package": f"{NAME} {package.stdout.strip()}" if package.ok else None}


def _availability(probe: KernelProbe) -> tuple[bool, str]:
    """Can the hosts run it: n2n 1.x's edge and supernode (2.x and 3.x take other options and speak
    other protocols), the ifconfig the edge runs, and TUN/TAP."""
    for command in ("edge", "supernode", "ifconfig"):
        if not probe.has_command(command):
            return False, missing_tool_reason(command)
    for host, output in probe.outputs(["edge", "-h"]).items():
        version = VERSION.search(output)
        if not version or not version.group(1).startswith("1."):
            first = output.strip().partition("\n")[0]
            return False, f"{host} has {first or 'an edge that prints no version'}; this technique drives n2n 1.x " \
                          "(apt-get install n2n on Debian 12)"
    lacking = probe.host_lacking("/dev/net/tun")
    if lacking:
        return False, f"{lacking} lacks /dev/net/tun (TUN/TAP)"
    return True, ""


def run_port(run_id: str) -> int:
    """This run's UDP port for the edges (even, 6400-7098); the supernode takes the next one."""
    return 6400 + 2 * ((int(run_id, 16) >> 8) % 350)


def _tail(output: str, lines: int = 5) -> str:
    return " | ".join(output.strip().splitlines()[-lines:]) or "no output"

