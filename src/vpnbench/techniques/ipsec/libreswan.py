"""Libreswan: one pluto per host (IKEv2, kernel xfrm data path), driven by addconn and whack
over that pluto's own control socket.

Debian's libreswan package conflicts with strongSwan's, so scripts/install-deps.sh unpacks it
into PREFIX. pluto insists on finding its helpers under /usr/libexec/ipsec (addconn, _updown),
so like charon it runs in a private mount namespace (see `daemon.spawn_private`): the host's
private directory is bound over /run (pluto's ctl socket and pid file land in /run/pluto) and
PREFIX's libexec is overlaid on /usr/libexec. pluto gets inside paths (/run/...); addconn and
whack, run outside, get the real ones.
"""

import dataclasses
import re
from pathlib import Path

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts.base import Host, Proc
from vpnbench.techniques.ipsec.daemon import spawn_private, tail, wait_until
from vpnbench.testbeds.probe import KernelProbe

PREFIX = Path("/opt/vpnbench/libreswan")
LIBEXEC = PREFIX / "usr/libexec/ipsec"
RSA_BITS = "3072"  # rsasigkey refuses fewer than 2192

# Campaign cipher -> Libreswan's esp= keyword (aes_gcm_a/b/c: 8/12/16-byte ICV).
ESP = {
    "aes128gcm8": "aes_gcm_a128", "aes128gcm16": "aes_gcm_c128",
    "aes256gcm8": "aes_gcm_a256", "aes256gcm16": "aes_gcm_c256",
    "chacha20poly1305": "chacha20_poly1305",
    "aes128-sha256": "aes128-sha2_256", "aes256-sha256": "aes256-sha2_256",
    "aes256-sha384": "aes256-sha2_384", "aes256-sha512": "aes256-sha2_512",
    "3des-sha256": "3des-sha2_256", "null-sha1": "null-sha1", "null-sha256": "null-sha2_256",
}
HASHES = {"sha1": "sha1", "sha256": "sha2_256", "sha384": "sha2_384", "sha512": "sha2_512"}
GROUPS = {"x25519": "dh31", "curve25519": "dh31", "ecp256": "dh19", "ecp384": "dh20", "ecp521": "dh21"}


def missing_software(probe: KernelProbe) -> str | None:
    """What Libreswan needs on the hosts that run it, asked of them."""
    for name in ("pluto", "whack", "addconn", "rsasigkey", "showhostkey", "algparse"):
        host = probe.host_lacking(str(LIBEXEC / name))
        if host:
            return (f"{host}: Libreswan not found ({LIBEXEC / name}); run scripts/install-deps.sh (it unpacks "
                    f"Debian's libreswan into {PREFIX}: the package conflicts with strongSwan's)")
    if not probe.has_command("certutil"):
        return "certutil not found; install the Debian package 'libnss3-tools' (apt-get install libnss3-tools)"
    return None


def ike_proposal(ike: str) -> str:
    """strongSwan's proposal syntax (the campaign's) -> Libreswan's ike= (ENC-PRF-DH).
    Raises ValueError for a token Libreswan's syntax has no word for."""
    enc = prf = group = None
    for token in ike.split("-"):
        aead = re.fullmatch(r"aes(128|192|256)gcm(8|12|16)", token)
        if aead:
            enc = f"aes_gcm_{ {'8': 'a', '12': 'b', '16': 'c'}[aead[2]]}{aead[1]}"
        elif re.fullmatch(r"aes(128|192|256)|3des", token):
            enc = token
        elif token == "chacha20poly1305":
            enc = "chacha20_poly1305"
        elif token.removeprefix("prf") in HASHES:
            prf = prf if prf and not token.startswith("prf") else HASHES[token.removeprefix("prf")]
        elif token in GROUPS or re.fullmatch(r"modp\d+", token):
            group = GROUPS.get(token, token)
        else:
            raise ValueError(f"ike: {token!r} in {ike!r} has no Libreswan equivalent here; use "
                             "aesNNN[gcmNN]/3des/chacha20poly1305, [prf]sha1/sha256/sha384/sha512, "
                             "x25519/ecp256/ecp384/ecp521/modpNNNN")
    if not (enc and prf and group):
        raise ValueError(f"ike: {ike!r} needs an encryption, a PRF/integrity and a DH group for Libreswan")
    return f"{enc}-{prf}-{group}"


