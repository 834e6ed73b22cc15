"""The peer's current mesh-low (vpn-bench since 4 Dec 2025) on a real testbed: each direction
gets its own delay of 2 ms ± 2 ms, placed on each host's egress where the kernel has netem, and
on linkem's two directions where it has not (the same numbers per direction, docs/config.md)."""

import json

import pytest

from conftest import run_cli
from test_impair_run import kernel_has_netem
from timing import FLOOR_SLACK_MS, P50_SLACK_MS, SLOWNESS
from vpnbench.impair.profiles import PROFILES
from vpnbench.testbeds.impair_backends import linkem_binary

PINGS = 200
CAMPAIGN = f"""
[campaign]
name = "mesh-low"
[testbed]
router = true
[[technique]]
kind = "baseline"
[[impairment]]
label = "none"
netem = ""
[[impairment]]
profile = "mesh-low"
[[measurement]]
kind = "ping"
count = {PINGS}
interval = "0.01s"
"""
# A round trip meets mesh-low twice (one egress each way), each a uniform draw in [0, 4 ms]: the
# added RTT is their sum, triangular on [0, 8 ms] with median 4 ms. The median of 200 such
# sums has a standard deviation of 1 / (2 x density 1/4 per ms x sqrt(200)) = 0.14 ms; 5 of them
# are 0.71 ms. P(sum < 2 ms) = 2^2/32 = 1/8, so all 200 above 2 ms has probability (7/8)^200 < 1e-11:
# the jitter is as wide as the delay (a fixed 2 ms each way would keep every RTT 4 ms up).
MEDIAN_MS, MEDIAN_SPREAD_MS = 4.0, 5 * 1 / (2 * 0.25 * PINGS ** 0.5)
LOW_SUM_MS = 2.0


@pytest.mark.netns
@pytest.mark.vm
def test_mesh_low_delays_each_direction_by_its_own_draw(tmp_path, clean_machine):
    if linkem_binary() is None and not kernel_has_netem():
        pytest.fail("neither netem nor linkem here: `make` builds linkem")
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    db = tmp_path / "c.db"
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(db))
    assert result.returncode == 0, result.stdout + result.stderr
    run_cli("export", str(db), "--format", "json", "-o", str(tmp_path / "c.json"))
    cells = {c["impairment"]: c for c in json.loads((tmp_path / "c.json").read_text())}
    params = cells["mesh-low"]["impairment_params"]
    assert params["egress"] == params["ingress"] == PROFILES["mesh-low"].netem
    # netem on the client's and the server's own egress, as the peer; linkem on the link.
    assert params["placement"] == ("endpoints" if params["backend"] == "netem" else "link"), params
    low, none = cells["mesh-low"]["metrics"], cells["none"]["metrics"]
    median = low["rtt_p50_ms"] - none["rtt_min_ms"]
    assert MEDIAN_MS - MEDIAN_SPREAD_MS - FLOOR_SLACK_MS * SLOWNESS < median, (low, none)
    assert median < MEDIAN_MS + MEDIAN_SPREAD_MS + P50_SLACK_MS * SLOWNESS, (low, none)
    assert low["rtt_min_ms"] - none["rtt_min_ms"] < LOW_SUM_MS + FLOOR_SLACK_MS * SLOWNESS, (low, none)
    # 0.25 % each way: about 1 of 200 round trips lost; 10 or more has probability below 1e-7.
    assert low["loss_pct"] < 5, low
