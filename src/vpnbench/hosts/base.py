"""The Host interface: run a command, spawn a process, read and write files.

Techniques and measurements use only this interface, so they work the same on a local
network namespace, a machine over SSH or a VM.
"""

import abc
import dataclasses
import os
import pwd
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from vpnbench.foundation.errors import HostError
from vpnbench.foundation.safe_files import DIRS_RECORD, recorded_dirs
from vpnbench.foundation.tools import missing_tool_reason


@dataclasses.dataclass
class CommandResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def describe_failure(self) -> str:
        text = (self.stderr or self.stdout).strip().splitlines()
        tail = text[-1] if text else "no output"
        if tail.startswith("Command failed ") and len(text) > 1:  # `ip -batch`: the reason is the line before
            tail = f"{text[-2]} ({tail})"
        return f"{self.argv[0]} exited with {self.returncode}: {tail}"


# What a daemon vpnbench starts on this machine gets of vpnbench's own environment: the program
# search path, the locale, and the test suite's hooks; never the rest (SUDO_USER and SUDO_UID,
# which daemons such as boringtun follow to give their sockets away; VPNBENCH_DB, PGPASSWORD and
# every other credential the controller was started with).
DAEMON_ENV_NAMES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH")
DAEMON_ENV_PREFIXES = ("VPNBENCH_TEST_",)


def daemon_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """A spawned daemon's whole environment: the allow-listed part of ours, then `extra`."""
    kept = {name: value for name, value in os.environ.items()
            if name in DAEMON_ENV_NAMES or name.startswith(DAEMON_ENV_PREFIXES)}
    return kept | {"HOME": pwd.getpwuid(os.geteuid()).pw_dir} | (extra or {})  # its own, never the caller's


class CommandFailed(HostError):
    """A command exited non-zero (with check=True); carries the result, stderr included."""

    def __init__(self, result: CommandResult):
        super().__init__(result.describe_failure())
        self.result = result


class Proc(abc.ABC):
    """A process started on a host that can be waited on, read and stopped."""

    name: str
    pid: int

    @abc.abstractmethod
    def alive(self) -> bool: ...

    @abc.abstractmethod
    def wait(self, timeout: float) -> int | None:
        """Return the exit code, or None if still running after timeout."""

    @abc.abstractmethod
    def stop(self, timeout: float = 3.0) -> int | None:
        """SIGTERM, then SIGKILL after timeout. Returns the exit code."""

    @abc.abstractmethod
    def output(self) -> str:
        """Everything the process wrote to stdout and stderr so far."""

    @abc.abstractmethod
    def interrupt(self) -> None:
        """SIGINT: ask the process to finish what it is doing (tcpdump flushes)."""

    def read_line(self, timeout: float) -> str:
        """Next line of stdout (interactive processes only)."""
        raise NotImplementedError

    def request(self, line: str, timeout: float = 5.0) -> str:
        """Send one command line on stdin, return the one reply line (interactive processes only)."""
        raise NotImplementedError


