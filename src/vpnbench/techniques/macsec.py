"""MACsec (IEEE 802.1AE): the kernel encrypts one Ethernet link of the path.

MACsec protects a link, not a path, so it sits on one L2 segment: the client's own link
(client-router with a router in the testbed, client-server on a direct link), or the
server's (router-server) when the campaign says so. A MACsec
interface is stacked on each end with a private subnet, and host routes send the traffic
between the client's and the server's underlay addresses through it, so measurements
target the usual addresses and every frame on that segment is 802.1AE (EtherType 0x88E5).

Keying: `static` installs generated SAKs with `ip macsec` (fed through `ip -batch -` on
stdin, never argv); `mka` runs wpa_supplicant's MKA with a generated CAK/CKN (a 0600
config file) and lets it create the interface and distribute SAKs.
"""

import json
import re
import secrets
import time
from typing import Literal

from pydantic import ValidationInfo, field_validator

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import TechniqueParams
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import evidence
from vpnbench.hosts.base import stop_all
from vpnbench.hosts.route import device_mac, route_device
from vpnbench.techniques.base import BackendStatus, Technique, TechniqueContext, Tunnel
from vpnbench.techniques.overhead import Expectation, expectation_of
from vpnbench.testbeds.probe import KernelProbe

LINK = {"a": ("10.97.0.1", "fd97::1"), "b": ("10.97.0.2", "fd97::2")}
WIRE_FILTER = "ether proto 0x88e5"
MKA_TIMEOUT = 15.0
SA_ON = re.compile(r"^\s+\d+: PN \d+, state on", re.MULTILINE)  # an SA line of `ip macsec show`
OVERHEAD = 32  # SecTAG with SCI 16 + ICV 16 (IEEE 802.1AE), at layer 2: the macsec device's MTU is 32 below


class MACsecParams(TechniqueParams):
    kind: Literal["macsec"] = "macsec"
    cipher: Literal["gcm-aes-128", "gcm-aes-256", "gcm-aes-xpn-128", "gcm-aes-xpn-256"] = "gcm-aes-128"
    keying: Literal["static", "mka"] = "static"
    encrypt: bool = True  # false: integrity only (the payload stays readable)
    segment: Literal["auto", "client-router", "router-server", "client-server"] = "auto"  # auto: the client's link

    @field_validator("keying")
    @classmethod
    def _mka_has_no_xpn(cls, keying: str, info: ValidationInfo) -> str:
        if keying == "mka" and "xpn" in info.data.get("cipher", ""):
            raise ValueError("'mka' is not allowed with an XPN cipher (wpa_supplicant's MKA does not "
                             "negotiate XPN); allowed values: 'static'")
        return keying


