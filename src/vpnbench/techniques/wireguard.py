"""WireGuard: the kernel module where the kernel has it, wireguard-go otherwise; or the
implementation asked for (kernel, wireguard-go, boringtun) at the version asked for.

Every implementation is configured the same way, with `wg set` (the kernel through netlink, the
userspace daemons through their control socket). A userspace daemon's control socket lives at
/var/run/wireguard/<iface>.sock, a path that is not per namespace, so every interface gets a
machine-wide unique name from the run id. That directory stays root's (SOCKET_DIR): whoever
owns it can swap a socket and receive the private_key= lines `wg set` sends.
"""

import base64
import dataclasses
import json
import secrets
import shlex
import time
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat
from pydantic import Field, ValidationInfo, field_validator

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Family, TechniqueParams
from vpnbench.foundation.safe_files import UnsafePath, make_dir, path_facts, wipe
from vpnbench.foundation.tools import missing_tool_reason
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import stop_all
from vpnbench.techniques.base import BackendStatus, Cleanup, Ends, Technique, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import IP_HEADER, Expectation, expectation_of, wireguard_outer
from vpnbench.testbeds.probe import KernelProbe

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
    # LOG_LEVEL=verbose: its log then names each handshake message (a line per handshake, none per
    # packet), so handshake_attempts() counts the initiations a set-up took.
    "wireguard-go": Userspace("wireguard-go", ("-f",), {"WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD": "1",
                                                        "LOG_LEVEL": "verbose"}),
    # As root and without sudo it would try to drop to the login user, which a daemon has none of.
    "boringtun": Userspace("boringtun-cli", ("--foreground", "--disable-drop-privileges")),
}
# tunnels = N: the most one bring-up holds, per implementation, and why (bench/scale.py measures
# them: bench/RESULTS.md; about 5 MB resident per wireguard-go daemon).
TUNNEL_CEILINGS = {
    "kernel": (10_000, "one kernel device per client tunnel, one peer each on the server's; the axis's own "
                       "limit (not measured on a machine without kernel WireGuard)"),
    "wireguard-go": (100, "one wireguard-go process per client tunnel, each holding an inotify instance on its "
                          "control socket, and Linux allows root 128 (fs.inotify.max_user_instances) for every "
                          "process of the machine together: past ~120 daemons fail to start"),
    "boringtun": (100, "one boringtun process per client tunnel, as wireguard-go's (not measured past 100)"),
}
USERSPACE_NAMES = ", ".join(f"{name!r}" for name in USERSPACE)
INITIATION_SENT = "Sending handshake initiation"  # wireguard-go's verbose log, per initiation sent
START_TIMEOUT = 5.0  # s for a userspace daemon to answer on its control socket (it takes ~10-20 ms)
# s a batch command may take per tunnel beyond its 30: deleting 1000 kernel devices took over 30 s
# in the QEMU VM under TCG (an emulated CPU)
BATCH_S_PER_TUNNEL = 0.2


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
        self.client_setconf = ""  # tunnels > 1: the shell lines that configure every client interface
        self.client_ifaces: list[str] = []  # tunnels > 1: every client interface, tunnel 1's first
        self._ran: dict | None = None  # implementation, version, build: read on the client at the first up()

    def up(self, backend: str) -> Tunnel:
        p = self.params
        res = self.ctx.resources
        self.implementation = p.implementation_for(backend)
        self.ifaces = {"client": res.iface_name("c"), "server": res.iface_name("s")}
        self.peer_args = {}
        self.client_setconf = ""
        self._ran = self._ran or self._what_runs()
        if p.tunnels > 1:
            return self._up_many(backend)
        keys = {role: self._keypair(role) for role in ("client", "server")}
        psk_file = self._secret_file(("client", "server"), "wg.psk", _psk()) if p.psk else None
        self.tunnel = self._new_tunnel(backend)
        # the userspace daemons, stopped together (wireguard-go takes ~28 ms to exit): those started so far
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))
        if self.implementation != "kernel":
            for role in ("server", "client"):
                make_socket_dir(self._host(role), self.undo)  # refused before any daemon starts, unless root's alone
        for role, peer in (("server", "client"), ("client", "server")):
            self._create_interface(self._host(role), self.ifaces[role])
            peer_args = ["peer", keys[peer][1]] + (["preshared-key", str(psk_file)] if psk_file else [])
            peer_args += ["endpoint", self._endpoint(peer),
                          "allowed-ips", f"{INNER[peer]['ipv4']}/32,{INNER[peer]['ipv6']}/128"]
            peer_args += ["persistent-keepalive", str(p.keepalive)] if p.keepalive else []
            self.peer_args[role] = peer_args
            self.own_args[role] = ["listen-port", str(p.port), "private-key", str(keys[role][0])]
            self._configure(role)
        return self.tunnel

    def _new_tunnel(self, backend: str) -> Tunnel:
        p = self.params
        return Tunnel(
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

    def _endpoint(self, peer: str) -> str:
        """The peer's underlay address and WireGuard's port, as `wg` writes an endpoint."""
        address = self.ctx.underlay[peer][self.params.family]
        return f"[{address}]:{self.params.port}" if self.params.family == "ipv6" else f"{address}:{self.params.port}"

    def _up_many(self, backend: str) -> Tunnel:
        """tunnels = N: N WireGuard sessions between the two hosts. A WireGuard interface has one
        private key and knows a peer by its public key, so N sessions need N keys on one side:
        the server has one interface with N peers (a server with N clients), the client N
        interfaces (kernel: N devices; userspace: N daemons), each with its own key and its own
        inner addresses (FIRST_ENDS.nth). Configured in batches: one `wg setconf` file per interface,
        one shell per host running all of them, one `ip -batch` per host for every address."""
        p, res = self.params, self.ctx.resources
        count = p.tunnels
        ends = [FIRST_ENDS.nth(index) for index in range(count)]
        client_ifaces = [res.iface_name(f"c{index}") for index in range(count)]
        self.ifaces = {"client": client_ifaces[0], "server": self.ifaces["server"]}
        self.client_ifaces = client_ifaces
        self.tunnel = self._new_tunnel(backend)
        self.tunnel.more = ends[1:]
        self.tunnel.negotiated["tunnels"] = count
        server_key, client_keys = _x25519_keypair(), [_x25519_keypair() for _ in ends]
        psks = [_psk() if p.psk else None for _ in ends]
        dirs = {role: self._private_dir(role) for role in ("server", "client")}
        server_conf = [f"[Interface]\nPrivateKey = {server_key[0]}\nListenPort = {p.port}\n"]
        server_conf += [_peer_section(public, psk, end.client) for (_, public), psk, end in zip(client_keys, psks, ends)]
        client_confs = [f"[Interface]\nPrivateKey = {private}\n"
                        + _peer_section(server_key[1], psk, end.server, self._endpoint("server"), p.keepalive)
                        for (private, _), psk, end in zip(client_keys, psks, ends)]
        self.ctx.server.write_file(dirs["server"] / "wg.conf", "".join(server_conf), 0o600)
        for index, conf in enumerate(client_confs):
            self.ctx.client.write_file(dirs["client"] / f"wg{index}.conf", conf, 0o600)
        if p.psk:  # rekey() re-adds tunnel 0's peer with `wg set`, which takes the key from a file
            self.ctx.client.write_file(dirs["client"] / "psk0", psks[0], 0o600)
        first = ends[0].server
        self.peer_args["client"] = (["peer", server_key[1]]
                                    + (["preshared-key", str(dirs["client"] / "psk0")] if p.psk else [])
                                    + ["endpoint", self._endpoint("server"),
                                       "allowed-ips", f"{first['ipv4']}/32,{first['ipv6']}/128"])
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))
        server_iface = self.ifaces["server"]
        self._create_interfaces(self.ctx.server, [server_iface])
        self._create_interfaces(self.ctx.client, client_ifaces)
        self.ctx.server.run(["wg", "setconf", server_iface, str(dirs["server"] / "wg.conf")])
        script = "".join(f"wg setconf {iface} {dirs['client'] / f'wg{index}.conf'}\n"
                         for index, iface in enumerate(client_ifaces))
        self.ctx.client.run(["sh", "-e", "-s"], input=script, timeout=30 + count * BATCH_S_PER_TUNNEL)
        self.client_setconf = script  # rekey() runs it again: every client's peer replaced, its session dropped
        # The server's first addresses carry the routes back to every client (the /16 and the /64).
        server_lines = [f"addr add {first['ipv4']}/16 dev {server_iface}",
                        f"addr add {first['ipv6']}/64 dev {server_iface} nodad"]
        server_lines += [line for end in ends[1:] for line in (f"addr add {end.server['ipv4']}/32 dev {server_iface}",
                                                               f"addr add {end.server['ipv6']}/128 dev {server_iface} nodad")]
        # Up before the addresses: an IPv6 address added to a device that is down loses its peer
        # route when the device comes up (seen: fd99::2 unreachable, its route missing).
        client_lines = [line for end, iface in zip(ends, client_ifaces) for line in (
            f"link set {iface} mtu {p.mtu} up",
            f"addr add {end.client['ipv4']}/32 peer {end.server['ipv4']}/32 dev {iface}",
            f"addr add {end.client['ipv6']}/128 peer {end.server['ipv6']}/128 dev {iface} nodad")]
        for host, lines in ((self.ctx.server, [f"link set {server_iface} mtu {p.mtu} up", *server_lines]),
                            (self.ctx.client, client_lines)):
            host.run(["ip", "-batch", "-"], input="\n".join(lines) + "\n", timeout=30 + count * BATCH_S_PER_TUNNEL)
        return self.tunnel

    def _private_dir(self, role: str):
        """A directory of this bring-up's keys and configurations on one host (0700, root's),
        wiped (files overwritten, then removed) at down()."""
        host = self._host(role)
        path = make_dir(host, self.ctx.resources.path(f"wg-{role}-tunnels"))
        self.undo.defer(wipe, host, path)
        return path

    def _create_interfaces(self, host, ifaces: list[str]) -> None:
        """Many interfaces at once: the kernel's in one `ip -batch`; userspace daemons all started,
        then waited for together (one read of the listening sockets per poll, not one wait per daemon)."""
        if self.implementation == "kernel":
            # the undo first: a batch that fails midway has made some; -force deletes those there are
            timeout = 30 + BATCH_S_PER_TUNNEL * len(ifaces)
            self.undo.defer(host.run, ["ip", "-force", "-batch", "-"], check=False, timeout=timeout,
                            input="".join(f"link del {iface}\n" for iface in ifaces))
            host.run(["ip", "-batch", "-"], input="".join(f"link add {iface} type wireguard\n" for iface in ifaces),
                     timeout=timeout)
            return
        make_socket_dir(host, self.undo)
        if len(ifaces) == 1:
            self._create_interface(host, ifaces[0])
            return
        daemon = USERSPACE[self.implementation]
        program = builds.program(self.implementation, daemon.program, version_of(self.implementation, self.params.version))
        procs = {iface: host.spawn([program, *daemon.foreground, iface], name=self.implementation, env=daemon.env)
                 for iface in ifaces}
        self.tunnel.procs.extend(procs.values())
        retried: set[str] = set()
        wait = START_TIMEOUT + 0.02 * len(ifaces)  # each takes ~10-20 ms to listen; two cores start them
        deadline = time.monotonic() + wait
        while missing := set(ifaces) - listening_control_sockets(host):
            dead = [iface for iface, proc in procs.items() if not proc.alive()]
            for iface in [iface for iface in dead if iface not in retried and "uapi socket" in procs[iface].output()]:
                # "Failed to listen on uapi socket" (see _create_interface): started once more
                retried.add(iface)
                dead.remove(iface)
                self.tunnel.procs.remove(procs[iface])
                procs[iface] = host.spawn([program, *daemon.foreground, iface], name=self.implementation, env=daemon.env)
                self.tunnel.procs.append(procs[iface])
            if dead or time.monotonic() > deadline:
                how = (f"{len(dead)} exited: {procs[dead[0]].output().strip()[-300:]}" if dead
                       else f"{len(missing)} had no control socket within {wait:g} s")
                raise TechniqueError(f"{self.implementation}: {len(ifaces)} daemons started, {how}")
            time.sleep(0.05)
        reclaim_socket_dir(host, ifaces)

    @classmethod
    def tunnel_ceiling(cls, params: WireGuardParams) -> tuple[int, str]:
        """Per implementation (TUNNEL_CEILINGS); auto may run wireguard-go, so it has its ceiling."""
        implementation = params.implementation
        if implementation == "auto":
            implementation = "kernel" if params.backend == "kernel" else "wireguard-go"
        ceiling, reason = TUNNEL_CEILINGS[implementation]
        if implementation != params.implementation:
            reason += f" (implementation = \"auto\" may run {implementation})"
        return ceiling, f"{implementation}: {reason}"

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
        if params.tunnels > 1:
            return "wireguard: vpnbench restarts the server of one tunnel (tunnels = 1) only"
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
        if self.client_setconf:
            return self._rekey_every_tunnel(timeout)
        host, iface, peer_args = self.ctx.client, self.ifaces["client"], self.peer_args["client"]
        before = latest_handshake(host, iface)
        host.run(["sh", "-e", "-s"], input=shlex.join(["wg", "set", iface, "peer", peer_args[1], "remove"]) + "\n"
                 + shlex.join(["wg", "set", iface, *peer_args]) + "\n" + self._ping_every_tunnel())
        deadline = time.monotonic() + timeout
        while (after := latest_handshake(host, iface)) == 0:  # a re-added peer has had none yet
            if time.monotonic() > deadline:
                raise TechniqueError(f"rekey: no new WireGuard handshake within {timeout:g} s of re-adding the peer")
            time.sleep(0.05)
        return {"how": "wg set peer remove + re-add on the client, then a ping through it (a new handshake)",
                "handshake_before": before, "handshake_after": after, "tunnels_rekeyed": 1}

    def _rekey_every_tunnel(self, timeout: float) -> dict:
        """tunnels > 1: every client interface configured again (`wg setconf` replaces its peer, so
        its session is gone), one ping through each (a handshake starts only with a tunnel's next
        packet, and a measurement's flow may cross the first tunnel alone), then a wait until each
        has a new handshake."""
        count = self.params.tunnels
        host = self.ctx.client
        host.run(["sh", "-e", "-s"], input=self.client_setconf + self._ping_every_tunnel(),
                 timeout=30 + count * BATCH_S_PER_TUNNEL)
        deadline = time.monotonic() + timeout + count * BATCH_S_PER_TUNNEL
        waiting = set(self.client_ifaces)
        while waiting := waiting - handshaken(host, sorted(waiting)):
            if time.monotonic() > deadline:
                raise TechniqueError(f"rekey: {len(waiting)} of {count} tunnels had no new WireGuard handshake within "
                                     f"{timeout:g} s of re-adding their peers")
            time.sleep(0.05)
        return {"how": "wg setconf again on every client interface, then one ping through each (a new handshake each)",
                "tunnels_rekeyed": count}

    def _ping_every_tunnel(self) -> str:
        """Shell lines sending one ping through each tunnel: a re-added peer starts its handshake
        only with its next packet, and a measurement's flow may not cross every tunnel (or any, as
        rekey_rate's probe between its rounds). All at once in the background; the shell waits for
        them (each ends at its reply, which follows the handshake, or after 2 s): none outlives
        the rekey."""
        servers = " ".join(ends.server["ipv4"] for ends in self.tunnel.every())
        return f'for a in {servers}; do ping -c 1 -W 2 -q "$a" >/dev/null 2>&1 & done\nwait\n'

    def _keypair(self, role: str):
        private, public = _x25519_keypair()
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

    def _create_interface(self, host, iface: str, reclaim: bool = True):
        """One interface; a userspace daemon waited for until its control socket answers, then the
        socket directory reclaimed (reclaim=False: the caller does it once when every daemon of a
        mesh listens, since one boringtun's chown may come between another's reclaim and its use).
        Returns the userspace daemon's process (None for the kernel's)."""
        if self.implementation == "kernel":
            host.run(["ip", "link", "add", iface, "type", "wireguard"])
            self.undo.defer(host.run, ["ip", "link", "del", iface], check=False)
            return None
        daemon = USERSPACE[self.implementation]
        program = builds.program(self.implementation, daemon.program, version_of(self.implementation, self.params.version))
        for attempt in (1, 2):
            # Its control socket's directory made here too (a caller that skipped make_socket_dir).
            # The caller checked it was root's alone (make_socket_dir, whose undo gives it back) before
            # the first daemon: not checked here, where a mesh's boringtun in another thread may have
            # just chowned it. "Failed to listen on uapi socket: no such file or directory" is
            # wireguard-go finding its socket gone between its bind and its inotify watch: a `wg` run
            # elsewhere (`wg show interfaces` or `all` connects to every socket there and unlinks one
            # that refuses, as a socket bound but not yet listening does): that case is tried again.
            host.run(["mkdir", "-m", "700", "--", SOCKET_DIR], check=False)
            proc = host.spawn([program, *daemon.foreground, iface], name=self.implementation, env=daemon.env)
            self.tunnel.procs.append(proc)
            started = time.monotonic()
            while iface not in listening_control_sockets(host):
                if not proc.alive() or time.monotonic() > started + START_TIMEOUT:
                    if attempt == 1 and "uapi socket" in proc.output() and not proc.alive():
                        self.tunnel.procs.remove(proc)  # gone for a known reason: not a death to report
                        break
                    how = (f"exited with {proc.wait(0)}" if not proc.alive()
                           else f"no control socket listened within {START_TIMEOUT:g} s")
                    raise TechniqueError(f"{self.implementation} did not start ({how}): {proc.output().strip()[-300:]}")
                time.sleep(0.01)  # it listens ~10-20 ms after its start; every 50 ms cost two bring-up ~0.1 s
            else:
                if reclaim:
                    reclaim_socket_dir(host, [iface])
                return proc

    def handshake_attempts(self) -> dict[str, int]:
        """wireguard-go: the handshake initiations both ends sent (its verbose log's "Sending
        handshake initiation", the first and every retry 5 s on); the kernel's and boringtun's
        logs say nothing of them here."""
        if self.implementation != "wireguard-go" or self.tunnel is None:
            return {}
        return {"handshake_initiations": sum(proc.output().count(INITIATION_SENT) for proc in self.tunnel.procs)}

    def evidence(self) -> dict[str, str]:
        """`wg show` (private and pre-shared keys print as "(hidden)") and the userspace daemon's log."""
        pieces = [(f"{role}: wg show", lambda role=role, iface=iface: evidence.command(self._host(role), ["wg", "show", iface]))
                  for role, iface in self.ifaces.items()]
        procs = self.tunnel.procs if self.tunnel else []  # the daemons, started server first (up())
        pieces += [(f"{role}: {self.implementation} log", lambda proc=proc: evidence.log_tail(proc))
                   for role, proc in zip(("server", "client"), procs)]
        return evidence.gather(pieces)


