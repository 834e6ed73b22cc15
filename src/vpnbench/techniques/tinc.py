"""tinc 1.0 (Debian's package): two daemons in router or switch mode, one private net each.

Each host gets a fresh net directory in the run's private directory (tincd -c DIR, in the
foreground with -D, its own --pidfile, nothing under /etc/tinc or /var/run), and makes its own
RSA key pair there (tincd --generate-keys): the private key never leaves the host that uses it
(0600, wiped with the directory at down()); only the host file holding the public key is copied
to the peer. No tinc-up script: vpnbench gives the interface its addresses itself once tincd
reports "Ready" (its device open), so no file of code run as root is written.

The data path is tinc 1.0's own protocol: UDP packets of a sequence number and the Ethernet
frame, encrypted with a CBC cipher, then a truncated HMAC (overhead.tinc_outer); the RSA-
authenticated meta connection runs over TCP on the same port, and carries data packets too
until path MTU discovery has found how large a UDP packet may be.
"""

import re
import time
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Family, TechniqueParams
from vpnbench.foundation.safe_files import make_dir, wipe
from vpnbench.foundation.tools import missing_tool_reason
from vpnbench.hosts import evidence
from vpnbench.hosts.base import stop_all
from vpnbench.techniques.base import BackendStatus, Technique, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import (
    ETHERNET_HEADER,
    IP_HEADER,
    TINC_SEQNO,
    UDP_HEADER,
    Expectation,
    expectation_of,
    tinc_outer,
)
from vpnbench.testbeds.probe import KernelProbe

INNER = {
    "client": {"ipv4": "10.95.0.1", "ipv6": "fd95::1"},
    "server": {"ipv4": "10.95.0.2", "ipv6": "fd95::2"},
}
# Only CBC ciphers: tinc 1.0 restarts its cipher context at the key's IV for every packet, so a
# stream mode (aes-*-ctr, chacha20) would reuse one key stream for all of them (aes-256-ctr also
# carried no traffic here); blowfish (bf-cbc, tinc's old default) is in OpenSSL 3's legacy
# provider, which tinc does not load ("digital envelope routines::unsupported").
CIPHERS = ("aes-256-cbc", "aes-128-cbc", "camellia-256-cbc")
CIPHER_BLOCK = 16  # bytes, for each of CIPHERS
DIGEST_SIZE = {"sha256": 32, "sha1": 20, "sha384": 48, "sha512": 64}
DEVICE = {"router": "tun", "switch": "tap"}  # switch mode carries Ethernet frames
READY = "Ready"  # tincd's device is open and it listens
ACTIVATED = "activated"  # "Connection with NAME (...) activated": the meta connection is authenticated
RSA_BITS = 2048
START_TIMEOUT = 20.0


class TincParams(TechniqueParams):
    kind: Literal["tinc"] = "tinc"
    mode: Literal["router", "switch"] = "router"
    cipher: Literal["aes-256-cbc", "aes-128-cbc", "camellia-256-cbc"] = "aes-256-cbc"
    digest: Literal["sha256", "sha1", "sha384", "sha512"] = "sha256"
    # Bytes of the HMAC each UDP packet carries (tinc's default 4); at most the digest's size.
    # tinc would take 0 (no authentication at all): vpnbench measures authenticated tunnels only.
    mac_length: int = Field(4, ge=4, le=64)
    family: Family = "ipv4"  # underlay family of the outer packets
    port: int = Field(655, ge=1, le=65535)  # UDP data and TCP meta connection, on both hosts

    @field_validator("mac_length")
    @classmethod
    def _within_digest(cls, mac_length: int, info: ValidationInfo) -> int:
        digest = info.data.get("digest", "sha256")
        if mac_length > DIGEST_SIZE[digest]:
            raise ValueError(f"{mac_length} is longer than {digest}'s {DIGEST_SIZE[digest]} bytes; "
                             f"allowed values: 4-{DIGEST_SIZE[digest]}")
        return mac_length