class MACsec(Technique):
    kind = "macsec"
    packages = {"wpa_supplicant": "wpasupplicant"}
    kernel_features = {"kernel": "macsec link type (CONFIG_MACSEC)"}
    Params = MACsecParams
    description = "MACsec 802.1AE on one Ethernet link (static SAKs or MKA)"
    versions = {"wpa_supplicant": "wpa_supplicant -v 2>&1 | head -1"}

    @classmethod
    def tunnel_ceiling(cls, params) -> tuple[int, str]:
        return 1, "MACsec protects one Ethernet link with one secure channel each way; more tunnels would be more links"

    @classmethod
    def kernel_rows(cls, probe: KernelProbe) -> dict[str, bool]:
        return {"macsec": probe.has_link_type("macsec", on_ethernet=True)}

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        return expectation_of(lambda n: n + OVERHEAD, underlay_mtu, None, False,
                              "MACsec: SecTAG with SCI 16 + ICV 16 at layer 2")

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        if not probe.has_link_type("macsec", on_ethernet=True):
            return [BackendStatus("kernel", False, "kernel lacks MACsec (no macsec module)")]
        return [BackendStatus("kernel", True)]

    @classmethod
    def resolve_backend(cls, params: MACsecParams, probe: KernelProbe) -> str:
        backend = super().resolve_backend(params, probe)
        if params.keying == "mka" and params.cipher == "gcm-aes-256":
            # wpa_supplicant learnt macsec_csindex (the cipher suite choice) in 2.11; 2.10 speaks GCM-AES-128 only.
            for host, output in probe.outputs(WPA_SUPPLICANT_VERSION).items():
                version = wpa_supplicant_version(output)
                if version < (2, 11):
                    raise ValueError("keying = 'mka' with cipher = 'gcm-aes-256' needs wpa_supplicant >= 2.11 "
                                     f"({host} has {'.'.join(map(str, version)) or 'none'}); "
                                     "allowed here: cipher = 'gcm-aes-128', or keying = 'static'")
        return backend

    def __init__(self, params: MACsecParams, ctx: TechniqueContext):
        super().__init__(params, ctx)
        self.ends: tuple[dict, ...] = ()  # the protected segment's two ends, for evidence()

    def up(self, backend: str) -> Tunnel:
        p = self.params
        a, b = self._endpoints()
        self.ends = (a, b)  # for evidence() when a later step fails
        a["name"], b["name"] = "a", "b"  # which side of LINK each end takes
        self.tunnel = Tunnel(
            backend=backend,
            server_addrs=dict(self.ctx.underlay["server"]),
            client_addrs=dict(self.ctx.underlay["client"]),
            protection="encrypted" if p.encrypt else "integrity-only",
            wire_filter=WIRE_FILTER,
            negotiated={"cipher": p.cipher, "keying": p.keying, "encrypt": p.encrypt,
                        "segment": f"{a['role']}-{b['role']}"},
            capture_near="server" if a["role"] == "router" else "client",
        )
        self.undo.defer(lambda procs=self.tunnel.procs: stop_all(procs))  # wpa_supplicant's (MKA), together
        if p.keying == "static":
            self._static(a, b)
        else:
            self._mka(a, b)
        if p.keying == "mka":
            for side, proc in zip((a, b), self.tunnel.procs):
                self._wait_secured(side, proc)
        for side, peer in ((a, b), (b, a)):
            self._address_and_route(side, peer)
        return self.tunnel

    def _endpoints(self) -> tuple[dict, dict]:
        """The two ends of the protected segment: host, lower interface, MAC address."""
        wanted = self.params.segment
        router = self.ctx.router
        if wanted in ("client-router", "router-server") and router is None:
            raise TechniqueError(f"segment {wanted!r} needs a router: set [testbed] router = true")
        if wanted == "client-server" and router is not None:
            raise TechniqueError("segment 'client-server' needs a direct link: set [testbed] router = false")
        # a: the end nearer the client, b: the end nearer the server.
        if wanted == "router-server":
            a, b = {"role": "router", "host": router}, {"role": "server", "host": self.ctx.server}
        elif router is not None:
            a, b = {"role": "client", "host": self.ctx.client}, {"role": "router", "host": router}
        else:
            a, b = {"role": "client", "host": self.ctx.client}, {"role": "server", "host": self.ctx.server}
        a["lower"] = _route_dev(a["host"], self.ctx.underlay["server"]["ipv4"])
        b["lower"] = _route_dev(b["host"], self.ctx.underlay["client"]["ipv4"])
        for side in (a, b):
            side["mac"] = device_mac(side["host"], side["lower"])
        return a, b

    def _static(self, a: dict, b: dict) -> None:
        p = self.params
        key_bytes = 32 if p.cipher.endswith("256") else 16
        xpn = "xpn" in p.cipher
        salt = secrets.token_hex(12)
        keys = {"a": (secrets.token_hex(16), secrets.token_hex(key_bytes)),
                "b": (secrets.token_hex(16), secrets.token_hex(key_bytes))}
        ssci = {"a": 1, "b": 2}
        for name, side, peer_name, peer in (("a", a, "b", b), ("b", b, "a", a)):
            dev = self.ctx.resources.iface_name("m" + name)
            side["host"].run(["ip", "link", "add", "link", side["lower"], "name", dev, "type", "macsec",
                              "port", "1", "cipher", p.cipher, "encrypt", "on" if p.encrypt else "off"])
            self.undo.defer(side["host"].run, ["ip", "link", "del", dev], check=False)  # its SAs with it
            side["dev"] = dev

            def sa(who: str) -> str:
                opts = f"xpn 1 ssci {ssci[who]} salt {salt}" if xpn else "pn 1"
                return f"{opts} on key {keys[who][0]} {keys[who][1]}"
            batch = (f"macsec add {dev} tx sa 0 {sa(name)}\n"
                     f"macsec add {dev} rx port 1 address {peer['mac']}\n"
                     f"macsec add {dev} rx port 1 address {peer['mac']} sa 0 {sa(peer_name)}\n")
            result = side["host"].run(["ip", "-batch", "-"], input=batch, check=False)
            if not result.ok:  # the batch holds keys: report ip's message, never the input
                raise TechniqueError(f"ip macsec on {side['role']}: {result.stderr.strip()[-200:]}")

    def _mka(self, a: dict, b: dict) -> None:
        p = self.params
        cak, ckn = secrets.token_hex(16 if p.cipher == "gcm-aes-128" else 32), secrets.token_hex(32)
        for name, side in (("a", a), ("b", b)):
            side["host"].require("wpa_supplicant")
            conf = self.ctx.resources.path(f"mka-{name}.conf")
            side["host"].write_file(conf, _wpa_conf(cak, ckn, p.cipher, p.encrypt, priority=16 if name == "a" else 32),
                                    0o600)
            self.undo.defer(wipe, side["host"], conf)  # on the host that holds it, at down()
            before = set(_macsec_links(side["host"]))
            proc = side["host"].spawn(["wpa_supplicant", "-D", "macsec_linux", "-i", side["lower"], "-c", str(conf)],
                                      name="wpa_supplicant")
            self.tunnel.procs.append(proc)
            side["dev"] = self._wait_new_link(side, before, proc)
            self.undo.defer(side["host"].run, ["ip", "link", "del", side["dev"]], check=False)

    def _wait_new_link(self, side: dict, before: set, proc) -> str:
        """wpa_supplicant names the MACsec interface itself: wait for it to appear."""
        new = _wait_for_mka(side, proc, lambda: set(_macsec_links(side["host"])) - before,
                            "created no MACsec interface")
        return new.pop()

    def _wait_secured(self, side: dict, proc) -> None:
        """Wait until MKA has installed a transmit and a receive SA on this end. wpa_supplicant
        keeps configuring the interface until then; addresses and routes added meanwhile were
        refused now and then ("RTNETLINK answers: No route to host" in the kernel VM)."""
        def secured() -> bool:
            shown = side["host"].run(["ip", "macsec", "show", side["dev"]], check=False).stdout
            return "RXSC:" in shown and len(SA_ON.findall(shown)) >= 2  # the TX SA and an RX SA in use
        _wait_for_mka(side, proc, secured, "installed no transmit and receive SA")

    def _address_and_route(self, side: dict, peer: dict) -> None:
        """Private addresses on the MACsec interface; host routes to the far end's underlay
        address through it (more specific than the routes of the lower link)."""
        host, dev = side["host"], side["dev"]
        mine, theirs = LINK[side["name"]], LINK[peer["name"]]
        host.run(["ip", "addr", "add", f"{mine[0]}/24", "dev", dev])
        host.run(["ip", "-6", "addr", "add", f"{mine[1]}/64", "dev", dev, "nodad"])
        host.run(["ip", "link", "set", dev, "up"])
        far = "server" if side["name"] == "a" else "client"  # the end of the path beyond the peer
        for family, via, prefix, flag in (("ipv4", theirs[0], 32, "-4"), ("ipv6", theirs[1], 128, "-6")):
            argv = ["ip", flag, "route", "add", f"{self.ctx.underlay[far][family]}/{prefix}", "via", via, "dev", dev]
            if side["role"] in ("client", "server"):  # the end hosts keep their underlay source address
                argv += ["src", self.ctx.underlay[side["role"]][family]]
            host.run(argv)

    def evidence(self) -> dict[str, str]:
        """`ip macsec show` (key ids, never keys) on both ends and, with MKA, wpa_supplicant's log."""
        ends = self.ends
        pieces = [(f"{side['role']}: ip macsec show",
                   lambda host=side["host"]: evidence.command(host, ["ip", "macsec", "show"])) for side in ends]
        procs = self.tunnel.procs if self.tunnel else []  # wpa_supplicant's, in the order of ends (_mka)
        pieces += [(f"{side['role']}: wpa_supplicant log", lambda proc=proc: evidence.log_tail(proc))
                   for side, proc in zip(ends, procs)]
        return evidence.gather(pieces)


