"""strongSwan: one charon per host, configured through swanctl over that charon's own vici socket.

The standalone charon writes its pid file to the fixed path /var/run/charon.pid, so each
charon runs in a private mount namespace where the host's private directory is bound over
/run: its pid file, vici socket and strongswan.conf all live in that directory, seen as
/run/... by charon and as the real path by swanctl (`--uri`, `--file`).
"""

import dataclasses
import math
import re
import subprocess
import time
from pathlib import Path

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts.base import Host, Proc
from vpnbench.techniques.ipsec.daemon import missing_package, spawn_private, tail, wait_until
from vpnbench.testbeds.probe import KernelProbe

CHARON = "/usr/lib/ipsec/charon"
PLUGIN_DIR = Path("/usr/lib/ipsec/plugins")
SWANCTL_START_S = 5.0  # the per-child allowance of rekey()'s swanctl loop (see there)
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
    # Tunnels 2..N (tunnels = N): each its own CHILD SA (local_ts, remote_ts) under the same IKE SA
    more_ts: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    # The initiator with more than one child starts them all as the config loads (start_action):
    # charon queues every CREATE_CHILD_SA on the one IKE SA, as fast as it can run them.
    start_children: bool = False

    def children(self) -> dict[str, tuple[str, str]]:
        """Child name -> (local_ts, remote_ts): "net" (the first tunnel, as ever), then net2, net3, ..."""
        return {child_name(i): ts for i, ts in enumerate([(self.local_ts, self.remote_ts), *self.more_ts])}


def child_name(index: int) -> str:
    """The CHILD SA config of tunnel `index` (0: the first, "net")."""
    return "net" if index == 0 else f"net{index + 1}"


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
    """One connection with one child per tunnel; `auth` holds this side's credential lines."""
    ppk = "    ppk_id = ppk@vpnbench\n    ppk_required = yes\n" if ppk_secret else ""
    # libipsec hands ESP to charon's own UDP socket, so ESP is always UDP-encapsulated there.
    encap = "yes" if backend == "userspace" else "no"
    start = "\n        start_action = start" if side.start_children else ""
    children = "\n".join(f"""      {name} {{
        local_ts = {local_ts}
        remote_ts = {remote_ts}
        esp_proposals = {params.cipher}
        mode = {params.mode}
        ipcomp = {'yes' if params.ipcomp else 'no'}
        rekey_time = 0{start}
      }}""" for name, (local_ts, remote_ts) in side.children().items())
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
{children}
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

    def initiate(self, timeout: float | None = None) -> None:
        """Until the CHILD SA is up, or `timeout` (whole seconds, at least 1; default 15) has
        passed: then swanctl fails and up() with it, and charon's own tries end when it is stopped."""
        seconds = max(1, math.ceil(timeout)) if timeout is not None else 15
        self.swanctl("--initiate", "--child", "net", "--timeout", str(seconds), timeout=seconds + 5)

    def wait_for_children(self, count: int, timeout: float) -> None:
        """Until `count` CHILD SAs are installed (those start_action began); fail with charon's
        last lines, and how many made it, when they are not within timeout."""
        deadline = time.monotonic() + timeout
        while len(installed_children(self.list_sas())) < count:
            if not self.proc.alive() or time.monotonic() > deadline:
                installed = len(installed_children(self.list_sas()))
                raise TechniqueError(f"{installed} of {count} CHILD SAs installed after {timeout:g} s; "
                                     f"charon: {tail(self.proc.output())}")
            time.sleep(0.1)

    def list_sas(self) -> dict:
        return parse_vici_raw(self.swanctl("--list-sas", "--raw").stdout)

    def rekey(self, children: list[str], timeout: float = 10.0) -> dict:
        """Rekey these CHILD SAs now and wait until each one's successor is installed; returns the
        first one's SPIs before and after, and how many were renewed. swanctl --rekey only queues
        the exchange, so the new SAs are polled for; one shell on the host asks for them all."""
        before = installed_children(self.list_sas())
        if set(children) - set(before):
            raise TechniqueError(f"rekey: no installed CHILD SA {sorted(set(children) - set(before))[0]} to rekey")
        swanctl = f"env SWANCTL_DIR={self.dir / 'swanctl'} swanctl --rekey --uri {self.uri} --child"
        # a guard against a hang, not a bound: one swanctl start a child, and in the TCG kernel VM with
        # the CPU halved four of them took more than 12 s (stop 55), so 5 s a child
        self.host.run(["sh", "-c", f'for child; do {swanctl} "$child" >/dev/null || exit 1; done', "sh", *children],
                      timeout=timeout + len(children) * SWANCTL_START_S)
        deadline = time.monotonic() + timeout + len(children) * 0.05
        while True:
            after = installed_children(self.list_sas())
            renewed = [name for name in children if name in after
                       and after[name].get("spi-in") != before[name].get("spi-in")]
            if len(renewed) == len(children):
                first = children[0]
                return {"how": f"swanctl --rekey --child {first}" + (f" (and {len(children) - 1} more)"
                                                                      if len(children) > 1 else ""),
                        "spi_in_before": before[first].get("spi-in"), "spi_out_before": before[first].get("spi-out"),
                        "spi_in_after": after[first].get("spi-in"), "spi_out_after": after[first].get("spi-out"),
                        "tunnels_rekeyed": len(renewed)}
            if time.monotonic() > deadline:
                raise TechniqueError(f"rekey: {len(children) - len(renewed)} of {len(children)} CHILD SAs still have "
                                     f"their SPIs after {timeout:g} s; charon: {tail(self.proc.output()) if self.proc else ''}")
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


