"""strongSwan: one charon per host, configured through swanctl over that charon's own vici socket.

The standalone charon writes its pid file to the fixed path /var/run/charon.pid, so each
charon runs in a private mount namespace where the host's private directory is bound over
/run: its pid file, vici socket and strongswan.conf all live in that directory, seen as
/run/... by charon and as the real path by swanctl (`--uri`, `--file`).
"""

import dataclasses
import re
import subprocess
import time
from pathlib import Path

from vpnbench.errors import TechniqueError
from vpnbench.hosts.base import Host, Proc
from vpnbench.probe import KernelProbe
from vpnbench.safe_files import wipe
from vpnbench.techniques.ipsec.daemon import missing_package, spawn_private, tail, wait_until

CHARON = "/usr/lib/ipsec/charon"
PLUGIN_DIR = Path("/usr/lib/ipsec/plugins")
# Crypto, credentials and networking; the kernel interface plugin is added per backend.
BASE_PLUGINS = ("random drbg nonce openssl aes aesni sha1 sha2 hmac gcm chapoly curve25519 gmp kdf "
                "pem pkcs1 pkcs8 x509 pubkey constraints revocation socket-default vici").split()
KERNEL_PLUGINS = {"userspace": ["kernel-libipsec", "kernel-netlink"], "kernel": ["kernel-netlink"]}


SOFTWARE = ((CHARON, "strongswan-charon"), ("/usr/sbin/swanctl", "strongswan-swanctl"))


def plugin_path(name: str) -> str:
    """Where charon loads plugin `name` from (kernel-libipsec, openssl, ...)."""
    return str(PLUGIN_DIR / f"libstrongswan-{name}.so")


def installed_plugins(host: Host) -> set[str]:
    """The plugins on `host` (one listing of its plugin directory)."""
    names = host.run(["ls", "-1", str(PLUGIN_DIR)], check=False).stdout.split()
    return {n.removeprefix("libstrongswan-").removesuffix(".so") for n in names
            if n.startswith("libstrongswan-") and n.endswith(".so")}


def missing_software(probe: KernelProbe) -> str | None:
    return missing_package(probe, SOFTWARE)


@dataclasses.dataclass
class Side:
    """Everything one host's charon needs to know."""

    role: str
    peer_role: str
    local_addr: str
    remote_addr: str
    local_ts: str
    remote_ts: str


def strongswan_conf(backend: str, installed: set[str]) -> str:
    """charon's settings as it sees them: /run is the host's private directory; of the plugins
    it wants, those installed on its host."""
    plugins = [p for p in BASE_PLUGINS + KERNEL_PLUGINS[backend] if p in installed]
    return f"""charon {{
  load = {' '.join(plugins)}
  install_virtual_ip = no
  retransmit_tries = 3
  retransmit_timeout = 1.0
  plugins {{
    vici {{
      socket = unix:///run/charon.vici
    }}
  }}
  filelog {{
    stderr {{
      default = 1
      flush_line = yes
      time_format = %T
      time_add_ms = yes
    }}
  }}
  syslog {{
    daemon {{
      default = -1
    }}
  }}
}}
"""


def swanctl_conf(side: Side, params, backend: str, auth: dict[str, str], ppk_secret: str | None) -> str:
    """One connection with one child; `auth` holds this side's credential lines."""
    ppk = "    ppk_id = ppk@vpnbench\n    ppk_required = yes\n" if ppk_secret else ""
    # libipsec hands ESP to charon's own UDP socket, so ESP is always UDP-encapsulated there.
    encap = "yes" if backend == "userspace" else "no"
    return f"""connections {{
  vpb {{
    version = 2
    local_addrs = {side.local_addr}
    remote_addrs = {side.remote_addr}
    proposals = {params.ike}
    encap = {encap}
    mobike = {'yes' if params.mobike else 'no'}
    rekey_time = 0
{ppk}    local {{
      id = {side.role}@vpnbench
{auth['local']}
    }}
    remote {{
      id = {side.peer_role}@vpnbench
{auth['remote']}
    }}
    children {{
      net {{
        local_ts = {side.local_ts}
        remote_ts = {side.remote_ts}
        esp_proposals = {params.cipher}
        mode = {params.mode}
        ipcomp = {'yes' if params.ipcomp else 'no'}
        rekey_time = 0
      }}
    }}
  }}
}}
secrets {{
{auth['secrets']}
{f"  ppk-1 {{{chr(10)}    id = ppk@vpnbench{chr(10)}    secret = 0x{ppk_secret}{chr(10)}  }}" if ppk_secret else ""}
}}
"""