# Tunnel i of a bring-up with tunnels > 1: FIRST_ENDS.nth(i) (INNER's addresses counted on, as every
# technique numbers them). Each end holds its address alone (a /32, /128); a client interface reaches
# its server address as its point-to-point peer.
FIRST_ENDS = Ends(INNER["client"], INNER["server"])


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


# The control sockets listening in the host's network namespace, by interface name, read from
# /proc/net/unix (flags 00010000: listening), whose last field is the path the daemon bound
# (wireguard-go: /var/run/wireguard/IFACE.sock, boringtun: /var/run/wireguard//IFACE.sock).
LISTENING_SOCKETS = r"""awk '$4 == "00010000" && $NF ~ /\/wireguard\/+[^\/]+\.sock$/ {
    n = split($NF, part, "/"); print substr(part[n], 1, length(part[n]) - 5) }' /proc/net/unix"""


def listening_control_sockets(host) -> set[str]:
    """The interfaces whose userspace daemon listens on its control socket, seen without connecting
    to any: a waiting `wg show` (wireguard-tools' ipc) unlinks a socket whose connect is refused,
    and a daemon's socket refuses between its bind and its listen, so the wait itself made
    wireguard-go fail ("Failed to listen on uapi socket"), twice in a run of the machine's tests
    two at a time, once in a long session before."""
    return set(host.run(["sh", "-c", LISTENING_SOCKETS], check=False).stdout.split())


