"""OpenVPN 2.6 in point-to-point mode: TLS (a throwaway CA per bring-up) or a static key.

tunnels = N runs N point-to-point pairs, each its own server instance on its own port and its own
client instance, tun devices and inner addresses: the same p2p data path as one tunnel, N times.
(Server mode would put every client behind one tun device and one inner server address, which a
client host holding N tuns could not route to per tunnel without policy rules, and measures
another data path.)

Both daemons run in the foreground, spawned on their hosts, so the run owns them (no
--daemon, no pid or status files, no management socket: nothing two instances in two
namespaces could collide on). Every path handed to openvpn is absolute. Keys are written
0600 into the run's private directory and wiped at down(); none is ever on a command line.
"""

import json
import re
import secrets
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Family, Size, TechniqueParams
from vpnbench.foundation.safe_files import wipe, wipe_here, wipe_paths, write_private
from vpnbench.foundation.tools import missing_tool_reason
from vpnbench.hosts import evidence
from vpnbench.hosts.base import stop_all
from vpnbench.techniques.base import BackendStatus, Ends, Technique, Tunnel
from vpnbench.techniques.overhead import Expectation, expectation_of, openvpn_outer
from vpnbench.testbeds.probe import KernelProbe

INNER = {
    "client": {"ipv4": "10.98.0.1", "ipv6": "fd98::1"},
    "server": {"ipv4": "10.98.0.2", "ipv6": "fd98::2"},
}
AEAD = ("AES-256-GCM", "AES-128-GCM", "CHACHA20-POLY1305")
CBC = ("AES-256-CBC", "AES-128-CBC")
STATIC_WARNING = ("static-key mode is deprecated in OpenVPN 2.6 and removed in 2.7: no forward secrecy, "
                  "one key for the whole run (kept for S1's comparison)")
READY = "Initialization Sequence Completed"
# TLS mode's data channel, as each daemon states it. OpenVPN 2.6 prints it just *after* READY in p2p
# mode (do_up: initialization_sequence_completed, then tls_print_deferred_options_results), so a
# log read between the two has READY and no cipher yet: both are waited for.
DATA_CHANNEL = "Data Channel: cipher '"
NODELAY_SET = "Socket flags: TCP_NODELAY=1 succeeded"
START_TIMEOUT = 20.0
START_TIMEOUT_PER_TUNNEL = 0.2  # tunnels = N: N TLS handshakes on the hosts' cores at once
# The most p2p pairs one bring-up holds: two processes, two tun devices and a server port each;
# measured here (docs/config.md)
PAIR_CEILING = 200
DCO_LINK = "ovpn-dco"  # the link kind of Debian's openvpn-dco-dkms module (ovpn-dco-v2), which OpenVPN 2.6 drives
DCO_MISSING = "kernel lacks ovpn-dco: apt-get install openvpn-dco-dkms (builds the module for installed kernels)"
DCO_DISABLED = re.compile(r"^.*(?:disabling|disables) data channel offload.*$", re.M | re.I)