def _wpa_conf(cak: str, ckn: str, cipher: str, encrypt: bool, priority: int) -> str:
    """MKA with a pre-shared CAK/CKN (as S1 ran it). No ctrl_interface: nothing on disk to collide."""
    return "\n".join([
        "eapol_version=3", "ap_scan=0", "network={", "  key_mgmt=NONE", "  eapol_flags=0", "  macsec_policy=1",
        f"  macsec_integ_only={0 if encrypt else 1}",
        *(["  macsec_csindex=1"] if cipher == "gcm-aes-256" else []),  # GCM-AES-128 is the default suite
        f"  mka_cak={cak}", f"  mka_ckn={ckn}", f"  mka_priority={priority}", "}", ""])


WPA_SUPPLICANT_VERSION = ["wpa_supplicant", "-v"]  # asked of each host through the testbed's probe


def wpa_supplicant_version(output: str) -> tuple[int, ...]:
    """(2, 10) for `wpa_supplicant -v`'s "wpa_supplicant v2.10"; () for no output (it is missing)."""
    match = re.search(r"v(\d+)\.(\d+)", output)
    return (int(match.group(1)), int(match.group(2))) if match else ()


def _route_dev(host, address: str) -> str:
    """The interface a host sends to address through: the lower device of its MACsec interface."""
    device = route_device(host, address)
    if device is None:
        raise TechniqueError(f"macsec: {host.role} has no route to {address}")
    return device


def _wait_for_mka(side: dict, proc, done, not_done: str):
    """Poll done() until it gives something true (returned), while this end's wpa_supplicant
    lives, for at most MKA_TIMEOUT; else one line saying what wpa_supplicant did not do."""
    deadline = time.monotonic() + MKA_TIMEOUT
    while not (found := done()):
        if not proc.alive():
            raise TechniqueError(f"wpa_supplicant ({side['role']}) exited: {proc.output().strip()[-300:]}")
        if time.monotonic() > deadline:
            raise TechniqueError(f"wpa_supplicant ({side['role']}) {not_done} within {MKA_TIMEOUT:g} s: "
                                 f"{proc.output().strip()[-300:]}")
        time.sleep(0.1)
    return found


def _macsec_links(host) -> list[str]:
    out = host.run(["ip", "-j", "link", "show", "type", "macsec"], check=False).stdout
    return [link["ifname"] for link in json.loads(out or "[]")]
