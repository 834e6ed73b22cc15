"""`vpnbench trend`: change points over a campaign's history, found by jumpavg.

The histories are synthetic (written through the real Store, as many real runs would be):
Gaussian noise around a level, three repetitions per run, one step change injected into one
metric at the same run where one tool version changed."""

import datetime
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli
from vpnbench.answers import trend
from vpnbench.store.database import Store
from vpnbench.store.records import Cell, HostFacts, Run

RUNS = 30
STEP_AT = 20
START = datetime.datetime(2026, 1, 5, 2, 0, tzinfo=datetime.timezone.utc)


def versions(index: int, step: bool) -> dict:
    wireguard = "0.0.20250522" if step and index >= STEP_AT else "0.0.20230223"
    found = {"iperf3": "iperf 3.12", "wireguard_go": wireguard}
    if index < STEP_AT:  # as a run before stop 60 recorded it: every registered technique's version
        found["tailscale"] = "1.102.0"
    return found


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


def test_a_series_of_zeros_is_one_flat_group_and_the_others_still_go_on(tmp_path):
    """Rekey's dip_max_pct is 0 in every run where nothing dipped: a series of zeros, which
    jumpavg cannot scale (its unit is max / 8191). It is flat, and the other series are searched."""
    write_history(tmp_path / "h.db", 1, step=True)
    store = Store(tmp_path / "h.db")
    for run in store.runs():
        store.save_cell(Cell(run.run_id, "nightly", "wireguard/ideal/rekey/0", "wireguard", {"kind": "wireguard"},
                             "ideal", {}, "rekey", "rekey", {"kind": "rekey"}, 0, run.started_at, status="ok",
                             metrics={"dip_max_pct": 0.0}, finished_at=run.started_at))
    store.close()
    found = {(t.key.technique, t.key.metric): t for t in trend.trends(history(tmp_path / "h.db"))}
    zeros = found[("wireguard", "dip_max_pct")]
    assert zeros.changes == [] and [(s.first, s.last) for s in zeros.segments] == [(0, RUNS - 1)]
    assert len(found[("wireguard", "throughput_bps")].changes) == 1


def write_series(path, runs: list[list[float]], metric: str = "throughput_bps", kind: str = "tcp",
                 campaign: str = "nightly") -> None:
    """One WireGuard series of the given runs' samples, a run a day."""
    store = Store(path)
    for index, samples in enumerate(runs):
        run_id, started = f"s{index:03d}", (START + datetime.timedelta(days=index)).isoformat()
        store.start_run(Run(run_id, campaign, {}, {"hostname": "lab1", "testbed": {"kind": "local"}}, started))
        for repetition, value in enumerate(samples):
            store.save_cell(Cell(run_id, campaign, f"wireguard/ideal/{kind}/{repetition}", "wireguard", {}, "ideal", {},
                                 kind, kind, {"kind": kind}, repetition, started, status="ok",
                                 metrics={metric: value}, finished_at=started))
    store.close()


def test_a_series_the_search_cannot_read_is_one_line_saying_why_and_the_rest_go_on(tmp_path):
    """An offset that is never above 0 cannot be coded as a share of its largest value; the
    command still prints the other series and exits 0."""
    write_history(tmp_path / "h.db", 1, step=True)
    store = Store(tmp_path / "h.db")
    for index, run in enumerate(store.runs()):
        store.save_cell(Cell(run.run_id, "nightly", "wireguard/ideal/clock/0", "wireguard", {}, "ideal", {}, "clock",
                             "clock", {"kind": "clock"}, 0, run.started_at, status="ok",
                             metrics={"offset_ms": -1.0 - index % 3}, finished_at=run.started_at))
    store.close()
    found = {t.key.metric: t for t in trend.trends(history(tmp_path / "h.db")) if t.key.technique == "wireguard"}
    assert found["offset_ms"].note.startswith("not searched: no value above 0") and found["offset_ms"].changes == []
    assert len(found["throughput_bps"].changes) == 1
    result = run_cli("trend", "--db", str(tmp_path / "h.db"), "--campaign", "nightly")
    assert result.returncode == 0, result.stderr
    assert "clock · ideal · offset_ms: not searched: no value above 0" in result.stdout.replace("\n", " ")
    assert "1 change point(s) in 3 series" in result.stdout