class OpenVPNParams(TechniqueParams):
    kind: Literal["openvpn"] = "openvpn"
    # true: the ovpn-dco kernel data path (backend "dco"); false: userspace, --disable-dco (backend
    # "userspace"); left out: backend decides (its "auto" takes DCO where the hosts have it).
    dco: bool | None = None
    backend: Literal["auto", "dco", "userspace"] = Field("auto", validate_default=True)  # checked against dco
    transport: Literal["udp", "tcp"] = "udp"
    mode: Literal["tls", "static"] = "tls"
    cipher: Literal["AES-256-GCM", "AES-128-GCM", "CHACHA20-POLY1305", "AES-256-CBC", "AES-128-CBC"] = \
        Field("AES-256-GCM", validate_default=True)  # checked against mode even when left out
    auth: Literal["SHA256", "SHA384", "SHA512", "SHA1"] = "SHA256"  # HMAC of the CBC ciphers
    dev: Literal["tun", "tap"] = Field("tun", validate_default=True)
    family: Family = "ipv4"  # underlay family of the outer packets
    port: int = Field(1194, ge=1, le=65535)
    # Tuning passed through to both daemons (None: OpenVPN's default).
    sndbuf: Size | None = None
    rcvbuf: Size | None = None
    fragment: int | None = Field(None, ge=68, le=65535)
    mssfix: int | None = Field(None, ge=0, le=65535)
    replay_window: int | None = Field(None, ge=0, le=65535)  # S1: a wider window survives jitter
    tun_mtu: int | None = Field(None, ge=576, le=65535)
    # Nagle off on the TCP transport (--socket-flags TCP_NODELAY). OpenVPN 2.7.6 and later always
    # do this; 2.6 (Debian 12) and the studies' versions do not, which costs latency.
    tcp_nodelay: bool = False
    # --float on both daemons: a peer may change its address or port mid-session (UDP only).
    float: bool = False

    def settings(self) -> dict:
        """Without float at its default: cells stored before it existed had none, and stay equal."""
        settings = super().settings()
        if settings.get("float") is False:
            del settings["float"]
        return settings

    # Field validators run in declaration order, so the fields they look at are already in info.data.
    @field_validator("backend")
    @classmethod
    def _dco_chooses_backend(cls, backend: str, info: ValidationInfo) -> str:
        dco = info.data.get("dco")
        if dco is None:
            return backend
        wanted = "dco" if dco else "userspace"
        if backend not in ("auto", wanted):
            raise ValueError(f"{backend!r} contradicts dco = {str(dco).lower()}; allowed values: 'auto', {wanted!r}")
        return wanted

    @field_validator("cipher")
    @classmethod
    def _static_needs_cbc(cls, cipher: str, info: ValidationInfo) -> str:
        if info.data.get("mode") == "static" and cipher not in CBC:
            raise ValueError(f"{cipher!r} is not allowed with mode = 'static' (OpenVPN refuses AEAD ciphers "
                             f"without TLS); allowed values: {', '.join(repr(c) for c in CBC)}")
        if info.data.get("backend") == "dco" and cipher not in AEAD:
            raise ValueError(f"{cipher!r} is not allowed with backend = 'dco'; allowed values: "
                             + ", ".join(repr(c) for c in AEAD))
        return cipher

    @field_validator("dev")
    @classmethod
    def _dco_needs_tun(cls, dev: str, info: ValidationInfo) -> str:
        if info.data.get("backend") == "dco" and (dev != "tun" or info.data.get("mode") != "tls"):
            raise ValueError("backend = 'dco' needs dev = 'tun' and mode = 'tls'; use backend = 'userspace'")
        return dev

    @field_validator("fragment", "replay_window")
    @classmethod
    def _udp_only(cls, value, info: ValidationInfo):
        if value is not None and info.data.get("transport") != "udp":
            raise ValueError("works only with transport = 'udp'")
        return value

    @field_validator("fragment")
    @classmethod
    def _not_with_dco(cls, value, info: ValidationInfo):
        if value is not None and info.data.get("backend") == "dco":  # OpenVPN would quietly fall back to userspace
            raise ValueError("ovpn-dco has no --fragment: not allowed with dco = true (backend = 'dco')")
        return value

    @field_validator("tcp_nodelay")
    @classmethod
    def _tcp_only(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("transport") != "tcp":
            raise ValueError("works only with transport = 'tcp'")
        return value


class OpenVPN(Technique):
    kind = "openvpn"
    packages = {"openvpn": "openvpn", "openssl": "openssl"}
    kernel_features = {"userspace": "TUN (/dev/net/tun)", "dco": "ovpn-dco link type"}
    Params = OpenVPNParams
    description = "OpenVPN 2.6 (TLS or static key, UDP or TCP)"
    versions = {"openvpn": "openvpn --version 2>&1 | head -1",
                "ovpn_dco_module": "cat /sys/module/ovpn_dco_v2/version 2>/dev/null || modinfo -F version ovpn-dco-v2 2>/dev/null"}

    @classmethod
    def kernel_rows(cls, probe: KernelProbe) -> dict[str, bool]:
        return {"openvpn_dco": probe.has_link_type(DCO_LINK)}

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        family = settings.get("family", "ipv4")
        cipher, transport = settings.get("cipher", "AES-256-GCM"), settings.get("transport", "udp")

        def outer(n: int) -> int:
            return openvpn_outer(n, family, cipher, settings.get("auth", "SHA256"), transport,
                                 settings.get("mode", "tls"), settings.get("dev", "tun"))
        tun_mtu = settings.get("tun_mtu") or 1500
        return expectation_of(outer, underlay_mtu, tun_mtu, True,
                              f"OpenVPN {cipher} over {transport}/{family}, tun-mtu {tun_mtu}: the tun device "
                              f"admits {tun_mtu}-byte packets and larger outer packets are fragmented (or, over "
                              "TCP, segmented)")

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        if not probe.has_command("openvpn"):
            reason = missing_tool_reason("openvpn")
            return [BackendStatus("dco", False, reason), BackendStatus("userspace", False, reason)]
        dco = probe.has_link_type(DCO_LINK)  # tried on the hosts: loads the module where it is installed
        return [BackendStatus("dco", dco, "" if dco else DCO_MISSING), BackendStatus("userspace", True)]

    @classmethod
    def resolve_backend(cls, params: OpenVPNParams, probe: KernelProbe) -> str:
        # DCO only carries AEAD ciphers over TLS on tun, unfragmented: anything else is userspace, even under auto.
        if params.backend == "auto" and (params.cipher not in AEAD or params.mode != "tls" or params.dev != "tun"
                                         or params.fragment is not None):
            params = params.model_copy(update={"backend": "userspace"})
        return super().resolve_backend(params, probe)

    @classmethod
    def cannot_rekey(cls, params) -> str | None:
        # OpenVPN 2.6 renegotiates its data channel key only on its own schedule (reneg-sec,
        # reneg-bytes, reneg-pkts); SIGUSR1 restarts the whole session, which is not a rekey.
        return "openvpn has no command to renegotiate its data channel key now (only reneg-sec/-bytes/-pkts schedule it)"

    @classmethod
    def tunnel_ceiling(cls, params: OpenVPNParams) -> tuple[int, str]:
        ports = 65535 - params.port + 1
        if ports < PAIR_CEILING:
            return ports, f"one point-to-point pair per tunnel, each its own server port from {params.port} up"
        return PAIR_CEILING, ("one point-to-point pair per tunnel (2 openvpn processes, 2 tun devices, a server "
                              f"port from {params.port} up); {PAIR_CEILING} pairs came up here")

    def up(self, backend: str) -> Tunnel:
        p = self.params
        first = Ends(dict(INNER["client"]), dict(INNER["server"]))
        ports = f"port {p.port}" if p.tunnels == 1 else f"portrange {p.port}-{p.port + p.tunnels - 1}"
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs=first.server,
            client_addrs=first.client,
            more=[first.nth(i) for i in range(1, p.tunnels)],
            protection="encrypted",
            wire_filter=f"{p.transport} {ports}",
            negotiated={"mode": p.mode, "transport": p.transport, "dev": p.dev, "underlay_family": p.family,
                        # what follows a moved client or a lost peer (the motion kind); see _common_args
                        "float": p.float if p.transport == "udp" else "no (TCP: a moved client needs a new connection)",
                        "keepalive": "--ping 2 --ping-exit 30"},
        )
        if p.mode == "static":
            self.tunnel.negotiated["warning"] = STATIC_WARNING
        secrets_args = self._static_key() if p.mode == "static" else self._tls_material()
        self.undo.defer(stop_all, self.tunnel.procs)  # those started, together; before their keys are wiped
        self.server_argv: list[str] = []
        for index in range(p.tunnels):
            for role in ("server", "client"):  # the server first, so the client's first packet finds it
                host = self._host(role)
                argv = ["openvpn", *self._common_args(role, backend, index), *secrets_args[role]]
                started = time.monotonic()  # the last client's start
                self.tunnel.procs.append(host.spawn(argv, name="openvpn"))
                if role == "server" and index == 0:
                    self.server_argv = argv  # restart_server starts it again
        self._wait_ready()
        # "Initialization Sequence Completed" minus the client's start, as polled (50 ms steps)
        self.handshake_s = round(time.monotonic() - started, 3)
        self._check_data_path(backend)
        return self.tunnel

    @classmethod
    def cannot_restart_server(cls, params: OpenVPNParams) -> str | None:
        if params.tunnels > 1:
            return "openvpn: vpnbench restarts the server of one tunnel (tunnels = 1) only"
        return None

    def restart_server(self) -> dict:
        """The server's openvpn killed and started again with the same arguments and key files (it
        has lost its session, as after a crash). The client is left as it is: whether it gets a new
        session (it has --ping-exit 30, no --ping-restart) is what the motion kind measures."""
        reason = self.cannot_restart_server(self.params)
        if reason or self.tunnel is None:
            raise TechniqueError(reason or "openvpn: not up")
        self.tunnel.procs[0].stop(5)  # the server's, started first (up())
        self.tunnel.procs[0] = self.ctx.server.spawn(self.server_argv, name="openvpn")
        return {"how": "openvpn on the server stopped and started again with the same arguments",
                "keepalive": self.tunnel.negotiated.get("keepalive")}

    def _host(self, role: str):
        return self.ctx.client if role == "client" else self.ctx.server

    def _iface(self, role: str, index: int = 0) -> str:
        """Tunnel `index`'s tun (or tap) device on `role`'s host."""
        return self.ctx.resources.iface_name("o" + role[0] + (str(index) if index else ""))

    def _common_args(self, role: str, backend: str, index: int = 0) -> list[str]:
        """The arguments of tunnel `index`'s daemon on `role`'s host (0: the first tunnel)."""
        p = self.params
        peer = "client" if role == "server" else "server"
        fam = "4" if p.family == "ipv4" else "6"
        iface = self._iface(role, index)
        inner = self.tunnel.every()[index]
        local, remote = getattr(inner, role), getattr(inner, peer)
        # The first tunnel keeps its /64 and /24; the others take their own /124 and /30 (Ends.nth),
        # more specific, so each host routes every tunnel's addresses through its own device
        prefix6, netmask = ("64", "255.255.255.0") if index == 0 else ("124", "255.255.255.252")
        # Static-key mode says its cipher and HMAC at verb 3 up to OpenVPN 2.6.3 ("Data Channel
        # Encrypt: ..."), and only at verb 4 from 2.6.14 on ("Outgoing Static Key Encryption: ...",
        # beside the options dump, which holds the key file's path, never the key)
        verb = "4" if p.mode == "static" else "3"
        args = ["--dev", iface, "--dev-type", p.dev, "--cd", str(self.ctx.resources.dir),
                "--verb", verb, "--cipher", p.cipher, "--auth", p.auth]
        if p.transport == "udp":
            args += ["--proto", f"udp{fam}"]
        else:
            args += ["--proto", f"tcp{fam}-{role}"]
        if role == "server":
            args += ["--lport", str(p.port + index), "--local", self.ctx.underlay["server"][p.family]]
        else:
            args += ["--nobind", "--remote", self.ctx.underlay["server"][p.family], str(p.port + index)]
        args += ["--ifconfig", local["ipv4"], remote["ipv4"] if p.dev == "tun" else netmask,
                 "--ifconfig-ipv6", f"{local['ipv6']}/{prefix6}", remote["ipv6"]]
        if backend == "userspace":
            args.append("--disable-dco")
        for name in ("sndbuf", "rcvbuf", "fragment", "mssfix", "tun_mtu"):
            value = getattr(p, name)
            if value is not None:
                args += ["--" + name.replace("_", "-"), str(value)]
        if p.replay_window is not None:
            args += ["--replay-window", str(p.replay_window)]
        if p.tcp_nodelay:
            args += ["--socket-flags", "TCP_NODELAY"]
        if p.float:
            args.append("--float")
        # A dead peer is noticed within seconds, so the runner's health check sees it.
        args += ["--ping", "2", "--ping-exit", "30"]
        return args

    def _static_key(self) -> dict[str, list[str]]:
        key = self._secret("ovpn-static.key", static_key_file(), ("server", "client"))
        # Key direction: each side uses the other half for sending, so the two directions differ.
        return {"server": ["--secret", str(key), "0"], "client": ["--secret", str(key), "1"]}

    def _tls_material(self) -> dict[str, list[str]]:
        """A throwaway CA and one certificate per side, made with the openssl CLI on this machine:
        the CA key never leaves it (wiped once both certificates are signed); each side's private
        key goes only to the host that uses it."""
        pki = generate_pki(self.ctx.resources.dir)
        both = ("server", "client")
        # Each host's four files wiped at down() in one wipe, not one a file (a wipe is a shell
        # script of find and shred: ~0.15 s apiece in the TCG VM, eight of them every down);
        # registered before they are written: a path not (yet) there is passed over.
        for role in both:
            host = self._host(role)
            paths = [str(self.ctx.resources.path(name)) for name in
                     ("ovpn-ca.crt", "ovpn-tls-crypt.key", f"ovpn-{role}.crt", f"ovpn-{role}.key")]
            self.undo.defer(wipe_paths, host.run, paths, host.role)
        ca = self._secret("ovpn-ca.crt", pki["ca.crt"], both, wiped=False)
        tls_crypt = self._secret("ovpn-tls-crypt.key", static_key_file(), both, wiped=False)  # shared by design
        self.tunnel.negotiated["certificates"] = "throwaway CA, EC P-256, per bring-up"
        common = ["--ca", str(ca), "--tls-crypt", str(tls_crypt), "--data-ciphers", self.params.cipher]
        own = {role: ["--cert", str(self._secret(f"ovpn-{role}.crt", pki[f"{role}.crt"], (role,), wiped=False)),
                      "--key", str(self._secret(f"ovpn-{role}.key", pki[f"{role}.key"], (role,), wiped=False))]
               for role in both}
        return {
            "server": ["--tls-server", "--dh", "none", *own["server"], "--remote-cert-tls", "client", *common],
            "client": ["--tls-client", *own["client"], "--remote-cert-tls", "server", *common],
        }

    def _secret(self, name: str, content: str, roles: tuple[str, ...], wiped: bool = True) -> Path:
        """Write a file 0600 into the run directory of each host in roles; wiped there at down()
        (wiped=False: the caller registered its wipe already)."""
        path = self.ctx.resources.path(name)
        for role in roles:
            self._host(role).write_file(path, content, 0o600)
            # on the host that holds it, at down(): a remote copy goes then, not at disconnect
            if wiped:
                self.undo.defer(wipe, self._host(role), path)
        return path

    def _wait_ready(self) -> None:
        """Until every daemon (server, client of each pair in turn) says it is connected."""
        # a set-up's own bound (the setup kind's timeout) where one is given
        timeout = self.exchange_timeout or START_TIMEOUT + START_TIMEOUT_PER_TUNNEL * (self.params.tunnels - 1)
        deadline = time.monotonic() + timeout
        while True:
            logs = [proc.output() for proc in self.tunnel.procs]
            waiting = [index for index, log in enumerate(logs) if not is_ready(log, self.params.mode)]
            if not waiting:
                break
            for index, (proc, log) in enumerate(zip(self.tunnel.procs, logs)):
                if not proc.alive():
                    raise TechniqueError(f"openvpn ({('server', 'client')[index % 2]}"
                                         f"{f' of tunnel {index // 2 + 1}' if index > 1 else ''}) exited: {_tail(log)}")
            if time.monotonic() > deadline:
                late = waiting[0] | 1  # that pair's client says why
                raise TechniqueError(f"openvpn did not connect within {timeout:g} s"
                                     f"{f' ({len(waiting)} daemons not ready)' if self.params.tunnels > 1 else ''}: "
                                     f"{_tail(logs[late])}")
            time.sleep(0.05)
        self.tunnel.negotiated.update(parse_negotiated(logs[1]))
        if self.params.transport == "tcp":  # as each daemon's log confirms it (or not)
            self.tunnel.negotiated["tcp_nodelay"] = all(NODELAY_SET in log for log in logs)
        cipher = self.tunnel.negotiated.get("cipher")
        if cipher is not None and cipher.upper() != self.params.cipher:
            raise TechniqueError(f"openvpn negotiated {cipher}, not the asked {self.params.cipher}")

    def _check_data_path(self, backend: str) -> None:
        """Record whether the kernel carries the data channel (both devices are ovpn-dco links, as
        each host says) and fail a DCO bring-up that OpenVPN quietly moved to userspace."""
        # the first pair's devices: every pair runs the same arguments
        kinds = {role: link_kind(self._host(role), self._iface(role)) for role in ("server", "client")}
        self.tunnel.negotiated["dco"] = all(kind == DCO_LINK for kind in kinds.values())
        if backend == "dco" and not self.tunnel.negotiated["dco"]:
            why = [m.group(0).strip() for proc in self.tunnel.procs for m in DCO_DISABLED.finditer(proc.output())]
            raise TechniqueError(f"openvpn did not use DCO (devices: {', '.join(f'{r} {k}' for r, k in kinds.items())})"
                                 + (f": {why[0]}" if why else ""))
        if backend == "userspace" and self.tunnel.negotiated["dco"]:
            raise TechniqueError("openvpn used DCO despite --disable-dco")

    def evidence(self) -> dict[str, str]:
        """Both daemons' log tails (the first pair's: started server first, see up()) and the tun devices."""
        procs = self.tunnel.procs if self.tunnel else []
        pieces = [(f"{role}: openvpn log", lambda proc=proc: evidence.log_tail(proc))
                  for role, proc in zip(("server", "client"), procs)]
        pieces += [(f"{role}: ip addr (openvpn tun)", lambda role=role: evidence.command(
            self._host(role), ["ip", "-d", "addr", "show", "type", "tun"])) for role in ("client", "server")]
        return evidence.gather(pieces)


