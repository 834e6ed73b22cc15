"""Timing bounds that hold on a slow, noisy host.

Scheduler noise only ever adds delay. So what an impairment set is read from minima: the
delayed path's rtt_min minus the same path's rtt_min without the delay, bounded on both
sides (a minimum over tens of pings is close to the path's floor even on a busy host);
medians, which noise pushes up, get only a generous upper bound. Deadlines, durations and
medians stretch by SLOWNESS inside a TCG-emulated kernel VM (kernelvm sets VPNBENCH_VM_ACCEL).
"""

import os

SLOWNESS = 4.0 if os.environ.get("VPNBENCH_VM_ACCEL") == "TCG" else 1.0
FLOOR_SLACK_MS = 2.0  # how far above its true floor a path's minimum may sit (times SLOWNESS)
P50_SLACK_MS = 5.0  # how far above the floor noise may push a median (times SLOWNESS)


def assert_delay_added(delayed: dict, undelayed: dict, added_ms: float) -> None:
    """delayed, undelayed: ping metrics of one path with and without added_ms of round-trip delay."""
    floor = delayed["rtt_min_ms"] - undelayed["rtt_min_ms"]
    context = (added_ms, delayed, undelayed)
    assert delayed["rtt_min_ms"] >= added_ms, context  # noise cannot take delay away
    # the undelayed minimum can itself sit a little above the floor: the lower bound allows that
    assert added_ms - FLOOR_SLACK_MS * SLOWNESS < floor < added_ms + FLOOR_SLACK_MS * SLOWNESS, context
    assert delayed["rtt_p50_ms"] - undelayed["rtt_min_ms"] < added_ms + P50_SLACK_MS * SLOWNESS, context
