"""Rosenpass: a post-quantum key exchange whose output key is the pre-shared key of a WireGuard
tunnel, renewed by Rosenpass every ~2 minutes (the post-quantum row of S3 for WireGuard).

The tunnel beneath is vpnbench's own `wireguard` technique, brought up as it is (kernel or
userspace, any of its settings under `wireguard`), then one `rosenpass exchange` per host in the
foreground: each has a fresh Classic McEliece key pair (`rosenpass gen-keys`: a ~512 KB public
key, copied to the peer), listens on its own UDP port on the underlay, and hands every key it
agrees to `wg set IFACE peer KEY preshared-key /dev/stdin` (Rosenpass 0.2.3 runs `wg` itself, so
it works with the kernel module and wireguard-go alike; no key file is written). The client
initiates, the server only answers (it learns the client's endpoint from the exchange). The
tunnel is up once both ends hold the same pre-shared key, before WireGuard's first handshake, so
that handshake already mixes it in; the time from the initiator's start to then is the key
exchange (`handshake_s`, `negotiated.key_exchange_s`).

A key is never read by vpnbench: whether one is in place, and whether both ends hold the same,
is told by a digest computed on the host (`psk_fingerprint`).
"""

import dataclasses
import json
import re
import time
from typing import Literal

from pydantic import Field, model_validator

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import TechniqueParams
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds, evidence
from vpnbench.hosts.base import Host, Proc, stop_all
from vpnbench.techniques.base import BackendStatus, Technique, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import Expectation
from vpnbench.techniques.wireguard import WireGuard, WireGuardParams, latest_handshake
from vpnbench.testbeds.probe import KernelProbe

NAME = "rosenpass"  # the build (builds.RECIPES) and its program
# Rosenpass 0.2.3 (pqkem.rs): the static KEM authenticates the peers, the ephemeral one gives forward secrecy.
KEM = "Classic McEliece 460896 (static) + Kyber 512 (ephemeral)"
PROTOCOL = "WireGuard + Rosenpass"
# Its log lines (app_server.rs, at info level with `verbose`): a new key agreed and handed to wg,
# or a key that expired unrenewed replaced by a random one (the tunnel then stops until the next).
EXCHANGED = "Exchanged key with peer"
ERASED = "Erasing outdated key from peer"
LOG_ENV = {"RUST_LOG": "info"}  # env_logger: without it only errors are printed
# s for `rosenpass gen-keys` (~0.2 s here), stretched likewise. A cap on a hung key generation,
# not what a run waits: stop 70's halved `make test` timed out at 60 s x 1.5 in the TCG guest,
# two tests at a time there, with McEliece's key generation on both ends at once
KEYGEN_TIMEOUT = 240.0
START_TIMEOUT = 30.0  # s until both ends hold the first key (stretched on a slow host, as in a TCG guest)
# The pre-shared key of the interface's one peer, as a digest: computed on the host, so the key
# passes only through pipes and a shell variable there (printf is the shell's own), never argv or
# vpnbench. Prints nothing while the peer has none ("(none)").
PSK_FINGERPRINT = ('k=$(wg show "$1" preshared-keys | cut -f2) && [ -n "$k" ] && [ "$k" != "(none)" ] && '
                   'printf %s "$k" | sha256sum | cut -c1-16')
# The client's peer removed and added back as `wg showconf` has it, pre-shared key included: the
# session is dropped, so the next packet starts a WireGuard handshake with the key in place now.
READD_PEER = ('conf=$(wg showconf "$1" | sed -n "/^\\[Peer\\]/,\\$p") && [ -n "$conf" ] && '
              'wg set "$1" peer "$2" remove && printf "%s\\n" "$conf" | wg addconf "$1" /dev/stdin')


class RosenpassParams(TechniqueParams):
    kind: Literal["rosenpass"] = "rosenpass"
    version: builds.version_type(NAME) = None  # rosenpass's; the WireGuard beneath has its own settings
    port: int = Field(9999, ge=1, le=65535)  # rosenpass's UDP port on both ends
    wireguard: WireGuardParams = Field(default_factory=WireGuardParams)  # the tunnel whose PSK it sets

    @model_validator(mode="after")
    def _consistent(self) -> "RosenpassParams":
        wg = self.wireguard
        if wg.psk:
            raise ValueError("wireguard.psk: rosenpass sets the pre-shared key itself; allowed values: false")
        if wg.label is not None or wg.congestion_control is not None:
            key = "label" if wg.label is not None else "congestion_control"
            raise ValueError(f"wireguard.{key}: set it on the technique itself, not under wireguard")
        if wg.tunnels != 1:
            raise ValueError("wireguard.tunnels: rosenpass keys one WireGuard peer; allowed values: 1")
        if self.port == wg.port:
            raise ValueError(f"port: {self.port} is the WireGuard port (wireguard.port) on the same address; "
                             "allowed: any other port 1-65535")
        return self

    def non_default_settings(self) -> dict:
        """The WireGuard settings that differ, as `wireguard.KEY` (a label names them, not the whole table)."""
        own = {k: v for k, v in super().non_default_settings().items() if k != "wireguard"}
        return own | {f"wireguard.{k}": v for k, v in self.wireguard.non_default_settings().items()}


