"""innernet (tonarino/innernet): a WireGuard mesh managed by a coordinating server. The server
holds the network's peers and CIDRs in SQLite and answers an HTTP API on its own innernet address
(through WireGuard); each peer joins by redeeming an invitation (its first key pair, replaced at
install), then fetches the peer list and talks WireGuard to every peer of its CIDR directly.

Per bring-up vpnbench makes a new network on the router (the control plane, as n2n's supernode):
`innernet-server new` with every answer as a flag, one CIDR "peers", one peer per host
(`add-peer ... --save-config`: an invitation file), then `serve`. Each host installs its
invitation (`innernet install --delete-invite`), which brings the interface up and fetches, then
states its endpoint (`override-endpoint`: its underlay address and WireGuard port, as a host with
a known address does; discovery would wait for the server's 10 s endpoint refresher); the
server-side host fetches once more so it knows the client's endpoint. Every config and data
directory (innernet's /etc/innernet, /var/lib/innernet, /etc/innernet-server,
/var/lib/innernet-server by default) is a 0700 directory of the run's, given with --config-dir and
--data-dir, and wiped at down(). Every innernet command runs under umask 077: innernet-server 2.0.0
creates the invitation (it holds the peer's first private key) with the process's umask, 0644 by
default. Hosts files, NAT traversal and NAT candidates are off (--no-write-hosts ...): nothing is
written outside the run and nobody but the peers is asked anything. No key is ever in argv.

The data path is WireGuard: the kernel's where the host's kernel has it (innernet's default), else
userspace: innernet starts the program WG_USERSPACE_IMPLEMENTATION names (vpnbench's pinned
wireguard-go build, or the `wireguard_go` version asked), which daemonizes and serves the UAPI
socket /var/run/wireguard/IFACE.sock that innernet (wireguard-control) configures. innernet's own
MTU default is 1280; vpnbench gives --mtu from the arithmetic: the path's MTU less WireGuard's 60
bytes over IPv4 (IP 20 + UDP 8 + header 16 + tag 16).
"""

import json
import re
import time
from pathlib import Path
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import TechniqueParams
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, stop_all
from vpnbench.hosts.route import path_mtu
from vpnbench.techniques.base import BackendStatus, Technique, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import Expectation, expectation_of, wireguard_outer

NAME = "innernet"
SERVER = "innernet-server"
WG_GO = "wireguard-go"
ROLES = ("server", "client")
NETWORK_CIDR = "10.98.0.0/16"  # the server's own address is its first: 10.98.0.1
PEERS_CIDR = "10.98.1.0/24"
INNER = {"server": "10.98.1.1", "client": "10.98.1.2"}
WIREGUARD_OVERHEAD = wireguard_outer(0, "ipv4")  # 60: IP 20 + UDP 8 + header 16 + tag 16
INVITE_EXPIRES = "600s"  # an invitation is redeemed within seconds of being made
START_TIMEOUT = 20.0
# Every innernet command: files born 0600, directories 0700 (the invitation is made with the umask)
UMASK = ["sh", "-c", 'umask 077 && exec "$@"', "sh"]
# What a host's innernet needs to find and quiet the userspace WireGuard (wireguard-control reads
# WG_USERSPACE_IMPLEMENTATION; wireguard-go warns on Linux unless told the user prefers it)
QUIET_WG_GO = "WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1"


class InnernetParams(TechniqueParams):
    kind: Literal["innernet"] = "innernet"
    # innernet and innernet-server at this version (they are released together)
    version: builds.version_type(NAME) = None
    # auto: the kernel's WireGuard where the hosts' kernels have it, else userspace (wireguard-go)
    backend: Literal["auto", "kernel", "userspace"] = "auto"
    wireguard_go: builds.version_type(WG_GO) = None  # the userspace WireGuard's build
    mtu: int | None = Field(None, ge=1280, le=65535)  # None: the path's MTU less WireGuard's 60
    port: int | None = Field(None, ge=1, le=65535)  # the server's WireGuard and API port; None: the run's


