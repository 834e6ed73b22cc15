"""`vpnbench trend`: change points over a campaign's history, found by jumpavg.

The histories are synthetic (written through the real Store, as many real runs would be):
Gaussian noise around a level, three repetitions per run, one step change injected into one
metric at the same run where one tool version changed."""

import datetime
import random

import pytest

from conftest import run_cli
from vpnbench import trend
from vpnbench.records import Cell, HostFacts, Run
from vpnbench.store import Store

RUNS = 30
STEP_AT = 20
START = datetime.datetime(2026, 1, 5, 2, 0, tzinfo=datetime.timezone.utc)


def versions(index: int, step: bool) -> dict:
    wireguard = "0.0.20250522" if step and index >= STEP_AT else "0.0.20230223"
    return {"iperf3": "iperf 3.12", "wireguard_go": wireguard}


def write_history(path, seed: int, step: bool, campaign: str = "nightly") -> None:
    """RUNS nightly runs; with step, WireGuard's throughput drops 15 % from run STEP_AT on, where
    the server's wireguard-go version changes too. The baseline stays flat throughout."""
    rng = random.Random(seed)
    store = Store(path)
    for index in range(RUNS):
        run_id = f"r{index:03d}"
        started = (START + datetime.timedelta(days=index)).isoformat()
        store.start_run(Run(run_id, campaign, {}, {"vpnbench": "0.2.0", "kernel": "6.1.0", "hostname": "lab1",
                                                   "testbed": {"kind": "local"}}, started))
        for role in ("client", "server"):
            store.save_host_facts(HostFacts(run_id, role, {"kernel": "6.1.0", "cpu_count": 4,
                                                           "versions": versions(index, step and role == "server"),
                                                           "interfaces": {f"vpb{index}": {"mtu": 1500}}}))
        for technique, level in (("baseline", 9.0e9), ("wireguard", 1.2e9)):
            if step and technique == "wireguard" and index >= STEP_AT:
                level *= 0.85
            for repetition in range(3):
                value = rng.gauss(level, level * 0.02)
                store.save_cell(Cell(run_id, campaign, f"{technique}/ideal/tcp/{repetition}", technique, {"kind": technique},
                                     "ideal", {}, "tcp", "tcp", {"kind": "tcp"}, repetition, started, status="ok",
                                     metrics={"throughput_bps": value}, finished_at=started))
        store.finish_run(run_id, "finished")
    store.close()


def history(path, campaign="nightly") -> trend.History:
    store = Store(path)
    try:
        return trend.load_history(store, campaign)
    finally:
        store.close()


@pytest.mark.parametrize("seed", range(5))
def test_a_step_with_a_version_change_is_exactly_one_regression_named_with_the_version(tmp_path, seed):
    write_history(tmp_path / "h.db", seed, step=True)
    found = {t.key.technique: t for t in trend.trends(history(tmp_path / "h.db"))}
    assert found["baseline"].changes == []
    [change] = found["wireguard"].changes
    assert change.run_id == f"r{STEP_AT:03d}"
    assert change.kind == "regression"
    assert change.relative == pytest.approx(-0.15, abs=0.03)
    assert change.changed == ["server versions.wireguard_go: 0.0.20230223 -> 0.0.20250522"]  # not the interface names


@pytest.mark.parametrize("seed", range(5))
def test_a_flat_history_of_the_same_noise_has_no_change_point(tmp_path, seed):
    write_history(tmp_path / "h.db", seed, step=False)
    found = trend.trends(history(tmp_path / "h.db"))
    assert len(found) == 2 and all(len(t.points) == RUNS for t in found)
    assert [change for t in found for change in t.changes] == []


def test_direction_follows_the_metric():
    assert trend.change_kind(10.0, 8.0, "throughput_bps") == "regression"
    assert trend.change_kind(10.0, 8.0, "rtt_avg_ms") == "progression"
    assert trend.change_kind(3.0, 4.0, "mos") == "progression"
    assert trend.change_kind(1.0, 5.0, "loss_pct") == "regression"


def test_segments_of_a_clear_step_and_of_nothing():
    assert [(s.first, s.last) for s in trend.segments([[10.0, 10.1]] * 5 + [[20.0, 20.1]] * 5)] == [(0, 4), (5, 9)]
    assert trend.segments([]) == []


def test_cli_prints_the_change_and_writes_a_page_with_a_figure(tmp_path):
    write_history(tmp_path / "h.db", 1, step=True)
    result = run_cli("trend", "--db", str(tmp_path / "h.db"), "--campaign", "nightly", "-o", str(tmp_path / "t.html"))
    assert result.returncode == 0, result.stderr
    assert "regression" in result.stdout and "1 change point(s) in 2 series" in result.stdout
    page = (tmp_path / "t.html").read_text()
    assert page.count("<svg") == 1 and "wireguard_go" in page and 'class="regression"' in page


def test_bad_input_is_one_line_exit_2(tmp_path):
    write_history(tmp_path / "h.db", 1, step=False)
    unknown = run_cli("trend", "--db", str(tmp_path / "h.db"), "--campaign", "weekly")
    assert unknown.returncode == 2 and unknown.stderr.strip().count("\n") == 0
    assert "--campaign" in unknown.stderr and "nightly" in unknown.stderr
    missing = run_cli("trend", "--db", str(tmp_path / "none.db"), "--campaign", "nightly")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert not (tmp_path / "none.db").exists()
    unset = run_cli("trend", "--campaign", "nightly", env={"PATH": "/usr/bin:/bin"})
    assert unset.returncode == 2 and "VPNBENCH_DB" in unset.stderr
