"""A host reached over OpenSSH: a lab machine, or a VM of the vm testbed.

One ControlMaster connection per host carries every command (no handshake per command);
host keys are verified (StrictHostKeyChecking=yes, BatchMode: no prompt ever), every call
has a timeout, and a remote command is one string in which every argv element is quoted
with shlex.quote, so no configuration value is ever interpreted by a remote shell.
A master that died (network blip, sshd restarted) is started again by the next call.

What a run leaves on the host (spawned processes, files it wrote) is recorded in the run
directory (remote-<role>.json), so `vpnbench cleanup` can reconnect and remove it after a
kill -9.
"""

import json
import shlex
import subprocess
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from vpnbench.foundation.errors import HostError
from vpnbench.foundation.lifetime import die_with_parent
from vpnbench.foundation.params import Duration
from vpnbench.foundation.safe_files import REMOTE_WRITE, wipe_paths
from vpnbench.hosts.base import CommandFailed, CommandResult, Host
from vpnbench.hosts.netns import LocalProc

# Host names, aliases and users go to ssh as argv elements; a leading '-' would be an option.
NAME = r"^[A-Za-z0-9_][A-Za-z0-9_.:%\[\]-]*$"
PID_TAG = "vpnbench-pid "
# Whatever ~/.ssh/config says: root's agent and forwardings never reach a lab machine
# (provision passes them to Ansible's ssh too).
NO_FORWARDING = ("-o", "ForwardAgent=no", "-o", "ClearAllForwardings=yes", "-o", "ForwardX11=no")
# Sent to the remote shell: writes its pid and start time (/proc/PID/stat field 22, kept across
# exec) to a pid file (named in the run record before the spawn, so a kill -9 of vpnbench at any
# moment still leaves cleanup a way to the process), prints the pid, then becomes the command.
# Cleanup kills a pid only when that process is still the one started: the same start time, or
# the pid file's path in its environment (which daemons that rewrite their process title, sshd
# and nginx, overwrite) - never an unrelated process that reused the number.
LAUNCHER = ["sh", "-c", 'echo "$$ $(cut -d" " -f22 /proc/$$/stat)" > "$1" '
            f'&& echo "{PID_TAG}$$" >&2 && export VPNBENCH_PIDFILE="$1" && shift && exec "$@"', "vpnbench"]
# Its descendants go with it (listed before the kill, which would orphan them): scp's own ssh
# child, for one, would otherwise keep the transfer's connection open, and a cell's sshd has
# a process per connection.
KILL_PIDFILES = ('kids() { for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do kids "$c"; echo "$c"; done; }; '
                 'for f; do { read -r p t < "$f"; } 2>/dev/null && [ -n "$p" ] || continue; '
                 'now=$(sed "s/.*) //" "/proc/$p/stat" 2>/dev/null | cut -d" " -f20); '
                 '{ [ -n "$t" ] && [ "$now" = "$t" ]; } || '
                 'tr "\\0" "\\n" < "/proc/$p/environ" 2>/dev/null | grep -qxF "VPNBENCH_PIDFILE=$f" || continue; '
                 'k=$(kids "$p"); kill -9 "$p" $k 2>/dev/null; echo "$p"; done; exit 0')
# The monitor's reading loop on a host (SshHost.watch): every interval, the host's uptime, then
# /proc/stat, /proc/meminfo and the stat of every process a pid file of this host names (the run's
# processes, its own line included: the reader leaves it out), then an end line. It runs there
# rather than one ssh command per sample: under load an ssh round trip took longer than a 1 s
# cell's iperf3 server lived, and a process no reading falls within is missing from its cell
# (stop 68's halved make test). Three forks per reading whatever the number of pid files.
WATCH_LOOP = ('while :; do read -r up _ < /proc/uptime; echo "vpnbench-sample $up"; '
              'cat /proc/stat /proc/meminfo $(sed -n "s|^\\([0-9][0-9]*\\) .*|/proc/\\1/stat|p" "$1"/"$2"-*.pid 2>/dev/null) '
              '2>/dev/null; echo vpnbench-end; sleep "$3"; done')