class Tinc(Technique):
    kind = "tinc"
    packages = {"tincd": "tinc"}
    kernel_features = {"userspace": "TUN/TAP (/dev/net/tun)"}
    Params = TincParams
    description = "tinc 1.0 (RSA meta connection; CBC + truncated HMAC over UDP; router or switch mode)"
    versions = {"tinc": "tincd --version 2>&1 | head -1"}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "tinc 1.0 has one daemon per host and net and one meta connection between two nodes; more tunnels would be more nets"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        family, mac = settings.get("family", "ipv4"), settings.get("mac_length", 4)
        return expectation_of(lambda n: tinc_outer(n, family, mac, CIPHER_BLOCK), underlay_mtu, None, False,
                              f"tinc 1.0 over {family}: IP {IP_HEADER[family]} + UDP {UDP_HEADER} + the CBC-padded "
                              f"sequence number {TINC_SEQNO} and Ethernet frame ({ETHERNET_HEADER} + packet, padded "
                              f"to {CIPHER_BLOCK} with at least 1 byte) + MAC {mac}; tinc answers larger DF packets "
                              "with Frag needed once its path MTU discovery has converged (until then they travel "
                              "over the TCP meta connection)")

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        return [BackendStatus("userspace", *_availability(probe))]

    def __init__(self, params: TincParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.ifaces: dict[str, str] = {}  # role -> its tinc interface, named at up()

    def up(self, backend: str) -> Tunnel:
        p = self.params
        self.ifaces = {role: self.ctx.resources.iface_name("t" + role[0]) for role in ("client", "server")}
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs=dict(INNER["server"]),
            client_addrs=dict(INNER["client"]),
            protection="encrypted",
            wire_filter=wire_filter(p.port, p.family, p.mac_length),
            wire_protocol="tinc 1.0",
            negotiated={"implementation": "tinc", "version": self._version(), "mode": p.mode,
                        "device": DEVICE[p.mode], "cipher": p.cipher, "digest": p.digest,
                        "mac_length": p.mac_length, "compression": 0, "underlay_family": p.family,
                        "meta_key": f"RSA-{RSA_BITS}, per bring-up"},
        )
        net_dirs = {role: self._net_dir(role) for role in ("server", "client")}
        host_files = {role: self._host_file(role, net_dirs[role]) for role in net_dirs}
        for role, peer in (("server", "client"), ("client", "server")):  # each its peer's public key
            self._host(role).write_file(net_dirs[role] / "hosts" / peer, host_files[peer], 0o600)
        self.undo.defer(stop_all, self.tunnel.procs)  # those started, together; before their directories go
        for role in ("server", "client"):  # the server first, so the client's connection finds it
            host = self._host(role)
            started = time.monotonic()  # the client's start, last
            self.tunnel.procs.append(host.spawn(["tincd", "-c", str(net_dirs[role]), "-D", "-d1",
                                                 "--pidfile", str(net_dirs[role] / "tincd.pid")], name="tincd"))
            self._wait_for(READY, self.tunnel.procs[-1:])
            self._address(role)
        self._wait_for(ACTIVATED, self.tunnel.procs)
        # the client's start to both meta connections authenticated, as polled (10 ms steps)
        self.handshake_s = round(time.monotonic() - started, 3)
        return self.tunnel

    def _host(self, role: str):
        return self.ctx.client if role == "client" else self.ctx.server

    def _version(self) -> str:
        """tincd's version on the client host, as it prints it ("tinc version 1.0.36")."""
        first = self.ctx.client.run(["tincd", "--version"], timeout=10).stdout.partition("\n")[0]
        found = re.search(r"tinc version (\S+)", first)
        return found.group(1) if found else first.strip()

    def _net_dir(self, role: str):
        """The role's private net directory (0700, root's, fresh) with its tinc.conf and its RSA
        key pair, made on its host; the whole directory is wiped at down()."""
        p, host = self.params, self._host(role)
        net_dir = make_dir(host, self.ctx.resources.path(f"tinc-{role}"), 0o700)
        host.remember_dir(net_dir)  # its keys: `vpnbench cleanup` wipes them after a kill -9, on any host
        self.undo.defer(wipe, host, net_dir)
        make_dir(host, net_dir / "hosts", 0o700)
        conf = [f"Name = {role}", f"Mode = {p.mode}", f"DeviceType = {DEVICE[p.mode]}",
                f"Interface = {self.ifaces[role]}", f"AddressFamily = {p.family}", f"Port = {p.port}",
                # its underlay address only, not every address of the host (an ssh testbed's are real)
                f"BindToAddress = {self.ctx.underlay[role][p.family]}",
                f"PrivateKeyFile = {net_dir / 'rsa_key.priv'}", f"Cipher = {p.cipher}", f"Digest = {p.digest}",
                f"MACLength = {p.mac_length}", "Compression = 0"]
        if role == "client":
            conf.append("ConnectTo = server")
        host.write_file(net_dir / "tinc.conf", "\n".join(conf) + "\n", 0o600)
        own = [f"Port = {p.port}"]
        if role == "server":
            own.append(f"Address = {self.ctx.underlay['server'][p.family]} {p.port}")
        if p.mode == "router":  # switch mode learns MAC addresses instead
            own += [f"Subnet = {INNER[role]['ipv4']}/32", f"Subnet = {INNER[role]['ipv6']}/128"]
        host.write_file(net_dir / "hosts" / role, "\n".join(own) + "\n", 0o600)
        # tincd writes the private key (0600) and appends the public key to hosts/ROLE; stdin
        # empty, so it takes the configured file names instead of asking for them
        host.run(["tincd", "-c", str(net_dir), f"--generate-keys={RSA_BITS}"], input="", timeout=60)
        return net_dir

    def _host_file(self, role: str, net_dir) -> str:
        """hosts/ROLE as tincd completed it: the role's address, subnets and RSA public key."""
        text = self._host(role).read_file(net_dir / "hosts" / role).decode()
        if "-----BEGIN RSA PUBLIC KEY-----" not in text:
            raise TechniqueError(f"tincd --generate-keys wrote no public key into the {role}'s host file")
        return text

    def _address(self, role: str) -> None:
        """The inner addresses, set once tincd has opened its device (no tinc-up script)."""
        iface, inner = self.ifaces[role], INNER[role]
        self._host(role).run(["ip", "-batch", "-"], input=f"addr add {inner['ipv4']}/24 dev {iface}\n"
                                                         f"addr add {inner['ipv6']}/64 dev {iface} nodad\n"
                                                         f"link set {iface} up\n")

    def _wait_for(self, marker: str, procs) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not all(marker in proc.output() for proc in procs):
            for proc in procs:
                if not proc.alive():
                    raise TechniqueError(f"tincd ({self._role_of(proc)}) exited: {_tail(proc)}")
            if time.monotonic() > deadline:
                waiting = next(proc for proc in procs if marker not in proc.output())
                raise TechniqueError(f"tincd ({self._role_of(waiting)}) did not log {marker!r} within "
                                     f"{START_TIMEOUT:g} s: {_tail(waiting)}")
            time.sleep(0.01)

    def _role_of(self, proc) -> str:
        return ("server", "client")[self.tunnel.procs.index(proc)]

    def evidence(self) -> dict[str, str]:
        """Both daemons' log tails (started server first, see up()) and their interfaces."""
        procs = self.tunnel.procs if self.tunnel else []
        pieces = [(f"{role}: tincd log", lambda proc=proc: evidence.log_tail(proc))
                  for role, proc in zip(("server", "client"), procs)]
        pieces += [(f"{role}: ip addr (tinc)", lambda role=role, iface=iface: evidence.command(
            self._host(role), ["ip", "-d", "addr", "show", "dev", iface])) for role, iface in self.ifaces.items()]
        return evidence.gather(pieces)


