"""A small lab of real machines for the ssh testbed, made of namespaces on this machine.

client, router and server are namespaces with their own sshd (a generated host key each,
a generated client key, a known_hosts listing exactly those host keys). Their underlay
(c0 - r0 | r1 - s0, IPv4 and IPv6) exists before vpnbench starts, as on a real lab; the
control network is a bridge in a fourth namespace, "mgmt", where vpnbench itself runs.
Nothing of it appears in the root namespace. Names start with vpbt-, not vpb-: the lab
is the test's own, never a run's.
"""

import fcntl
import os
import secrets
import shlex
import signal
import subprocess
import time
from pathlib import Path

ROLES = ("client", "router", "server")
MGMT = {"client": "10.203.0.2", "router": "10.203.0.3", "server": "10.203.0.4"}
UNDERLAY = {  # role -> (iface, ipv4, ipv6)
    "client": [("c0", "10.202.1.2", "fd00:202:1::2")],
    "router": [("r0", "10.202.1.1", "fd00:202:1::1"), ("r1", "10.202.2.1", "fd00:202:2::1")],
    "server": [("s0", "10.202.2.2", "fd00:202:2::2")],
}
SSHD_CONFIG = """ListenAddress {address}:22
HostKey {key}
AuthorizedKeysFile {authorized}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
# a run keeps several processes per host (daemons, iperf3, tcpdump, the sampler)
MaxSessions 64
MaxStartups 64
"""
# A lab machine is a clean machine: root's home is an empty tmpfs in sshd's own mount
# namespace, so the shell sshd runs per command does not source this machine's ~/.bashrc.
# A developer's pyenv there takes a lock in every shell (pyenv rehash); a session killed
# mid-rehash (down() kills with SIGKILL) left the lock behind, and every later command
# waited 60 s for it: all ssh tests failed, with bash and sleep left on the machines.
# 16 MB: ansible (test_provision) keeps its modules in ~/.ansible/tmp while it runs them.
EMPTY_HOME = "mount -t tmpfs -o mode=0700,size=16m lab-home /root"


def private_mounts(hidden: list[str], home_from_machine: tuple[str, ...] = ()) -> list[str]:
    """sshd's own mount namespace: the empty home, with these directories of this machine's
    /root in it (.cargo and .rustup: a lab machine with a toolchain), and an empty read-only
    directory over each hidden one, so that this lab machine lacks what this machine (the
    controller) has. Each home directory kept is opened before the tmpfs hides it and bound from
    that descriptor (mount -c: not resolved back to its path, which is then the tmpfs's)."""
    names = home_from_machine
    opened = "".join(f"exec {3 + i}</root/{name} && " for i, name in enumerate(names))
    binds = [f"mkdir /root/{name} && mount -c --bind /proc/self/fd/{3 + i} /root/{name}" for i, name in enumerate(names)]
    closed = [f"exec {3 + i}<&-" for i in range(len(names))]
    hides = [f"mount -t tmpfs -o ro,size=4k lab-hidden {shlex.quote(path)}" for path in hidden]
    script = opened + " && ".join([EMPTY_HOME, *binds, *closed, *hides]) + ' && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "lab-sshd"]


RUN_SSHD = Path("/run/sshd")  # sshd's privilege separation directory: compiled in, one per machine
LABS_LOCK = Path("/run/vpbt-sshlab.lock")  # held shared by every lab up, exclusively by the one that ends them
MADE_BY_A_LAB = Path("/run/vpbt-sshlab-made-run-sshd")  # RUN_SSHD was not this machine's own


