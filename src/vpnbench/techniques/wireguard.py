"""WireGuard: the kernel module where the kernel has it, wireguard-go otherwise; or the
implementation asked for (kernel, wireguard-go, boringtun) at the version asked for.

Every implementation is configured the same way, with `wg set` (the kernel through netlink, the
userspace daemons through their control socket). A userspace daemon's control socket lives at
/var/run/wireguard/<iface>.sock, a path that is not per namespace, so every interface gets a
machine-wide unique name from the run id.
"""

import dataclasses
import json
import subprocess
import time
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from vpnbench import builds, evidence
from vpnbench.errors import TechniqueError
from vpnbench.hosts.base import stop_all
from vpnbench.overhead import IP_HEADER, Expectation, expectation_of, wireguard_outer
from vpnbench.params import Family, TechniqueParams
from vpnbench.safe_files import wipe
from vpnbench.probe import KernelProbe
from vpnbench.techniques.base import BackendStatus, Technique, TechniqueContext, Tunnel
from vpnbench.tools import missing_tool_reason

INNER = {
    "client": {"ipv4": "10.99.0.1", "ipv6": "fd99::1"},
    "server": {"ipv4": "10.99.0.2", "ipv6": "fd99::2"},
}


@dataclasses.dataclass(frozen=True)
class Userspace:
    """A userspace implementation: its program (built by vpnbench, builds.RECIPES, or Debian's),
    the words that keep it in the foreground (so vpnbench holds it and stops it), its environment."""

    program: str
    foreground: tuple[str, ...]
    env: dict[str, str] = dataclasses.field(default_factory=dict)


USERSPACE = {
    "wireguard-go": Userspace("wireguard-go", ("-f",), {"WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD": "1"}),
    # As root and without sudo it would try to drop to the login user, which a daemon has none of.
    "boringtun": Userspace("boringtun-cli", ("--foreground", "--disable-drop-privileges")),
}
USERSPACE_NAMES = ", ".join(f"{name!r}" for name in USERSPACE)
START_TIMEOUT = 5.0  # s for a userspace daemon to answer on its control socket (it takes ~10-20 ms)


class WireGuardParams(TechniqueParams):
    kind: Literal["wireguard"] = "wireguard"
    # The data path: "userspace" is wireguard-go unless implementation names boringtun. When both
    # are given they must agree (backend = "kernel" with implementation = "boringtun" is refused).
    backend: Literal["auto", "kernel", "userspace"] = "auto"
    # auto: kernel where the kernel has WireGuard, else wireguard-go (as backend = "auto" always did)
    implementation: Literal["auto", "kernel", "wireguard-go", "boringtun"] = "auto"
    # The build of a userspace implementation (builds.RECIPES): unset, Debian's wireguard-go or the
    # pinned boringtun; "debian" for Debian's package; any other a build under /opt/vpnbench.
    version: str | None = Field(None, validate_default=True)  # filled for a userspace implementation named
    psk: bool = False  # pre-shared key on top of Curve25519: WireGuard's post-quantum hardening
    family: Family = "ipv4"  # underlay family of the outer UDP packets
    port: int = Field(51820, ge=1, le=65535)
    mtu: int = Field(1420, ge=1280, le=9000)
    # Persistent keepalive on both peers (seconds; unset: none, WireGuard's default). It also sends
    # one at once when set, so a restarted server greets its peer instead of waiting for it.
    keepalive: int | None = Field(None, ge=1, le=65535)

    def settings(self) -> dict:
        """Without an unset keepalive: cells stored before it existed had none, and stay equal."""
        settings = super().settings()
        if settings.get("keepalive") is None:
            settings.pop("keepalive", None)
        return settings

    # Field validators run in declaration order, so the fields they look at are already in info.data.
    @field_validator("implementation")
    @classmethod
    def _agrees_with_backend(cls, implementation: str, info: ValidationInfo) -> str:
        backend = info.data.get("backend", "auto")
        path = None if implementation == "auto" else "kernel" if implementation == "kernel" else "userspace"
        if backend != "auto" and path not in (None, backend):
            raise ValueError(f"{implementation!r} contradicts backend = {backend!r}; allowed values with it: "
                             + ("'auto', 'kernel'" if backend == "kernel" else f"'auto', {USERSPACE_NAMES}"))
        return implementation

    @field_validator("version")
    @classmethod
    def _names_a_build(cls, version: str | None, info: ValidationInfo) -> str | None:
        asked = info.data.get("implementation", "auto")
        if version is None:
            # A userspace implementation named: the version it runs, stored as run (Debian's
            # wireguard-go, the pinned boringtun); auto and kernel choose none.
            return version_of(asked, None) if asked in USERSPACE else None
        implementation = userspace_implementation(asked, info.data.get("backend", "auto"))
        if implementation is None:
            why = ("the kernel's own WireGuard has no version to choose" if asked == "kernel"
                   else "it names a build of a userspace implementation")
            raise ValueError(f"not allowed with implementation = {asked!r} ({why}); "
                             f"set implementation to one of {USERSPACE_NAMES}")
        builds.recipe(implementation).check_version(version)  # its ValueError is the one line
        return version

    def implementation_for(self, backend: str) -> str:
        """The implementation a bring-up on this data path runs."""
        return "kernel" if backend == "kernel" else userspace_implementation(self.implementation, "userspace")