def _availability(probe: KernelProbe) -> tuple[bool, str]:
    """Can the hosts run it: tincd 1.0 there (1.1 speaks another protocol by default), and TUN/TAP."""
    if not probe.has_command("tincd"):
        return False, missing_tool_reason("tincd")
    for host, output in probe.outputs(["tincd", "--version"]).items():
        first = output.partition("\n")[0].strip()
        if not first.startswith("tinc version 1.0."):
            return False, f"{host} has {first or 'a tincd that prints no version'}; this technique drives tinc 1.0 " \
                          "(apt-get install tinc on Debian 12)"
    lacking = probe.host_lacking("/dev/net/tun")
    if lacking:
        return False, f"{lacking} lacks /dev/net/tun (TUN/TAP)"
    return True, ""


def wire_filter(port: int, family: str, mac_length: int) -> str:
    """tcpdump's filter recognising tinc 1.0 on the underlay: UDP on its port whose payload is
    whole cipher blocks (at least one) followed by the MAC, or its TCP meta connection. The
    UDP length is read from the header itself (ip6[44:2]: libpcap cannot index udp[] over IPv6)."""
    length = "udp[4:2]" if family == "ipv4" else "ip6[44:2]"
    udp = "udp" if family == "ipv4" else "ip6 and ip6[6] = 17"  # IPv6: UDP right after the fixed header
    overhead = UDP_HEADER + mac_length
    return (f"({udp} and port {port} and ({length} - {overhead}) % {CIPHER_BLOCK} = 0 "
            f"and {length} >= {overhead + CIPHER_BLOCK}) or tcp port {port}")


def _tail(proc) -> str:
    """The daemon's last lines, on one line for an error message."""
    return evidence.log_tail(proc, 5).replace("\n", " | ")