def test_a_flat_history_with_run_to_run_noise_has_no_change_point(tmp_path):
    """Tight repetitions (0.1 %) but runs 2 % apart, as on a machine that is sometimes busy:
    jumpavg splits the runs into groups of like values, none of them a change beyond the noise."""
    rng = random.Random(3)
    runs = []
    for _ in range(RUNS):
        level = rng.gauss(1.0e9, 2.0e7)
        runs.append([rng.gauss(level, level * 0.001) for _ in range(3)])
    assert len(trend.segments(runs)) > 1  # what the search alone would have reported
    write_series(tmp_path / "h.db", runs)
    [found] = trend.trends(history(tmp_path / "h.db"))
    assert found.changes == [] and found.note == "" and len(found.segments) == 1


def test_a_step_beyond_the_noise_with_support_is_found_and_one_without_is_too_few_runs_to_tell(tmp_path):
    """The same 10 % step, 0.5 % noise: after 2 runs it is too few runs to tell, after 4 it is a regression."""
    rng = random.Random(5)

    def runs(before: int, after: int) -> list[list[float]]:
        return [[rng.gauss(level, level * 0.005) for _ in range(3)]
                for level in [1.0e9] * before + [0.9e9] * after]

    write_series(tmp_path / "short.db", runs(10, 2))
    [short] = trend.trends(history(tmp_path / "short.db"))
    assert short.changes == [] and short.note.startswith(f"{trend.TOO_FEW} whether the newest 2 run(s) moved")
    write_series(tmp_path / "long.db", runs(10, 4))
    [long] = trend.trends(history(tmp_path / "long.db"))
    [change] = long.changes
    assert change.run_id == "s010" and change.kind == "regression" and long.note == ""
    write_series(tmp_path / "three.db", runs(2, 1))  # what three runs of the demo are
    [three] = trend.trends(history(tmp_path / "three.db"))
    assert three.changes == [] and three.note == trend.TOO_FEW
    result = run_cli("trend", "--db", str(tmp_path / "three.db"), "--campaign", "nightly")
    assert "too few runs to tell" in result.stdout and "0 change point(s) in 1 series" in result.stdout


def test_min_change_sets_the_step_a_change_point_needs(tmp_path):
    write_history(tmp_path / "h.db", 1, step=True)  # a 15 % step
    db = ("--db", str(tmp_path / "h.db"), "--campaign", "nightly")
    assert "1 change point(s)" in run_cli("trend", *db, "--min-change", "10").stdout
    assert "0 change point(s)" in run_cli("trend", *db, "--min-change", "20").stdout
    for bad in ("abc", "0", "-5", "nan", "5000"):
        result = run_cli("trend", *db, "--min-change", bad)
        assert result.returncode == 2 and result.stderr.strip().count("\n") == 0, (bad, result.stderr)
        assert "--min-change" in result.stderr and "above 0" in result.stderr and result.stdout == ""


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 40), repetitions=st.integers(1, 4),
       shape=st.sampled_from(["steps", "discrete", "noise only"]))
def test_the_search_finds_the_groups_jumpavg_finds(seed, count, repetitions, shape):
    """segments is jumpavg's classify done a step at a time in arrays: the same groups, on
    histories with steps, with few distinct values (ties in bits) and with noise alone."""
    from jumpavg import classify

    rng = random.Random(seed)
    level, runs = rng.choice([0.3, 200.0, 5e8, 1.2e9]), []
    for _ in range(count):
        if shape == "steps" and rng.random() < 0.1:
            level *= rng.choice([0.8, 0.9, 1.05, 1.3])
        if shape == "discrete":
            runs.append([float(rng.choice([1400, 1420, 1420, 1500])) for _ in range(repetitions)])
        else:
            runs.append([abs(rng.gauss(level, level * 0.03)) for _ in range(repetitions)])
    expected = [len(group.run_list) for group in classify(runs)]
    assert [s.last - s.first + 1 for s in trend.segments(runs)] == expected


def test_a_postgresql_archive_gives_the_trend_an_sqlite_file_gives(postgres, tmp_path):
    """The campaign's cells and host facts are read in one query each (Store.cell_metrics,
    Store.campaign_host_facts): the same on both engines, and only the campaign's."""
    url = postgres.create_database("trend")
    for target in (tmp_path / "h.db", url):
        write_history(target, 2, step=True)
        write_series(target, [[5.0e8, 5.1e8]] * 4, campaign="weekly")
    here, there = trend.trends(history(tmp_path / "h.db")), trend.trends(history(url))
    assert [(t.key, len(t.points), [(c.run_id, c.changed) for c in t.changes]) for t in here] == \
           [(t.key, len(t.points), [(c.run_id, c.changed) for c in t.changes]) for t in there]
    assert sum(len(t.changes) for t in there) == 1 and all(len(t.points) == RUNS for t in there)