def link_kind(host, iface: str) -> str:
    """The kind of a link as its host's kernel reports it (`ip -d -j link`): "tun", "ovpn-dco", ..."""
    shown = json.loads(host.run(["ip", "-d", "-j", "link", "show", "dev", iface], timeout=10).stdout or "[]")
    return next((link.get("linkinfo", {}).get("info_kind", "") for link in shown), "")


def is_ready(log: str, mode: str) -> bool:
    """A daemon's log says it is connected and (TLS mode) which data channel cipher it uses."""
    return READY in log and (mode == "static" or DATA_CHANNEL in log)


def parse_negotiated(log: str) -> dict[str, str]:
    """What the client's log says the data and control channels really use."""
    found = {}
    data = re.search(re.escape(DATA_CHANNEL) + r"([^']+)'(?:, auth '([^']+)')?", log)
    if data:
        found["cipher"] = data.group(1)
        if data.group(2) and data.group(2) != "[null-digest]":
            found["auth"] = data.group(2)
    # static-key mode: "Data Channel Encrypt:" (OpenVPN 2.6.3), "Outgoing Static Key Encryption:" (2.6.14)
    static = re.search(r"(?:Data Channel Encrypt|Outgoing Static Key Encryption): Cipher '([^']+)'", log)
    if static and not data:
        found["cipher"] = static.group(1)
    auth = re.search(r"(?:Data Channel Encrypt|Outgoing Static Key Encryption): Using \d+ bit message hash '([^']+)'", log)
    if auth and not data:
        found["auth"] = auth.group(1)
    control = re.search(r"Control Channel: (TLSv[\d.]+), cipher \S+ ([^,\s]+)", log)
    if control:
        found["control_channel"] = f"{control.group(1)} {control.group(2)}"
    return found


