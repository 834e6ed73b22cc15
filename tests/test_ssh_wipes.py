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
from pathlib import Path

import pytest

from conftest import VPNBENCH, leftovers
from sshlab import MGMT
from test_safe_files import NOBODY
from test_ssh_hosts import in_lab  # noqa: F401 - lab: the fixture (sshd in namespaces, checked for strays)
from test_ssh_hosts import lab as lab
from test_ssh_security import killed_mid_transfer
from test_wipe import (
    KEYS_AND_A_LATER_CELL,
    Linker,
    a_run_whose_tmpfs_directory_nobody_takes,
    assert_keys_overwritten,
    left_lines,
    swapping,
)
from test_wipe import links as links  # noqa: F401 - fixtures
from test_wipe import victim as victim

pytestmark = pytest.mark.netns


def test_at_the_runs_end_keys_are_overwritten_and_a_directory_another_user_took_is_left(tmp_path, lab, links, victim):
    """The transfer's tmpfs directory is removed when its cell ends; `nobody` then makes one of
    the same name (the run id is public), with a symbolic link to a root file in it. At the end
    the run still names that path for wiping on each host: it is left, named in one line."""
    (tmp_path / "c.toml").write_text(lab.testbed_toml() + KEYS_AND_A_LATER_CELL)
    argv = [*lab.exec_argv(), *VPNBENCH, "run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db")]
    with a_run_whose_tmpfs_directory_nobody_takes(argv, links, victim) as (err, theirs):
        lines = left_lines(err, theirs)
        for where in (MGMT["client"], MGMT["server"], "this machine"):  # each host, and the controller
            assert [line for line in lines if f" on {where} " in line and f"uid {NOBODY}" in line], err


def test_after_a_kill9_cleanup_overwrites_the_keys_and_leaves_a_directory_another_user_holds(tmp_path, lab, links, victim):
    """Killed mid-transfer: the keys of OpenVPN, sshd and scp are on the hosts. Before cleanup the
    transfer's directory becomes `nobody`'s, who keeps swapping a file in it for a symbolic link
    to a root file while cleanup runs: it is left as it is, named in one line; the keys go,
    overwritten first."""
    theirs = None
    try:
        with Linker(links) as linker:
            killed_mid_transfer(lab, tmp_path, size="256M")
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
        if theirs is not None:
            shutil.rmtree(theirs, ignore_errors=True)