def _adversarial_runs(rng: random.Random, count: int, shape: str) -> list[list[float]]:
    """Histories that move: steps small and large, single outliers, two levels taking turns,
    few distinct values (ties in bits), runs of uneven size, values below 0."""
    level, runs = rng.choice([0.3, 200.0, 5e8, 1.2e9]), []
    for index in range(count):
        if shape in ("steps", "uneven") and rng.random() < 0.1:
            level *= rng.choice([0.8, 0.9, 1.05, 1.3])
        if shape == "large steps" and rng.random() < 0.05:
            level *= rng.choice([0.01, 0.3, 3.0, 100.0])
        size = rng.randint(1, 4) if shape == "uneven" else 3
        if shape == "discrete":
            values = [float(rng.choice([1400, 1420, 1420, 1500])) for _ in range(size)]
        elif shape == "taking turns":
            values = [rng.gauss(1.0e9 if index // rng.choice([1, 3, 20]) % 2 else 0.8e9, 1.0e6) for _ in range(size)]
        elif shape == "below 0":
            values = [rng.gauss(1.0, 3.0) for _ in range(size)]
        else:
            values = [abs(rng.gauss(level, level * 0.03)) for _ in range(size)]
        if shape == "outliers" and rng.random() < 0.05:
            values[0] *= rng.choice([0.0, 0.1, 10.0])
        runs.append(values)
    return runs


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(2, 300),
       shape=st.sampled_from(["steps", "large steps", "outliers", "taking turns", "discrete", "uneven", "below 0"]))
def test_dropping_candidates_changes_no_start(seed, count, shape):
    """The search leaves out the candidates that cannot be the best, for a window of runs or for
    good (PELT's rule): every run's best start is the one the search evaluating every candidate
    at every run finds."""
    runs = _adversarial_runs(random.Random(seed), count, shape)
    samples = [value for run in runs for value in run]
    if max(samples) <= 0 or max(samples) == min(samples):
        return
    stats = [trend._run_stats(run) for run in runs]
    pruned, _ = trend._search(stats, max(samples))
    every, kept = trend._search(stats, max(samples), prune=False)
    assert pruned == every and kept == 0


def test_the_candidates_before_a_clear_step_are_dropped_and_a_flat_history_keeps_all():
    """What PELT's rule is worth: after a step the older candidates go; in a stationary stretch
    every candidate stays within K of the best, and none can be dropped for good (_split_saving)."""
    rng = random.Random(11)
    stepped = [trend._run_stats([rng.gauss(1.0e9 if index < 300 else 0.9e9, 3.0e7) for _ in range(3)])
               for index in range(600)]
    flat = [trend._run_stats([rng.gauss(1.0e9, 3.0e7) for _ in range(3)]) for _ in range(600)]
    top = max(mean + 3 * stdev for _, mean, stdev in stepped + flat)
    starts, dropped = trend._search(stepped, top)
    assert starts[-1] == 300 and 290 <= dropped <= 300
    assert trend._search(flat, top)[1] == 0


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), first=st.integers(1, 80), second=st.integers(1, 80),
       shape=st.sampled_from(["alike", "apart", "one constant", "both constant", "tight and wide"]))
