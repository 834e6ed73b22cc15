"""WireGuard: the kernel module where the kernel has it, wireguard-go otherwise.

wireguard-go's control socket lives at /var/run/wireguard/<iface>.sock, a path that is not
per namespace, so every interface gets a machine-wide unique name from the run id.
"""

import subprocess
import time
from typing import Literal

from pydantic import Field

from vpnbench import evidence
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
USERSPACE_ENV = {"WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD": "1"}


class WireGuardParams(TechniqueParams):
    kind: Literal["wireguard"] = "wireguard"
    backend: Literal["auto", "kernel", "userspace"] = "auto"
    psk: bool = False  # pre-shared key on top of Curve25519: WireGuard's post-quantum hardening
    family: Family = "ipv4"  # underlay family of the outer UDP packets
    port: int = Field(51820, ge=1, le=65535)
    mtu: int = Field(1420, ge=1280, le=9000)


class WireGuard(Technique):
    kind = "wireguard"
    packages = {"wg": "wireguard-tools", "wireguard-go": "wireguard-go"}
    kernel_features = {"kernel": "wireguard link type (CONFIG_WIREGUARD)", "userspace": "TUN (/dev/net/tun)"}
    Params = WireGuardParams
    description = "WireGuard (ChaCha20-Poly1305, Curve25519)"
    versions = {
        "wireguard_go": "wireguard-go --version 2>&1 | head -1",
        "wireguard_tools": "wg --version 2>&1 | head -1",
        "wireguard_module": "cat /sys/module/wireguard/version 2>/dev/null || modinfo -F version wireguard 2>/dev/null",
    }

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
        if not probe.has_command("wg"):
            reason = missing_tool_reason("wg")
            return [BackendStatus("kernel", False, reason), BackendStatus("userspace", False, reason)]
        kernel = probe.has_link_type("wireguard")
        userspace = probe.has_command("wireguard-go")
        return [
            BackendStatus("kernel", kernel, "" if kernel else "kernel lacks WireGuard (no wireguard module)"),
            BackendStatus("userspace", userspace, "" if userspace else missing_tool_reason("wireguard-go")),
        ]

    def __init__(self, params: WireGuardParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.ifaces: dict[str, str] = {}  # role -> its interface, named at up()
        self.peer_args: dict[str, list[str]] = {}  # role -> `wg set` words of its peer (rekey() re-adds it)

    def up(self, backend: str) -> Tunnel:
        p = self.params
        res = self.ctx.resources
        self.ifaces = {"client": res.iface_name("c"), "server": res.iface_name("s")}
        self.peer_args = {}
        keys = {role: self._keypair(role) for role in ("client", "server")}
        psk_file = self._secret_file(("client", "server"), "wg.psk", _wg("genpsk")) if p.psk else None
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs=dict(INNER["server"]),
            client_addrs=dict(INNER["client"]),
            protection="encrypted",
            wire_filter=f"udp port {p.port}",
            negotiated={"cipher": "chacha20poly1305", "key_exchange": "x25519",
                        "psk": p.psk, "underlay_family": p.family, "mtu": p.mtu},
        )
        # wireguard-go's daemons, stopped together (each takes ~28 ms to exit): those started so far
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))
        for role, peer in (("server", "client"), ("client", "server")):
            host = self._host(role)
            iface = self.ifaces[role]
            self._create_interface(host, iface, backend)
            endpoint = self.ctx.underlay[peer][p.family]
            endpoint = f"[{endpoint}]:{p.port}" if p.family == "ipv6" else f"{endpoint}:{p.port}"
            peer_args = ["peer", keys[peer][1]] + (["preshared-key", str(psk_file)] if psk_file else [])
            peer_args += ["endpoint", endpoint, "allowed-ips", f"{INNER[peer]['ipv4']}/32,{INNER[peer]['ipv6']}/128"]
            self.peer_args[role] = peer_args
            host.run(["wg", "set", iface, "listen-port", str(p.port), "private-key", str(keys[role][0]), *peer_args])
            # One `ip` for the three (each command is a process, and over ssh a round trip).
            host.run(["ip", "-batch", "-"], input=f"addr add {INNER[role]['ipv4']}/24 dev {iface}\n"
                                                  f"addr add {INNER[role]['ipv6']}/64 dev {iface} nodad\n"
                                                  f"link set {iface} mtu {p.mtu} up\n")
        return self.tunnel

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

    def _create_interface(self, host, iface: str, backend: str) -> None:
        if backend == "kernel":
            host.run(["ip", "link", "add", iface, "type", "wireguard"])
            self.undo.defer(host.run, ["ip", "link", "del", iface], check=False)
            return
        for attempt in (1, 2):
            # Its control socket's directory: made here too, since once in a long test session
            # wireguard-go found it missing between its own mkdir and listen ("Failed to listen on
            # uapi socket: no such file or directory"); that one case is tried a second time.
            host.run(["mkdir", "-p", "/var/run/wireguard"], check=False)
            proc = host.spawn(["wireguard-go", "-f", iface], name="wireguard-go", env=USERSPACE_ENV)
            self.tunnel.procs.append(proc)
            deadline = time.monotonic() + 5
            while host.run(["wg", "show", iface], check=False).returncode != 0:
                if not proc.alive() or time.monotonic() > deadline:
                    if attempt == 1 and "uapi socket" in proc.output() and not proc.alive():
                        self.tunnel.procs.remove(proc)  # gone for a known reason: not a death to report
                        break
                    raise TechniqueError(f"wireguard-go did not start: {proc.output().strip()[-300:]}")
                time.sleep(0.01)  # it listens ~10-20 ms after its start; every 50 ms cost two bring-up ~0.1 s
            else:
                return

    def evidence(self) -> dict[str, str]:
        """`wg show` (private and pre-shared keys print as "(hidden)") and wireguard-go's log."""
        pieces = [(f"{role}: wg show", lambda role=role, iface=iface: evidence.command(self._host(role), ["wg", "show", iface]))
                  for role, iface in self.ifaces.items()]
        procs = self.tunnel.procs if self.tunnel else []  # wireguard-go's, started server first (up())
        pieces += [(f"{role}: wireguard-go log", lambda proc=proc: evidence.log_tail(proc))
                   for role, proc in zip(("server", "client"), procs)]
        return evidence.gather(pieces)


def latest_handshake(host, iface: str) -> int:
    """The peer's last handshake (Unix seconds, 0 for never) from `wg show IFACE latest-handshakes`."""
    fields = host.run(["wg", "show", iface, "latest-handshakes"], timeout=5).stdout.split()
    return int(fields[1]) if len(fields) >= 2 and fields[1].isdigit() else 0


def _wg(command: str, stdin: str | None = None) -> str:
    """wg genkey/genpsk/pubkey on the controller; key material goes through pipes, never argv."""
    proc = subprocess.run(["wg", command], input=stdin, capture_output=True, text=True, check=True)
    return proc.stdout