def refused_proposal(probe: KernelProbe, kind: str, proposal: str) -> tuple[str, str] | None:
    """Libreswan's own parser (algparse) on `kind=proposal`, on each host that runs it: None, or
    the first host that refuses it and its error line."""
    for host, out in probe.outputs([str(LIBEXEC / "algparse"), "-v2", f"{kind}={proposal}"]).items():
        errors = [line.strip() for line in out.splitlines() if "ERROR" in line]
        if errors:
            return host, errors[0].removeprefix("ERROR: ")
    return None


@dataclasses.dataclass
class Conn:
    """One host's view of the connection."""

    role: str
    peer_role: str
    local_addr: str
    remote_addr: str
    local_subnet: str | None  # tunnel mode: the inner addresses; None in transport mode
    remote_subnet: str | None
    udp_port: int | None = None  # protect only this UDP port (L2TP/IPsec: 1701)


def ipsec_conf(conn: Conn, params, auth: dict[str, str]) -> str:
    """ipsec.conf with the one connection; `auth` holds the authby/rsasigkey lines."""
    tunnel = ""
    if conn.local_subnet:
        # leftsourceip: _updown routes the peer's inner address with this source
        tunnel = (f"  leftsubnet={conn.local_subnet}\n  rightsubnet={conn.remote_subnet}\n"
                  f"  leftsourceip={conn.local_subnet.split('/')[0]}\n")
    if conn.udp_port:
        tunnel += f"  leftprotoport=17/{conn.udp_port}\n  rightprotoport=17/{conn.udp_port}\n"
    # leftupdown: the default, `ipsec _updown`, would find strongSwan's ipsec on PATH
    return f"""conn vpb
  ikev2=yes
  left={conn.local_addr}
  right={conn.remote_addr}
  leftid=@{conn.role}.vpnbench
  rightid=@{conn.peer_role}.vpnbench
{auth['lines']}
{tunnel}  type={params.mode}
  ike={ike_proposal(params.ike)}
  esp={ESP[params.cipher]}
  compress={'yes' if params.ipcomp else 'no'}
  ppk={'insist' if params.ppk else 'no'}
  encapsulation=no
  leftupdown=/usr/libexec/ipsec/_updown
  rekey=no
  retransmit-timeout=15s
  auto=ignore
"""