def test_two_groups_cost_at_most_k_more_than_their_union_by_jumpavgs_own_bits(seed, first, second, shape):
    """The lemma leaving candidates out stands on (_split_saving): h(A) + h(B) − h(A ∪ B) ≤ K[b]
    for B of b samples (and by symmetry A), with h jumpavg's BitCountingStats bits but the
    mean's code, on groups alike, far apart, constant (the stdev terms' worst case), and of very
    different spread."""
    import numpy as np
    from jumpavg.avg_stdev_stats import AvgStdevStats
    from jumpavg.bit_counting_stats import BitCountingStats

    rng, top = random.Random(seed), 8191.0
    a_mean, a_spread, b_mean, b_spread = {"alike": (4000, 400, 4000, 400), "apart": (1000, 50, 7000, 50),
                                          "one constant": (3000, 0, 3000, 900), "both constant": (2000, 0, 2000, 0),
                                          "tight and wide": (4000, 0.01, 4000, 2000)}[shape]
    group_a = [min(top, abs(rng.gauss(a_mean, a_spread))) for _ in range(first)]
    group_b = [min(top, abs(rng.gauss(b_mean, b_spread))) for _ in range(second)]

    def nats(values):
        stats = AvgStdevStats.for_runs(values)
        bits = BitCountingStats(size=stats.size, avg=stats.avg, stdev=stats.stdev, max_value=top, unit=1.0).bits
        return bits * math.log(2) - math.log(top + 1)  # the first group's mean code is log(max + 1)

    saving = nats(group_a) + nats(group_b) - nats(group_a + group_b)
    bound = trend._split_saving(np, np.array(trend._nats_per_size(first + second, top)))
    assert saving <= bound[second] + 1e-9 and saving <= bound[first] + 1e-9


def test_a_long_line_is_drawn_through_each_buckets_extremes_and_keeps_every_excursion():
    """10 000 runs drawn as 1 000 buckets' lowest and highest means: at most 2 000 points, in the
    order they ran, the one-run dip and spike kept; a short line is drawn whole."""
    rng = random.Random(5)
    values = [rng.gauss(1.0e9, 1.0e7) for _ in range(10_000)]
    values[4321], values[8765] = 1.0e6, 5.0e9
    times = list(range(len(values)))
    drawn_times, drawn = trend.envelope(times, values)
    assert len(drawn) <= 2 * trend.DRAWN_BUCKETS and drawn_times == sorted(drawn_times)
    assert min(drawn) == 1.0e6 and max(drawn) == 5.0e9
    assert all(values[t] == v for t, v in zip(drawn_times, drawn))
    assert trend.envelope(times[:2000], values[:2000]) == (times[:2000], values[:2000])


def noisy_runs(rng: random.Random, levels: list[float], noise: float, repetitions: int = 3) -> list[list[float]]:
    """A run per level, its mean straying by `noise` of the level (repetitions √repetitions as wide)."""
    return [[rng.gauss(level, level * noise * math.sqrt(repetitions)) for _ in range(repetitions)] for level in levels]


def told(runs: list[list[float]]) -> tuple[list[int], str]:
    """The runs at which the trend tells a change point, and its note, over jumpavg's groups."""
    points = [trend.RunPoint(f"s{index:03d}", "", values) for index, values in enumerate(runs)]
    levels, note = trend.shown_levels(points, trend.segments(runs))
    return [level.first for level in levels[1:]], note


def binomial_bound(trials: int, rate: float, tail: float = 1e-6) -> int:
    """The count of Binomial(trials, rate) exceeded with probability below `tail`."""
    below = 0.0
    for count in range(trials + 1):
        below += math.comb(trials, count) * rate ** count * (1 - rate) ** (trials - count)
        if 1 - below < tail:
            return count
    return trials


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 6, 7, 9])  # those of 0..9 where jumpavg finds the step
def test_a_six_percent_step_between_thirty_runs_each_at_four_percent_noise_is_told(seed):
    """+6 % after 30 runs of 3.8 % run-to-run noise: 1.6 noise units, but its standard error is
    3.8 % · √(1/30 + 1/30) = 0.98 %, a t of 6.1 (the bar at 60 runs: 4.0). It was hidden below
    twice one run's noise (7.6 %)."""
    runs = noisy_runs(random.Random(seed), [1.0e9] * 30 + [1.06e9] * 30, 0.038)
    assert [group.first for group in trend.segments(runs)[1:]] in ([29], [30], [31])  # what jumpavg finds
    at, note = told(runs)
    assert at == [group.first for group in trend.segments(runs)[1:]] and note == ""