class Rosenpass(Technique):
    kind = "rosenpass"
    Params = RosenpassParams
    description = "Rosenpass (Classic McEliece + Kyber) setting WireGuard's pre-shared key"
    packages = WireGuard.packages  # rosenpass itself is a build of vpnbench's (builds.RECIPES)
    kernel_features = WireGuard.kernel_features
    versions = {NAME: f"{builds.program(NAME, NAME)} --version 2>&1 | head -1"}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "rosenpass keys one WireGuard peer per pair of hosts, one exchange on each"

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        """WireGuard's: Rosenpass sends its own packets beside the tunnel, never inside or around them."""
        return WireGuard.expectation(settings.get("wireguard") or {}, underlay_mtu)

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        """WireGuard's data paths, each needing the pinned rosenpass build on the hosts too."""
        lacking = probe.host_lacking(builds.program(NAME, NAME))
        missing = builds.missing_reason(NAME, None, lacking) if lacking else ""
        return [BackendStatus(s.name, s.available and not missing, "; ".join(r for r in (s.reason, missing) if r))
                for s in WireGuard.backends(probe)]

    @classmethod
    def resolve_backend(cls, params: RosenpassParams, probe: KernelProbe) -> str:
        lacking = probe.host_lacking(builds.program(NAME, NAME, params.version))
        if lacking:
            raise ValueError(builds.missing_reason(NAME, params.version, lacking))
        return WireGuard.resolve_backend(params.wireguard, probe)

    @classmethod
    def cannot_rekey(cls, params: RosenpassParams) -> str | None:
        return None

    def __init__(self, params: RosenpassParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.wireguard = WireGuard(params.wireguard, ctx)
        self.daemons: dict[str, Proc] = {}  # role -> its rosenpass
        self.config: dict[str, list[str]] = {}  # role -> the words after `rosenpass exchange`
        self.keys_before: dict[str, int] = {}  # role -> keys its rosenpass processes stopped so far agreed

    def up(self, backend: str) -> Tunnel:
        p = self.params
        self.handshake_s, self.daemons, self.config, self.keys_before = None, {}, {}, {}
        self.undo.defer(self.wireguard.down)  # down() of what it did so far, even if its up() fails
        beneath = self.wireguard.up(backend)
        program = builds.program(NAME, NAME, p.version)
        family = p.wireguard.family
        generating = time.monotonic()
        self._generate_keys(program)
        keygen_s = round(time.monotonic() - generating, 4)
        for role, peer in (("server", "client"), ("client", "server")):
            host = self._host(role)
            self.config[role] = [
                "public-key", str(self._key(role, "pk")), "secret-key", str(self._key(role, "sk")),
                "listen", _address(self.ctx.underlay[role][family], p.port), "verbose",
                "peer", "public-key", str(self._key(peer, "pk")),
                # the client initiates; the server answers and learns the client's endpoint from it
                *(["endpoint", _address(self.ctx.underlay[peer][family], p.port)] if role == "client" else []),
                "wireguard", self.wireguard.ifaces[role], _peer_public_key(host, self.wireguard.ifaces[role])]
        self.tunnel = dataclasses.replace(
            beneath, procs=list(beneath.procs), wire_filter=wire_filter(family, p.wireguard.port, p.port),
            negotiated={"implementation": NAME, "version": _version(self.ctx.client, program),
                        "build": self._build_record(), "kem": KEM, "protocol": PROTOCOL, "psk": "rosenpass",
                        "port": p.port, "keygen_s": keygen_s, "wireguard_backend": backend, "wireguard": beneath.negotiated})
        self.undo.defer(lambda: stop_all(list(self.daemons.values())))
        self._start("server", program)
        server = self.daemons["server"]
        deadline = time.monotonic() + START_TIMEOUT * self.ctx.server.slowdown
        while not self.ctx.server.listening(server, p.port, udp=True):  # before the client's first message
            self._check_alive(deadline, "listening")
            time.sleep(0.01)
        started = time.monotonic()
        self._start("client", program)
        self._wait_same_psk(None, START_TIMEOUT * self.ctx.client.slowdown)
        self.handshake_s = round(time.monotonic() - started, 4)
        self.tunnel.negotiated["key_exchange_s"] = self.handshake_s
        return self.tunnel

    def rekey(self, timeout: float = 10.0) -> dict:
        """A new post-quantum exchange now, and WireGuard using its key: Rosenpass renews the key
        by itself every ~2 minutes and has no command to do it now, so the client's rosenpass is
        restarted (a fresh initiator starts an exchange at once; the server's answers it); once
        both ends hold the new key, the client's WireGuard peer is re-added with it, so the next
        packet starts a handshake that mixes it in (as the wireguard technique's rekey, an upper
        bound of the cost: WireGuard itself would keep the old session until its own rekey)."""
        if self.tunnel is None:
            raise TechniqueError("rosenpass: not up")
        client, iface = self.ctx.client, self.wireguard.ifaces["client"]
        before = psk_fingerprint(client, iface)
        started = time.monotonic()
        self._restart("client")
        self._wait_same_psk(before, timeout * client.slowdown)
        exchanged = round(time.monotonic() - started, 4)
        handshake_before = latest_handshake(client, iface)
        client.run(["sh", "-c", READD_PEER, "sh", iface, _peer_public_key(client, iface)], timeout=10)
        deadline = time.monotonic() + timeout * client.slowdown
        while (handshake_after := latest_handshake(client, iface)) == 0:  # a re-added peer has had none yet
            if time.monotonic() > deadline:
                raise TechniqueError(f"rekey: no WireGuard handshake with the new key within {timeout:g} s")
            time.sleep(0.05)
        return {"how": "client's rosenpass restarted (a new exchange), then its WireGuard peer re-added with the new key",
                "psk_changed": True, "psk_exchange_s": exchanged,
                "handshake_before": handshake_before, "handshake_after": handshake_after}

    def keys_agreed(self) -> dict[str, int]:
        """Keys each end's rosenpass agreed since up() (its log): 1 after the first exchange, one
        more per renewal (its own every ~2 minutes, or a rekey's)."""
        return {role: self.keys_before.get(role, 0) + proc.output().count(EXCHANGED)
                for role, proc in self.daemons.items()}

    def down(self) -> None:
        """What the ends agreed while up goes into the negotiated record (the bring-up stores it
        when it ends): the renewals a soak saw, and any key that expired unrenewed."""
        if self.tunnel is not None:
            self._note_renewals()
        super().down()

    def failure(self) -> str | None:
        died = super().failure()
        if died and self.tunnel is not None:  # the bring-up ends before down(): note what was agreed now
            self._note_renewals()
        return died

    def evidence(self) -> dict[str, str]:
        """WireGuard's (`wg show` says "preshared key: (hidden)" once one is set) and rosenpass's logs."""
        pieces = self.wireguard.evidence()
        pieces.update(evidence.gather((f"{role}: rosenpass log", lambda proc=proc: evidence.log_tail(proc))
                                      for role, proc in self.daemons.items()))
        return pieces

    def _note_renewals(self) -> None:
        self.tunnel.negotiated["psk_keys_agreed"] = self.keys_agreed()
        erased = sum(proc.output().count(ERASED) for proc in self.daemons.values())
        if erased:
            self.tunnel.negotiated["warning"] = f"{erased} pre-shared keys expired unrenewed (rosenpass erased them)"

    def _host(self, role: str) -> Host:
        return self.ctx.client if role == "client" else self.ctx.server

    def _key(self, role: str, which: Literal["sk", "pk"]):
        return self.ctx.resources.path(f"rosenpass-{role}.{which}")

    def _generate_keys(self, program: str) -> None:
        """A fresh key pair on each host (its secret key 0600: gen-keys writes with the umask), the
        public key copied to the peer's host; every copy wiped at down()."""
        hosts = {role: self._host(role) for role in ("client", "server")}
        generating = {}
        for role, host in hosts.items():  # both at once: McEliece's key generation is most of the set-up
            secret, public = self._key(role, "sk"), self._key(role, "pk")
            for key in (secret, public):  # made by gen-keys, not write_file: recorded here for cleanup
                host.remember_file(key)
                self.undo.defer(wipe, host, key)
            generating[role] = host.spawn(["sh", "-c", 'umask 077 && exec "$@"', "sh", program, "gen-keys",
                                           "--secret-key", str(secret), "--public-key", str(public)], name="gen-keys")
        for role, proc in generating.items():
            if proc.wait(KEYGEN_TIMEOUT * hosts[role].slowdown) != 0:
                proc.stop()
                raise TechniqueError(f"{role}: rosenpass gen-keys failed: {proc.output().strip()[-300:] or 'timed out'}")
        if hosts["client"].machine is not None and hosts["client"].machine == hosts["server"].machine:
            return  # namespaces of one machine: one filesystem, each public key is already there
        for role, peer in (("client", "server"), ("server", "client")):
            public = self._key(role, "pk")
            self.undo.defer(wipe, hosts[peer], public)
            hosts[peer].write_file(public, hosts[role].read_file(public), 0o600)

    def _start(self, role: str, program: str) -> None:
        proc = self._host(role).spawn([program, "exchange", *self.config[role]], name=NAME, env=LOG_ENV)
        self.daemons[role] = proc
        self.tunnel.procs.append(proc)

    def _restart(self, role: str) -> None:
        old = self.daemons[role]
        old.stop()
        self.keys_before[role] = self.keys_before.get(role, 0) + old.output().count(EXCHANGED)
        self.tunnel.procs.remove(old)
        self._start(role, builds.program(NAME, NAME, self.params.version))

    def _check_alive(self, deadline: float, waiting_for: str) -> None:
        for role, proc in self.daemons.items():
            if not proc.alive():
                raise TechniqueError(f"{role}'s rosenpass exited: {proc.output().strip()[-300:]}")
        if time.monotonic() > deadline:
            raise TechniqueError(f"rosenpass: {waiting_for} not reached in time; "
                                 + "; ".join(f"{r}: {p.output().strip()[-200:]}" for r, p in self.daemons.items()))

    def _wait_same_psk(self, before: str | None, timeout: float) -> None:
        """Until both ends hold one pre-shared key, and not the one `before` (a digest) was of."""
        deadline = time.monotonic() + timeout
        while True:
            ends = [psk_fingerprint(self._host(role), self.wireguard.ifaces[role]) for role in ("client", "server")]
            if ends[0] is not None and ends[0] == ends[1] and ends[0] != before:
                return
            self._check_alive(deadline, "the same new pre-shared key on both ends")
            time.sleep(0.01)

    def _build_record(self) -> dict:
        """BUILD.json of the rosenpass that runs, read on each host (one record where they agree)."""
        records = {}
        for role in ("client", "server"):
            result = self._host(role).run(builds.record_command(NAME, self.params.version), timeout=10, check=False)
            try:
                records[role] = json.loads(result.stdout)
            except ValueError:
                records[role] = {"unreadable": (result.stdout + result.stderr).strip()[-200:]}
        return records["client"] if records["client"] == records["server"] else records


def psk_fingerprint(host: Host, iface: str) -> str | None:
    """A digest of the pre-shared key of the interface's peer (computed on the host), None for none."""
    result = host.run(["sh", "-c", PSK_FINGERPRINT, "sh", iface], timeout=10, check=False)
    return result.stdout.strip() or None


def wire_filter(family: str, wireguard_port: int, rosenpass_port: int) -> str:
    """What the protocol looks like on the underlay: WireGuard transport data to its port (message
    type 4 and three zero bytes) or Rosenpass's messages to its port (types 0x81-0x86: InitHello,
    RespHello, InitConf, EmptyData, Data, CookieReply; msgs.rs). The marker pings cross as the first.
    tcpdump's udp[] indexes only IPv4, so over IPv6 the payload is read at ip6[48] (no extension headers)."""
    payload = "udp[8" if family == "ipv4" else "ip6[48"
    return (f"(udp port {wireguard_port} and {payload}:4] = 0x04000000) or "
            f"(udp port {rosenpass_port} and {payload}] >= 0x81 and {payload}] <= 0x86)")


def _address(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _peer_public_key(host: Host, iface: str) -> str:
    """The WireGuard public key of the interface's one peer (`wg show IFACE peers`)."""
    keys = host.run(["wg", "show", iface, "peers"], timeout=10).stdout.split()
    if len(keys) != 1:
        raise TechniqueError(f"rosenpass: {iface} has {len(keys)} WireGuard peers, expected one")
    return keys[0]


def _version(host: Host, program: str) -> str:
    """The exact version that runs (`rosenpass --version`: "rosenpass 0.2.3")."""
    out = host.run([program, "--version"], timeout=10, check=False).stdout
    found = re.search(r"\d+\.\d+\.\d+\S*", out)
    return found.group(0) if found else out.strip()[:64]