def static_key_file() -> str:
    """An OpenVPN static key (2048 random bits, its own PEM-like format), made in memory."""
    hexed = secrets.token_bytes(256).hex()
    lines = [hexed[i:i + 32] for i in range(0, len(hexed), 32)]
    return "\n".join(["-----BEGIN OpenVPN Static key V1-----", *lines, "-----END OpenVPN Static key V1-----", ""])


def generate_pki(directory: Path) -> dict[str, str]:
    """CA, server and client certificates and the two leaf keys, as PEM text. The keys exist as
    files only in a fresh 0700 directory inside `directory` (this machine's run directory), for
    openssl to read, and are wiped before this returns: the CA key is never anywhere else."""
    pems: dict[str, str] = {}
    work = Path(tempfile.mkdtemp(prefix="ovpn-pki-", dir=directory))
    try:
        def key(name: str) -> Path:
            pems[name] = _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256")
            write_private(work / name, pems[name].encode())
            return work / name

        ca_key = key("ca.key")
        pems["ca.crt"] = _openssl("req", "-x509", "-new", "-key", str(ca_key), "-subj", "/CN=vpnbench throwaway CA",
                                  "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE",
                                  "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        write_private(work / "ca.crt", pems["ca.crt"].encode())
        for role, usage in (("server", "serverAuth"), ("client", "clientAuth")):
            csr = _openssl("req", "-new", "-key", str(key(f"{role}.key")), "-subj", f"/CN=vpnbench-{role}",
                           "-addext", "keyUsage=critical,digitalSignature,keyAgreement",
                           "-addext", f"extendedKeyUsage={usage}")
            pems[f"{role}.crt"] = _openssl("x509", "-req", "-CA", str(work / "ca.crt"), "-CAkey", str(ca_key),
                                           "-days", "2", "-set_serial", str(secrets.randbits(63)),
                                           "-copy_extensions", "copyall", stdin=csr)
    finally:
        wipe_here([work])  # nothing else is ever signed with the CA key
    del pems["ca.key"]
    return pems


def _openssl(*args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(["openssl", *args], input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        raise TechniqueError(f"openssl {args[0]} failed: {proc.stderr.strip().splitlines()[-1:]}")
    return proc.stdout


def _tail(log: str, lines: int = 5) -> str:
    return " | ".join(log.strip().splitlines()[-lines:]) or "no output"
