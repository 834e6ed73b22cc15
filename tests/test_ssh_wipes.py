"""Issue 28 on the ssh test lab (sshd in namespaces, see sshlab.py): every key file on a host is
overwritten before it is removed, at the run's end and by `vpnbench cleanup` after a kill -9;
a directory of the run's that another user holds by then is left as it is, named in one line;
a symbolic link swapped in is never followed.

The lab's machines share this machine's filesystem, so what the wipe did to a key file is seen
through a hard link made while the run goes on (the link keeps the inode: after the wipe it holds
what the wipe left in the file). Which files are on a host is read from what the run records
(remote-<role>.json), as in test_ssh_security."""

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import VPNBENCH, leftovers
from sshlab import MGMT
from test_safe_files import NOBODY
from test_ssh_hosts import in_lab, lab as lab  # noqa: F401 - lab: the fixture (sshd in namespaces, checked for strays)
from test_wipe import (KEYS_AND_A_LATER_CELL, Linker, assert_keys_overwritten, left_lines, swapping,
                       take_the_tmpfs_directory_once_removed)
from test_wipe import links as links, victim as victim  # noqa: F401 - fixtures

pytestmark = pytest.mark.netns


def test_at_the_runs_end_keys_are_overwritten_and_a_directory_another_user_took_is_left(tmp_path, lab, links, victim):
    """The transfer's tmpfs directory is removed when its cell ends; `nobody` then makes one of
    the same name (the run id is public), with a symbolic link to a root file in it. At the end
    the run still names that path for wiping on each host: it is left, named in one line."""
    (tmp_path / "c.toml").write_text(lab.testbed_toml() + KEYS_AND_A_LATER_CELL)
    proc = subprocess.Popen([*lab.exec_argv(), *VPNBENCH, "run", str(tmp_path / "c.toml"), "--db",
                             str(tmp_path / "c.db")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    theirs = None
    try:
        with Linker(links) as linker:
            theirs = take_the_tmpfs_directory_once_removed(linker, proc, victim)
            out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
        assert_keys_overwritten(linker)
        assert os.listdir(theirs) == ["k"] and os.lstat(theirs).st_uid == NOBODY
        assert victim.read_text() == "root's\n"
        lines = left_lines(err, theirs)
        for where in (MGMT["client"], MGMT["server"], "this machine"):  # each host, and the controller
            assert [line for line in lines if f" on {where} " in line and f"uid {NOBODY}" in line], err
        assert leftovers() == [f"tmpfs dir {theirs}"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if theirs is not None:
            shutil.rmtree(theirs, ignore_errors=True)


def test_after_a_kill9_cleanup_overwrites_the_keys_and_leaves_a_directory_another_user_holds(tmp_path, lab, links, victim):
    """Killed mid-transfer: the keys of OpenVPN, sshd and scp are on the hosts. Before cleanup the
    transfer's directory becomes `nobody`'s, who keeps swapping a file in it for a symbolic link
    to a root file while cleanup runs: it is left as it is, named in one line; the keys go,
    overwritten first."""
    campaign = lab.testbed_toml() + """
[[technique]]
kind = "openvpn"
mode = "tls"

[[measurement]]
kind = "transfer"
protocol = "scp"
size = "256M"
"""
    (tmp_path / "k.toml").write_text(campaign)
    proc = subprocess.Popen([*lab.exec_argv(), *VPNBENCH, "run", str(tmp_path / "k.toml"), "--db",
                             str(tmp_path / "k.db")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    theirs = None
    try:
        with Linker(links) as linker:
            deadline = time.monotonic() + 120
            while not any(lab.comm(p) == "scp" for p in lab.pids("client")):  # the copy is under way
                assert proc.poll() is None and time.monotonic() < deadline, "no scp started"
                time.sleep(0.05)
            time.sleep(0.3)
            proc.kill()  # ip netns exec execs python: this is vpnbench itself
            proc.wait(10)
        theirs = next(Path(d) for d in set(linker.recorded) if d.startswith("/dev/shm/"))
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", "--", str(theirs)], check=True)
        attacker = swapping(theirs, victim, 3.0)
        try:
            cleanup = in_lab(lab, "cleanup", timeout=120)
        finally:
            os.kill(attacker, 9)
            os.waitpid(attacker, 0)
        assert cleanup.returncode == 0, cleanup.stderr
        assert_keys_overwritten(linker)
        assert victim.read_text() == "root's\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
        assert theirs.is_dir() and list(theirs.glob("*/original.bin")), "their directory was not left as it was"
        lines = left_lines(cleanup.stderr, theirs)
        assert lines and all(f"uid {NOBODY}" in line for line in lines), cleanup.stderr
        assert leftovers() == [f"tmpfs dir {theirs}"]
        assert lab.strays() == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if theirs is not None:
            shutil.rmtree(theirs, ignore_errors=True)