# Each interface asked by name: `wg show all` would connect to every run's control socket on the
# machine, unlinking one bound but not yet listening (listening_control_sockets).
HANDSHAKEN = ('for i; do wg show "$i" latest-handshakes | while read -r _ t; do [ "$t" = 0 ] || echo "$i"; done; '
              'done')


def handshaken(host, ifaces: list[str]) -> set[str]:
    """Those of these interfaces whose peer has had a handshake (`wg show IFACE latest-handshakes`)."""
    out = host.run(["sh", "-c", HANDSHAKEN, "sh", *ifaces], timeout=30 + BATCH_S_PER_TUNNEL * len(ifaces)).stdout
    return set(out.split()) & set(ifaces)


def latest_handshake(host, iface: str) -> int:
    """The peer's last handshake (Unix seconds, 0 for never) from `wg show IFACE latest-handshakes`."""
    fields = host.run(["wg", "show", iface, "latest-handshakes"], timeout=5).stdout.split()
    return int(fields[1]) if len(fields) >= 2 and fields[1].isdigit() else 0


def _x25519_keypair() -> tuple[str, str]:
    """A WireGuard key pair (private, public; base64) made in this process: `wg genkey` and `wg
    pubkey` are two processes per key (seconds for a thousand tunnels, ~40 ms a bring-up with the
    CPU halved), and the key never leaves this process but for its 0600 file. `wg` clamps the
    private key as X25519 does, so the public key is the one `wg pubkey` prints (test_wireguard)."""
    private = X25519PrivateKey.generate()
    raw = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    return base64.b64encode(raw).decode(), base64.b64encode(private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def _psk() -> str:
    """A pre-shared key as `wg genpsk` makes one: 32 random bytes, base64."""
    return base64.b64encode(secrets.token_bytes(32)).decode()


def _peer_section(public: str, psk: str | None, allowed: dict[str, str], endpoint: str | None = None,
                  keepalive: int | None = None) -> str:
    """One [Peer] of a `wg setconf` file: its key, its pre-shared key, its one inner address per
    family, its persistent keepalive."""
    lines = [f"[Peer]\nPublicKey = {public}\n", f"PresharedKey = {psk}\n" if psk else "",
             f"Endpoint = {endpoint}\n" if endpoint else "",
             f"AllowedIPs = {allowed['ipv4']}/32, {allowed['ipv6']}/128\n",
             f"PersistentKeepalive = {keepalive}\n" if keepalive else ""]
    return "".join(lines)


SOCKET_DIR = "/var/run/wireguard"  # where wg finds a userspace daemon's control socket


def make_socket_dir(host, undo: Cleanup) -> None:
    """SOCKET_DIR made 0700 when missing (mkdir, never -p), refused when it is not root's alone;
    once accepted, `undo` gives it back to root whatever happens next: a daemon that dies after its
    chown (its socket not bound) left it the login user's, and every later run was refused."""
    host.run(["mkdir", "-m", "700", "--", SOCKET_DIR], check=False)  # fails when it exists: checked below
    check_socket_dir(host, [])
    undo.defer(give_socket_dir_back, host)


def give_socket_dir_back(host) -> None:
    """SOCKET_DIR back to root, 0700: boringtun chowns it to getlogin(), the login uid that sudo
    keeps (its --disable-drop-privileges skips only its later setuid), before it binds its socket.
    Safe on a directory another user holds: only root can replace the entry in /run. Quiet when it
    is gone."""
    host.run(["sh", "-c", 'chown 0:0 -- "$1"; chmod 700 -- "$1"', "sh", SOCKET_DIR], check=False)  # one process, not two


def reclaim_socket_dir(host, ifaces: list[str]) -> None:
    """After the daemons listen: the directory goes back to root (give_socket_dir_back), then it
    and each interface's socket must be root's. A socket another user swapped in while the
    directory was theirs is theirs (only root makes a root-owned socket), and the bring-up is
    refused before `wg set` sends a key to it."""
    give_socket_dir_back(host)
    check_socket_dir(host, ifaces)


def check_socket_dir(host, ifaces: list[str]) -> None:
    paths = [SOCKET_DIR, *(f"{SOCKET_DIR}/{iface}.sock" for iface in ifaces)]
    try:
        facts = path_facts(host, paths)
    except UnsafePath as exc:
        raise TechniqueError(f"wireguard control sockets: {exc}") from None
    for path, (uid, mode, kind) in zip(paths, facts):
        directory = path == SOCKET_DIR
        if uid != 0 or kind != ("directory" if directory else "socket") or (directory and mode & 0o022):
            raise TechniqueError(f"{path} on {host.role} is a {kind} owned by uid {uid} with mode {mode:o}; allowed: "
                                 f"{'a directory' if directory else 'a socket'} of root's that nobody else can write "
                                 f"(whoever owns it receives the keys `wg set` sends); remove it")