class Pluto:
    """One host's pluto: NSS database, start, add the connection, initiate, read back, stop."""

    def __init__(self, host: Host, directory: Path):
        self.host = host
        self.dir = directory  # seen as /run by pluto
        self.proc: Proc | None = None

    @property
    def ctl(self) -> str:
        return str(self.dir / "pluto" / "pluto.ctl")

    def prepare(self) -> None:
        """The private directory and an empty NSS database (no password: it lives in our 0700 dir)."""
        self.host.remember_dir(self.dir)  # cleanup after a kill -9 wipes it on the host, keys included
        # one mkdir (operands made in order, each 0700), not one a directory (~0.1 s apiece in the TCG VM)
        self.host.run(["mkdir", "-p", "-m", "700", *(str(self.dir / sub) for sub in ("", "pluto", "nss", "ipsec.d"))])
        self.host.run(["certutil", "-N", "-d", f"sql:{self.dir / 'nss'}", "--empty-password"])

    def generate_key(self) -> str:
        """A fresh RSA key pair made inside this host's NSS database; returns the public key
        as Libreswan writes it in leftrsasigkey (the private key never leaves NSS)."""
        out = self.host.run([str(LIBEXEC / "rsasigkey"), "--nssdir", str(self.dir / "nss"), RSA_BITS]).stdout
        out += self.host.run([str(LIBEXEC / "showhostkey"), "--list", "--nssdir", str(self.dir / "nss")]).stdout
        ckaid = re.search(r"ckaid:? ([0-9a-f]{40})", out, re.I)
        if not ckaid:
            raise TechniqueError(f"rsasigkey made no key: {tail(out)}")
        shown = self.host.run([str(LIBEXEC / "showhostkey"), "--left", "--ckaid", ckaid[1],
                               "--nssdir", str(self.dir / "nss")]).stdout
        return re.search(r"leftrsasigkey=(\S+)", shown)[1]

    def start(self, secrets: str) -> Proc:
        self.host.write_file(self.dir / "ipsec.secrets", secrets, 0o600)
        self.proc = spawn_private(
            self.host, self.dir,
            [str(LIBEXEC / "pluto"), "--nofork", "--stderrlog", "--rundir", "/run/pluto", "--nssdir", "/run/nss",
             "--secretsfile", "/run/ipsec.secrets", "--ipsecdir", "/run/ipsec.d", "--dumpdir", "/run/pluto",
             "--no-dnssec", "--use-xfrm"],
            name=f"pluto-{self.host.role}", overlay_libexec=PREFIX / "usr/libexec")
        wait_until(lambda: self.whack("--status", check=False).ok, self.proc, "pluto", 15)
        return self.proc

    def whack(self, *args: str, check: bool = True, timeout: float = 30.0):
        result = self.host.run([str(LIBEXEC / "whack"), "--ctlsocket", self.ctl, *args], check=False, timeout=timeout)
        if check and not result.ok:
            raise TechniqueError(f"whack {args[0]}: {tail(result.stdout + result.stderr)}"
                               f"{'; pluto: ' + tail(self.proc.output()) if self.proc else ''}")
        return result

    def add(self, config: str) -> None:
        """`ipsec auto --add`: addconn parses ipsec.conf and hands the connection to this pluto."""
        path = self.dir / "ipsec.conf"
        self.host.write_file(path, config, 0o600)
        result = self.host.run([str(LIBEXEC / "addconn"), "--config", str(path), "--ctlsocket", self.ctl, "vpb"],
                               check=False)
        if not result.ok:
            raise TechniqueError(f"addconn: {tail(result.stdout + result.stderr)}; pluto: {tail(self.proc.output())}")
        self.whack("--listen")  # `ipsec auto --ready`: listen on the addresses present now

    def initiate(self) -> None:
        """`ipsec auto --up`: whack waits for the IKE and Child SA (or their failure)."""
        out = self.whack("--name", "vpb", "--initiate", timeout=40).stdout
        if "established Child SA" not in out and "IPsec SA established" not in out:
            raise TechniqueError(f"libreswan: no Child SA: {tail(out)}; pluto: {tail(self.proc.output())}")

    def status(self) -> str:
        return self.whack("--status").stdout + self.whack("--trafficstatus").stdout

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop(5)  # SIGTERM: pluto deletes its SAs and policies on the way out
        wipe(self.host, self.dir)  # on the host that holds it, now


def negotiated(status: str) -> dict:
    """What pluto says it negotiated, from `whack --status`: the newest IKE and ESP algorithms,
    the Child SA's SPIs (and IPComp CPIs), its mode and whether ESP is in UDP."""
    found: dict[str, dict] = {"ike": {}, "child": {}}
    for key, pattern in (("ike", r"IKEv2 algorithm newest: (\S+)"), ("child", r"ESP algorithm newest: ([^;\s]+)")):
        match = re.search(pattern, status)
        if match:
            found[key]["algorithm"] = match[1]
    ike_state = re.search(r'#\d+: "vpb"[^\n]*?(STATE_V2_ESTABLISHED_IKE_SA|ESTABLISHED_IKE_SA)', status)
    if ike_state:
        found["ike"]["state"] = "ESTABLISHED"
        found["ike"]["version"] = "2"
        # with ppk=insist an IKE SA exists only if the PPK went into its keys (as charon's ppk=yes)
        if re.search(r'"vpb":\s+policy: [^\n]*PPK_INSIST', status):
            found["ike"]["ppk"] = "yes"
    sa_line = re.search(r'#\d+: "vpb"[^\n]*? (?:esp|espinudp)\.[0-9a-f]+@[^\n]*', status)
    if sa_line:
        line = sa_line[0]
        spis = re.findall(r"(esp|espinudp)\.([0-9a-f]+)@", line)
        found["child"].update({"protocol": "ESP", "spi-out": spis[0][1], "spi-in": spis[-1][1],
                               "mode": "TUNNEL" if " tun." in line else "TRANSPORT"})
        if spis[0][0] == "espinudp":
            found["child"]["encap"] = "yes"
        cpis = re.findall(r"comp\.([0-9a-f]+)@", line)
        if cpis:
            found["child"].update({"cpi-out": cpis[0], "cpi-in": cpis[-1]})
    return {key: value for key, value in found.items() if value}
