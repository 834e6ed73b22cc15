"""L2TP/IPsec as S4 ran it: xl2tpd (the LNS on the server, a LAC on the client) carries PPP
over UDP 1701, and a transport-mode IPsec SA whose selectors are UDP port 1701 protects it.
IPsec authenticates the hosts (PSK or keys); PPP then authenticates a user with MS-CHAPv2 and
a fresh password, and the MTU/MRU is 1280, as in the install script S4 used.

xl2tpd and the pppd it starts run in a private mount namespace (daemon.spawn_private): the
host's private directory is their /run (pid files, control pipe, pppd's tdb) and its ppp/
subdirectory is their /etc/ppp, so pppd reads this run's options and chap-secrets, never the
system's (whose `auth` default, ip-up scripts and secrets must play no part), and two hosts on
one machine share no file. L2TP runs over the IPv4 underlay only (xl2tpd has no IPv6).
"""

from pathlib import Path

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts.base import Host, Proc
from vpnbench.techniques.ipsec.daemon import missing_package, spawn_private, tail, wait_until
from vpnbench.testbeds.probe import KernelProbe

PORT = 1701
INNER = {"client": "10.97.0.1", "server": "10.97.0.2"}  # the PPP link's addresses
USER = "vpnbench"
MTU = 1280
# PPP is a kernel driver (ppp_generic, /dev/ppp); xl2tpd moves data in the kernel when it has
# PPPoL2TP (l2tp_ppp), otherwise in userspace over a pty. Loading both is harmless if built in.
PROBE = [["sh", "-c", "modprobe -q ppp_generic 2>/dev/null; modprobe -q l2tp_ppp 2>/dev/null; test -c /dev/ppp"]]
SOFTWARE = (("/usr/sbin/xl2tpd", "xl2tpd"), ("/usr/sbin/pppd", "ppp"))


def missing_software(probe: KernelProbe) -> str | None:
    return missing_package(probe, SOFTWARE)


def lns_conf(client_addr: str) -> str:
    """The server: one PPP peer, addressed from INNER; access control: tunnels only from the
    client's address (on a lab server the port is open to the whole lab otherwise)."""
    return f"""[global]
port = {PORT}
access control = yes
[lns default]
lac = {client_addr}
ip range = {INNER['client']}-{INNER['client']}
local ip = {INNER['server']}
require chap = yes
refuse pap = yes
require authentication = yes
name = vpnbench-lns
pppoptfile = /etc/ppp/options.xl2tpd
length bit = yes
"""


def lac_conf(server_addr: str) -> str:
    """The client: dials the server at start (autodial); no redial, so a failure shows."""
    return f"""[global]
port = {PORT}
access control = yes
[lac vpb]
lns = {server_addr}
require authentication = no
name = {USER}
pppoptfile = /etc/ppp/options.xl2tpd
length bit = yes
autodial = yes
redial = no
"""


def ppp_options(role: str) -> str:
    common = [f"mtu {MTU}", f"mru {MTU}", "noccp", "nodefaultroute", "lcp-echo-interval 30",
              "lcp-echo-failure 4", "logfile /run/pppd.log"]
    if role == "server":
        return "\n".join(["auth", "require-mschap-v2", "refuse-pap", "refuse-chap", *common]) + "\n"
    return "\n".join([f"name {USER}", "noauth", "noipdefault", "ipcp-accept-local", "ipcp-accept-remote",
                      *common]) + "\n"


class Xl2tpd:
    """One host's xl2tpd and its PPP configuration."""

    def __init__(self, host: Host, directory: Path):
        self.host = host
        self.dir = directory  # /run of the daemon; dir/ppp is its /etc/ppp
        self.proc: Proc | None = None

    def start(self, config: str, password: str) -> Proc:
        ppp = self.dir / "ppp"
        self.host.remember_dir(self.dir)  # cleanup after a kill -9 wipes it on the host, keys included
        for folder in (self.dir, ppp):
            self.host.run(["mkdir", "-p", "-m", "700", str(folder)])
        self.host.write_file(ppp / "xl2tpd.conf", config, 0o600)
        self.host.write_file(ppp / "options.xl2tpd", ppp_options(self.host.role), 0o600)
        # client server secret addresses: the one user, either end, any address
        self.host.write_file(ppp / "chap-secrets", f'"{USER}" * "{password}" *\n', 0o600)
        self.proc = spawn_private(
            self.host, self.dir,
            ["/usr/sbin/xl2tpd", "-D", "-c", "/etc/ppp/xl2tpd.conf", "-p", "/run/xl2tpd.pid",
             "-C", "/run/l2tp-control", "-s", "/etc/ppp/l2tp-secrets"],
            name=f"xl2tpd-{self.host.role}", binds={"/etc/ppp": ppp})
        return self.proc

    def wait_for_listening(self) -> None:
        """Until xl2tpd has its UDP socket: a LAC that dials earlier waits out L2TP's retransmit
        back-off, which would count in the set-up time."""
        def listening() -> bool:
            return f":{PORT} " in self.host.run(["ss", "-Hunl", "sport", "=", f":{PORT}"], check=False).stdout
        wait_until(listening, self.proc, f"xl2tpd (UDP {PORT})", 10)

    def wait_for_link(self, local: str) -> None:
        """Until this host has a PPP interface with its inner address (IPCP done)."""
        def has_address() -> bool:
            return local in self.host.run(["ip", "-4", "-o", "addr", "show", "type", "ppp"], check=False).stdout
        try:
            wait_until(has_address, self.proc, "L2TP/PPP link (xl2tpd)", 20)
        except TechniqueError as exc:
            raise TechniqueError(f"{exc}; pppd: {tail(self.ppp_log())}") from None

    def ppp_log(self) -> str:
        try:
            return self.host.read_file(self.dir / "pppd.log").decode(errors="replace")
        except FileNotFoundError:
            return "no log"

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop(5)  # SIGTERM: xl2tpd hangs up its calls, and pppd exits with them
        wipe(self.host, self.dir)  # on the host that holds it, now