class SshSettings(BaseModel):
    """How to reach the hosts; anything else comes from ~/.ssh/config (ProxyJump, agent, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    identity_file: str | None = None
    known_hosts: str | None = None  # default: ssh's own (~/.ssh/known_hosts)
    config_file: str | None = None  # ssh -F
    connect_timeout: Duration = 10.0
    keepalive: Duration = 2.0  # a dead peer is noticed after 3 missed keepalives


class SshTarget(BaseModel):
    """One inventory entry: how to reach the machine and which underlay it has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field(pattern=NAME)  # control address or ~/.ssh/config alias
    user: str | None = Field(None, pattern=r"^[a-z_][a-z0-9_.-]*$")
    port: int | None = Field(None, ge=1, le=65535)
    iface: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,15}$")  # underlay interface (router: client side)
    iface_server: str | None = Field(None, pattern=r"^[A-Za-z0-9_.-]{1,15}$")  # router: server side
    ipv4: str | None = Field(None, pattern=r"^[0-9.]+$")  # underlay addresses (endpoints)
    ipv6: str | None = Field(None, pattern=r"^[0-9a-fA-F:]+$")
    cpus: list[int] | None = None  # pin this host's processes (taskset) to these cores


class SshConnection:
    """The ssh command line for one host and its ControlMaster process."""

    def __init__(self, target: SshTarget, settings: SshSettings, control_path: Path, prefix: list[str] = ()):
        self.target = target
        self.settings = settings
        self.control_path = control_path
        self.prefix = list(prefix)  # e.g. ip netns exec <ns>, when the host is only reachable there
        self.master: subprocess.Popen | None = None

    def argv(self, *extra: str) -> list[str]:
        s, t = self.settings, self.target
        argv = [*self.prefix, "ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                "-o", f"ConnectTimeout={max(1, round(s.connect_timeout))}",
                "-o", f"ServerAliveInterval={max(1, round(s.keepalive))}", "-o", "ServerAliveCountMax=3",
                "-o", f"ControlPath={self.control_path}", "-o", "ControlMaster=no", "-o", "LogLevel=ERROR",
                *NO_FORWARDING]
        if s.config_file:
            argv += ["-F", s.config_file]
        if s.identity_file:
            argv += ["-i", s.identity_file, "-o", "IdentitiesOnly=yes"]
        if s.known_hosts:
            argv += ["-o", f"UserKnownHostsFile={s.known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null"]
        if t.port:
            argv += ["-p", str(t.port)]
        if t.user:
            argv += ["-l", t.user]
        return argv + list(extra) + ["--", t.host]

    def alive(self) -> bool:
        return self.master is not None and self.master.poll() is None

    def connect(self) -> None:
        """Start the master and wait until it is authenticated; a refused key or host key fails here."""
        self.close()
        argv = self.argv("-M", "-N", "-o", "ControlMaster=yes", "-o", "ControlPersist=no")
        self.master = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, preexec_fn=die_with_parent)
        deadline = time.monotonic() + self.settings.connect_timeout + 5
        while not self._check():
            if self.master.poll() is not None:
                error = self.master.stderr.read().decode(errors="replace").strip().splitlines()
                raise ConnectionError(f"ssh {self.target.host}: {error[-1] if error else 'connection failed'}")
            if time.monotonic() > deadline:
                self.close()
                raise ConnectionError(f"ssh {self.target.host}: not connected within {self.settings.connect_timeout:g} s")
            time.sleep(0.05)

    def _check(self) -> bool:
        if not self.control_path.exists():
            return False
        return subprocess.run(self.argv("-O", "check"), capture_output=True, timeout=10).returncode == 0

    def close(self) -> None:
        if self.master is None:
            return
        if self.master.poll() is None:
            subprocess.run(self.argv("-O", "exit"), capture_output=True, timeout=10)
            try:
                self.master.wait(3)
            except subprocess.TimeoutExpired:
                self.master.kill()
                self.master.wait()
        self.master = None
        self.control_path.unlink(missing_ok=True)


