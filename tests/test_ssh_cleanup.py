"""After a kill -9, cleanup finds remote processes through the pid files the launcher writes.
Run here against this machine (the remote commands are plain argv, so a local runner stands in
for ssh): a process started by the launcher is killed; an unrelated process that happens to
have the number in a stale pid file is not."""

import subprocess
import time
from pathlib import Path

from vpnbench.hosts.ssh import LAUNCHER, remove_remote


def local_run(argv, timeout=30, check=False):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def wait_for(path, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.02)


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_cleanup_kills_a_launched_process_but_never_a_reused_pid(tmp_path):
    ours_file, stale_file = tmp_path / "ours.pid", tmp_path / "stale.pid"
    # ours has a child of its own (as scp has its ssh): it must go too
    # and an environment cleared (as sshd's and nginx's process titles overwrite it): its start time identifies it
    ours = subprocess.Popen([*LAUNCHER, str(ours_file), "env", "-i", "sh", "-c", "sleep 60 & echo $! > \"$0\"; wait",
                             str(tmp_path / "child.pid")], stderr=subprocess.DEVNULL)
    other = subprocess.Popen(["sleep", "60"])  # not ours: plays a process that reused a recorded pid
    try:
        wait_for(ours_file)
        pid, started = ours_file.read_text().split()
        assert int(pid) == ours.pid  # the launcher execs: the pid is the command's
        assert started == Path(f"/proc/{ours.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        stale_file.write_text(f"{other.pid} 1\n")  # a reused number: another start time, no pid file in its environment
        record = {"pidfiles": [str(ours_file), str(stale_file), str(tmp_path / "never-written.pid")],
                  "files": [str(ours_file), str(stale_file)]}
        wait_for(tmp_path / "child.pid")
        child = int((tmp_path / "child.pid").read_text())
        removed = remove_remote(local_run, record, tmp_path)
        assert ours.wait(5) == -9
        deadline = time.monotonic() + 5
        while running(child):
            assert time.monotonic() < deadline, "the launched process's child survived"
            time.sleep(0.05)
        assert other.poll() is None, "cleanup killed a process the run never started"
        assert removed.count(f"remote process {ours.pid}") == 1
        assert not any(str(other.pid) in line for line in removed)
        assert not ours_file.exists() and not stale_file.exists()
    finally:
        for proc in (ours, other):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