def hold_run_sshd() -> int:
    """RUN_SSHD for this lab's sshd, made if the machine has none, shared with the labs of other
    tests running at the same time (make test's workers): a descriptor holding LABS_LOCK shared."""
    while True:
        fd = os.open(LABS_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            if os.fstat(fd).st_ino == os.stat(LABS_LOCK).st_ino:
                break  # else the last lab removed it between our open and our lock: take the new one
        except FileNotFoundError:
            pass
        os.close(fd)
    if not RUN_SSHD.is_dir():
        MADE_BY_A_LAB.touch(mode=0o600)
        RUN_SSHD.mkdir(mode=0o755, exist_ok=True)
    return fd


def let_go_of_run_sshd(fd: int) -> None:
    """The last lab to end removes RUN_SSHD if a lab made it, and the lock: a lab still up holds
    the lock shared, and the exclusive lock is then refused."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return
    if MADE_BY_A_LAB.exists():
        try:
            RUN_SSHD.rmdir()
        except OSError:
            pass
        MADE_BY_A_LAB.unlink()
    LABS_LOCK.unlink()  # before the lock is let go: a lab that opened it meanwhile takes a new one
    os.close(fd)


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


class SshLab:
    def __init__(self, directory: Path, hidden: dict[str, list[str]] | None = None,
                 home_from_machine: tuple[str, ...] = ()):
        self.dir = directory
        self.hidden = hidden or {}  # role -> directories that machine lacks (private_mounts)
        self.home_from_machine = home_from_machine
        self.dir.mkdir(mode=0o700, exist_ok=True)
        tag = secrets.token_hex(2)
        self.ns = {role: f"vpbt-ssh{tag}-{role}" for role in ("mgmt", *ROLES)}
        self.sshd: dict[str, subprocess.Popen] = {}
        self.identity = self.dir / "id_ed25519"
        self.known_hosts = self.dir / "known_hosts"
        self._run_sshd: int | None = None  # our hold on RUN_SSHD

    # -- network ---------------------------------------------------------------------------
    def up(self) -> "SshLab":
        for ns in self.ns.values():
            ip("netns", "add", ns)
            ip("-n", ns, "link", "set", "lo", "up")
            self.sysctl(ns, "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
        mgmt = self.ns["mgmt"]
        ip("-n", mgmt, "link", "add", "br0", "type", "bridge")
        ip("-n", mgmt, "addr", "add", "10.203.0.1/24", "dev", "br0")
        ip("-n", mgmt, "link", "set", "br0", "up")
        for role in ROLES:
            ip("-n", mgmt, "link", "add", f"m{role}", "type", "veth", "peer", "name", "m0", "netns", self.ns[role])
            ip("-n", mgmt, "link", "set", f"m{role}", "master", "br0", "up")
            ip("-n", self.ns[role], "addr", "add", f"{MGMT[role]}/24", "dev", "m0")
            ip("-n", self.ns[role], "link", "set", "m0", "up")
        ip("-n", self.ns["router"], "link", "add", "r0", "type", "veth", "peer", "name", "c0", "netns", self.ns["client"])
        ip("-n", self.ns["router"], "link", "add", "r1", "type", "veth", "peer", "name", "s0", "netns", self.ns["server"])
        for role, ifaces in UNDERLAY.items():
            for iface, v4, v6 in ifaces:
                ip("-n", self.ns[role], "addr", "add", f"{v4}/24", "dev", iface)
                ip("-n", self.ns[role], "-6", "addr", "add", f"{v6}/64", "dev", iface, "nodad")
                ip("-n", self.ns[role], "link", "set", iface, "up")
        self.sysctl(self.ns["router"], "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        for role in ("client", "server"):
            gateway4 = "10.202.1.1" if role == "client" else "10.202.2.1"
            gateway6 = "fd00:202:1::1" if role == "client" else "fd00:202:2::1"
            ip("-n", self.ns[role], "route", "add", "default", "via", gateway4)
            ip("-n", self.ns[role], "-6", "route", "add", "default", "via", gateway6)
        self._keys()
        for role in ROLES:
            self.start_sshd(role)
        return self

    @staticmethod
    def sysctl(ns: str, *settings: str) -> None:
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", *settings], check=True, capture_output=True)

    # -- ssh -------------------------------------------------------------------------------
    def _keys(self) -> None:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.identity)], check=True)
        (self.dir / "authorized_keys").write_text(Path(f"{self.identity}.pub").read_text())
        lines = []
        for role in ROLES:
            key = self.dir / f"host_{role}"
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
            lines.append(f"{MGMT[role]} {Path(f'{key}.pub').read_text().strip()}")
            (self.dir / f"sshd_{role}.conf").write_text(SSHD_CONFIG.format(
                address=MGMT[role], key=key, authorized=self.dir / "authorized_keys"))
        self.known_hosts.write_text("\n".join(lines) + "\n")

    def start_sshd(self, role: str) -> None:
        if self._run_sshd is None:
            self._run_sshd = hold_run_sshd()
        log = open(self.dir / f"sshd_{role}.log", "ab")
        self.sshd[role] = subprocess.Popen(
            ["ip", "netns", "exec", self.ns[role], *private_mounts(self.hidden.get(role, []), self.home_from_machine),
             "/usr/sbin/sshd", "-D", "-e", "-f", str(self.dir / f"sshd_{role}.conf")],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while subprocess.run(["ip", "netns", "exec", self.ns[role], "ss", "-ltnH", "sport = :22"],
                             capture_output=True, text=True).stdout.strip() == "":
            assert time.monotonic() < deadline, (self.dir / f"sshd_{role}.log").read_text()
            time.sleep(0.05)

    def kill_sshd(self, role: str) -> None:
        """Every sshd of that machine, the listener and the sessions' (a machine gone away)."""
        for pid in self.pids(role):
            if self.comm(pid) == "sshd":
                os.kill(pid, signal.SIGKILL)

    # -- campaign --------------------------------------------------------------------------
    def testbed_toml(self, router: bool = True) -> str:
        text = ("[testbed]\nkind = \"ssh\"\n" f"router = {'true' if router else 'false'}\n"
                "[testbed.ssh]\n"
                f"identity_file = \"{self.identity}\"\nknown_hosts = \"{self.known_hosts}\"\n"
                "config_file = \"/dev/null\"\nconnect_timeout = \"5s\"\n")
        for role in ROLES:
            ifaces = UNDERLAY[role]
            text += f"[testbed.hosts.{role}]\nhost = \"{MGMT[role]}\"\nuser = \"root\"\niface = \"{ifaces[0][0]}\"\n"
            if role == "router":
                text += f"iface_server = \"{ifaces[1][0]}\"\n"
            else:
                text += f"ipv4 = \"{ifaces[0][1]}\"\nipv6 = \"{ifaces[0][2]}\"\n"
        return text

    def exec_argv(self) -> list[str]:
        """Prefix that runs a command where vpnbench runs: on the control network."""
        return ["ip", "netns", "exec", self.ns["mgmt"]]

    # -- inspection and teardown -----------------------------------------------------------
    def pids(self, role: str) -> list[int]:
        out = subprocess.run(["ip", "netns", "pids", self.ns[role]], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    @staticmethod
    def comm(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            return ""

    def strays(self) -> list[str]:
        """Processes a run left on the lab's machines (anything but sshd)."""
        return [f"{role}: {pid} {self.comm(pid)}" for role in (*ROLES, "mgmt") for pid in self.pids(role)
                if self.comm(pid) not in ("sshd", "")]

    def down(self) -> None:
        for popen in self.sshd.values():
            popen.kill()
            popen.wait()
        for ns in self.ns.values():
            for pid in self.pids(ns.rsplit("-", 1)[1]) if ns.rsplit("-", 1)[1] in self.ns else []:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        if self._run_sshd is not None:
            let_go_of_run_sshd(self._run_sshd)
            self._run_sshd = None
