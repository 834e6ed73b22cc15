"""The CLI's warm-up: work in a thread while the testbed is built, done before the first cell,
with the switch interval lowered only meanwhile."""

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from vpnbench.commands.startup import WARM_UP_SWITCH_INTERVAL, WarmUp


def test_the_warm_up_runs_beside_the_set_up_and_is_done_before_the_first_cell():
    before = sys.getswitchinterval()
    release, done = threading.Event(), []

    def work():
        release.wait(5)
        done.append(True)

    with WarmUp(work) as warm_up:
        assert sys.getswitchinterval() == WARM_UP_SWITCH_INTERVAL and not done  # running beside the set-up
        release.set()
        warm_up.finish()  # the runner's before_cells
        assert done == [True] and sys.getswitchinterval() == before
    assert sys.getswitchinterval() == before


def test_a_set_up_that_fails_before_the_first_cell_still_puts_the_switch_interval_back():
    before = sys.getswitchinterval()
    with pytest.raises(RuntimeError), WarmUp(lambda: None):
        raise RuntimeError("testbed failed")
    assert sys.getswitchinterval() == before


def test_the_command_as_installed_starts_and_exits(tmp_path):
    """The suite runs most commands in a fork of itself (forked_cli); the real entry points,
    the console script and `python -m vpnbench`, start here: help, and bad input as one line."""
    script = Path(sys.executable).with_name("vpnbench")
    assert script.exists(), "make deps installs the console script beside the environment's python"
    shown = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "usage: vpnbench" in shown.stdout and "run" in shown.stdout
    (tmp_path / "c.toml").write_text('[campaign]\nname = "x"\ntechniques = ["baseline"]\nrepetitions = 0\n')
    refused = subprocess.run([sys.executable, "-m", "vpnbench", "run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db")],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stderr.startswith("vpnbench: error: ") and "repetitions" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "c.db").exists()