class SshProc(LocalProc):
    """A remote process: the local ssh client carries its output; signals go by remote kill."""

    def __init__(self, name: str, popen: subprocess.Popen, log_path: Path, host: "SshHost"):
        super().__init__(name, popen, log_path)
        self.host = host
        self.pid = 0  # the remote pid, once the launcher has printed it

    def remote_pid(self, timeout: float = 5.0) -> int | None:
        deadline = time.monotonic() + timeout
        while not self.pid:
            first = self.log_path.read_text(errors="replace").split("\n", 1)[0] if self.log_path.exists() else ""
            if first.startswith(PID_TAG) and first[len(PID_TAG):].strip().isdigit():
                self.pid = int(first[len(PID_TAG):])
            elif not self.alive() or time.monotonic() > deadline:
                return None
            else:
                time.sleep(0.02)
        return self.pid

    def _signal(self, sig: int) -> None:
        pid = self.remote_pid()
        if pid and self.alive():
            self.host.run(["kill", f"-{int(sig)}", str(pid)], timeout=10, check=False)

    def stop(self, timeout: float = 3.0) -> int | None:
        code = super().stop(timeout)
        if self.popen.poll() is None:  # the host is unreachable: at least end the local client
            self.popen.kill()
            self.popen.wait()
        return code if code is not None else self.popen.returncode

    def output(self) -> str:
        text = super().output()
        text = text.split("\n", 1)[1] if text.startswith(PID_TAG) else text
        if self.popen.returncode == 255:  # ssh's own failure, not the program's
            text += f"\n(ssh connection to {self.host.conn.target.host} lost)"
        return text


