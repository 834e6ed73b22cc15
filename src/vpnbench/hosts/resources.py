"""Everything a run creates is tagged with its run id, so it can always be found again.

Namespaces are named ``vpb-<run id>-<role>``, interfaces created outside a namespace
would start with ``vpb<run id>``, and files live in ``/run/vpnbench/<run id>/``
(tmpfs, mode 0700) next to an ``owner`` file naming the process that owns the run.
``vpnbench cleanup`` removes the resources of runs whose owner is gone, and nothing else.

Runners that share a machine and check it for leftovers (the test suite's side-by-side workers)
each set ``VPNBENCH_RUN_ID_PREFIX`` to hex digits of their own: every run id they make starts
with them, so each can tell its runs' namespaces and files from the others'.
"""

import json
import os
import re
import secrets
import signal
import subprocess
import time
from pathlib import Path

import psutil

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.safe_files import DIRS_RECORD, recorded_dirs, wipe_here
from vpnbench.foundation.sysctls import restore_sysctls

RUN_ROOT = Path(os.environ.get("VPNBENCH_RUN_ROOT", "/run/vpnbench"))
NETNS_PATTERN = re.compile(r"^vpb-([0-9a-f]{6})-[a-z0-9]+$")
WIREGUARD_SOCKETS = Path("/var/run/wireguard")
SHM = Path("/dev/shm")  # the transfers' default directory (a tmpfs)
RUN_ID_DIGITS = 6
RUN_ID_PREFIX_ENV = "VPNBENCH_RUN_ID_PREFIX"


def run_id_prefix() -> str:
    """The hex digits every run id made here starts with (none unless VPNBENCH_RUN_ID_PREFIX says)."""
    prefix = os.environ.get(RUN_ID_PREFIX_ENV, "")
    if not re.fullmatch(r"[0-9a-f]{0,3}", prefix):
        raise UserError(f"{RUN_ID_PREFIX_ENV}={prefix!r}: allowed values are 0 to 3 lowercase hex digits (0-9, a-f)")
    return prefix


def new_run_id() -> str:
    prefix = run_id_prefix()
    return prefix + secrets.token_hex(RUN_ID_DIGITS // 2)[len(prefix):]


class RunResources:
    """The run id, its private directory and the names derived from it."""

    def __init__(self, run_id: str | None = None):
        self.run_id = run_id or new_run_id()
        self.dir = RUN_ROOT / self.run_id
        RUN_ROOT.mkdir(mode=0o755, parents=True, exist_ok=True)
        self.dir.mkdir(mode=0o700)
        me = psutil.Process()
        owner = {"pid": me.pid, "create_time": me.create_time()}
        (self.dir / "owner").write_text(json.dumps(owner))

    def netns_name(self, role: str) -> str:
        return f"vpb-{self.run_id}-{role}"

    def iface_name(self, tag: str) -> str:
        """A name unique across the machine (for things like wireguard-go's socket path)."""
        name = f"vpb{self.run_id}{tag}"
        assert len(name) <= 15, name
        return name

    def path(self, name: str) -> Path:
        return self.dir / name

    def close(self) -> list[str]:
        return remove_run(self.run_id)

    def __enter__(self) -> "RunResources":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def owner_alive(run_dir: Path) -> bool:
    try:
        owner = json.loads((run_dir / "owner").read_text())
        proc = psutil.Process(owner["pid"])
        return abs(proc.create_time() - owner["create_time"]) < 0.01
    except (OSError, ValueError, KeyError, psutil.Error):
        return False


def list_netns() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def kill_netns_processes(netns: str) -> None:
    for _ in range(3):
        out = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout
        pids = [int(p) for p in out.split()]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


def delete_netns(netns: str) -> None:
    kill_netns_processes(netns)
    subprocess.run(["ip", "netns", "del", netns], capture_output=True)


def remove_namespaces(names: list[str]) -> None:
    """Kill what runs in them (one pass over /proc, not an `ip netns pids` per namespace), then
    delete them in one `ip -batch -force`; their veths, routes and nft tables go with them."""
    existing = set(list_netns())
    names = [name for name in names if name in existing]
    if not names:
        return
    inodes = {}
    for name in names:
        try:
            inodes[os.stat(f"/run/netns/{name}").st_ino] = name
        except OSError:
            pass
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.stat(proc / "ns" / "net").st_ino in inodes:
                    os.kill(int(proc.name), 9)
            except OSError:
                pass
    subprocess.run(["ip", "-force", "-batch", "-"], input="".join(f"netns del {name}\n" for name in names),
                   capture_output=True, text=True)


def remove_run(run_id: str) -> list[str]:
    """Remove every namespace, socket and file tagged with run_id. Returns what was removed."""
    removed = []
    run_dir = RUN_ROOT / run_id
    if run_dir.exists():
        # ssh and vm hosts: reconnect and remove what the run left there (before the VMs'
        # namespace goes, and with it the way to reach them)
        from vpnbench.hosts.ssh import cleanup_remote_records
        removed += cleanup_remote_records(run_dir)
    for netns in list_netns():
        match = NETNS_PATTERN.match(netns)
        if match and match.group(1) == run_id:
            delete_netns(netns)
            removed.append(f"netns {netns}")
    if WIREGUARD_SOCKETS.is_dir():
        for sock in WIREGUARD_SOCKETS.glob(f"vpb{run_id}*.sock"):
            sock.unlink(missing_ok=True)
            removed.append(f"socket {sock}")
    removed += remove_recorded_dirs(run_dir, run_id)
    if run_dir.exists():
        removed += restore_sysctls(run_dir)
        removed += [f"directory {path}" for path in wipe_here([run_dir])]
    return removed


def remove_recorded_dirs(run_dir: Path, run_id: str) -> list[str]:
    """The directories the run made on this machine (transfer data on a tmpfs, wherever the
    campaign pointed it), each only if it is still root's own real directory (the wipe checks:
    one another user made is named in a warning and left as it is)."""
    default = str(SHM / f"vpnbench-{run_id}")  # the default place, also when the record was lost
    ours = [path for path in dict.fromkeys([*recorded_dirs(run_dir / DIRS_RECORD), default])
            if f"vpnbench-{run_id}" in Path(path).parts or Path(path).is_relative_to(run_dir)]
    return [f"directory {path}" for path in wipe_here(ours)]


def cleanup_stale() -> list[str]:
    """Remove the resources of every run whose owning process is gone (of the runs whose ids
    start with VPNBENCH_RUN_ID_PREFIX, where it is set: a runner sharing the machine removes its
    own killed runs, never another runner's a moment before that one looks at them)."""
    ours = run_id_prefix()
    stale = set()
    live = set()
    if RUN_ROOT.is_dir():
        for run_dir in RUN_ROOT.iterdir():
            (live if owner_alive(run_dir) else stale).add(run_dir.name)
    for netns in list_netns():
        match = NETNS_PATTERN.match(netns)
        if match and match.group(1) not in live:
            stale.add(match.group(1))
    stale = {run_id for run_id in stale if run_id.startswith(ours)}
    removed = []
    for run_id in sorted(stale):
        removed += remove_run(run_id)
    return removed
