"""repetitions = "auto": a quiet cell stops at the minimum, a noisy one runs on and says so;
and the settle step waits out a backlog a cell leaves behind."""

import json
import subprocess
import sys

import pytest

from conftest import run_cli

CAMPAIGN = """
[campaign]
name = "adaptive"
repetitions = "auto"
min_repetitions = 3
max_repetitions = 6
ci_target = 0.02
[[technique]]
kind = "baseline"
[[measurement]]
kind = "udp"
rate = "20M"
duration = "1s"
[[measurement]]
kind = "tcp"
duration = "1s"
"""

# Busy for a random 50-400 ms, idle for a random 50-400 ms, on the client's core (CPU 0 when the
# testbed pins client and server to the two halves): TCP's throughput swings with it, 20 Mbit/s
# of UDP does not notice.
HOG = """
import random, time
random.seed()
end = time.monotonic() + 120
while time.monotonic() < end:
    busy_until = time.monotonic() + random.uniform(0.05, 0.4)
    while time.monotonic() < busy_until:
        pass
    time.sleep(random.uniform(0.05, 0.4))
"""


@pytest.mark.exclusive  # alone: a busy loop on core 0 makes the noise
@pytest.mark.netns
def test_auto_repetitions_stop_early_when_quiet_and_run_on_when_noisy(tmp_path, clean_machine):
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    hog = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", HOG])
    try:
        result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    finally:
        hog.kill()
        hog.wait()
    assert result.returncode == 0, result.stderr
    import vpnbench
    from vpnbench.answers.quality import converged
    from vpnbench.run.rounds import deciding_metric

    results = vpnbench.load(tmp_path / "c.db")
    runs = results.cells.groupby("measurement_label")["repetition"].max().to_dict()
    decisions = {e["detail"]["measurement_label"]: e["detail"]
                 for e in results.events.query("kind == 'repetitions'").to_dict("records")}
    # Each cell stopped where the rule first said so on the values it had stored, or at the budget:
    # the product's own arithmetic, whatever this host's noise was (a quiet UDP cell on an idle
    # machine stops at the minimum, on a busy one later).
    for label, cells in results.cells.sort_values("repetition").groupby("measurement_label"):
        metric = deciding_metric(cells["measurement"].iloc[0])
        metrics = results.metrics
        value = metrics[metrics["metric"] == metric].set_index("cell_id")["value"]
        values = [float(value[cell_id]) for cell_id in cells["cell_id"]]
        first = next((n for n in range(3, 7) if converged(values[:n], 0.02, 3, 6).reason == "converged"), None)
        assert runs[label] == (first or 6), (label, values)
        assert decisions[label]["n"] == runs[label] and decisions[label]["converged"] == (first is not None)
    # the hog swings TCP's throughput by far more than the 0.13 % CV that could stop at n = 3 under a
    # 2 % target (t95(2) x the 97.5 % bound on sigma / sqrt(3) = 15.6 x CV)
    assert runs["tcp"] > 3, runs
    if not decisions["tcp"]["converged"]:
        assert "not converged" in result.stderr  # said in the terminal
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "c.json"))
    assert len(json.loads((tmp_path / "c.json").read_text())) == sum(runs.values())  # every cell, as it stopped


def test_auto_repetition_bounds_are_checked_before_anything_runs(tmp_path):
    (tmp_path / "c.toml").write_text(CAMPAIGN.replace("max_repetitions = 6", "max_repetitions = 2"))
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2
    assert result.stderr.strip() == ("vpnbench: error: campaign: max_repetitions: 2 is below min_repetitions (3); "
                                     "allowed: at least min_repetitions")
    assert not (tmp_path / "c.db").exists()