class SshHost(Host):
    """Host over ssh. Paths are the same on both sides: the run's directory is created remotely."""


    def __init__(self, role: str, connection: SshConnection, workdir: Path, cpus: list[int] | None = None):
        super().__init__(role, cpus)
        self.conn = connection
        self.workdir = workdir
        self._spawned = 0
        self._failure: tuple[float, str] | None = None  # (when, why) of the last failed connect
        self.spawned: list[SshProc] = []  # the run's processes on this host (pids())
        self._own: list[SshProc] = []  # vpnbench's own there: the monitor's reading loop
        self._record_path = workdir / f"remote-{role}.json"
        self._record = {"ssh": connection.argv(), "pidfiles": [], "files": [], "dirs": [], "sysctls": {}}

    # -- connection ------------------------------------------------------------------------
    def connect(self) -> None:
        self.conn.connect()
        self._save_record()
        self.run(["mkdir", "-p", "-m", "0700", "--", str(self.workdir)])

    def record(self, file: str | None = None, pidfile: str | None = None, directory: str | None = None) -> None:
        """Remember what to remove from this host should the run be killed."""
        if pidfile:
            self._record["pidfiles"].append(pidfile)
        if file and file not in self._record["files"]:
            self._record["files"].append(file)
        if directory and directory not in self._record["dirs"]:
            self._record["dirs"].append(directory)
        self._save_record()

    def on_this_machine(self) -> bool:
        return False

    def remember_dir(self, path: Path) -> None:
        self.record(directory=str(path))

    def remember_file(self, path: Path) -> None:
        self.record(file=str(path))

    def clock_offset(self) -> tuple[float, float]:
        """The host's clock as `date` reads it between two readings of ours: the best of three round
        trips, uncertain by half of that one (the host read its clock somewhere inside it)."""
        best: tuple[float, float] | None = None
        for _ in range(3):
            before = time.monotonic()
            stamp = float(self.run(["date", "+%s.%N"], timeout=10).stdout)
            after = time.monotonic()
            if best is None or (after - before) / 2 < best[1]:
                best = (stamp - (before + after) / 2, (after - before) / 2)
        return best

    def set_sysctl(self, key: str, value: str) -> None:
        """Change a machine-wide setting; its first previous value is recorded before the change."""
        previous = self.run(["sysctl", "-n", key], check=False)
        if not previous.ok:
            raise HostError(f"sysctl {key}: no such setting on {self.role}")
        self._record["sysctls"].setdefault(key, " ".join(previous.stdout.split()))
        self._save_record()
        self.run(["sysctl", "-qw", f"{key}={value}"])

    def _save_record(self) -> None:
        self._record_path.write_text(json.dumps(self._record))

    def close(self) -> None:
        """Stop what is still running here, wipe the files the run wrote, drop the connection."""
        for proc in self.spawned + self._own:
            proc.stop(1)
        remove_remote(self.run, self._record, self.workdir)
        self.conn.close()
        self._record_path.unlink(missing_ok=True)

    def _command(self, argv: list[str], env: dict[str, str] | None = None, pidfile: Path | None = None) -> str:
        words = list(argv)
        if self.cpus is not None:
            words = ["taskset", "-c", ",".join(map(str, self.cpus))] + words
        if env:
            words = ["env", *(f"{k}={v}" for k, v in env.items())] + words
        if pidfile:
            words = LAUNCHER + [str(pidfile)] + words
        return shlex.join(words)

    def _ensure_connected(self) -> None:
        """Reconnect when the master died; after a failed attempt, fail fast for a while, so
        that tearing down a cell on a dead host does not wait a connect timeout per command."""
        if self.conn.alive():
            return
        if self._failure and time.monotonic() - self._failure[0] < self.conn.settings.connect_timeout:
            raise ConnectionError(self._failure[1])
        try:
            self.conn.connect()
            self._failure = None
        except ConnectionError as exc:
            self._failure = (time.monotonic(), str(exc))
            raise

    # -- Host ------------------------------------------------------------------------------
    def run(self, argv: list[str], timeout: float = 30.0, check: bool = True,
            input: str | None = None) -> CommandResult:
        result = self._run_bytes(argv, timeout, input.encode() if input is not None else None)
        result.stdout = result.stdout.decode(errors="replace")
        if check and not result.ok:
            raise CommandFailed(result)
        return result

    def _run_bytes(self, argv: list[str], timeout: float, input: bytes | None) -> CommandResult:
        try:
            self._ensure_connected()
        except ConnectionError as exc:
            return CommandResult(list(argv), 255, b"", str(exc))
        full = self.conn.argv(*([] if input is not None else ["-n"])) + [self._command(argv)]
        try:
            proc = subprocess.run(full, capture_output=True, timeout=timeout, input=input)
        except subprocess.TimeoutExpired as exc:
            return CommandResult(list(argv), -9, exc.stdout or b"",
                                 (exc.stderr or b"").decode(errors="replace") + f"\ntimed out after {timeout:g} s")
        stderr = proc.stderr.decode(errors="replace")
        if proc.returncode == 255 and not self.conn.alive():
            stderr += f"\nssh connection to {self.conn.target.host} lost"
        return CommandResult(list(argv), proc.returncode, proc.stdout, stderr)

    def spawn(self, argv: list[str], name: str, env: dict[str, str] | None = None,
              interactive: bool = False) -> SshProc:
        proc = self._start(argv, name, env, interactive)
        self.spawned.append(proc)
        return proc

    def watch(self, interval: float) -> SshProc:
        """The monitor's reading loop (WATCH_LOOP) on this host, its readings on the returned
        process's stdout. Recorded for cleanup like any process, but not one of the run's: pids()
        leaves it out (the idle and scaling measurements sum their CPU)."""
        proc = self._start(["sh", "-c", WATCH_LOOP, "vpnbench-watch", str(self.workdir), self.role, f"{interval:g}"],
                           "monitor", None, True)
        self._own.append(proc)
        return proc

    def _start(self, argv: list[str], name: str, env: dict[str, str] | None, interactive: bool) -> SshProc:
        self._ensure_connected()
        self._spawned += 1
        log_path = self.workdir / f"{self.role}-{name}-{self._spawned}.log"
        pidfile = self.workdir / f"{self.role}-{name}-{self._spawned}.pid"
        self.record(pidfile=str(pidfile), file=str(pidfile))
        pipe = subprocess.PIPE if interactive else None
        full = self.conn.argv(*([] if interactive else ["-n"])) + [self._command(argv, env, pidfile)]
        with open(log_path, "wb") as log:
            log_path.chmod(0o600)
            popen = subprocess.Popen(full, stdout=pipe or log, stderr=log, stdin=pipe or subprocess.DEVNULL,
                                     start_new_session=True, preexec_fn=die_with_parent)
        proc = SshProc(name, popen, log_path, self)
        proc.remote_pid()
        return proc

    def write_file(self, path: Path, data: str | bytes, mode: int = 0o600) -> None:
        payload = data.encode() if isinstance(data, str) else data
        self.record(file=str(path))
        # a fresh 0600 name renamed into place (safe_files); content via stdin, never argv
        result = self._run_bytes(["sh", "-c", REMOTE_WRITE, "write", str(path), f"{mode:o}"], 30, payload)
        if not result.ok:
            result.stdout = result.stdout.decode(errors="replace")
            raise CommandFailed(result)

    def read_file(self, path: Path) -> bytes:
        result = self._run_bytes(["cat", "--", str(path)], 60, None)
        if not result.ok:
            raise FileNotFoundError(f"{self.role}: {path}: {result.stderr.strip()}")
        return result.stdout

    def remove_file(self, path: Path) -> None:
        self.run(["rm", "-f", "--", str(path)], check=False)

    def pids(self) -> list[int]:
        # remote_pid(0): a pid that was slow to arrive at spawn (a loaded host) is picked up now
        return [proc.pid for proc in self.spawned if proc.alive() and proc.remote_pid(0)]

    def has_command(self, name: str) -> bool:
        return not self.missing_commands([name])

    def missing_commands(self, names: list[str]) -> list[str]:
        script = 'PATH="$PATH:/usr/sbin:/sbin"; for c; do command -v "$c" >/dev/null || echo "$c"; done'
        result = self.run(["sh", "-c", script, "has", *names], timeout=15, check=False)
        if not result.ok:  # the script itself always succeeds: the host did not answer (ssh's 255)
            raise CommandFailed(result)  # naming ssh's reason, never "iperf3 not found" for a dead host
        return result.stdout.split()


