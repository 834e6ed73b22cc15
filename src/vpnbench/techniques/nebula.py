"""Nebula (slackhq/nebula): a certificate-based overlay, Noise IX handshakes over UDP, AES-256-GCM
or ChaCha20-Poly1305 on the data path, a TUN device per host.

Per bring-up, on the controller, nebula-cert makes a CA and one certificate per node (curve
25519) in a fresh 0700 directory of the run's private directory, which is wiped as soon as the
certificates are signed: the CA key is never anywhere else. Each node then gets one file, its
configuration (JSON, which is YAML) with its own key, its certificate and the CA certificate
inlined, written 0600 into the run's directory on its host and wiped at down(); no key is ever on
a command line. Every node listens on a port of this run's own and names its TUN device from the
run id, so runs on shared hosts never collide.

The lighthouse (nebula's discovery node) is the server, or the router as a third node (its TUN
disabled: it only tells the client where the server is, the data goes client to server). The
overlay's firewall admits everything both ways: the benchmark measures nebula's data path, not
a rule set (its connection tracking still runs, as in any deployment).
"""

import json
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Family, TechniqueParams
from vpnbench.foundation.safe_files import wipe, wipe_here
from vpnbench.foundation.tools import which
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, Proc, stop_all
from vpnbench.hosts.route import route_mtu
from vpnbench.techniques.base import BackendStatus, BuiltTunDaemon, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import IP_HEADER, POLY1305_TAG, UDP_HEADER, Expectation, expectation_of, max_inner
from vpnbench.testbeds.probe import KernelProbe

# A data message: nebula's header (header.Len: version/type 1, subtype 1, reserved 2, remote
# index 4, message counter 8), then the encrypted packet and the AEAD's tag (16 bytes for both
# AES-256-GCM and ChaCha20-Poly1305); the counter is the nonce, nothing else is sent.
NEBULA_HEADER = 16
AEAD_TAG = POLY1305_TAG
CIPHERS = {"aes": "AES-256-GCM", "chachapoly": "ChaCha20-Poly1305"}
CURVE = "25519"  # nebula-cert's default: X25519 handshakes, Ed25519 signatures
NODE = {"client": 1, "server": 2, "router": 3}  # each node's host number in the overlay subnet
START_TIMEOUT = 15.0
HANDSHAKE_DONE = "Handshake message received"  # with handshake.stage 2: the initiator's tunnel is up
ACTIVE = "Nebula interface is active"


def nebula_outer(inner: int, family: str) -> int:
    return inner + IP_HEADER[family] + UDP_HEADER + NEBULA_HEADER + AEAD_TAG


class NebulaParams(TechniqueParams):
    kind: Literal["nebula"] = "nebula"
    backend: Literal["auto", "userspace"] = "auto"
    # A version vpnbench builds (builds.RECIPES), or "debian" for the distribution's package.
    version: builds.version_type("nebula") = None
    cipher: Literal["aes", "chachapoly"] = "aes"
    lighthouse: Literal["server", "router"] = "server"
    family: Family = "ipv4"  # underlay family of the outer UDP packets
    port: int | None = Field(None, ge=1, le=65535)  # None: a port of this run's own (run_port)
    mtu: int | None = Field(None, ge=1280, le=9000)  # None: the most the underlay carries in one packet


