"""What every application server shares: the run-owned directories and waiting for a port."""

import os
import secrets
import time
from pathlib import Path

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.safe_files import check_parent, make_dir
from vpnbench.hosts.base import Host, Proc

# Data files live on a tmpfs: S3 found the disk, not the network, limited its downloads until it
# used a RAM disk. /dev/shm is a tmpfs on every Linux machine. Only that random data goes there;
# keys and configurations stay in the run's 0700 directory. Every directory made is recorded
# (safe_files.remember) once it is made and checked, so `vpnbench cleanup` removes it after a
# kill -9, wherever it is.
SHM_PREFIX = "vpnbench-"


def run_id_of(host: Host) -> str:
    """The run id a host's private directory is named after (/run/vpnbench/<run id>)."""
    return Path(host.workdir).name  # NetnsHost and SshHost (and so VM hosts) all have one


def scratch_dir(host: Host, parent: Path) -> Path:
    """A fresh directory for one cell's random data on `parent` (a tmpfs that everyone may write,
    such as /dev/shm): <parent>/vpnbench-<run id>/<nonce>. The run's directory there is root's
    and 0700, made by mkdir and checked (see safe_files), so nobody else can be in it; the cell's
    is 0755 inside it: nginx's workers and vsftpd's anonymous user read the files."""
    run_dir = make_dir(host, check_parent(host, parent) / f"{SHM_PREFIX}{run_id_of(host)}", 0o700, reuse=True)
    host.remember_dir(run_dir)  # only once made and checked: cleanup never wipes a directory someone else made
    return make_dir(host, run_dir / secrets.token_hex(3), 0o755)


def config_dir(host: Host) -> Path:
    """A fresh 0700 directory in the run's private directory for one cell's keys, configuration,
    pid and log files: never on the shared tmpfs."""
    path = make_dir(host, Path(host.workdir) / f"cell-{secrets.token_hex(3)}", 0o700)
    host.remember_dir(path)
    return path


def remove_dir(host: Host, path: Path) -> None:
    """Remove a cell's scratch directory, and the run's one on the tmpfs once it is empty."""
    host.run(["rm", "-rf", "--", str(path)], timeout=60, check=False)
    host.run(["rmdir", "--", str(Path(path).parent)], check=False)


def wait_listening(host: Host, proc: Proc, port: int, what: str, timeout: float = 5.0, udp: bool = False,
                   key: str | None = None) -> None:
    """Poll until something listens on `port` (TCP, or UDP) in the host; fail with the daemon's last
    lines, its whole output kept as evidence under `key` (default: `what`)."""
    deadline = time.monotonic() + timeout
    evidence = key or what
    while time.monotonic() < deadline:
        if not proc.alive():
            raise MeasurementError(f"{what} exited: {tail(proc.output())}", {evidence: proc.output()})
        if host.listening(proc, port, udp):
            return
        time.sleep(0.002)  # a local check is ~0.1 ms; a daemon listens a few ms after its start
    raise MeasurementError(f"{what} not listening on port {port} after {timeout:g} s", {evidence: proc.output()})


def tail(text: str, lines: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-lines:]) or "no output"


def url_host(address: str) -> str:
    """An address as it goes into a URL or a listen directive: IPv6 in brackets."""
    return f"[{address}]" if ":" in address else address


def free_bytes(directory: str | os.PathLike) -> int:
    stat = os.statvfs(directory)
    return stat.f_bavail * stat.f_frsize