class Host(abc.ABC):
    """One machine of the testbed: client, server or router."""

    # Hosts with the same value are namespaces of one machine (kernel, CPUs and files shared);
    # None: a machine of its own.
    machine: str | None = None
    # The network namespace of this machine the host is, where it is one (hooks are told its name).
    netns: str | None = None
    # How much slower than natively commands run here (a TCG-emulated guest: 4); the deadlines of
    # best-effort commands (evidence) stretch by it.
    slowdown: float = 1.0

    def __init__(self, role: str, cpus: list[int] | None):
        self.role = role
        self.cpus = cpus  # cores this host's processes are pinned to; None = not pinned

    @abc.abstractmethod
    def run(self, argv: list[str], timeout: float = 30.0, check: bool = True,
            input: str | None = None) -> CommandResult: ...

    @abc.abstractmethod
    def spawn(self, argv: list[str], name: str, env: dict[str, str] | None = None,
              interactive: bool = False) -> Proc:
        """Start a process. interactive: stdin and stdout are pipes for request()/read_line();
        otherwise both go to a log file."""

    @abc.abstractmethod
    def write_file(self, path: Path, data: str | bytes, mode: int = 0o600) -> None: ...

    def read_file(self, path: Path) -> bytes:
        """A file's content. Default: the host shares this machine's filesystem (a namespace)."""
        return Path(path).read_bytes()

    def remove_file(self, path: Path) -> None:
        Path(path).unlink(missing_ok=True)

    @abc.abstractmethod
    def pids(self) -> list[int]:
        """Every process that belongs to this host."""

    @abc.abstractmethod
    def has_command(self, name: str) -> bool: ...

    def has_file(self, path: str) -> bool:
        """Does this path (a file, directory or device) exist as this host sees it? Asked on the
        host itself: a remote machine's files, or a namespace's own mounts, are not this machine's."""
        result = self.run(["test", "-e", str(path)], check=False)
        if result.returncode not in (0, 1):  # not test's answer: the host did not answer (ssh's 255)
            raise CommandFailed(result)
        return result.ok

    def listening(self, proc: Proc, port: int, udp: bool = False) -> bool:
        """Does something on this host listen on `port` (TCP, or UDP)? `proc` is the process
        expected to; a host that can look at it directly needs no `ss` round trip."""
        return bool(self.run(["ss", "-Hlun" if udp else "-Hltn", f"sport = :{port}"], check=False).stdout.strip())

    def missing_commands(self, names: list[str]) -> list[str]:
        """Those of names this host lacks (a remote host answers all in one round trip)."""
        return [name for name in names if not self.has_command(name)]

    def require(self, *commands: str) -> None:
        """Raise with the package to install when a command is missing on this host."""
        missing = self.missing_commands(list(commands))
        if missing:
            raise FileNotFoundError(missing_tool_reason(missing[0]))

    def on_this_machine(self) -> bool:
        """Is this host part of this machine (a namespace): its processes in this /proc, this
        machine's files and binaries usable there as they are? False for a host reached over ssh
        (a lab machine, a VM), which is sampled, recorded and given binaries over its connection."""
        return True

    def netns_inode(self) -> int | None:
        """The inode of its network namespace, which its processes' /proc/PID/ns/net name (a
        namespace of this machine); None where the host is not one."""
        return None

    def set_sysctl(self, key: str, value: str) -> None:
        """Set a kernel setting as this host sees it (a namespace's own copy of a per-namespace
        one); CommandFailed when the kernel refuses it."""
        self.run(["sysctl", "-qw", f"{key}={value}"], timeout=15)

    def remember_file(self, path: Path) -> None:
        """Name a file the run made here outside write_file (a key a program generated), so
        `vpnbench cleanup` wipes it after a kill -9. On this machine the run directory holds it
        and is wiped whole; a remote host records it (ssh.py)."""

    def remember_dir(self, path: Path) -> None:
        """Name a directory the run made here, so `vpnbench cleanup` removes it after a kill -9:
        on this machine, a line in the run directory's record (self.workdir, which a namespace has)."""
        record = Path(self.workdir) / DIRS_RECORD
        if str(path) not in recorded_dirs(record):
            with open(record, "a") as out:
                out.write(f"{path}\n")

    def clock_offset(self) -> tuple[float, float]:
        """(this host's Unix time minus this process's time.monotonic(), how uncertain that is), in
        seconds: what puts a time the host stamped itself (ping -D, fping -D) on a measurement's
        clock, so it never rests on when a process was thought to start. A namespace shares this
        machine's clock: read here, back to back."""
        return time.time() - time.monotonic(), 0.0

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.role}>"


def stop_all(procs: list[Proc], timeout: float = 3.0) -> None:
    """Stop processes together, so daemons that take a moment to exit after SIGTERM
    (wireguard-go: ~28 ms) do not wait their turn."""
    if procs:
        with ThreadPoolExecutor(max_workers=len(procs)) as pool:
            list(pool.map(lambda proc: proc.stop(timeout), procs))


def completed(argv: list[str], proc: subprocess.CompletedProcess) -> CommandResult:
    return CommandResult(argv, proc.returncode, proc.stdout or "", proc.stderr or "")
