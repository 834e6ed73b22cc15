"""NetBird (netbirdio/netbird): a WireGuard mesh with a management server that hands each peer its
address, its peers and its policy, a signal server the peers exchange ICE offers through, and a
relay for the pairs ICE cannot join directly.

Per bring-up vpnbench starts the combined server (`netbird-server`: management, signal, relay, STUN
and the embedded identity provider on one port, SQLite stores) on the testbed's router, the
control plane as Tailscale's Headscale, with a fresh configuration and data directory in the run's
0700 directory: anonymous metrics and GeoLite downloads off (disableAnonymousMetrics,
disableGeoliteUpdate, NB_DISABLE_GEOLOCATION), its relay secret random. The instance is set up
through its own API (POST /api/setup with NB_SETUP_PAT_ENABLED: the owner and a personal access
token), then one setup key for the two peers (POST /api/setup-keys, usage limit 2). Request bodies,
the token and the key live only in 0600 files (curl reads them with @file): nothing secret in argv.

Each host runs the client's daemon (`netbird service run`) with its own profile file (--config), its
state directory (NB_STATE_DIR: profiles and state, else /var/lib/netbird), its daemon socket in the
run's directory (--daemon-addr; else /var/run/netbird.sock), its log on stdout (--log-file console;
else /var/log/netbird), NB_DISABLE_SSH_CONFIG (else it writes /etc/ssh/ssh_config.d) and
NB_LAZY_CONN=false (a lazy peer connects only at its first packet: the set-up would be the first
measurement's). `netbird up` joins it with the key file, --disable-dns (else it rewrites
/etc/resolv.conf), the run's interface name and WireGuard port and vpnbench's MTU. NetBird's firewall
rules are the peers' namespaces' own.

The data path is WireGuard: the kernel's where the host's kernel has it (NetBird's choice), else
userspace (NB_WG_KERNEL_DISABLED: wireguard-go inside the netbird daemon, its UAPI socket
/var/run/wireguard/IFACE.sock, shared between namespaces, hence the run's interface names). NetBird's
own MTU default is 1280; vpnbench gives --mtu from the arithmetic: the path's MTU less WireGuard's 80
bytes over IPv6 (IP 40 + UDP 8 + header 16 + tag 16): ICE chooses the underlay family from its
candidates (it took the testbed's IPv6 ones; only the profile's DisableIPv6Discovery, no flag,
keeps it to IPv4), and a full packet fits over either. The family taken is recorded. The bring-up waits until both peers say the
other is connected peer to peer (ICE; the relay carries the first packets), and records the ICE
candidates and endpoints from `netbird status --json`.
"""

import json
import re
import secrets
import time
from pathlib import Path
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import TechniqueParams
from vpnbench.foundation.safe_files import make_dir, wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host
from vpnbench.hosts.route import path_mtu
from vpnbench.techniques.base import BackendStatus, Technique, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import Expectation, expectation_of, wireguard_outer

NAME = "netbird"
SERVER = "netbird-server"
ROLES = ("server", "client")
# 80: IPv6 40 + UDP 8 + header 16 + tag 16. ICE picks the family (the testbed has both; no flag keeps
# it to IPv4), so the MTU is sized for the larger: a full packet fits over either
WIREGUARD_OVERHEAD = wireguard_outer(0, "ipv6")
NETBIRD_MTU_RANGE = (576, 8192)  # what netbird's client accepts for --mtu (client/iface MinMTU, MaxMTU)
START_TIMEOUT = 30.0
PATH_TIMEOUT = 30.0
# Every netbird command: files born 0600, directories 0700 (its stores are made with the umask)
UMASK = ["sh", "-c", 'umask 077 && exec "$@"', "sh"]
SERVER_ENV = {"NB_SETUP_PAT_ENABLED": "true", "NB_DISABLE_GEOLOCATION": "true"}
CLIENT_ENV = {"NB_DISABLE_SSH_CONFIG": "true", "NB_LAZY_CONN": "false"}
OWNER_EMAIL = "owner@vpnbench.invalid"