def remove_remote(run, record: dict, workdir: Path) -> list[str]:
    """Kill the recorded processes and wipe the recorded files on one host (run: its run())."""
    removed = []
    pidfiles = record.get("pidfiles", [])
    if pidfiles:  # the pid files are named before each spawn: even a process started a moment before a kill -9
        killed = run(["sh", "-c", KILL_PIDFILES, "kill", *pidfiles], timeout=15, check=False)
        removed += [f"remote process {pid}" for pid in killed.stdout.split()]
    where = record.get("ssh", ["the remote host"])[-1]
    # files the run wrote (keys among them), then the directories it made (a cell's keys, the
    # scratch data): small files overwritten before removal; anything not root's own is left, named
    removed += [f"remote file {f}" for f in wipe_paths(run, record.get("files", []), where)]
    removed += [f"remote directory {d}" for d in wipe_paths(run, record.get("dirs", []), where)]
    for key, value in record.get("sysctls", {}).items():
        if run(["sysctl", "-qw", f"{key}={value}"], timeout=15, check=False).returncode == 0:
            removed.append(f"remote sysctl {key}={value}")
    run(["rmdir", "--", str(workdir)], timeout=15, check=False)  # only if empty: never another run's
    return removed


def cleanup_remote_records(run_dir: Path) -> list[str]:
    """After a kill -9: reconnect to every host the run recorded and remove what it left."""
    removed = []
    # The server first: killing a client first ends its connections, and the server's per-connection
    # processes (a transfer's sshd session and its scp) then leave the process tree cleanup kills by.
    for path in sorted(run_dir.glob("remote-*.json"), key=lambda p: (p.name != "remote-server.json", p.name)):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        ssh = record["ssh"]
        control = next((a.split("=", 1)[1] for a in ssh if a.startswith("ControlPath=")), None)
        if control and Path(control).exists():
            subprocess.run([*ssh[:-2], "-O", "exit", "--", ssh[-1]], capture_output=True, timeout=10)

        def run(argv, timeout=30, check=False):
            return subprocess.run([*ssh, shlex.join(argv)], capture_output=True, text=True, errors="replace",
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        try:
            removed += remove_remote(run, record, run_dir)
        except (OSError, subprocess.TimeoutExpired):
            removed.append(f"remote host {ssh[-1]} unreachable; its leftovers stay")
        path.unlink(missing_ok=True)
    return removed