class Charon:
    """One host's charon: start, load the config, initiate, read back, stop."""

    def __init__(self, host: Host, directory: Path):
        self.host = host
        self.dir = directory
        self.proc: Proc | None = None

    @property
    def uri(self) -> str:
        return f"unix://{self.dir}/charon.vici"

    def start(self, backend: str) -> Proc:
        self.host.remember_dir(self.dir)  # cleanup after a kill -9 wipes it on the host, keys included
        self.host.run(["mkdir", "-p", "-m", "700", str(self.dir)])
        self.host.write_file(self.dir / "strongswan.conf", strongswan_conf(backend, installed_plugins(self.host)),
                             0o600)
        self.proc = spawn_private(self.host, self.dir, [CHARON], name=f"charon-{self.host.role}",
                                  env={"STRONGSWAN_CONF": "/run/strongswan.conf"})
        wait_until(lambda: self.swanctl("--stats", check=False).ok, self.proc, "charon", 20)
        return self.proc

    def swanctl(self, *args: str, check: bool = True, timeout: float = 30.0):
        # SWANCTL_DIR: swanctl.conf and the credential folders (private/, pubkey/) of this host
        result = self.host.run(["env", f"SWANCTL_DIR={self.dir / 'swanctl'}", "swanctl", *args, "--uri", self.uri],
                               check=False, timeout=timeout)
        if check and not result.ok:
            raise TechniqueError(f"swanctl {args[0]}: {tail(result.stdout + result.stderr)}"
                               f"{'; charon: ' + tail(self.proc.output()) if self.proc else ''}")
        return result

    def load(self, config: str, files: dict[str, str]) -> None:
        """Write swanctl.conf and credential files (path relative to the swanctl dir), load them."""
        for folder in ("", "private", "pubkey"):
            self.host.run(["mkdir", "-p", "-m", "700", str(self.dir / "swanctl" / folder)])
        self.host.write_file(self.dir / "swanctl" / "swanctl.conf", config, 0o600)
        for name, content in files.items():
            self.host.write_file(self.dir / "swanctl" / name, content, 0o600)
        self.swanctl("--load-all", "--noprompt")

    def initiate(self) -> None:
        self.swanctl("--initiate", "--child", "net", "--timeout", "15", timeout=20)

    def list_sas(self) -> dict:
        return parse_vici_raw(self.swanctl("--list-sas", "--raw").stdout)

    def rekey(self, timeout: float = 10.0) -> dict:
        """Rekey the CHILD SA now and wait until its successor is installed; returns the SPIs
        before and after. swanctl --rekey only queues the exchange, so the new SA is polled for."""
        before = installed_child(self.list_sas())
        if before is None:
            raise TechniqueError("rekey: no installed CHILD SA to rekey")
        self.swanctl("--rekey", "--child", "net")
        deadline = time.monotonic() + timeout
        while True:
            after = installed_child(self.list_sas())
            if after is not None and after.get("spi-in") != before.get("spi-in"):
                return {"how": "swanctl --rekey --child net", "spi_in_before": before.get("spi-in"),
                        "spi_out_before": before.get("spi-out"), "spi_in_after": after.get("spi-in"),
                        "spi_out_after": after.get("spi-out")}
            if time.monotonic() > deadline:
                raise TechniqueError(f"rekey: the CHILD SA still has SPI {before.get('spi-in')} after {timeout:g} s; "
                                     f"charon: {tail(self.proc.output()) if self.proc else ''}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop(5)
        wipe(self.host, self.dir)  # on the host that holds it, now


TOKEN = re.compile(r"([^\s{}=\[\]]+)=\[((?:[^\[\]]|\[[^\]]*\])*)\]"  # key=[a b], items may hold [udp/1701]
                   r"|([^\s{}=\[\]]+)=([^\s{}\[\]]*)"  # key=value
                   r"|([^{}=\[\]]+?)\s*\{"               # name {   (message names have spaces)
                   r"|(\})")


def parse_vici_raw(text: str) -> dict:
    """`swanctl --raw` prints each vici message as `name {key=value sect {...} list=[a b]}`;
    returns {message name: [message bodies]} with sections as nested dicts."""
    messages: dict[str, list] = {}
    stack: list[tuple[str, dict]] = []
    for match in TOKEN.finditer(text):
        list_key, items, key, value, section, close = match.groups()
        if list_key:
            stack[-1][1][list_key] = items.split()
        elif key:
            stack[-1][1][key] = value
        elif section:
            body: dict = {}
            if stack:
                stack[-1][1][section.strip()] = body
            stack.append((section.strip(), body))
        elif close and stack:
            name, body = stack.pop()
            if not stack:
                messages.setdefault(name, []).append(body)
    return messages


def negotiated(sas: dict) -> dict:
    """The IKE and CHILD SA actually in use, as charon reports them."""
    for event in sas.get("list-sa event", []):
        for ike in event.values():
            child = next(iter(ike.get("child-sas", {}).values()), None)
            if not isinstance(child, dict) or ike.get("state") != "ESTABLISHED":
                continue
            return {
                "ike": {key: ike.get(key) for key in ("version", "local-host", "remote-host", "initiator-spi",
                                                      "responder-spi", "encr-alg", "encr-keysize", "integ-alg",
                                                      "prf-alg", "dh-group", "ppk") if ike.get(key) is not None},
                "child": {key: child.get(key) for key in ("mode", "protocol", "encap", "spi-in", "spi-out",
                                                          "cpi-in", "cpi-out", "encr-alg", "encr-keysize",
                                                          "integ-alg", "dh-group", "local-ts", "remote-ts")
                          if child.get(key) is not None},
            }
    return {}


def installed_child(sas: dict) -> dict | None:
    """The newest INSTALLED CHILD SA of an established IKE SA (during a rekey the old one
    lingers, REKEYED, beside its successor)."""
    children = [child for event in sas.get("list-sa event", []) for ike in event.values()
                if isinstance(ike, dict) and ike.get("state") == "ESTABLISHED"
                for child in (ike.get("child-sas") or {}).values()
                if isinstance(child, dict) and child.get("state") == "INSTALLED"]
    return max(children, key=lambda c: int(c.get("uniqueid") or 0), default=None)


# charon's stderr log with time_format = %T and time_add_ms: "23:45:01.123 06[IKE] initiating IKE_SA ..."
_LOG_TIME = r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) .*"
_INITIATING = re.compile(_LOG_TIME + r"initiating IKE_SA", re.MULTILINE)
_CHILD_UP = re.compile(_LOG_TIME + r"CHILD_SA \S+ established", re.MULTILINE)


def handshake_seconds(log: str) -> float | None:
    """The initiator's IKE exchange as its log times it: from sending IKE_SA_INIT to the first
    CHILD SA established (IKE_AUTH done); None when the log lacks either line."""
    start, done = _INITIATING.search(log), _CHILD_UP.search(log)
    if not start or not done:
        return None
    def seconds(match) -> float:
        h, m, s, ms = (int(g) for g in match.groups())
        return h * 3600 + m * 60 + s + ms / 1000
    return round((seconds(done) - seconds(start)) % 86400, 3)  # % 86400: across midnight


def generate_key() -> tuple[str, str]:
    """A fresh ECDSA P-256 key pair (PEM): private key and raw public key, through pipes only."""
    private = subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
                             capture_output=True, text=True, check=True).stdout
    public = subprocess.run(["openssl", "pkey", "-pubout"], input=private, capture_output=True, text=True,
                            check=True).stdout
    return private, public
