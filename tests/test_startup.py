"""The CLI's warm-up: work in a thread while the testbed is built, done before the first cell,
with the switch interval lowered only meanwhile."""

import sys
import threading

import pytest

from vpnbench.startup import WARM_UP_SWITCH_INTERVAL, WarmUp


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
