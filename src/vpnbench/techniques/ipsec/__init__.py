"""IPsec (IKEv2 + ESP) as the studies ran it: strongSwan or Libreswan, every cipher they compared,
with the kernel's xfrm data path or strongSwan's userspace one (kernel-libipsec over a TUN device).

Tunnel mode puts an inner address on each host's loopback and protects traffic between
the inner addresses of both families; transport mode protects traffic between the two
underlay addresses of `family`. What charon or pluto actually negotiated is read back and stored.
"""

import secrets
import warnings
from typing import Literal

from pydantic import Field, model_validator

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import Family, TechniqueParams
from vpnbench.hosts import evidence
from vpnbench.techniques.base import BackendStatus, Ends, Technique, TechniqueContext, Tunnel
from vpnbench.techniques.ipsec import l2tp, libreswan, strongswan
from vpnbench.techniques.ipsec.proposals import CIPHERS, DEFAULT_IKE, PQ_KE, weak_ike_warning, xfrm_probe_commands
from vpnbench.techniques.overhead import IP_HEADER, Expectation, esp_outer, expectation_of, l2tp_esp_outer
from vpnbench.testbeds.probe import KernelProbe

INNER = {
    "client": {"ipv4": "10.98.0.1", "ipv6": "fd98::1"},
    "server": {"ipv4": "10.98.0.2", "ipv6": "fd98::2"},
}
PROPOSAL = r"^[a-z0-9_]+(-[a-z0-9_]+)*$"
# kernel-libipsec's TUN device (ipsec0) comes up with MTU 1400 (strongSwan 5.9 here), below
# what ESP-in-UDP over a 1500-byte underlay allows: the device, not the protocol, sets the MTU.
LIBIPSEC_TUN_MTU = 1400
# The most CHILD SAs (tunnels) one bring-up holds: measured here with kernel-libipsec (docs/config.md)
CHILD_SA_CEILING = 1000
# How long the initiator waits for tunnels = N CHILD SAs: a base, and a share per child (the
# exchanges run one after another on the IKE SA)
CHILDREN_TIMEOUT_S, CHILD_TIMEOUT_S = 15.0, 0.1


class IPsecParams(TechniqueParams):
    kind: Literal["ipsec"] = "ipsec"
    implementation: Literal["strongswan", "libreswan"] = "strongswan"
    backend: Literal["auto", "kernel", "userspace"] = "auto"
    cipher: Literal[tuple(CIPHERS)] = "aes128gcm16"  # the ESP proposal
    ike: str = Field(DEFAULT_IKE, pattern=PROPOSAL)  # IKE proposal, strongSwan syntax
    mode: Literal["tunnel", "transport"] = "tunnel"
    ipcomp: bool = False
    family: Family = "ipv4"  # underlay family of IKE and ESP
    auth: Literal["psk", "pubkey"] = "psk"
    ppk: bool = False  # RFC 8784 post-quantum preshared key mixed into IKEv2
    ke: Literal[("none", *PQ_KE)] = "none"  # additional (post-quantum) key exchange
    l2tp: bool = False  # L2TP/IPsec (xl2tpd over transport mode), as S4 ran it
    mobike: bool = True  # strongSwan: IKEv2 MOBIKE (RFC 4555), its default; false turns it off

    def settings(self) -> dict:
        """Without mobike at its default: cells stored before it existed had it on, and stay equal."""
        settings = super().settings()
        if settings.get("mobike") is True:
            del settings["mobike"]
        return settings

    @model_validator(mode="after")
    def _consistent(self):
        if self.l2tp and self.mode != "transport":
            raise ValueError("l2tp: L2TP/IPsec runs over transport mode; set mode = \"transport\"")
        if self.l2tp and self.family != "ipv4":
            raise ValueError("l2tp: xl2tpd runs over an IPv4 underlay only; set family = \"ipv4\"")
        if self.implementation == "libreswan":
            if not self.mobike:
                raise ValueError("mobike: only strongSwan's is switched by vpnbench; allowed with libreswan: true")
            if self.backend == "userspace":
                raise ValueError("backend: libreswan has no userspace data path; allowed values: auto, kernel")
            libreswan.ike_proposal(self.ike)  # raises, naming the field, when Libreswan has no word for it
        warning = weak_ike_warning(self.ike)
        if warning:
            warnings.warn(warning, stacklevel=2)
        return self


