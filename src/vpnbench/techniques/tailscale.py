"""Tailscale: tailscaled on client and server, joined to a Headscale control server vpnbench starts.

Everything is the run's own and nothing leaves the testbed:
- Headscale runs on the router when the testbed has one (else on the server), with a fresh
  configuration, SQLite database and keys in the run's private directory, its server_url the
  underlay address both ends reach, and its embedded DERP relay as the only DERP region
  (`derp.urls: []`: no map fetched from controlplane.tailscale.com; `disable_check_updates`: its
  CLI asks GitHub for releases otherwise). Its DERP relay speaks only TLS ("first record does not
  look like a TLS handshake" over plain http), so Headscale serves https with a certificate from a
  CA made per bring-up, whose key never leaves this process; tailscaled trusts it through
  SSL_CERT_FILE.
- tailscaled runs in TUN mode with its own state directory, socket and UDP port per host (never
  /var/lib/tailscale or /var/run/tailscale), its log policy's config in that directory too
  (TS_LOGS_DIR: logpolicy writes tailscaled.log.conf even with `--no-logs-no-support`, else into
  /var/lib/tailscale, making it), `--no-logs-no-support` (no logtail upload),
  TS_DISABLE_PORTMAPPER (no UPnP/NAT-PMP/PCP to a gateway) and TS_PANIC_IF_HIT_MAIN_CONTROL (a
  slip to Tailscale's own control server stops it instead of reaching out), and no name lookup
  (HOSTS_FROM_FILES); `tailscale up` is told --accept-dns=false and --netfilter-mode=off, so no
  resolv.conf or firewall is touched.
- A pre-auth key is made per bring-up with `headscale preauthkeys create`; it reaches
  `tailscale up` as `--auth-key=file:PATH` (a 0600 file wiped at down), never on a command line.

path = "relayed" sets TS_DEBUG_NEVER_DIRECT_UDP on both daemons: tailscaled's own switch that
drops the disco pings a direct path is found with, so every packet goes through the DERP relay
(TLS over TCP to Headscale), what a network that blocks UDP between the peers leaves, while
STUN still works. The path really taken is read from `tailscale ping` ("via DERP(...)" or "via
ADDRESS:PORT") and recorded.
"""

import datetime
import ipaddress
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import TechniqueParams
from vpnbench.foundation.safe_files import make_dir, wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, Proc
from vpnbench.techniques.base import BackendStatus, Technique, Tunnel
from vpnbench.techniques.overhead import (
    IP_HEADER,
    POLY1305_TAG,
    TCP_HEADER,
    WIREGUARD_HEADER,
    Expectation,
    expectation_of,
    wireguard_outer,
)
from vpnbench.testbeds.probe import KernelProbe

# tailscaled's TUN MTU (tstun.DefaultTUNMTU): 1280, the IPv6 minimum, whatever the underlay.
TUN_MTU = 1280
# Relayed, one WireGuard packet rides in a DERP frame (type 1 + length 4 + the peer's public key
# 32) inside a TLS 1.3 record (header 5 + inner content type 1 + AEAD tag 16) over TCP.
DERP_FRAME = 1 + 4 + 32
TLS13_RECORD = 5 + 1 + 16
HEADSCALE_USER = "vpnbench"
DERP_REGION = {"region_id": 999, "region_code": "vpnbench", "region_name": "vpnbench testbed"}
# What keeps tailscaled inside the testbed (see the module's docstring).
CONTAINED_ENV = {"TS_NO_LOGS_NO_SUPPORT": "true", "TS_DISABLE_PORTMAPPER": "1", "TS_PANIC_IF_HIT_MAIN_CONTROL": "1"}
RELAYED_ENV = {"TS_DEBUG_NEVER_DIRECT_UDP": "1"}
# tailscaled's captive-portal check (run while its health says connectivity is impacted, as at
# start) asks DNS for controlplane.tailscale.com and login.tailscale.com: seen here on the
# underlay, to the machine's resolver. tailscaled needs no name (the control server and its DERP
# relay are addressed by IP), so it runs in a mount namespace of its own where
# /etc/nsswitch.conf says hosts come from /etc/hosts only: no name lookup leaves the host.
HOSTS_FROM_FILES = "hosts: files\n"
WITH_NSSWITCH = 'mount --bind "$1" /etc/nsswitch.conf && shift && exec "$@"'
START_TIMEOUT = 20.0  # s: Headscale answering, tailscaled's socket, each `tailscale up`
PATH_TIMEOUT = 20.0  # s: the first pong over the asked path (a direct one took ~10 s by hand)
PONG = re.compile(r"^pong from \S+ \(([^)]*)\) via (\S+) in (\S+)$", re.MULTILINE)