@pytest.mark.parametrize("seed", [0, 2, 3, 4, 5, 8, 9])  # those of 0..9 where jumpavg finds every step
def test_each_step_of_a_staircase_of_three_five_percent_steps_is_told(seed):
    """Four levels of 50 runs, each 5 % above the last, 3 % noise: every step has a t of 8.3
    (bar at 200 runs: 4.3), each under twice one run's noise (6 %) and hidden before."""
    runs = noisy_runs(random.Random(seed), [1.0e9 * 1.05 ** (index // 50) for index in range(200)], 0.03)
    found = [group.first for group in trend.segments(runs)[1:]]
    assert len(found) == 3 and all(abs(a - b) <= 2 for a, b in zip(found, [50, 100, 150]))  # what jumpavg finds
    at, _ = told(runs)
    assert at == found


@pytest.mark.parametrize("seed", range(4))
def test_one_outlier_run_stands_apart_and_leaves_the_series_and_its_step_told(seed, tmp_path):
    """A 10 % step at run 20 of 40 (1 % noise) and one run at twice the level at run 8 (or a
    tenth, or both in one history): the step is told, the outliers are named as standing apart,
    and nothing says the series has too few runs. Before: the whole series was 'too few runs'."""
    rng = random.Random(seed)
    runs = noisy_runs(rng, [1.0e9] * 20 + [0.9e9] * 20, 0.01)
    runs[8] = [2.0e9] * 3
    if seed % 2:
        runs[30] = [0.1e9] * 3
    write_series(tmp_path / "h.db", runs)
    [found] = trend.trends(history(tmp_path / "h.db"))
    [change] = found.changes
    assert change.run_id == "s020" and change.kind == "regression"
    assert change.relative == pytest.approx(-0.10, abs=0.01)  # the outliers are left out of the levels
    assert trend.TOO_FEW not in found.note and "run 9 stands apart" in found.note
    assert ("run 31 stands apart" in found.note) == bool(seed % 2)
    flat = noisy_runs(rng, [1.0e9] * 40, 0.01)
    flat[8] = [2.0e9] * 3
    assert told(flat) == ([], "run 9 stands apart (too few to tell from outliers; left out of the levels)")


def test_too_few_runs_is_said_of_the_newest_runs_only_and_the_older_step_is_still_told():
    """A 10 % step at run 20 of 40, then the newest 2 runs 20 % lower: the step is told, and
    'too few runs to tell' names the newest 2 runs, not the series."""
    runs = noisy_runs(random.Random(4), [1.0e9] * 20 + [0.9e9] * 20 + [0.7e9] * 2, 0.01)
    at, note = told(runs)
    assert at == [20] and note == f"{trend.TOO_FEW} whether the newest 2 run(s) moved: more runs will say"


def flat_runs(rng: random.Random, count: int, drift: float = 0.0) -> list[list[float]]:
    """Runs 2 % apart with repetitions 0.1 % apart (jumpavg sees the repetitions' spread and
    splits the runs into groups of like values); with drift, each run's stray is drift × the
    last one's plus fresh noise (AR(1), the same 2 % spread)."""
    runs, stray = [], 0.0
    for _ in range(count):
        stray = drift * stray + rng.gauss(0, 0.02) * math.sqrt(1 - drift ** 2)
        runs.append([rng.gauss(1.0e9 * (1 + stray), 1.0e6) for _ in range(3)])
    return runs


def test_flat_noise_shows_a_change_point_in_at_most_alpha_of_many_histories():
    """2 000 seeded flat histories of 20 runs whose run-to-run noise jumpavg cannot see (it
    splits them): each is tested at ALPHA (1 %) over its boundaries, so histories with a
    change point stay within Binomial(2 000, 1 %)'s bound at 1e-6 (44); twice one run's noise
    let 67 through."""
    rng = random.Random(2026)
    alarms = sum(bool(told(flat_runs(rng, 20))[0]) for _ in range(2000))
    assert alarms <= binomial_bound(2000, trend.ALPHA)


def test_drifting_runs_are_said_to_drift_and_seldom_make_a_change_point():
    """Flat runs drifting (AR(1), lag-1 autocorrelation 0.5), 60 runs: the measured
    autocorrelation has a standard error of √((1 − 0.25) / 60) = 0.11 around ~0.45, and drift
    is said beyond 2 / √59 = 0.26: in ~95 % of histories, so in at least 80 % of 300. The step's
    error is widened by (1 + ρ) / (1 − ρ) = 3 in variance: change points in 3.4 % of 1 000
    histories (bench/trend.py); twice one run's noise gave them in 42 %."""
    rng = random.Random(7)
    found = [told(flat_runs(rng, 60, drift=0.5)) for _ in range(300)]
    assert sum("runs drift" in note for _, note in found) >= 240
    assert sum(bool(at) for at, _ in found) <= 30