def userspace_implementation(implementation: str, backend: str) -> str | None:
    """The userspace implementation these settings name (backend = "userspace" always meant
    wireguard-go), or None where they name the kernel or leave the choice to the machine."""
    if implementation in USERSPACE:
        return implementation
    return "wireguard-go" if implementation == "auto" and backend == "userspace" else None


class WireGuard(Technique):
    kind = "wireguard"
    packages = {"wg": "wireguard-tools", "wireguard-go": "wireguard-go"}
    Params = WireGuardParams
    description = "WireGuard (ChaCha20-Poly1305, Curve25519): the kernel's, wireguard-go or boringtun"
    versions = {
        "wireguard_go": "wireguard-go --version 2>&1 | head -1",
        "wireguard_tools": "wg --version 2>&1 | head -1",
        "wireguard_module": "cat /sys/module/wireguard/version 2>/dev/null || modinfo -F version wireguard 2>/dev/null",
    }
    # doctor's rows beside kernel and userspace (Debian's wireguard-go): the pinned builds
    PINNED = {name: f"{name}@{builds.recipe(name).default}" for name in USERSPACE}
    kernel_features = {"kernel": "wireguard link type (CONFIG_WIREGUARD)", "userspace": "TUN (/dev/net/tun)",
                       **{row: "TUN (/dev/net/tun)" for row in PINNED.values()}}

    @classmethod
    def kernel_rows(cls, probe: KernelProbe) -> dict[str, bool]:
        return {"wireguard": probe.has_link_type("wireguard")}

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        family = settings.get("family", "ipv4")
        return expectation_of(lambda n: wireguard_outer(n, family), underlay_mtu, settings.get("mtu"), False,
                              f"WireGuard over {family}: IP {IP_HEADER[family]} + UDP 8 + header 16 + tag 16")

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        """kernel, userspace (wireguard-go as a campaign without a version gets it: Debian's) and
        each userspace implementation's pinned build (name@version, as `doctor --install` takes it)."""
        rows = [("kernel", "kernel", None), ("userspace", "wireguard-go", None)]
        rows += [(row, name, builds.recipe(name).default) for name, row in cls.PINNED.items()]
        return [BackendStatus(row, *implementation_status(name, version, probe)) for row, name, version in rows]

    @classmethod
    def resolve_backend(cls, params: WireGuardParams, probe: KernelProbe) -> str:
        """kernel or userspace: the first of the implementations these params allow that the
        hosts have (auto: the kernel's, else wireguard-go); a reason for each when none."""
        if params.implementation != "auto":
            candidates = [params.implementation]
        else:
            candidates = {"kernel": ["kernel"], "userspace": ["wireguard-go"]}.get(params.backend, ["kernel", "wireguard-go"])
        reasons = []
        for implementation in candidates:
            available, reason = implementation_status(implementation, params.version, probe)
            if available:
                return "kernel" if implementation == "kernel" else "userspace"
            reasons.append(f"{implementation}: {reason}")
        if len(candidates) > 1:
            raise ValueError(f"no backend available ({'; '.join(reasons)})")
        field, value = (("implementation", params.implementation) if params.implementation != "auto"
                        else ("backend", params.backend))
        raise ValueError(f"{field} {value!r} is not available: {reason}")

    def __init__(self, params: WireGuardParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.ifaces: dict[str, str] = {}  # role -> its interface, named at up()
        self.peer_args: dict[str, list[str]] = {}  # role -> `wg set` words of its peer (rekey() re-adds it)
        self.own_args: dict[str, list[str]] = {}  # role -> `wg set` words of its own port and key (restart_server)
        self.implementation = "kernel"  # what up() runs: kernel, wireguard-go or boringtun
        self._ran: dict | None = None  # implementation, version, build: read on the client at the first up()

    def up(self, backend: str) -> Tunnel:
        p = self.params
        res = self.ctx.resources
        self.implementation = p.implementation_for(backend)
        self.ifaces = {"client": res.iface_name("c"), "server": res.iface_name("s")}
        self.peer_args = {}
        keys = {role: self._keypair(role) for role in ("client", "server")}
        psk_file = self._secret_file(("client", "server"), "wg.psk", _wg("genpsk")) if p.psk else None
        self._ran = self._ran or self._what_runs()
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs=dict(INNER["server"]),
            client_addrs=dict(INNER["client"]),
            protection="encrypted",
            wire_filter=f"udp port {p.port}",
            wire_protocol="WireGuard",
            negotiated={"cipher": "chacha20poly1305", "key_exchange": "x25519",
                        "psk": p.psk, "underlay_family": p.family, "mtu": p.mtu,
                        "persistent_keepalive": p.keepalive or "off", **self._ran},
        )
        # the userspace daemons, stopped together (wireguard-go takes ~28 ms to exit): those started so far
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))
        for role, peer in (("server", "client"), ("client", "server")):
            host = self._host(role)
            iface = self.ifaces[role]
            self._create_interface(host, iface)
            endpoint = self.ctx.underlay[peer][p.family]
            endpoint = f"[{endpoint}]:{p.port}" if p.family == "ipv6" else f"{endpoint}:{p.port}"
            peer_args = ["peer", keys[peer][1]] + (["preshared-key", str(psk_file)] if psk_file else [])
            peer_args += ["endpoint", endpoint, "allowed-ips", f"{INNER[peer]['ipv4']}/32,{INNER[peer]['ipv6']}/128"]
            peer_args += ["persistent-keepalive", str(p.keepalive)] if p.keepalive else []
            self.peer_args[role] = peer_args
            self.own_args[role] = ["listen-port", str(p.port), "private-key", str(keys[role][0])]
            self._configure(role)
        return self.tunnel

    def _configure(self, role: str) -> None:
        """Its port, key and peer on one end's interface, the inner addresses, the link up."""
        host, iface = self._host(role), self.ifaces[role]
        host.run(["wg", "set", iface, *self.own_args[role], *self.peer_args[role]])
        # One `ip` for the three (each command is a process, and over ssh a round trip).
        host.run(["ip", "-batch", "-"], input=f"addr add {INNER[role]['ipv4']}/24 dev {iface}\n"
                                              f"addr add {INNER[role]['ipv6']}/64 dev {iface} nodad\n"
                                              f"link set {iface} mtu {self.params.mtu} up\n")

    @classmethod
    def cannot_restart_server(cls, params: WireGuardParams) -> str | None:
        if userspace_implementation(params.implementation, params.backend) is None:
            return ("wireguard: the kernel's WireGuard has no daemon to kill (and auto may choose it); "
                    f"set implementation to one of {USERSPACE_NAMES}")
        return None

    def restart_server(self) -> dict:
        """The server's userspace daemon killed (its interface goes with it) and started again with
        the same key, port and peer: it has lost its sessions, as after a crash. The client is left
        alone; it gets a new session when it (or, with keepalive, the server) starts a handshake."""
        if self.tunnel is None or self.implementation == "kernel":
            raise TechniqueError("wireguard: no userspace server daemon to restart")
        old = self.tunnel.procs[0]  # the server's, started first (up())
        old.stop(1)
        self.tunnel.procs.remove(old)
        self._create_interface(self.ctx.server, self.ifaces["server"])
        self.tunnel.procs.insert(0, self.tunnel.procs.pop())  # the server's first again (evidence)
        self._configure("server")
        return {"how": f"{self.implementation} on the server stopped and started again, configured as before",
                "persistent_keepalive": self.params.keepalive or "off"}

    @classmethod
    def cannot_rekey(cls, params: WireGuardParams) -> str | None:
        return None

    def rekey(self, timeout: float = 10.0) -> dict:
        """WireGuard renews its session keys on its own every 2 minutes and has no command to do
        it now; removing the peer on the client and adding it back drops the session, so the next
        packet starts a new handshake. Unlike the timed rekey (the old session carries traffic
        until the new one is ready) packets in between are refused: an upper bound of the cost."""
        if self.tunnel is None:
            raise TechniqueError("wireguard: not up")
        host, iface, peer_args = self.ctx.client, self.ifaces["client"], self.peer_args["client"]
        before = latest_handshake(host, iface)
        host.run(["wg", "set", iface, "peer", peer_args[1], "remove"])
        host.run(["wg", "set", iface, *peer_args])
        deadline = time.monotonic() + timeout
        while (after := latest_handshake(host, iface)) == 0:  # a re-added peer has had none yet
            if time.monotonic() > deadline:
                raise TechniqueError(f"rekey: no new WireGuard handshake within {timeout:g} s of re-adding the peer")
            time.sleep(0.05)
        return {"how": "wg set peer remove + re-add on the client (forces a new handshake)",
                "handshake_before": before, "handshake_after": after}

    def _keypair(self, role: str):
        private = _wg("genkey")
        public = _wg("pubkey", stdin=private).strip()
        return self._secret_file((role,), f"wg-{role}.key", private), public

    def _host(self, role: str):
        return self.ctx.client if role == "client" else self.ctx.server

    def _secret_file(self, roles: tuple[str, ...], name: str, content: str):
        """Write key material 0600 on the hosts that need it; it is wiped at down()."""
        path = self.ctx.resources.path(name)
        for role in roles:
            self._host(role).write_file(path, content, 0o600)
            self.undo.defer(wipe, self._host(role), path)  # on the host that holds it, at down()
        return path

    def _what_runs(self) -> dict:
        """What this bring-up's implementation is, read on the client (the server runs the same
        build, checked by the probe): the kernel's release, or the build's record (BUILD.json, or
        Debian's package) and its exact version."""
        host = self.ctx.client
        if self.implementation == "kernel":
            return {"implementation": "kernel", "version": host.run(["uname", "-r"], timeout=10).stdout.strip()}
        name = self.implementation
        version = version_of(name, self.params.version)
        result = host.run(builds.record_command(name, version), timeout=10, check=False)
        try:
            build = json.loads(result.stdout) if result.ok else None
        except ValueError:
            build = None
        if not isinstance(build, dict) or not build.get("version"):
            # no record (a program not installed by dpkg, say): what the program itself says
            program = builds.program(name, USERSPACE[name].program, version)
            said = host.run([program, "--version"], timeout=10, check=False).stdout.strip().splitlines()
            return {"implementation": name, "version": said[0] if said else version,
                    "build": None}
        return {"implementation": name, "version": build["version"], "build": build}

    def _create_interface(self, host, iface: str) -> None:
        if self.implementation == "kernel":
            host.run(["ip", "link", "add", iface, "type", "wireguard"])
            self.undo.defer(host.run, ["ip", "link", "del", iface], check=False)
            return
        daemon = USERSPACE[self.implementation]
        program = builds.program(self.implementation, daemon.program, version_of(self.implementation, self.params.version))
        for attempt in (1, 2):
            # Its control socket's directory: made here too, since once in a long test session
            # wireguard-go found it missing between its own mkdir and listen ("Failed to listen on
            # uapi socket: no such file or directory"); that one case is tried a second time.
            host.run(["mkdir", "-p", "/var/run/wireguard"], check=False)
            proc = host.spawn([program, *daemon.foreground, iface], name=self.implementation, env=daemon.env)
            self.tunnel.procs.append(proc)
            started = time.monotonic()
            while host.run(["wg", "show", iface], check=False).returncode != 0:
                if not proc.alive() or time.monotonic() > started + START_TIMEOUT:
                    if attempt == 1 and "uapi socket" in proc.output() and not proc.alive():
                        self.tunnel.procs.remove(proc)  # gone for a known reason: not a death to report
                        break
                    how = (f"exited with {proc.wait(0)}" if not proc.alive()
                           else f"`wg show` found no control socket within {START_TIMEOUT:g} s")
                    raise TechniqueError(f"{self.implementation} did not start ({how}): {proc.output().strip()[-300:]}")
                time.sleep(0.01)  # it listens ~10-20 ms after its start; every 50 ms cost two bring-up ~0.1 s
            else:
                return

    def evidence(self) -> dict[str, str]:
        """`wg show` (private and pre-shared keys print as "(hidden)") and the userspace daemon's log."""
        pieces = [(f"{role}: wg show", lambda role=role, iface=iface: evidence.command(self._host(role), ["wg", "show", iface]))
                  for role, iface in self.ifaces.items()]
        procs = self.tunnel.procs if self.tunnel else []  # the daemons, started server first (up())
        pieces += [(f"{role}: {self.implementation} log", lambda proc=proc: evidence.log_tail(proc))
                   for role, proc in zip(("server", "client"), procs)]
        return evidence.gather(pieces)