class TailscaleParams(TechniqueParams):
    kind: Literal["tailscale"] = "tailscale"
    backend: Literal["auto", "userspace"] = "auto"
    version: builds.version_type("tailscale") = None  # tailscale's build (builds.RECIPES); none: the pinned one
    headscale_version: builds.version_type("headscale") = None  # Headscale's build; none: the pinned one
    path: Literal["direct", "relayed"] = "direct"
    # tailscaled's UDP port on each host; not its default 41641, which a host's own tailscaled may hold
    port: int = Field(41642, ge=1, le=65535)
    # Headscale's https (control and DERP) and STUN port; its gRPC and metrics listen on the next two, on loopback
    control_port: int = Field(8443, ge=1, le=65533)

class Tailscale(Technique):
    kind = "tailscale"
    kernel_features = {"userspace": "TUN (/dev/net/tun)"}
    Params = TailscaleParams
    description = "Tailscale (tailscaled, WireGuard in userspace) joined to a Headscale control server"
    # The pinned builds' (a campaign's own versions are in each cell's negotiated record): tailscale
    # says its version; a Headscale built with `go build` says "dev", so its build record, on one line.
    versions = {
        "tailscale": f"{builds.program('tailscale', 'tailscale')} version 2>/dev/null | head -1",
        "headscale": f"tr -d '\\n' < {builds.record_path('headscale')} 2>/dev/null",
    }

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "a tailnet holds one WireGuard peer per pair of nodes; N tunnels would be N nodes"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        if settings.get("path") == "relayed":
            return expectation_of(derp_outer, underlay_mtu, TUN_MTU, True,
                                  f"Tailscale relayed: tailscaled's TUN MTU {TUN_MTU}; WireGuard (header 16 + tag 16) "
                                  f"in a DERP frame {DERP_FRAME} in a TLS 1.3 record {TLS13_RECORD} over TCP, which "
                                  "segments larger packets")
        return expectation_of(lambda n: wireguard_outer(n, "ipv4"), underlay_mtu, TUN_MTU, False,
                              f"Tailscale direct: tailscaled's TUN MTU {TUN_MTU}; WireGuard over IPv4: IP 20 + UDP 8 "
                              "+ header 16 + tag 16")

    @classmethod
    def refused_on(cls, params: TechniqueParams, testbed_kind: str) -> str | None:
        # tailscaled in TUN mode deletes and re-adds the host-wide `ip rule`s 52xx and fills table
        # 52: in a namespace or VM the run made they are the run's own, on an ssh testbed's machine
        # they are the machine's (its own Tailscale's), and a kill -9 would leave ours behind.
        if testbed_kind == "ssh":
            return ("kind: tailscaled rewrites a host's own ip rules (52xx) and routing table 52, which on "
                    "an ssh testbed's machines are theirs; allowed testbed kinds for tailscale: local, vm")
        return None

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        return [cls._status(probe, None, None)]

    @classmethod
    def resolve_backend(cls, params: TailscaleParams, probe: KernelProbe) -> str:
        status = cls._status(probe, params.version, params.headscale_version)
        if not status.available:
            raise ValueError(f"backend 'userspace' is not available: {status.reason}")
        return status.name

    @classmethod
    def _status(cls, probe: KernelProbe, version: str | None, headscale_version: str | None) -> BackendStatus:
        """tailscaled and tailscale of `version`, headscale of `headscale_version` and the TUN device,
        each asked of the hosts (the probe's: client and server, where Headscale runs too without a router)."""
        needed = [("tailscale", version, program) for program in ("tailscaled", "tailscale")]
        needed.append(("headscale", headscale_version, "headscale"))
        for name, chosen, program in needed:
            host = probe.host_lacking(builds.program(name, program, chosen))
            if host:
                return BackendStatus("userspace", False, builds.missing_reason(name, chosen, host))
        host = probe.host_lacking("/dev/net/tun")
        if host:
            return BackendStatus("userspace", False, f"{host} lacks /dev/net/tun (TUN)")
        return BackendStatus("userspace", True)

    @classmethod
    def cannot_rekey(cls, params) -> str | None:
        return "tailscale: tailscaled renews its WireGuard keys on its own schedule and has no command to do it now"

    def __init__(self, params: TailscaleParams, ctx):
        super().__init__(params, ctx)
        self.sockets: dict[str, Path] = {}  # role -> its tailscaled's socket
        self.daemons: dict[str, Proc] = {}  # role -> its tailscaled
        self.headscale_config: Path | None = None
        self.control_host: Host | None = None

    def _host(self, role: str) -> Host:
        return self.ctx.client if role == "client" else self.ctx.server

    def up(self, backend: str) -> Tunnel:
        p = self.params
        self.control_host = self.ctx.router or self.ctx.server
        address = self._control_address()
        self.tunnel = Tunnel(backend=backend, server_addrs={}, client_addrs={}, protection="encrypted",
                             wire_filter=f"udp port {p.port}" if p.path == "direct" else f"tcp port {p.control_port}",
                             wire_protocol="WireGuard" if p.path == "direct" else "TLS")
        ca_pem, cert_pem, key_pem = control_certificate(address)
        server_url = f"https://{address}:{p.control_port}"
        auth_key = self._start_headscale(address, server_url, cert_pem, key_pem)
        ca_file, key_file = self.ctx.resources.path("tailscale-ca.pem"), self.ctx.resources.path("tailscale-auth.key")
        for role in ("server", "client"):
            self._private_file(self._host(role), ca_file, ca_pem)
            self._private_file(self._host(role), key_file, auth_key)
        for role in ("server", "client"):
            self._start_tailscaled(role, ca_file)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=2) as pool:  # both join at once, as two machines would
            list(pool.map(lambda role: self._join(role, server_url, key_file), ("server", "client")))
        self.handshake_s = round(time.monotonic() - started, 3)  # the control-plane join: both `tailscale up` returned
        for role in ("server", "client"):
            addrs = self._tailnet_addresses(role)
            (self.tunnel.server_addrs if role == "server" else self.tunnel.client_addrs).update(addrs)
        via, path_s = self._wait_for_path()
        self.tunnel.negotiated = {
            "implementation": "tailscaled", **self._versions(),
            "control": "headscale", "control_url": server_url, "join_s": self.handshake_s,
            "path": "relayed" if via.startswith("DERP(") else "direct", "path_asked": p.path, "via": via,
            "path_s": round(path_s, 3), "cipher": "chacha20poly1305", "key_exchange": "x25519 (Noise IK)",
            "tun_mtu": TUN_MTU, "derp": "Headscale's embedded relay (TLS, run-local CA)",
        }
        if p.path == "relayed":
            self.tunnel.negotiated["forced_by"] = "TS_DEBUG_NEVER_DIRECT_UDP"
        return self.tunnel

    def _control_address(self) -> str:
        """Where Headscale listens: the server's underlay IPv4 address, or, on the router, its address
        on the server's link (the one it reaches the server from), which the client reaches through it."""
        if self.ctx.router is None:
            return self.ctx.underlay["server"]["ipv4"]
        route = self.ctx.router.run(["ip", "-o", "route", "get", self.ctx.underlay["server"]["ipv4"]], timeout=5).stdout.split()
        if "src" not in route:
            raise TechniqueError(f"router: no source address towards the server in `ip route get`: {' '.join(route)}")
        return route[route.index("src") + 1]

    def _private_dir(self, host: Host, name: str) -> Path:
        """A fresh 0700 directory of the run on host, wiped at down() (and by cleanup after a kill -9)."""
        path = make_dir(host, self.ctx.resources.path(name))
        host.remember_dir(path)  # only once made and checked: cleanup never wipes one someone else made
        self.undo.defer(wipe, host, path)
        return path

    def _private_file(self, host: Host, path: Path, content: str) -> None:
        host.write_file(path, content, 0o600)
        self.undo.defer(wipe, host, path)

    def _start_headscale(self, address: str, server_url: str, cert_pem: str, key_pem: str) -> str:
        """Headscale with a fresh configuration and database; returns a new pre-auth key."""
        p, host = self.params, self.control_host
        directory = self._private_dir(host, "headscale")
        self._private_file(host, directory / "tls.crt", cert_pem)
        self._private_file(host, directory / "tls.key", key_pem)
        self.headscale_config = directory / "config.yaml"
        config = headscale_config(directory, address, server_url, p.control_port)
        self._private_file(host, self.headscale_config, json.dumps(config, indent=1))  # JSON is YAML
        proc = host.spawn([self._headscale_program(), "serve", "-c", str(self.headscale_config)], name="headscale")
        self.tunnel.procs.append(proc)
        self.undo.defer(proc.stop)  # before its directory is wiped (the newer undo runs first)
        deadline = time.monotonic() + START_TIMEOUT
        while not (host.listening(proc, p.control_port) and self._headscale("users", "list", check=False).ok):
            if not proc.alive() or time.monotonic() > deadline:
                raise TechniqueError(f"headscale did not start: {_tail(proc.output())}")
            time.sleep(0.05)
        user = json.loads(self._headscale("users", "create", HEADSCALE_USER).stdout)
        created = json.loads(self._headscale("preauthkeys", "create", "--user", str(user["id"]), "--reusable",
                                             "--expiration", "1h").stdout)
        return created["key"]

    def _headscale_program(self) -> str:
        return builds.program("headscale", "headscale", self.params.headscale_version)

    def _headscale(self, *args: str, check: bool = True):
        """The headscale CLI against this run's server (its unix socket), JSON out (which also
        keeps it from asking GitHub for a newer release)."""
        result = self.control_host.run([self._headscale_program(), "-c", str(self.headscale_config), *args,
                                        "-o", "json"], timeout=15, check=False)
        if check and not result.ok:
            raise TechniqueError(f"headscale {args[0]} {args[1]}: {_tail(result.stderr + result.stdout)}")
        return result

    def _tailscale_program(self, program: str) -> str:
        return builds.program("tailscale", program, self.params.version)

    def _start_tailscaled(self, role: str, ca_file: Path) -> None:
        host, p = self._host(role), self.params
        state = self._private_dir(host, f"tailscaled-{role}")
        self.sockets[role] = state / "tailscaled.sock"
        env = {**CONTAINED_ENV, "SSL_CERT_FILE": str(ca_file), "TS_LOGS_DIR": str(state),
               **(RELAYED_ENV if p.path == "relayed" else {})}
        nsswitch = state / "nsswitch.conf"
        host.write_file(nsswitch, HOSTS_FROM_FILES, 0o644)
        proc = host.spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c", WITH_NSSWITCH, "sh",
                           str(nsswitch), self._tailscale_program("tailscaled"), f"--tun={self._tun_name(role)}",
                           f"--statedir={state}", f"--socket={self.sockets[role]}", f"--port={p.port}",
                           "--no-logs-no-support"], name="tailscaled", env=env)
        self.tunnel.procs.append(proc)
        self.daemons[role] = proc
        self.undo.defer(proc.stop)  # before its directory is wiped (the newer undo runs first)
        deadline = time.monotonic() + self.node_start_timeout
        while not self._tailscale(role, "status", "--json", check=False).stdout.strip().startswith("{"):
            if not proc.alive() or time.monotonic() > deadline:
                raise TechniqueError(f"tailscaled ({role}) did not start: {_tail(proc.output())}")
            time.sleep(0.05)

    def _tun_name(self, role: str) -> str:
        return self.ctx.resources.iface_name("t" + role[0])

    def _tailscale(self, role: str, *args: str, check: bool = True, timeout: float = 15):
        result = self._host(role).run([self._tailscale_program("tailscale"), f"--socket={self.sockets[role]}", *args],
                                      timeout=timeout, check=False)
        if check and not result.ok:
            raise TechniqueError(f"tailscale {args[0]} ({role}): {_tail(result.stderr + result.stdout)}")
        return result

    @property
    def node_start_timeout(self) -> float:
        """s for a node's tailscaled to answer on its socket, and for its `tailscale up`."""
        return START_TIMEOUT

    def _join(self, role: str, server_url: str, key_file: Path) -> None:
        timeout = self.node_start_timeout
        self._tailscale(role, "up", f"--login-server={server_url}", f"--auth-key=file:{key_file}",
                        f"--hostname=vpnbench-{role}", "--accept-dns=false", "--netfilter-mode=off",
                        f"--timeout={timeout:g}s", timeout=timeout + 5)

    def _tailnet_addresses(self, role: str) -> dict[str, str]:
        """The addresses Headscale gave this node (100.64.0.0/10, fd7a:115c:a1e0::/48), from `tailscale ip`."""
        found = {}
        for word in self._tailscale(role, "ip").stdout.split():
            family = "ipv4" if ipaddress.ip_address(word).version == 4 else "ipv6"
            found.setdefault(family, word)
        if "ipv4" not in found:
            raise TechniqueError(f"tailscale ip ({role}): no IPv4 tailnet address")
        return found

    def _wait_for_path(self) -> tuple[str, float]:
        """Ping the server's tailnet address over tailscale's own disco pings until a pong comes over
        the path asked (direct: from its UDP endpoint; relayed: through DERP); return how the last
        pong came and how long the wait took."""
        target, relayed = self.tunnel.server_addrs["ipv4"], self.params.path == "relayed"
        started = time.monotonic()
        via = "no pong"
        while time.monotonic() - started < PATH_TIMEOUT:
            result = self._tailscale("client", "ping", "-c", "1", "--timeout=1s", "--until-direct=false", target,
                                     check=False, timeout=5)
            pong = PONG.search(result.stdout)
            if pong:
                via = pong.group(2)
                if via.startswith("DERP(") == relayed:
                    return via, time.monotonic() - started
            time.sleep(0.1)
        raise TechniqueError(f"no {self.params.path} path to the server within {PATH_TIMEOUT:g} s (last: {via})")

    def _versions(self, role: str = "client") -> dict:
        """The exact versions that ran and their build records, read on the hosts that ran them.
        A Headscale built with `go build` says "dev", so its version is the build's (the prefix it
        ran from, and its record)."""
        try:
            said = json.loads(self._tailscale(role, "version", "--json").stdout)
        except ValueError:
            said = {}
        # majorMinorPatch is the release; the long form adds how it was built ("-ERR-BuildInfo"
        # when `go install` left no VCS stamp), kept beside it.
        return {"version": said.get("majorMinorPatch", ""), "version_long": said.get("long", ""),
                "build": self._record(self._host(role), "tailscale", self.params.version),
                "headscale_version": builds.resolve("headscale", self.params.headscale_version),
                "headscale_build": self._record(self.control_host, "headscale", self.params.headscale_version)}

    @staticmethod
    def _record(host: Host, name: str, version: str | None) -> dict:
        result = host.run(builds.record_command(name, version), timeout=15, check=False)
        try:
            return json.loads(result.stdout)
        except ValueError:
            return {"unreadable": _tail(result.stderr or result.stdout)}

    def evidence(self) -> dict[str, str]:
        """Each tailscaled's status and log, Headscale's nodes and log."""
        procs = self.tunnel.procs if self.tunnel else []
        pieces = [(f"{role}: tailscale status", lambda role=role: evidence.command(
            self._host(role), [self._tailscale_program("tailscale"), f"--socket={self.sockets[role]}", "status"]))
            for role in self.sockets]
        if self.headscale_config is not None:
            pieces.append(("control: headscale nodes list", lambda: evidence.command(self.control_host, [
                self._headscale_program(), "-c", str(self.headscale_config), "nodes", "list"])))
        # started in this order in up(): headscale, then the server's tailscaled, then the client's
        pieces += [(f"{where}: {proc.name} log", lambda proc=proc: evidence.log_tail(proc))
                   for where, proc in zip(("control", "server", "client"), procs)]
        return evidence.gather(pieces)