def installed_children(sas: dict) -> dict[str, dict]:
    """Child config name -> its newest INSTALLED CHILD SA of an established IKE SA (during a
    rekey the old one lingers, REKEYED, beside its successor)."""
    children = [child for event in sas.get("list-sa event", []) for ike in event.values()
                if isinstance(ike, dict) and ike.get("state") == "ESTABLISHED"
                for child in (ike.get("child-sas") or {}).values()
                if isinstance(child, dict) and child.get("state") == "INSTALLED"]
    newest: dict[str, dict] = {}
    for child in sorted(children, key=lambda c: int(c.get("uniqueid") or 0)):
        newest[child.get("name", "")] = child
    return newest


# charon's stderr log with time_format = %T and time_add_ms: "23:45:01.123 06[IKE] initiating IKE_SA ..."
_LOG_TIME = r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) .*"
_INITIATING = re.compile(_LOG_TIME + r"initiating IKE_SA", re.MULTILINE)
_CHILD_UP = re.compile(_LOG_TIME + r"CHILD_SA \S+ established", re.MULTILINE)


_RETRANSMIT = re.compile(r"\[IKE\] retransmit \d+ of request", re.MULTILINE)


def retransmits(log: str) -> int:
    """The IKE requests charon sent again (its log says "retransmit N of request with message ID M",
    every one at the default level), over all exchanges of this log."""
    return len(_RETRANSMIT.findall(log))


def handshake_seconds(log: str) -> float | None:
    """The initiator's IKE exchange as its log times it: from sending IKE_SA_INIT to the first
    CHILD SA established (IKE_AUTH done); None when the log lacks either line."""
    start, done = _INITIATING.search(log), _CHILD_UP.search(log)
    return _between(start, done) if start and done else None


def _between(start: re.Match, done: re.Match) -> float:
    """Seconds from one log line's time to another's."""
    def seconds(match) -> float:
        h, m, s, ms = (int(g) for g in match.groups())
        return h * 3600 + m * 60 + s + ms / 1000
    return round((seconds(done) - seconds(start)) % 86400, 3)  # % 86400: across midnight


def all_children_seconds(log: str) -> float | None:
    """From sending IKE_SA_INIT to the last CHILD SA established, as the initiator's log times
    it (tunnels = N: every child); None when the log lacks either line."""
    start, done = _INITIATING.search(log), list(_CHILD_UP.finditer(log))
    return _between(start, done[-1]) if start and done else None


def generate_key() -> tuple[str, str]:
    """A fresh ECDSA P-256 key pair (PEM): private key and raw public key, through pipes only."""
    private = subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
                             capture_output=True, text=True, check=True).stdout
    public = subprocess.run(["openssl", "pkey", "-pubout"], input=private, capture_output=True, text=True,
                            check=True).stdout
    return private, public