class IPsec(Technique):
    kind = "ipsec"
    packages = {"swanctl": "strongswan-swanctl", "xl2tpd": "xl2tpd", "pppd": "ppp"}
    kernel_features = {"kernel": "xfrm with ESP (CONFIG_INET_ESP, CONFIG_XFRM_USER)",
                       "userspace": "TUN (/dev/net/tun), strongSwan's kernel-libipsec plugin"}
    Params = IPsecParams
    description = "IPsec: IKEv2 (strongSwan or Libreswan) with ESP, kernel xfrm or userspace libipsec"
    versions = {"strongswan": "swanctl --help 2>&1 | head -1",
                "libreswan": "/opt/vpnbench/libreswan/usr/sbin/ipsec --version 2>/dev/null | head -1"}

    @classmethod
    def kernel_rows(cls, probe: KernelProbe) -> dict[str, bool]:
        return {"esp (xfrm)": kernel_has_esp(probe)}

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        family = settings.get("family", "ipv4")
        cipher, mode = settings.get("cipher", "aes128gcm16"), settings.get("mode", "tunnel")
        natt = settings.get("backend") == "userspace"  # libipsec: ESP always in UDP (strongswan.py)
        c = CIPHERS[cipher].wire
        how = (f"ESP {mode} mode {cipher} over {family}{' in UDP (NAT-T)' if natt else ''}: "
               f"{'outer IP ' + str(IP_HEADER[family]) + ' + ' if mode == 'tunnel' else ''}"
               f"{'UDP 8 + ' if natt else ''}ESP 8 + IV {c.iv} + padding to {c.block} with trailer 2 + ICV {c.icv}")
        if settings.get("l2tp"):  # the SA protects the UDP packet that carries the inner one
            how += " over UDP 8 + L2TPv2 6 + PPP 4 + the inner IP packet"
            return expectation_of(lambda n: l2tp_esp_outer(n, c, natt), underlay_mtu, l2tp.MTU, False, how)
        device = None
        if natt and settings.get("implementation", "strongswan") == "strongswan":
            device = LIBIPSEC_TUN_MTU
        return expectation_of(lambda n: esp_outer(n, family, c, mode, natt), underlay_mtu, device, False, how)

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        """What each data path can do here with the default proposal (doctor lists per cipher)."""
        return [BackendStatus(name, *_availability(IPsecParams(backend=name), name, probe))
                for name in ("kernel", "userspace")]

    @classmethod
    def resolve_backend(cls, params: IPsecParams, probe: KernelProbe) -> str:
        """kernel where the kernel has ESP (and this cipher), userspace otherwise; a reason when neither."""
        names = ["kernel", "userspace"] if params.backend == "auto" else [params.backend]
        reasons = []
        for name in names:
            ok, reason = _availability(params, name, probe)
            if ok:
                return name
            reasons.append(f"{name}: {reason}")
        raise ValueError(("no backend available (" + "; ".join(reasons) + ")") if params.backend == "auto"
                         else f"backend {params.backend!r} is not available: {reasons[0].split(': ', 1)[1]}")

    @classmethod
    def agreed(cls, negotiated: dict) -> str:
        """'IKEv2 AES_GCM_8-128 PRF_HMAC_SHA2_256 MODP_1024 · ESP AES_GCM_8-128 · tunnel · in UDP':
        the algorithms, mode and encapsulation of the SAs in use (the SPIs, selectors, the
        implementation and the settings asked stay in the full record)."""
        ike, child = negotiated.get("ike") or {}, negotiated.get("child") or {}
        parts = []
        if ike:
            parts.append(f"IKEv{ike.get('version', '?')} " + _algorithms(ike, ("integ-alg", "prf-alg", "dh-group")))
        if child:
            parts.append(f"{child.get('protocol', 'ESP')} " + _algorithms(child, ("integ-alg", "dh-group")))
            if child.get("mode"):
                parts.append(child["mode"].lower())
            parts.append("in UDP" if child.get("encap") == "yes" else "not in UDP")
        return " · ".join(parts)

    @classmethod
    def cannot_rekey(cls, params: IPsecParams) -> str | None:
        if params.implementation != "strongswan":
            return "ipsec: rekey is forced through strongSwan's swanctl; implementation = \"libreswan\" is not supported"
        return None

    def rekey(self) -> dict:
        """The CHILD SA rekeyed by the initiator's charon (a CREATE_CHILD_SA exchange; the IKE SA stays)."""
        reason = self.cannot_rekey(self.params)
        if reason or self.tunnel is None:
            raise TechniqueError(reason or "ipsec: not up")
        return self.daemons["client"].rekey([strongswan.child_name(i) for i in range(self.params.tunnels)])

    @classmethod
    def tunnel_ceiling(cls, params: IPsecParams) -> tuple[int, str]:
        if params.l2tp:
            return 1, "L2TP/IPsec is one PPP session over one transport-mode SA between the two hosts"
        if params.implementation == "libreswan":
            return 1, "vpnbench gives Libreswan one connection with one subnet per side"
        if params.mode == "transport":
            return 1, "transport mode protects the two hosts' own addresses: one pair of hosts is one SA"
        return CHILD_SA_CEILING, ("one CHILD SA per tunnel under one IKE SA on one charon per host; swanctl loads "
                                  "the connection in one vici message of at most 512 KiB, about 3 000 children; "
                                  f"{CHILD_SA_CEILING} measured")

    @classmethod
    def cannot_restart_server(cls, params: IPsecParams) -> str | None:
        if params.implementation != "strongswan" or params.l2tp:
            return "ipsec: only strongSwan's charon (without L2TP) is restarted by vpnbench; set implementation = \"strongswan\""
        return None

    def restart_server(self) -> dict:
        """The server's charon stopped and started again with the same configuration (it has lost
        its SAs, as after a crash), then it initiates to the client, as `start_action = start`
        would: without DPD (off here) the client would never notice the loss by itself."""
        reason = self.cannot_restart_server(self.params)
        if reason or self.tunnel is None:
            raise TechniqueError(reason or "ipsec: not up")
        charon = self.daemons["server"]
        where = self.tunnel.procs.index(charon.proc)
        charon.proc.stop(5)
        self.tunnel.procs[where] = charon.start(self.tunnel.backend)
        charon.swanctl("--load-all", "--noprompt")
        charon.initiate()
        return {"how": "charon on the server stopped, started and loaded again; it initiated to the client",
                "dpd": "off", "mobike": self.params.mobike}

    def __init__(self, params: IPsecParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        # name ("client", "server", "l2tp-client", ...) -> the daemon up() started there
        self.daemons: dict[str, strongswan.Charon | libreswan.Pluto | l2tp.Xl2tpd] = {}

    def up(self, backend: str) -> Tunnel:
        p = self.params
        self.handshake_s = None
        self.daemons = {}
        cipher = CIPHERS[p.cipher]
        if p.l2tp:  # traffic goes over the PPP link that L2TP carries
            server_addrs, client_addrs = {"ipv4": l2tp.INNER["server"]}, {"ipv4": l2tp.INNER["client"]}
        elif p.mode == "tunnel":
            server_addrs = {f: INNER["server"][f] for f in self._inner_families()}
            client_addrs = {f: INNER["client"][f] for f in self._inner_families()}
        else:
            server_addrs = {p.family: self.ctx.underlay["server"][p.family]}
            client_addrs = {p.family: self.ctx.underlay["client"][p.family]}
        # tunnels 2..N (tunnel mode only, tunnel_ceiling): each its own pair of inner addresses
        more = [Ends(client_addrs, server_addrs).nth(i) for i in range(1, p.tunnels)]
        self.tunnel = Tunnel(
            backend=backend, server_addrs=server_addrs, client_addrs=client_addrs, more=more,
            protection="encrypted" if cipher.encrypts else "integrity-only",
            # ESP, or ESP in UDP on 4500 (always so on the userspace path)
            wire_filter="udp port 4500" if backend == "userspace" else "esp or udp port 4500",
            compresses=p.ipcomp,
        )
        # Undone last: a daemon killed hard leaves its SAs and policies behind, and charon its routes
        for role in ("client", "server"):
            self.undo.defer(self._flush, self._host(role), backend)
        if p.mode == "tunnel":
            for role in ("server", "client"):
                self._add_inner(role)
        if p.implementation == "libreswan":
            got = self._up_libreswan()
        else:
            got = self._up_strongswan(backend)
        if p.l2tp:
            got["l2tp"] = self._up_l2tp()
        self.tunnel.negotiated = {"implementation": p.implementation, "asked": p.non_default_settings(), **got}
        if p.implementation == "strongswan":  # what follows a moved client or a lost peer (motion kind)
            self.tunnel.negotiated.update(mobike=p.mobike, dpd="off")
        warning = weak_ike_warning(p.ike)
        if warning:
            self.tunnel.negotiated["warnings"] = [warning]
        return self.tunnel

    def _up_strongswan(self, backend: str) -> dict:
        p = self.params
        auth = self._credentials()
        ppk_secret = secrets.token_hex(32) if p.ppk else None
        for role in ("server", "client"):
            charon = strongswan.Charon(self._host(role), self.ctx.resources.path(f"swan-{role}"))
            self.daemons[role] = charon
            self.undo.defer(charon.stop)  # stops what its start got to, and wipes its directory
            self.tunnel.procs.append(charon.start(backend))
            charon.load(strongswan.swanctl_conf(self._side(role), p, backend, auth[role], ppk_secret),
                        auth[role]["files"])
        client = self.daemons["client"]
        if p.tunnels == 1:
            client.initiate(self.exchange_timeout)
        else:  # its children started as the config loaded (Side.start_children)
            client.wait_for_children(p.tunnels, CHILDREN_TIMEOUT_S + p.tunnels * CHILD_TIMEOUT_S)
        self.handshake_s = strongswan.handshake_seconds(client.proc.output())
        got = strongswan.negotiated(client.list_sas())
        if p.tunnels > 1:
            got["children"] = p.tunnels
            got["all_children_s"] = strongswan.all_children_seconds(client.proc.output())
        return got

    def _up_libreswan(self) -> dict:
        """pluto on both hosts (fresh NSS databases; a fresh PSK or RSA key pair per host),
        the connection added on both, initiated by the client."""
        p = self.params
        for role in ("server", "client"):
            self.daemons[role] = libreswan.Pluto(self._host(role), self.ctx.resources.path(f"lswan-{role}"))
            self.undo.defer(self.daemons[role].stop)  # stops what prepare and start got to, wipes its directory
            self.daemons[role].prepare()
        if p.auth == "psk":
            psk = secrets.token_hex(32)
            auth = {role: {"lines": "  authby=secret", "secrets": f'@client.vpnbench @server.vpnbench : PSK "{psk}"\n'}
                    for role in ("server", "client")}
        else:
            public = {role: self.daemons[role].generate_key() for role in ("server", "client")}
            auth = {role: {"lines": f"  authby=rsasig\n  leftrsasigkey={public[role]}\n  rightrsasigkey={public[peer]}",
                           "secrets": ""}
                    for role, peer in (("client", "server"), ("server", "client"))}
        if p.ppk:  # a fresh post-quantum preshared key; ppk=insist: no IKE SA without it
            ppk = f'@client.vpnbench @server.vpnbench : PPKS "ppk@vpnbench" "{secrets.token_hex(32)}"\n'
            for role in auth:
                auth[role]["secrets"] += ppk
        for role in ("server", "client"):
            pluto = self.daemons[role]
            self.tunnel.procs.append(pluto.start(auth[role]["secrets"]))
            pluto.add(libreswan.ipsec_conf(self._conn(role), p, auth[role]))
        self.daemons["client"].initiate()
        return libreswan.negotiated(self.daemons["client"].status())

    def _up_l2tp(self) -> dict:
        """xl2tpd over the established transport SA: the LNS, then the LAC that dials it."""
        password = secrets.token_hex(16)
        for role in ("server", "client"):
            daemon = l2tp.Xl2tpd(self._host(role), self.ctx.resources.path(f"l2tp-{role}"))
            self.daemons[f"l2tp-{role}"] = daemon
            self.undo.defer(daemon.stop)  # before its SA's daemons: registered after them
            config = l2tp.lns_conf(self.ctx.underlay["client"]["ipv4"]) if role == "server" \
                else l2tp.lac_conf(self.ctx.underlay["server"]["ipv4"])
            self.tunnel.procs.append(daemon.start(config, password))
            if role == "server":
                daemon.wait_for_listening()
        self.daemons["l2tp-client"].wait_for_link(l2tp.INNER["client"])
        return {"port": l2tp.PORT, "ppp_mtu": l2tp.MTU, "ppp_auth": "MS-CHAPv2",
                "client": l2tp.INNER["client"], "server": l2tp.INNER["server"]}

    def _host(self, role: str):
        return self.ctx.client if role == "client" else self.ctx.server

    def _inner_families(self) -> tuple[str, ...]:
        """Tunnel mode carries both inner families, except with IPComp: the kernel refuses an
        IPComp SA whose inner family differs from the outer one (connect: File exists); and
        with Libreswan, whose IKEv2 connection has one subnet per side."""
        one = self.params.ipcomp or self.params.implementation == "libreswan"
        return (self.params.family,) if one else ("ipv4", "ipv6")

    def _conn(self, role: str) -> libreswan.Conn:
        peer = "server" if role == "client" else "client"
        family = self.params.family
        subnets = {r: None for r in (role, peer)}
        if self.params.mode == "tunnel":
            prefix = {"ipv4": "32", "ipv6": "128"}[family]
            subnets = {r: f"{INNER[r][family]}/{prefix}" for r in (role, peer)}
        return libreswan.Conn(role, peer, self.ctx.underlay[role][family], self.ctx.underlay[peer][family],
                              subnets[role], subnets[peer], l2tp.PORT if self.params.l2tp else None)

    def _side(self, role: str) -> strongswan.Side:
        peer = "server" if role == "client" else "client"
        family = self.params.family
        if self.params.mode == "tunnel":
            first = self.tunnel.every()[0]
            local_ts, remote_ts = _selectors(first, role), _selectors(first, peer)
        else:  # the two underlay addresses; with L2TP only its UDP port, as L2TP/IPsec does
            local_ts = remote_ts = f"dynamic[udp/{l2tp.PORT}]" if self.params.l2tp else "dynamic"
        more_ts = [(_selectors(ends, role), _selectors(ends, peer)) for ends in self.tunnel.more]
        return strongswan.Side(role, peer, self.ctx.underlay[role][family], self.ctx.underlay[peer][family],
                               local_ts, remote_ts, more_ts, start_children=role == "client" and bool(more_ts))

    def _add_inner(self, role: str) -> None:
        """The inner addresses (every tunnel's) live on loopback; charon routes the peer's via the
        SA (table 220), pluto's _updown through the underlay's next hop with the inner source.
        One `ip -batch` adds them all: a thousand tunnels are one command, not two thousand."""
        host = self._host(role)
        prefix = {"ipv4": "32", "ipv6": "128"}
        addresses = [f"{getattr(ends, role)[family]}/{prefix[family]}"
                     for ends in self.tunnel.every() for family in self._inner_families()]
        # Registered first: a batch that fails midway leaves those it added; -force goes on past
        # the ones not there
        self.undo.defer(host.run, ["ip", "-force", "-batch", "-"], check=False,
                        input="".join(f"addr del {a} dev lo\n" for a in addresses))
        host.run(["ip", "-batch", "-"], input="".join(f"addr add {a} dev lo\n" for a in addresses))

    def _credentials(self) -> dict[str, dict]:
        """Fresh per bring-up: one PSK, or one key pair per host (raw public keys).
        Per role: the auth lines of both ends, the secrets section and credential files."""
        if self.params.auth == "psk":
            psk = secrets.token_hex(32)
            creds = {"local": "      auth = psk", "remote": "      auth = psk", "files": {},
                     "secrets": _section("ike-1", {"id-1": "client@vpnbench", "id-2": "server@vpnbench",
                                                   "secret": f"0x{psk}"})}
            return {"client": creds, "server": creds}
        keys = {role: strongswan.generate_key() for role in ("client", "server")}
        return {role: {"local": "      auth = pubkey\n      pubkeys = local.pem",
                       "remote": "      auth = pubkey\n      pubkeys = peer.pem", "secrets": "",
                       "files": {"private/key.pem": keys[role][0], "pubkey/local.pem": keys[role][1],
                                 "pubkey/peer.pem": keys[peer][1]}}
                for role, peer in (("client", "server"), ("server", "client"))}

    def handshake_attempts(self) -> dict[str, int]:
        """strongSwan: the IKE requests the initiator's charon sent again (only an initiator
        retransmits in IKEv2); Libreswan's pluto is not read."""
        client = self.daemons.get("client")
        if not isinstance(client, strongswan.Charon) or client.proc is None:
            return {}
        return {"ike_retransmits": strongswan.retransmits(client.proc.output())}

    def evidence(self) -> dict[str, str]:
        """Per host: the SAs as the IKE daemon sees them, its log tail, and the kernel's xfrm SAs
        (key material hidden: no `ip -s`); with L2TP, pppd's log too."""
        pieces = []
        for role, daemon in self.daemons.items():
            role = role.removeprefix("l2tp-")
            pieces += _daemon_evidence(role, daemon)
        if self.tunnel is not None and self.tunnel.backend == "kernel":
            pieces += [(f"{role}: ip xfrm policy", lambda role=role: evidence.command(
                self._host(role), ["ip", "xfrm", "policy"])) for role in ("client", "server")]
        return evidence.gather(pieces)

    @staticmethod
    def _flush(host, backend: str) -> None:
        """The SAs, policies and charon's route table gone: one `ip -force -batch` (each line
        tried whatever the one before did), not a command each (~0.1 s apiece in the TCG VM)."""
        lines = ["xfrm state flush", "xfrm policy flush"] if backend == "kernel" else []
        host.run(["ip", "-force", "-batch", "-"], check=False, input="\n".join([*lines, "route flush table 220"]) + "\n")


def _selectors(ends: Ends, role: str) -> str:
    """One tunnel's traffic selector on `role`'s side: its inner addresses, /32 and /128."""
    return ",".join(f"{addr}/{'32' if family == 'ipv4' else '128'}" for family, addr in getattr(ends, role).items())


def _section(name: str, values: dict) -> str:
    """A swanctl.conf section; a value runs to the end of its line, so one per line."""
    return "\n".join([f"  {name} {{", *(f"    {k} = {v}" for k, v in values.items()), "  }"])


def _availability(params: IPsecParams, backend: str, probe: KernelProbe) -> tuple[bool, str]:
    """(True, "") when the testbed's hosts can run params on backend, else (False, why): every
    file, plugin and program is asked of them through the probe, never of the controller."""
    if params.l2tp:
        missing = l2tp.missing_software(probe)
        if missing:
            return False, f"L2TP/IPsec: {missing}"
        if not probe.accepts(l2tp.PROBE):
            return False, "L2TP/IPsec is not available on this kernel (no PPP: /dev/ppp, ppp_generic)"
    if params.implementation == "libreswan":
        ok, reason = _libreswan_availability(params, backend, probe)
        if not ok:
            return ok, reason
        return _kernel_availability(params, probe)
    missing = strongswan.missing_software(probe)
    if missing:
        return False, missing
    if params.ke != "none":
        return False, (f"ke = {params.ke!r} needs strongSwan 6.0 or later (ML-KEM); "
                       "the installed strongSwan 5.9 has no post-quantum key exchange")
    cipher = CIPHERS[params.cipher]
    if backend == "userspace":
        host = probe.host_lacking(strongswan.plugin_path("kernel-libipsec"))
        if host:
            return False, (f"{host}: strongSwan's kernel-libipsec plugin is not installed "
                           "(apt-get install libcharon-extra-plugins)")
        host = probe.host_lacking("/dev/net/tun")
        if host:
            return False, f"{host}: no /dev/net/tun (the userspace data path needs TUN)"
        if params.mode != "tunnel":
            return False, "the userspace data path (libipsec) does tunnel mode only"
        if params.ipcomp:
            return False, "the userspace data path (libipsec) has no IPComp"
        for needed in cipher.plugins:
            # one plugin of the set that every host has (asked plugin by plugin)
            if all(probe.host_lacking(strongswan.plugin_path(name)) for name in needed):
                host = probe.host_lacking(strongswan.plugin_path(sorted(needed)[0]))
                return False, f"cipher {cipher.name}: {host} has none of the strongSwan plugins {sorted(needed)}"
        return True, ""
    return _kernel_availability(params, probe)


def _libreswan_availability(params: IPsecParams, backend: str, probe: KernelProbe) -> tuple[bool, str]:
    """What Libreswan itself can do on the hosts, before the kernel is asked."""
    if backend == "userspace":
        return False, "libreswan has no userspace data path (kernel xfrm only)"
    missing = libreswan.missing_software(probe)
    if missing:
        return False, missing
    if params.ke != "none":
        return False, f"ke = {params.ke!r}: Libreswan 4.10 has no post-quantum (ML-KEM) key exchange"
    for kind, proposal in (("ike", libreswan.ike_proposal(params.ike)), ("esp", libreswan.ESP[params.cipher])):
        refused = libreswan.refused_proposal(probe, kind, proposal)
        if refused:
            return False, f"{refused[0]}: Libreswan 4.10 refuses {kind}={proposal}: {refused[1]}"
    return True, ""


def kernel_has_esp(probe: KernelProbe) -> bool:
    """Does the kernel have an ESP (xfrm) data path at all? (AES-GCM in tunnel mode, the commonest.)"""
    return probe.accepts(xfrm_probe_commands(CIPHERS["aes128gcm16"], "tunnel", False))


def _kernel_availability(params: IPsecParams, probe: KernelProbe) -> tuple[bool, str]:
    cipher = CIPHERS[params.cipher]
    if not kernel_has_esp(probe):
        return False, "the kernel has no ESP (xfrm) data path"
    if not probe.accepts(xfrm_probe_commands(cipher, params.mode, params.ipcomp)):
        return False, (f"the kernel's xfrm refuses cipher {cipher.name}"
                       + (" with IPComp" if params.ipcomp else "") + f" in {params.mode} mode")
    return True, ""


def capabilities(probe: KernelProbe) -> list[dict]:
    """For doctor: per backend, which ciphers (and modes, IPComp) this machine can run."""
    rows = []
    for backend in ("kernel", "userspace"):
        for name in CIPHERS:
            ok, reason = _availability(IPsecParams(backend=backend, cipher=name), backend, probe)
            rows.append({"backend": backend, "cipher": name, "available": ok, "reason": reason})
    extras = {"transport mode": IPsecParams(mode="transport"), "ipcomp": IPsecParams(ipcomp=True),
              "ppk (RFC 8784)": IPsecParams(ppk=True), "ke = mlkem768": IPsecParams(ke="mlkem768"),
              "l2tp": IPsecParams(mode="transport", l2tp=True)}
    for feature, params in extras.items():
        for backend in ("kernel", "userspace"):
            ok, reason = _availability(params, backend, probe)
            rows.append({"backend": backend, "feature": feature, "available": ok, "reason": reason})
    # Libreswan: kernel data path only, per cipher (its own parser and the kernel's xfrm both asked)
    for name in CIPHERS:
        ok, reason = _availability(IPsecParams(implementation="libreswan", cipher=name), "kernel", probe)
        rows.append({"backend": "libreswan kernel", "cipher": name, "available": ok, "reason": reason})
    for feature, params in {"transport mode": {"mode": "transport"}, "ipcomp": {"ipcomp": True},
                            "ppk (RFC 8784)": {"ppk": True}, "l2tp": {"mode": "transport", "l2tp": True}}.items():
        ok, reason = _availability(IPsecParams(implementation="libreswan", **params), "kernel", probe)
        rows.append({"backend": "libreswan kernel", "feature": feature, "available": ok, "reason": reason})
    rows.append({"backend": "libreswan userspace", "feature": "all", "available": False,
                 "reason": _libreswan_availability(IPsecParams(implementation="libreswan"), "userspace", probe)[1]})
    return rows


def _daemon_evidence(role: str, daemon) -> list:
    """(key, getter) pairs for one charon, pluto or xl2tpd."""
    if isinstance(daemon, strongswan.Charon):
        return [(f"{role}: swanctl --list-sas", lambda: evidence.clip(daemon.swanctl("--list-sas", check=False, timeout=5).stdout)),
                (f"{role}: charon log", lambda: evidence.log_tail(daemon.proc))]
    if isinstance(daemon, libreswan.Pluto):
        return [(f"{role}: ipsec status", lambda: evidence.clip(daemon.whack("--status", check=False, timeout=5).stdout)),
                (f"{role}: pluto log", lambda: evidence.log_tail(daemon.proc))]
    return [(f"{role}: xl2tpd log", lambda: evidence.log_tail(daemon.proc)),
            (f"{role}: pppd log", lambda: evidence.clip(daemon.ppp_log(), keep="tail"))]


def _algorithms(sa: dict, others: tuple[str, ...]) -> str:
    """'AES_GCM_8-128 PRF_HMAC_SHA2_256 MODP_1024' from charon's keys; pluto's one 'algorithm' as it is."""
    if sa.get("algorithm"):
        return sa["algorithm"]
    cipher = sa.get("encr-alg", "?") + (f"-{sa['encr-keysize']}" if sa.get("encr-keysize") else "")
    return " ".join([cipher, *(sa[key] for key in others if sa.get(key))])