class Nebula(BuiltTunDaemon):
    BUILD = "nebula"
    kind = "nebula"
    kernel_features = {"userspace": "TUN (/dev/net/tun)"}
    Params = NebulaParams
    description = "Nebula (Noise IX, AES-256-GCM or ChaCha20-Poly1305, lighthouse)"
    versions = {"nebula": f"{builds.program('nebula', 'nebula', builds.RECIPES['nebula'].default)} -version 2>/dev/null",
                "nebula_debian": "nebula -version 2>/dev/null"}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "a Nebula overlay holds one tunnel per pair of nodes; N tunnels would be N nodes"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        family = settings.get("family", "ipv4")
        return expectation_of(lambda n: nebula_outer(n, family), underlay_mtu, settings.get("mtu"), False,
                              f"Nebula over {family}: IP {IP_HEADER[family]} + UDP 8 + header {NEBULA_HEADER} "
                              f"+ tag {AEAD_TAG}; the TUN MTU is set to what fits unless mtu is given")

    @classmethod
    def _status(cls, probe: KernelProbe, version: str) -> BackendStatus:
        """nebula on the hosts (asked of the probe; Debian's on the PATH), nebula-cert on the
        controller, which signs; TUN."""
        if version == builds.DEBIAN:
            lacking = None if probe.has_command("nebula") else "a host"
        else:
            lacking = probe.host_lacking(builds.program("nebula", "nebula", version))
        if lacking is not None:
            return BackendStatus("userspace", False, builds.missing_reason("nebula", version, lacking))
        if which(builds.program("nebula", "nebula-cert", version)) is None:
            return BackendStatus("userspace", False, builds.missing_reason("nebula", version, "this machine (nebula-cert)"))
        tun = probe.host_lacking("/dev/net/tun")
        if tun is not None:
            return BackendStatus("userspace", False, f"{tun} lacks TUN (/dev/net/tun)")
        return BackendStatus("userspace", True)

    def __init__(self, params: NebulaParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes: dict[str, Host] = {}  # role -> host, the lighthouse's first
        self.procs: dict[str, Proc] = {}  # role -> its nebula
        # Asked of the hosts at the first up() only: the underlay and the builds stay as they are
        # for the technique's life (one block; a swept underlay MTU makes a new one).
        self.mtus: dict[str, int] = {}  # role -> its TUN device's MTU
        self.build_records: dict[str, dict] = {}  # role -> its build record (builds.record_command)

    def up(self, backend: str) -> Tunnel:
        p, res = self.params, self.ctx.resources
        self.nodes = self._nodes()
        subnet = overlay_subnet(res.run_id)
        port = p.port or run_port(res.run_id)
        inner = {role: f"{subnet}.{NODE[role]}" for role in self.nodes}
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs={"ipv4": inner["server"]},
            client_addrs={"ipv4": inner["client"]},
            protection="encrypted",
            wire_filter=f"udp port {port}",
            wire_protocol="nebula",
            negotiated={"implementation": "nebula", "cipher": p.cipher, "aead": CIPHERS[p.cipher], "curve": CURVE,
                        "lighthouse": p.lighthouse, "overlay": f"{subnet}.0/24", "port": port,
                        "underlay_family": p.family, "firewall": "any in, any out (benchmark)"},
        )
        pems = nebula_pki(res.dir, builds.program("nebula", "nebula-cert", p.version),
                          {role: f"{address}/24" for role, address in inner.items()}, res.run_id)
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))  # before their files are wiped
        lighthouse = p.lighthouse  # the role of the node that is it
        for role, host in self.nodes.items():  # the lighthouse first: the others report to it at start
            config = self._config(role, host, pems, inner, port, lighthouse)
            path = res.path(f"nebula-{role}.yml")
            host.write_file(path, json.dumps(config, indent=1), 0o600)
            self.undo.defer(wipe, host, path)  # on the host that holds it, at down()
            self.procs[role] = proc = host.spawn([builds.program("nebula", "nebula", p.version), "-config", str(path)],
                                                 name="nebula")
            self.tunnel.procs.append(proc)
            if role == lighthouse:
                self._wait(role, lambda log: any(entry.get("msg") == ACTIVE for entry in log))
                self._wait_listening(role, port)
        for role in self.nodes:
            if role != lighthouse:  # each has handshaken with the lighthouse: its tunnel is up
                self._wait(role, lambda log: handshake_seconds(log) is not None)
        client_log = log_entries(self.procs["client"].output())
        self.handshake_s = handshake_seconds(client_log)
        self.tunnel.negotiated.update(self._what_ran(client_log))
        return self.tunnel

    def _nodes(self) -> dict[str, Host]:
        if self.params.lighthouse == "server":
            return {"server": self.ctx.server, "client": self.ctx.client}
        if self.ctx.router is None:
            raise TechniqueError("lighthouse 'router' needs a router: set [testbed] router = true")
        return {"router": self.ctx.router, "server": self.ctx.server, "client": self.ctx.client}

    def _config(self, role: str, host: Host, pems: dict[str, str], inner: dict[str, str], port: int,
                lighthouse: str) -> dict:
        """One node's configuration (nebula's examples/config.yml names every key)."""
        p = self.params
        family = p.family
        config: dict = {
            "pki": {"ca": pems["ca.crt"], "cert": pems[f"{role}.crt"], "key": pems[f"{role}.key"]},
            "cipher": p.cipher,
            "listen": {"port": port},
            "punchy": {"punch": False},  # no NAT on a testbed
            "relay": {"am_relay": False, "use_relays": False},
            "logging": {"level": "info", "format": "json", "timestamp_format": "2006-01-02T15:04:05.000000Z07:00"},
            # Everything inside the overlay is admitted, both ways: the benchmark's traffic, whatever it is.
            "firewall": {"outbound": [{"port": "any", "proto": "any", "host": "any"}],
                         "inbound": [{"port": "any", "proto": "any", "host": "any"}]},
        }
        if role == lighthouse:
            config["lighthouse"] = {"am_lighthouse": True}
        else:
            # The lighthouse's underlay address: the server's, or the router's own address on the
            # server's link (the client reaches it through the router, which delivers it locally).
            there = self.ctx.underlay["server"][family] if lighthouse == "server" else self._router_address(family)
            config["static_host_map"] = {inner[lighthouse]: [_endpoint(there, port)]}
            config["lighthouse"] = {"am_lighthouse": False, "hosts": [inner[lighthouse]]}
        if role == "router":
            # one address, not every one of the host's (on an ssh testbed the router is a real machine)
            config["listen"]["host"] = self._router_address(family)
            config["tun"] = {"disabled": True}  # a lighthouse only: no data passes through it
            return config
        mine = self.ctx.underlay[role][family]
        config["listen"]["host"] = mine  # the one underlay family asked for, and only this address reported
        config["lighthouse"]["local_allow_list"] = {f"{mine}/{128 if family == 'ipv6' else 32}": True}
        if role not in self.mtus:
            self.mtus[role] = self._tun_mtu(host, role)
        config["tun"] = {"dev": self.ctx.resources.iface_name("n" + role[0]), "mtu": self.mtus[role]}
        return config

    def _router_address(self, family: str) -> str:
        """The router's underlay address on the server's link: where a router lighthouse listens."""
        return source_address(self.ctx.router, self.ctx.underlay["server"][family])

    def _tun_mtu(self, host: Host, role: str) -> int:
        """The asked MTU, or the largest inner packet whose outer one fits the underlay towards the peer."""
        if self.params.mtu is not None:
            return self.params.mtu
        peer = "client" if role == "server" else "server"
        underlay = route_mtu(host, self.ctx.underlay[peer][self.params.family])[1]
        if underlay is None:
            raise TechniqueError(f"nebula: {role} has no route to the {peer}'s underlay address")
        return max_inner(lambda n: nebula_outer(n, self.params.family), underlay)

    def _wait(self, role: str, ready) -> None:
        """Until ready(the node's log entries) holds; a daemon that exits or a timeout raises."""
        proc = self.procs[role]
        deadline = time.monotonic() + START_TIMEOUT
        while not ready(log_entries(proc.output())):
            if not proc.alive():
                raise TechniqueError(f"nebula ({role}) exited: {_tail(proc.output())}")
            if time.monotonic() > deadline:
                raise TechniqueError(f"nebula ({role}) not ready within {START_TIMEOUT:g} s: {_tail(proc.output())}")
            time.sleep(0.01)

    def _wait_listening(self, role: str, port: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not self.nodes[role].listening(self.procs[role], port, udp=True):
            if time.monotonic() > deadline:
                raise TechniqueError(f"nebula ({role}) does not listen on UDP port {port}")
            time.sleep(0.005)

    def _what_ran(self, client_log: list[dict]) -> dict:
        """The version the client's nebula says it is, the build record read on each host, the
        certificate version its handshake used, and the TUN MTU."""
        found: dict = {}
        active = next((entry for entry in client_log if entry.get("msg") == ACTIVE), {})
        found["version"] = active.get("build")
        records = self.build_records = self.build_records or {
            role: _build_record(host, self.params.version) for role, host in self.nodes.items()}
        distinct = {json.dumps(record, sort_keys=True) for record in records.values()}
        found["build"] = records["client"] if len(distinct) == 1 else records
        done = next((entry for entry in client_log if _is_handshake_done(entry)), {})
        if "certVersion" in done:
            found["certificate_version"] = done["certVersion"]
        found["mtu"] = self.mtus["client"]
        return found

    def evidence(self) -> dict[str, str]:
        """Each node's nebula log (JSON lines: no key is ever logged) and the TUN devices."""
        pieces = [(f"{role}: nebula log", lambda proc=proc: evidence.log_tail(proc)) for role, proc in self.procs.items()]
        pieces += [(f"{role}: ip addr (nebula tun)", lambda role=role: evidence.command(
            self.nodes[role], ["ip", "addr", "show", "dev", self.ctx.resources.iface_name("n" + role[0])]))
            for role in ("client", "server") if role in self.nodes]
        return evidence.gather(pieces)


def nebula_pki(directory: Path, nebula_cert: str, networks: dict[str, str], run_id: str) -> dict[str, str]:
    """A CA and one certificate and key per node (role -> its overlay address/prefix), as PEM text:
    "ca.crt", "<role>.crt", "<role>.key". Each node's key pair comes from `nebula-cert keygen`
    through a pipe (never a file); `sign -in-pub` reads its public key from a pipe. Only the CA's
    key is ever a file (mode 0600, nebula-cert's), in a fresh 0700 directory inside `directory`
    (this machine's run directory), wiped before this returns: it never leaves it. Only paths and
    names are on the command lines."""
    pems: dict[str, str] = {}
    work = Path(tempfile.mkdtemp(prefix="nebula-pki-", dir=directory))
    try:
        _nebula_cert(nebula_cert, "ca", "-name", f"vpnbench run {run_id}", "-duration", "48h",
                     "-out-crt", str(work / "ca.crt"), "-out-key", str(work / "ca.key"))
        for role, network in networks.items():
            # nebula-cert writes files with os.WriteFile, which a pipe (/dev/stdout, /dev/stdin) is as well
            pems[f"{role}.key"], public = pem_blocks(_nebula_cert(nebula_cert, "keygen", "-out-key", "/dev/stdout",
                                                                  "-out-pub", "/dev/stdout"))
            _nebula_cert(nebula_cert, "sign", "-ca-crt", str(work / "ca.crt"), "-ca-key", str(work / "ca.key"),
                         "-name", f"vpnbench-{role}", "-ip", network, "-in-pub", "/dev/stdin",
                         "-out-crt", str(work / f"{role}.crt"), stdin=public)
        for name in ("ca.crt", *(f"{role}.crt" for role in networks)):  # public: read and removed
            pems[name] = (work / name).read_text()
            (work / name).unlink()
    finally:
        wipe_here([work])  # the CA key: nothing else is ever signed with it
    return pems


def pem_blocks(text: str) -> list[str]:
    """The PEM blocks of text, in order, each from its BEGIN line to its END line."""
    return [block + "\n" for block in re.findall(r"-----BEGIN [^\n]+-----\n.*?-----END [^\n]+-----", text, re.S)]


def _nebula_cert(program: str, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run([program, *args], input=stdin, capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise TechniqueError(f"nebula-cert {args[0]} failed: {_tail(proc.stderr or proc.stdout, 2)}")
    return proc.stdout


def overlay_subnet(run_id: str) -> str:
    """This run's overlay /24 (its first three octets), from the run id: two runs on shared hosts
    get different ones (but for one in 256)."""
    return f"10.96.{int(run_id, 16) % 256}"


def run_port(run_id: str) -> int:
    """This run's UDP port (4300-4999) for every node, from the run id."""
    return 4300 + (int(run_id, 16) >> 8) % 700


def source_address(host: Host, destination: str) -> str:
    """The address `host` sends from towards destination (`ip route get`'s src)."""
    words = host.run(["ip", "-o", "route", "get", destination], timeout=5).stdout.split()
    if "src" not in words:
        raise TechniqueError(f"nebula: the {host.role} has no source address towards {destination}")
    return words[words.index("src") + 1]


def log_entries(output: str) -> list[dict]:
    """nebula's JSON log lines (anything else, such as a Go panic, is left out)."""
    entries = []
    for line in output.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _is_handshake_done(entry: dict) -> bool:
    return entry.get("msg") == HANDSHAKE_DONE and (entry.get("handshake") or {}).get("stage") == 2


def handshake_seconds(entries: list[dict]) -> float | None:
    """The first handshake this node initiated and completed, as nebula timed it: its stage-2
    message's durationNs (from the first handshake packet to the reply), in seconds."""
    done = next((entry for entry in entries if _is_handshake_done(entry) and "durationNs" in entry), None)
    return None if done is None else round(done["durationNs"] / 1e9, 6)


def _build_record(host: Host, version: str) -> dict:
    """What the host's own build record says it runs (builds.record_command, run there)."""
    result = host.run(builds.record_command("nebula", version), timeout=10, check=False)
    try:
        return json.loads(result.stdout)
    except ValueError:
        return {"unreadable": (result.stderr or result.stdout).strip()[-200:] or f"exit {result.returncode}"}


def _endpoint(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _tail(output: str, lines: int = 5) -> str:
    return " | ".join(output.strip().splitlines()[-lines:]) or "no output"