def version_of(implementation: str, version: str | None) -> str:
    """The version of a userspace implementation a campaign's `version` means: its own; with none,
    Debian's wireguard-go (what ran before versions could be chosen, so results stay comparable and
    `make demo` builds nothing), else the pinned build (boringtun has no Debian package)."""
    if version is None and builds.recipe(implementation).debian_package:
        return builds.DEBIAN
    return builds.resolve(implementation, version)


def implementation_status(implementation: str, version: str | None, probe: KernelProbe) -> tuple[bool, str]:
    """Can the hosts that run WireGuard run this implementation at this version: (True, "") or
    (False, why and the command that fixes it). Asked of the probe, so of those hosts."""
    if not probe.has_command("wg"):
        return False, missing_tool_reason("wg")
    if implementation == "kernel":
        kernel = probe.has_link_type("wireguard")
        return kernel, "" if kernel else "kernel lacks WireGuard (no wireguard module)"
    version = version_of(implementation, version)
    program = builds.program(implementation, USERSPACE[implementation].program, version)
    if version == builds.DEBIAN:  # a plain name, on the hosts' PATH
        lacking = None if probe.has_command(program) else "a host"
    else:
        lacking = probe.host_lacking(program)
    return lacking is None, "" if lacking is None else builds.missing_reason(implementation, version, lacking)


def latest_handshake(host, iface: str) -> int:
    """The peer's last handshake (Unix seconds, 0 for never) from `wg show IFACE latest-handshakes`."""
    fields = host.run(["wg", "show", iface, "latest-handshakes"], timeout=5).stdout.split()
    return int(fields[1]) if len(fields) >= 2 and fields[1].isdigit() else 0


def _wg(command: str, stdin: str | None = None) -> str:
    """wg genkey/genpsk/pubkey on the controller; key material goes through pipes, never argv."""
    proc = subprocess.run(["wg", command], input=stdin, capture_output=True, text=True, check=True)
    return proc.stdout