def derp_outer(inner: int) -> int:
    """A relayed packet on the wire: WireGuard's in a DERP frame in a TLS 1.3 record over TCP/IPv4."""
    return IP_HEADER["ipv4"] + TCP_HEADER + TLS13_RECORD + DERP_FRAME + WIREGUARD_HEADER + inner + POLY1305_TAG


def headscale_config(directory: Path, address: str, server_url: str, port: int) -> dict:
    """Headscale's configuration for one bring-up: everything in `directory`, the embedded DERP relay
    the only region, nothing fetched from or reported to anywhere outside the testbed."""
    return {
        "server_url": server_url,
        "listen_addr": f"{address}:{port}",
        "grpc_listen_addr": f"127.0.0.1:{port + 1}",
        "metrics_listen_addr": f"127.0.0.1:{port + 2}",
        "tls_cert_path": str(directory / "tls.crt"),
        "tls_key_path": str(directory / "tls.key"),
        "noise": {"private_key_path": str(directory / "noise.key")},
        "prefixes": {"v4": "100.64.0.0/10", "v6": "fd7a:115c:a1e0::/48", "allocation": "sequential"},
        "derp": {"server": {"enabled": True, **DERP_REGION, "stun_listen_addr": f"{address}:{port}",
                            "private_key_path": str(directory / "derp.key"), "ipv4": address,
                            "automatically_add_embedded_derp_region": True},
                 "urls": [], "paths": [], "auto_update_enabled": False},
        "disable_check_updates": True,
        "ephemeral_node_inactivity_timeout": "30m",
        "database": {"type": "sqlite", "sqlite": {"path": str(directory / "db.sqlite"), "write_ahead_log": True}},
        "log": {"level": "info", "format": "text"},
        "policy": {"mode": "file", "path": ""},
        "dns": {"magic_dns": False, "override_local_dns": False, "base_domain": "", "nameservers": {"global": []}},
        "unix_socket": str(directory / "headscale.sock"),
        "unix_socket_permission": "0700",
        "logtail": {"enabled": False},
    }


def control_certificate(address: str) -> tuple[str, str, str]:
    """A CA made for this bring-up and Headscale's certificate for `address` (an IP SAN), as PEM:
    (CA certificate, server certificate, server key). The CA key exists only in this process and
    is dropped when this returns, so nothing else is ever signed with it."""
    # here, not at the top: every `vpnbench` command imports this module with the registry, and
    # cryptography's x509 took ~25 ms of each start (python -X importtime)
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def certificate(subject: str, key, issuer: str, extensions) -> "x509.Certificate":
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2)))
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        return builder.sign(ca_key, hashes.SHA256())

    ca_name = "vpnbench throwaway CA"
    ca = certificate(ca_name, ca_key, ca_name, [(x509.BasicConstraints(ca=True, path_length=0), True), (
        x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False,
                      key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False),
        True)])
    server = certificate("vpnbench-headscale", server_key, ca_name, [
        (x509.BasicConstraints(ca=False, path_length=None), True),
        (x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(address))]), False),
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)])
    key_pem = server_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption())
    return (ca.public_bytes(serialization.Encoding.PEM).decode(), server.public_bytes(serialization.Encoding.PEM).decode(),
            key_pem.decode())


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:]) or "no output"