class Innernet(Technique):
    kind = "innernet"
    Params = InnernetParams
    CONTROL = "router"  # where the server runs: the router here, the control node in innernet-mesh
    packages = {"wg": "wireguard-tools"}  # the peers' listen ports, read with `wg show`
    description = "innernet (WireGuard mesh, a coordinating server, invitations; kernel or wireguard-go)"
    kernel_features = {"kernel": "wireguard link type (CONFIG_WIREGUARD)", "userspace": "TUN (/dev/net/tun)"}
    versions = {NAME: f"{builds.program(NAME, NAME, builds.RECIPES[NAME].default)} --version 2>/dev/null"}

    @classmethod
    def kernel_rows(cls, probe) -> dict[str, bool]:
        return {"wireguard": probe.has_link_type("wireguard")}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "an innernet host is one peer with one interface; N tunnels would be N peers"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        return expectation_of(lambda n: wireguard_outer(n, "ipv4"), underlay_mtu,
                              settings.get("mtu") or underlay_mtu - WIREGUARD_OVERHEAD, False,
                              f"innernet's WireGuard over ipv4: IP 20 + UDP 8 + header 16 + tag 16; vpnbench sets "
                              f"its MTU to the path's less {WIREGUARD_OVERHEAD} (innernet's own default: 1280)")

    @classmethod
    def backends(cls, probe) -> list[BackendStatus]:
        return [BackendStatus(name, *cls._status(name, None, None, probe)) for name in ("kernel", "userspace")]

    @classmethod
    def resolve_backend(cls, params: InnernetParams, probe) -> str:
        wanted = ("kernel", "userspace") if params.backend == "auto" else (params.backend,)
        reasons = []
        for name in wanted:
            available, reason = cls._status(name, params.version, params.wireguard_go, probe)
            if available:
                return name
            reasons.append(f"{name}: {reason}")
        raise ValueError(f"no backend available ({'; '.join(reasons)})" if len(wanted) > 1
                         else f"backend {params.backend!r} is not available: {reasons[0].split(': ', 1)[1]}")

    @classmethod
    def _status(cls, backend: str, version: str | None, wg_go: str | None, probe) -> tuple[bool, str]:
        for build, chosen in ((NAME, version), (SERVER, version)) + (((WG_GO, wg_go),) if backend == "userspace" else ()):
            lacking = builds.unavailable(probe, build, chosen)
            if lacking:
                return False, lacking
        if backend == "kernel" and not probe.has_link_type("wireguard"):
            return False, "kernel lacks WireGuard (no wireguard module)"
        if backend == "userspace" and (tun := probe.host_lacking("/dev/net/tun")) is not None:
            return False, f"{tun} lacks TUN (/dev/net/tun)"
        return True, ""

    def __init__(self, params: InnernetParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.nodes: dict[str, Host] = {"server": ctx.server, "client": ctx.client}
        self.ifaces: dict[str, str] = {}  # role (and "router") -> its WireGuard interface
        self.dirs: dict[str, Path] = {}  # role (and "router") -> its config and data directories' parent
        self.server_proc = None
        self.backend = "userspace"
        self.mtu = 0
        self.build_records: dict[str, dict] = {}

    # -- commands ---------------------------------------------------------------------------------

    def _env(self) -> list[str]:
        wg_go = builds.program(WG_GO, WG_GO, self.params.wireguard_go)
        return ["env", f"WG_USERSPACE_IMPLEMENTATION={wg_go}", QUIET_WG_GO] if self.backend == "userspace" else []

    def _server_argv(self, *words: str) -> list[str]:
        home = self.dirs[self.CONTROL]
        return [*self._env(), *UMASK, builds.program(SERVER, SERVER, self.params.version),
                "--config-dir", str(home / "config"), "--data-dir", str(home / "data"), *words]

    def _client_argv(self, role: str, *words: str) -> list[str]:
        home = self.dirs[role]
        return [*self._env(), *UMASK, builds.program(NAME, NAME, self.params.version),
                "--config-dir", str(home / "config"), "--data-dir", str(home / "data"),
                "--backend", self.backend, "--mtu", str(self.mtu), *words]

    def _run(self, host: Host, argv: list[str], what: str, timeout: float = 60) -> str:
        result = host.run(argv, timeout=timeout, check=False)
        if not result.ok:
            raise TechniqueError(f"innernet: {what} failed on the {host.role}: {_tail(result.stderr + result.stdout)}")
        return result.stdout

    # -- bring-up ---------------------------------------------------------------------------------

    def up(self, backend: str) -> Tunnel:
        p, res, router = self.params, self.ctx.resources, self.ctx.router
        if router is None:
            raise TechniqueError("innernet: its server runs on the testbed's router, and this testbed has none "
                                 "(router = true)")
        self.backend = backend
        port = p.port or run_port(res.run_id)
        network = res.iface_name("in")  # the network's name is the server's interface's
        self.ifaces = {"router": network, **{role: res.iface_name("i" + role[0]) for role in ROLES}}
        endpoint = self._router_address()
        mtus = [path_mtu(self.nodes[role], self.ctx.underlay[peer]["ipv4"])
                for role, peer in (("client", "server"), ("server", "client"))]
        if None in mtus:
            raise TechniqueError(f"innernet: no route between the hosts' underlay addresses to size the MTU by ({mtus})")
        self.mtu = p.mtu or min(mtus) - WIREGUARD_OVERHEAD
        hosts = {"router": router, **self.nodes}
        for where, host in hosts.items():
            self.dirs[where] = res.path(f"innernet-{where}")
            # wiped after the daemons stop (undo runs newest first): registered before they start
            self.undo.defer(wipe, host, self.dirs[where])
            # one by one: `mkdir -p -m` gives the mode to the last directory only (its parents 0755)
            host.run(["mkdir", "-m", "0700", str(self.dirs[where]), str(self.dirs[where] / "config"),
                      str(self.dirs[where] / "data")])
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs={"ipv4": INNER["server"]},
            client_addrs={"ipv4": INNER["client"]},
            protection="encrypted",
            wire_filter="udp",  # narrowed to the peers' ports once they are known (below)
            wire_protocol="WireGuard",
            negotiated={"implementation": NAME, "backend": backend, "network": NETWORK_CIDR, "peers_cidr": PEERS_CIDR,
                        "server": "router", "server_port": port, "mtu": self.mtu, "underlay_family": "ipv4",
                        "keys": "per bring-up (each peer's invitation key replaced at install)"},
        )
        # the network, its peers' CIDR and one peer (invitation) per host, before the server serves
        self._run(router, self._server_argv("new", "--network-name", network, "--network-cidr", NETWORK_CIDR,
                                            "--external-endpoint", f"{endpoint}:{port}", "--listen-port", str(port)),
                  "innernet-server new")
        self._run(router, self._server_argv("add-cidr", network, "--name", "peers", "--cidr", PEERS_CIDR,
                                            "--parent", network, "--yes"), "innernet-server add-cidr")
        invitations = {role: self._invitation(network, role, INNER[role]) for role in ROLES}
        self.undo.defer(self._down_interfaces)  # after the server stops (newest first)
        self.undo.defer(stop_all, self.tunnel.procs)
        self.server_proc = router.spawn(self._server_argv("serve", network, "--backend", backend, "--mtu", str(self.mtu),
                                                          "--no-write-hosts"),
                                        name=SERVER, env={"RUST_LOG": "info"})
        self.tunnel.procs.append(self.server_proc)
        self._wait_serving(router, port)
        started = time.monotonic()
        for role in ROLES:
            invite = self.dirs[role] / "invitation.toml"
            self.nodes[role].write_file(invite, invitations[role], 0o600)
            self._run(self.nodes[role], self._client_argv(role, "install", str(invite), "--name", self.ifaces[role],
                                                          "--delete-invite", "--no-write-hosts", "--no-nat-traversal",
                                                          "--no-nat-candidates"), f"innernet install ({role})")
            # Each peer states its own endpoint. Left to discovery, the server learns a peer's
            # endpoint from its WireGuard device every 10 s (its endpoint refresher): a fetch within
            # that tick of the other peer's handshake got no endpoint, and the hosts, each waiting
            # for the other, never met (1 bring-up in 4 here, CI's run of 29 Nov).
            # innernet takes an override only with a set listen port: the one WireGuard already has
            port_now = str(self._listen_port(role))
            self._run(self.nodes[role], self._client_argv(role, "set-listen-port", self.ifaces[role],
                                                          "--listen-port", port_now, "--yes"),
                      f"innernet set-listen-port ({role})")
            endpoint = f"{self.ctx.underlay[role]['ipv4']}:{port_now}"
            self._run(self.nodes[role], self._client_argv(role, "override-endpoint", self.ifaces[role],
                                                          "--endpoint", endpoint, "--yes"),
                      f"innernet override-endpoint ({role})")
        # the server-side host installed first: it learns the client's endpoint now
        self._run(self.nodes["server"], self._client_argv("server", "up", self.ifaces["server"], "--no-write-hosts",
                                                          "--no-nat-traversal", "--no-nat-candidates"),
                  "innernet up (server)")
        self.handshake_s = round(time.monotonic() - started, 3)  # both installs and the fetch
        ports = [self._listen_port(role) for role in ROLES]
        self.tunnel.wire_filter = "udp and (" + " or ".join(f"port {n}" for n in [port, *ports]) + ")"
        self.tunnel.negotiated.update({"peer_ports": dict(zip(ROLES, ports)), **self._what_ran()})
        return self.tunnel

    def _invitation(self, network: str, name: str, address: str) -> str:
        """The peer's invitation (its first key pair) for the "peers" CIDR, made where the server
        runs and removed there: the peer's copy is the only one (wiped at install)."""
        control, invitation = self._control_host(), self.dirs[self.CONTROL] / f"{name}.toml"
        self._run(control, self._server_argv("--backend", self.backend, "add-peer", network, "--name", name,
                                             "--ip", address, "--cidr", "peers", "--admin", "false",
                                             "--invite-expires", INVITE_EXPIRES, "--save-config", str(invitation),
                                             "--yes"), f"innernet-server add-peer {name}")
        try:
            return control.read_file(invitation)
        finally:
            control.remove_file(invitation)

    def _router_address(self) -> str:
        """The router's address towards the client: the one endpoint both hosts reach it at (the
        server's host through the router's forwarding)."""
        route = self.ctx.router.run(["ip", "-o", "route", "get", self.ctx.underlay["client"]["ipv4"]], timeout=5).stdout.split()
        if "src" not in route:
            raise TechniqueError(f"router: no source address towards the client in `ip route get`: {' '.join(route)}")
        return route[route.index("src") + 1]

    def _wait_serving(self, router: Host, port: int) -> None:
        """Until the server's API listens (TCP, its innernet address and the WireGuard port)."""
        deadline = time.monotonic() + START_TIMEOUT
        while not router.run(["ss", "-Htln", f"sport = :{port}"], timeout=5, check=False).stdout.strip():
            if not self.server_proc.alive():
                raise TechniqueError(f"innernet-server exited: {_tail(self.server_proc.output())}")
            if time.monotonic() > deadline:
                raise TechniqueError(f"innernet-server not serving within {START_TIMEOUT:g} s: "
                                     f"{_tail(self.server_proc.output())}")
            time.sleep(0.02)

    def _listen_port(self, role: str) -> int:
        said = self.nodes[role].run(["wg", "show", self.ifaces[role], "listen-port"], timeout=10, check=False).stdout.strip()
        if not said.isdigit():
            raise TechniqueError(f"innernet: no WireGuard listen port on the {role}'s {self.ifaces[role]} ({said!r})")
        return int(said)

    def _control_host(self) -> Host | None:
        return self.ctx.router

    def _down_interfaces(self, names: list[str] | None = None) -> None:
        """Each WireGuard interface gone (or those of `names`): the kernel's deleted; a userspace
        one's socket removed by `innernet down` (wireguard-go exits when its socket goes), its
        daemon killed if it stays."""
        hosts = {self.CONTROL: self._control_host(), **self.nodes}
        for where, host in hosts.items():
            if names is not None and where not in names:
                continue
            iface = self.ifaces.get(where)
            if not iface or host is None:
                continue
            if self.backend == "kernel":
                host.run(["ip", "link", "del", "dev", iface], timeout=10, check=False)
                continue
            pids = self._wireguard_go_pids(host, iface)
            host.run(["rm", "-f", f"/var/run/wireguard/{iface}.sock", f"/var/run/wireguard/{iface}.name"],
                     timeout=10, check=False)
            if pids:
                host.run(["kill", *map(str, pids)], timeout=10, check=False)
            host.run(["ip", "link", "del", "dev", iface], timeout=10, check=False)

    def _wireguard_go_pids(self, host: Host, iface: str) -> list[int]:
        """The wireguard-go daemon innernet started for iface (its argv: the program, the name)."""
        program = builds.program(WG_GO, WG_GO, self.params.wireguard_go)
        # -ww: ps cuts args at $COLUMNS even into a pipe (the CLI sets COLUMNS for its tables): cut,
        # the line never equalled the argv and `running` read false in the test suite only
        listed = host.run(["ps", "-ww", "-eo", "pid=,args="], timeout=10, check=False).stdout.splitlines()
        return [int(pid) for pid, _, args in (line.strip().partition(" ") for line in listed)
                if args.strip() == f"{program} {iface}" and pid.isdigit()]

    # -- what ran ---------------------------------------------------------------------------------

    def _what_ran(self, role: str = "client") -> dict:
        client, router = self.nodes[role], self._control_host()
        found: dict = {}
        for key, host, build, program in (("version", client, NAME, NAME), ("server_version", router, SERVER, SERVER)):
            said = host.run([builds.program(build, program, self.params.version), "--version"], timeout=10, check=False)
            version = re.search(r"(\d+\.\d+\.\d+\S*)", said.stdout)
            found[key] = version.group(1) if version else None
        if self.backend == "userspace":
            said = client.run([builds.program(WG_GO, WG_GO, self.params.wireguard_go), "--version"], timeout=10, check=False)
            found["wireguard"] = {"implementation": WG_GO, "said": (said.stdout or said.stderr).strip().splitlines()[0:1],
                                  "running": bool(self._wireguard_go_pids(client, self.ifaces[role]))}
        else:
            found["wireguard"] = {"implementation": "kernel",
                                  "kernel": client.run(["uname", "-r"], timeout=5, check=False).stdout.strip()}
        builds_used = [(NAME, self.params.version), (SERVER, self.params.version)]
        if self.backend == "userspace":
            builds_used.append((WG_GO, self.params.wireguard_go))
        for build, version in builds_used:
            if build not in self.build_records:
                result = client.run(builds.record_command(build, version), timeout=10, check=False)
                try:
                    self.build_records[build] = json.loads(result.stdout)
                except ValueError:
                    self.build_records[build] = {"unreadable": (result.stderr or result.stdout).strip()[-200:]}
        found["builds"] = dict(self.build_records)
        found["interface_mtu"] = int(client.run(["cat", f"/sys/class/net/{self.ifaces[role]}/mtu"],
                                                timeout=5, check=False).stdout.strip() or 0)
        return found

    def evidence(self) -> dict[str, str]:
        pieces = [("router: innernet-server log", lambda: evidence.log_tail(self.server_proc))]
        pieces += [(f"{role}: wg show", lambda role=role: evidence.command(self.nodes[role], ["wg", "show", self.ifaces[role]]))
                   for role in ROLES if role in self.ifaces]
        pieces += [(f"{role}: ip addr (innernet)", lambda role=role: evidence.command(
            self.nodes[role], ["ip", "addr", "show", "dev", self.ifaces[role]])) for role in ROLES if role in self.ifaces]
        return evidence.gather(pieces)


def run_port(run_id: str) -> int:
    """This run's port for the server's WireGuard and API (6400-7099), from the run id."""
    return 6400 + (int(run_id, 16) >> 8) % 700


def _tail(output: str, lines: int = 5) -> str:
    return " | ".join(output.strip().splitlines()[-lines:]) or "no output"