class NetbirdParams(TechniqueParams):
    kind: Literal["netbird"] = "netbird"
    version: builds.version_type(NAME) = None  # netbird and netbird-server (one build)
    # auto: the kernel's WireGuard where the hosts' kernels have it, else userspace (in the daemon)
    backend: Literal["auto", "kernel", "userspace"] = "auto"
    mtu: int | None = Field(None, ge=1280, le=NETBIRD_MTU_RANGE[1])  # None: the path's MTU less WireGuard's 60
    port: int | None = Field(None, ge=1, le=65535)  # the control plane's port (and its STUN's); None: the run's


class Netbird(Technique):
    kind = "netbird"
    Params = NetbirdParams
    CONTROL = "router"  # the host netbird-server runs on, as its directory is keyed (the mesh: "control")
    packages = {"curl": "curl"}  # the management API (setup, setup keys), asked on the router
    description = "NetBird (WireGuard mesh, combined management/signal/relay server, setup keys; kernel or userspace)"
    kernel_features = {"kernel": "wireguard link type (CONFIG_WIREGUARD)", "userspace": "TUN (/dev/net/tun)"}
    versions = {NAME: f"{builds.program(NAME, NAME, builds.RECIPES[NAME].default)} version 2>/dev/null"}

    @classmethod
    def kernel_rows(cls, probe) -> dict[str, bool]:
        return {"wireguard": probe.has_link_type("wireguard")}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "a NetBird host is one peer with one interface; N tunnels would be N peers"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        return expectation_of(lambda n: wireguard_outer(n, "ipv6"), underlay_mtu,
                              settings.get("mtu") or underlay_mtu - WIREGUARD_OVERHEAD, False,
                              f"NetBird's WireGuard over the family ICE picks, sized for ipv6: IP 40 + UDP 8 + header "
                              f"16 + tag 16; vpnbench sets its MTU to the path's less {WIREGUARD_OVERHEAD} (NetBird's "
                              f"own default: 1280)")

    @classmethod
    def backends(cls, probe) -> list[BackendStatus]:
        return [BackendStatus(name, *cls._status(name, None, probe)) for name in ("kernel", "userspace")]

    @classmethod
    def resolve_backend(cls, params: NetbirdParams, probe) -> str:
        wanted = ("kernel", "userspace") if params.backend == "auto" else (params.backend,)
        reasons = []
        for name in wanted:
            available, reason = cls._status(name, params.version, probe)
            if available:
                return name
            reasons.append(f"{name}: {reason}")
        raise ValueError(f"no backend available ({'; '.join(reasons)})" if len(wanted) > 1
                         else f"backend {params.backend!r} is not available: {reasons[0].split(': ', 1)[1]}")

    @classmethod
    def _status(cls, backend: str, version: str | None, probe) -> tuple[bool, str]:
        lacking = builds.unavailable(probe, NAME, version)
        if lacking:
            return False, lacking
        if backend == "kernel" and not probe.has_link_type("wireguard"):
            return False, "kernel lacks WireGuard (no wireguard module)"
        if backend == "userspace" and (tun := probe.host_lacking("/dev/net/tun")) is not None:
            return False, f"{tun} lacks TUN (/dev/net/tun)"
        return True, ""

    def __init__(self, params: NetbirdParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes: dict[str, Host] = {"server": ctx.server, "client": ctx.client}
        self.ifaces: dict[str, str] = {}  # role -> its WireGuard interface
        self.dirs: dict[str, Path] = {}  # role (and "router") -> its 0700 directory
        self.daemons: dict[str, object] = {}  # role -> its netbird daemon
        self.server_proc = None
        self.backend = "userspace"
        self.mtu = 0
        self.url = ""
        self.build_record: dict = {}

    # -- commands ---------------------------------------------------------------------------------

    def _program(self, program: str) -> str:
        return builds.program(NAME, program, self.params.version)

    def _control_host(self) -> Host:
        return self.ctx.router

    def _client_env(self, role: str) -> dict[str, str]:
        env = {**CLIENT_ENV, "NB_STATE_DIR": str(self.dirs[role] / "state")}
        if self.backend == "userspace":
            env["NB_WG_KERNEL_DISABLED"] = "true"
        return env

    def _netbird(self, role: str, *words: str, timeout: float = 30, check: bool = True):
        """The netbird CLI against this role's daemon (its socket), its log on stdout."""
        result = self.nodes[role].run([*UMASK, self._program(NAME), *words, "--daemon-addr", self._daemon_addr(role),
                                       "--log-file", "console"], timeout=timeout, check=False)
        if check and not result.ok:
            raise TechniqueError(f"netbird {words[0]} ({role}): {_tail(result.stderr + result.stdout)}")
        return result

    def _daemon_addr(self, role: str) -> str:
        return f"unix://{self.dirs[role] / 'daemon.sock'}"

    def _api(self, path: str, body: dict, token_file: Path | None = None) -> dict:
        """POST body (a 0600 file) to the management API on the control host; the answer (0600 file)
        read and removed. The token reaches curl in a header file (-H @file), never in argv."""
        router, home = self._control_host(), self.dirs[self.CONTROL]
        request, answer = home / "request.json", home / "answer.json"
        router.write_file(request, json.dumps(body), 0o600)
        argv = [*UMASK, "curl", "-sS", "--max-time", "15", "-o", str(answer), "-w", "%{http_code}", "-X", "POST",
                "-H", "Content-Type: application/json", "--data-binary", f"@{request}"]
        if token_file is not None:
            argv += ["-H", f"@{token_file}"]
        result = router.run([*argv, self.url + path], timeout=20, check=False)
        try:
            text = router.read_file(answer).decode() if result.ok else ""
        finally:
            router.remove_file(request)
            router.remove_file(answer)
        if result.stdout.strip() != "200":
            raise TechniqueError(f"netbird-server: POST {path} answered {result.stdout.strip() or 'nothing'}: "
                                 f"{_tail(result.stderr)} {text[:200]}")
        return json.loads(text)

    # -- bring-up ---------------------------------------------------------------------------------

    def up(self, backend: str) -> Tunnel:
        p, res, router = self.params, self.ctx.resources, self.ctx.router
        if router is None:
            raise TechniqueError("netbird: its server runs on the testbed's router, and this testbed has none "
                                 "(router = true)")
        self.backend = backend
        port = p.port or run_port(res.run_id)
        wg_port = port + 1  # each host in its own namespace: one port for both
        self.ifaces = {role: res.iface_name("nb" + role[0]) for role in ROLES}
        mtus = [path_mtu(self.nodes[role], self.ctx.underlay[peer]["ipv4"])
                for role, peer in (("client", "server"), ("server", "client"))]
        if None in mtus:
            raise TechniqueError(f"netbird: no route between the hosts' underlay addresses to size the MTU by ({mtus})")
        self.mtu = p.mtu or min(mtus) - WIREGUARD_OVERHEAD
        for where, host in {"router": router, **self.nodes}.items():
            self.dirs[where] = make_dir(host, res.path(f"netbird-{where}"))
            host.remember_dir(self.dirs[where])  # cleanup after a kill -9 wipes it too
            # wiped after the daemons stop (undo runs newest first): registered before they start
            self.undo.defer(wipe, host, self.dirs[where])
        address = self._router_address()
        self.url = f"http://{address}:{port}"
        self.tunnel = Tunnel(
            backend=backend, server_addrs={}, client_addrs={}, protection="encrypted",
            wire_filter=f"udp port {wg_port}", wire_protocol="WireGuard",
        )
        started = time.monotonic()
        self._start_server(address, port)
        key_file = self._setup_key()
        self.undo.defer(self._down_interfaces)  # after the daemons stop (newest first)
        for role in ROLES:
            self._start_daemon(role)
        for role in ROLES:
            host_key = self.dirs[role] / "setup-key"
            self.nodes[role].write_file(host_key, key_file, 0o600)
            self._netbird(role, "up", "--setup-key-file", str(host_key), "--management-url", self.url,
                          "--disable-dns", "--interface-name", self.ifaces[role], "--wireguard-port", str(wg_port),
                          "--mtu", str(self.mtu), "--hostname", f"vpnbench-{role}", timeout=START_TIMEOUT + 10)
            self.nodes[role].remove_file(host_key)  # the peer is registered: its WireGuard key is its identity
        self.handshake_s = round(time.monotonic() - started, 3)  # the server, the key and both joins
        for role in ROLES:
            address = self._peer_status(role)["netbirdIp"].split("/")[0]
            (self.tunnel.server_addrs if role == "server" else self.tunnel.client_addrs)["ipv4"] = address
        peer, path_s = self._wait_for_path()
        self.tunnel.negotiated = {
            "implementation": NAME, "backend": backend, "control": SERVER, "control_url": self.url,
            "server": "router", "join_s": self.handshake_s, "path_s": round(path_s, 3),
            "path": "direct" if peer.get("connectionType") == "P2P" else "relayed",
            "connection_type": peer.get("connectionType"), "ice_candidates": peer.get("iceCandidateType"),
            "ice_endpoints": peer.get("iceCandidateEndpoint"), "relay": peer.get("relayAddress"),
            "wireguard_port": wg_port, "mtu": self.mtu,
            "underlay_family": "ipv6" if "[" in str((peer.get("iceCandidateEndpoint") or {}).get("local")) else "ipv4",
            "keys": "per bring-up (each peer's WireGuard key made by its daemon; one setup key, usage limit 2)",
            **self._what_ran(),
        }
        return self.tunnel

    def _router_address(self) -> str:
        """The router's address towards the client: the one address both hosts reach it at (the
        server's host through the router's forwarding)."""
        route = self.ctx.router.run(["ip", "-o", "route", "get", self.ctx.underlay["client"]["ipv4"]], timeout=5).stdout.split()
        if "src" not in route:
            raise TechniqueError(f"router: no source address towards the client in `ip route get`: {' '.join(route)}")
        return route[route.index("src") + 1]

    def _start_server(self, address: str, port: int) -> None:
        router, home = self._control_host(), self.dirs[self.CONTROL]
        config = home / "config.yaml"
        # JSON is YAML; the relay's secret lives only in this 0600 file
        router.write_file(config, json.dumps({"server": server_config(home / "data", address, port,
                                                                      secrets.token_hex(32))}, indent=1), 0o600)
        router.run(["mkdir", "-m", "0700", str(home / "data")], timeout=10)
        self.server_proc = router.spawn([*UMASK, self._program(SERVER), "--config", str(config)],
                                        name=SERVER, env=SERVER_ENV)
        self.tunnel.procs.append(self.server_proc)
        self.undo.defer(self.server_proc.stop)  # before its directory is wiped (the newer undo runs first)
        deadline = time.monotonic() + START_TIMEOUT
        # /api/instance answers once management's HTTP API serves (what NetBird's own e2e waits for)
        while router.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2",
                          f"{self.url}/api/instance"], timeout=5, check=False).stdout.strip() != "200":
            if not self.server_proc.alive():
                raise TechniqueError(f"netbird-server exited: {_tail(self.server_proc.output())}")
            if time.monotonic() > deadline:
                raise TechniqueError(f"netbird-server not serving within {START_TIMEOUT:g} s: "
                                     f"{_tail(self.server_proc.output())}")
            time.sleep(0.05)

    def _setup_key(self, usage_limit: int | None = None) -> str:
        """The instance's owner with a token, then one setup key for every peer (usage_limit: how
        many peers may use it, None: one per node, 0: no limit): the key's text."""
        router, home = self._control_host(), self.dirs[self.CONTROL]
        owner = self._api("/api/setup", {"email": OWNER_EMAIL, "password": secrets.token_urlsafe(24) + "aA1!",
                                         "name": "vpnbench", "create_pat": True, "pat_expire_in": 1})
        token = owner.get("personal_access_token")
        if not token:
            raise TechniqueError("netbird-server: /api/setup gave no access token (NB_SETUP_PAT_ENABLED not honoured)")
        token_file = home / "token-header"
        router.write_file(token_file, f"Authorization: Token {token}\n", 0o600)
        try:
            key = self._api("/api/setup-keys", {"name": "vpnbench", "type": "reusable", "expires_in": 86400,
                                                "auto_groups": [], "usage_limit": len(self.nodes) if usage_limit is None else usage_limit,
                                                "ephemeral": False},
                            token_file)
        finally:
            router.remove_file(token_file)
        if not key.get("key"):
            raise TechniqueError("netbird-server: /api/setup-keys gave no key")
        return key["key"]

    def _start_daemon(self, role: str) -> None:
        host = self.nodes[role]
        host.run(["mkdir", "-m", "0700", str(self.dirs[role] / "state")], timeout=10)
        proc = host.spawn([*UMASK, self._program(NAME), "service", "run", "--config", str(self.dirs[role] / "config.json"),
                           "--daemon-addr", self._daemon_addr(role), "--log-file", "console"],
                          name=NAME, env=self._client_env(role))
        self.daemons[role] = proc
        self.tunnel.procs.append(proc)
        self.undo.defer(proc.stop)  # before its directory is wiped (the newer undo runs first)
        deadline = time.monotonic() + START_TIMEOUT
        while not self._netbird(role, "status", "--json", check=False, timeout=10).stdout.strip().startswith("{"):
            if not proc.alive() or time.monotonic() > deadline:
                raise TechniqueError(f"netbird daemon ({role}) did not start: {_tail(proc.output())}")
            time.sleep(0.05)

    def _peer_status(self, role: str) -> dict:
        said = self._netbird(role, "status", "--json", timeout=10).stdout
        try:
            return json.loads(said)
        except ValueError as err:
            raise TechniqueError(f"netbird status ({role}): not JSON: {said[:200]!r}") from err

    def _wait_for_path(self) -> tuple[dict, float]:
        """Until both daemons say the other peer is Connected peer to peer (ICE: it first goes
        through the relay, then upgrades); the client's view of the server's peer and how long the
        wait took. The testbed's hosts reach each other, so a pair still relayed is an error."""
        started = time.monotonic()
        wanted = {"client": self.tunnel.server_addrs["ipv4"], "server": self.tunnel.client_addrs["ipv4"]}
        seen: dict[str, dict] = {}
        while time.monotonic() - started < PATH_TIMEOUT:
            for role, other in wanted.items():
                peers = self._peer_status(role)["peers"].get("details") or []
                seen[role] = next((peer for peer in peers if peer.get("netbirdIp") == other), {})
            if all(peer.get("status") == "Connected" and peer.get("connectionType") == "P2P" for peer in seen.values()):
                return seen["client"], time.monotonic() - started
            time.sleep(0.1)
        raise TechniqueError(f"netbird: the peers not connected peer to peer within {PATH_TIMEOUT:g} s ("
                             + ", ".join(f"{role}: {peer.get('status')} {peer.get('connectionType')}"
                                         for role, peer in seen.items()) + ")")

    def _down_interfaces(self, roles: list[str] | None = None) -> None:
        """Each WireGuard interface (of these roles; None: all) gone: the daemon removes its own at
        exit; after a failed exit its link and its UAPI socket (a path all namespaces share) are
        removed here."""
        for role, host in self.nodes.items():
            if roles is not None and role not in roles:
                continue
            iface = self.ifaces.get(role)
            if not iface:
                continue
            host.run(["rm", "-f", f"/var/run/wireguard/{iface}.sock"], timeout=10, check=False)
            host.run(["ip", "link", "del", "dev", iface], timeout=10, check=False)

    def down(self) -> None:
        # `netbird down` first: the daemon takes its interface and rules down and says goodbye to
        # management; stopping the daemons (the undo) follows
        for role in self.daemons:
            if self.daemons[role].alive():
                self._netbird(role, "down", check=False, timeout=20)
        super().down()

    # -- what ran ---------------------------------------------------------------------------------

    def _what_ran(self, role: str = "client") -> dict:
        client = self.nodes[role]
        status = self._peer_status(role)
        found = {"version": status.get("daemonVersion"), "cli_version": status.get("cliVersion"),
                 "uses_kernel_interface": status.get("usesKernelInterface"),
                 "lazy_connections": status.get("lazyConnectionEnabled"),
                 "management_connected": (status.get("management") or {}).get("connected"),
                 "signal_connected": (status.get("signal") or {}).get("connected"),
                 "relays": [relay.get("uri") for relay in (status.get("relays") or {}).get("details") or []]}
        said = client.run([self._program(NAME), "version"], timeout=10, check=False).stdout
        found["program_version"] = (m.group(1) if (m := re.search(r"(\d+\.\d+\.\d+\S*)", said)) else None)
        if not self.build_record:
            result = client.run(builds.record_command(NAME, self.params.version), timeout=10, check=False)
            try:
                self.build_record = json.loads(result.stdout)
            except ValueError:
                self.build_record = {"unreadable": (result.stderr or result.stdout).strip()[-200:]}
        found["build"] = self.build_record
        found["interface_mtu"] = int(client.run(["cat", f"/sys/class/net/{self.ifaces[role]}/mtu"],
                                                timeout=5, check=False).stdout.strip() or 0)
        return found

    def evidence(self) -> dict[str, str]:
        pieces = [("router: netbird-server log", lambda: evidence.log_tail(self.server_proc))]
        pieces += [(f"{role}: netbird daemon log", lambda role=role: evidence.log_tail(self.daemons[role]))
                   for role in ROLES if role in self.daemons]
        pieces += [(f"{role}: netbird status", lambda role=role: evidence.command(
            self.nodes[role], [self._program(NAME), "status", "-d", "--daemon-addr", self._daemon_addr(role),
                               "--log-file", "console"])) for role in ROLES if role in self.daemons]
        return evidence.gather(pieces)


def server_config(data_dir: Path, address: str, port: int, relay_secret: str) -> dict:
    """netbird-server's combined configuration: everything on address:port (management, signal, the
    relay over WebSocket, the identity provider), STUN on the same number over UDP, SQLite stores in
    data_dir, nothing reported or downloaded, metrics and health checks on loopback only."""
    return {
        "listenAddress": f"{address}:{port}",
        "exposedAddress": f"http://{address}:{port}",
        "stunPorts": [port],
        "metricsPort": 0,
        "healthcheckAddress": "127.0.0.1:0",
        "logLevel": "info",
        "logFile": "console",
        "authSecret": relay_secret,
        "dataDir": str(data_dir),
        "disableAnonymousMetrics": True,
        "disableGeoliteUpdate": True,
        "auth": {"issuer": f"http://{address}:{port}/oauth2"},
        "store": {"engine": "sqlite"},
    }


def run_port(run_id: str) -> int:
    """This run's port for the control plane (7100-7799; the peers' WireGuard one above), from the run id."""
    return 7100 + 2 * ((int(run_id, 16) >> 8) % 350)


def _tail(output: str, lines: int = 5) -> str:
    return " | ".join(output.strip().splitlines()[-lines:]) or "no output"
