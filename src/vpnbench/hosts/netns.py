"""A host that is a network namespace on this machine (the default, zero hardware)."""

import math
import os
import select
import signal
import subprocess
import time
from pathlib import Path

from vpnbench.foundation.safe_files import write_private
from vpnbench.foundation.tools import which
from vpnbench.hosts.base import CommandFailed, CommandResult, Host, Proc, completed, daemon_environment


def readable(fd: int, timeout: float | None) -> bool:
    """Whether fd becomes readable within timeout seconds (None: no limit). poll, not select:
    select refuses a descriptor numbered 1024 or more, which a run holding 2 000 daemons has."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(None if timeout is None else max(0, math.ceil(timeout * 1000))))


class LocalProc(Proc):
    """A process whose stdout and stderr go to a log file (never a pipe that could fill)."""

    def __init__(self, name: str, popen: subprocess.Popen, log_path: Path):
        self.name = name
        self.popen = popen
        self.pid = popen.pid
        self.log_path = log_path
        self._pending = b""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None if still running after timeout. Waits on a pidfd, which wakes
        the moment the process ends; Popen.wait(timeout) polls with sleeps growing to 50 ms, and
        every cell waits for its iperf3 server this way."""
        if self.popen.poll() is not None:
            return self.popen.returncode
        try:
            pidfd = os.pidfd_open(self.pid)
        except OSError:  # a kernel before 5.3, or the process was just reaped
            try:
                return self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                return None
        try:
            if not readable(pidfd, timeout):
                return None
        finally:
            os.close(pidfd)
        return self.popen.wait()

    def _signal(self, sig: int) -> None:
        try:
            self.popen.send_signal(sig)
        except ProcessLookupError:
            pass

    def interrupt(self) -> None:
        self._signal(signal.SIGINT)

    def stop(self, timeout: float = 3.0) -> int | None:
        if self.alive():
            self._signal(signal.SIGTERM)
            if self.wait(timeout) is None:
                self._signal(signal.SIGKILL)
                self.wait(timeout)
        return self.popen.returncode

    def output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def read_line(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        fd = self.popen.stdout.fileno()
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not readable(fd, left):
                raise TimeoutError(f"{self.name}: no answer within {timeout:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError(f"{self.name} exited: {self.output().strip()[-300:]}")
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line.decode(errors="replace")

    def request(self, line: str, timeout: float = 5.0) -> str:
        self.popen.stdin.write(line.encode() + b"\n")
        self.popen.stdin.flush()
        return self.read_line(timeout)


class NetnsHost(Host):
    """Commands run through ``ip netns exec``; pinned hosts add ``taskset``."""

    machine = "this machine"

    def __init__(self, role: str, netns: str, workdir: Path, cpus: list[int] | None = None):
        super().__init__(role, cpus)
        self.netns = netns
        self.workdir = workdir
        self._spawned = 0

    def _wrap(self, argv: list[str]) -> list[str]:
        prefix = ["ip", "netns", "exec", self.netns]
        if self.cpus is not None:
            prefix += ["taskset", "-c", ",".join(map(str, self.cpus))]
        return prefix + list(argv)

    def run(self, argv: list[str], timeout: float = 30.0, check: bool = True,
            input: str | None = None) -> CommandResult:
        full = self._wrap(argv)
        try:
            proc = subprocess.run(full, capture_output=True, text=True, timeout=timeout, input=input,
                                  stdin=None if input is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
            result = CommandResult(list(argv), -9, out, err + f"\ntimed out after {timeout:g} s")
        else:
            result = completed(list(argv), proc)
        if check and not result.ok:
            raise CommandFailed(result)
        return result

    def spawn(self, argv: list[str], name: str, env: dict[str, str] | None = None,
              interactive: bool = False) -> LocalProc:
        self._spawned += 1
        log_path = self.workdir / f"{self.role}-{name}-{self._spawned}.log"
        full_env = daemon_environment(env)  # not ours: no SUDO_*, no database credentials
        pipe = subprocess.PIPE if interactive else None
        with open(log_path, "wb") as log:
            os.chmod(log_path, 0o600)
            # A new session keeps a terminal's Ctrl-C away from children: the run stops
            # them itself, in order, during cleanup.
            popen = subprocess.Popen(self._wrap(argv), stdout=pipe or log, stderr=log if interactive else subprocess.STDOUT,
                                     stdin=pipe or subprocess.DEVNULL, env=full_env, start_new_session=True)
        return LocalProc(name, popen, log_path)

    def write_file(self, path: Path, data: str | bytes, mode: int = 0o600) -> None:
        write_private(Path(path), data.encode() if isinstance(data, str) else data, mode)

    def pids(self) -> list[int]:
        out = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def has_command(self, name: str) -> bool:
        return which(name) is not None

    def netns_inode(self) -> int:
        return os.stat(f"/run/netns/{self.netns}").st_ino

    def listening(self, proc: Proc, port: int, udp: bool = False) -> bool:
        """Read the socket table through the process's own /proc entry: no `ss` to start, so it
        can be polled every few ms. `ip netns exec` (and taskset) exec in place, so the pid is the
        daemon's; until it has entered the namespace its /proc/PID/net is the root namespace's,
        hence the inode check."""
        try:
            if os.stat(f"/proc/{proc.pid}/ns/net").st_ino != self.netns_inode():
                return False
            return any(_listens(Path(f"/proc/{proc.pid}/net/{table}").read_text(), port, udp)
                       for table in (("udp", "udp6") if udp else ("tcp", "tcp6")))
        except OSError:  # the process has exited: the caller's alive() check says why
            return False


TCP_LISTEN = "0A"  # st column of /proc/net/tcp (include/net/tcp_states.h: TCP_LISTEN = 10)
UDP_UNCONNECTED = "07"  # a bound, unconnected UDP socket shows TCP_CLOSE (7)


def _listens(table: str, port: int, udp: bool) -> bool:
    """True if a line of a /proc/net/{tcp,udp}[6] table is a socket bound to `port` in the
    state `ss -l` lists (TCP LISTEN, UDP unconnected)."""
    wanted = f":{port:04X}"
    state = UDP_UNCONNECTED if udp else TCP_LISTEN
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[1].endswith(wanted) and fields[3] == state:
            return True
    return False
