"""The statistics that turn numbers into answers: relative cost, significance, noise flags,
adaptive repetitions and methodology warnings (pure functions on hand-made frames and cells;
no root, no network)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from vpnbench.answers.methodology import (
    Ref,
    backend_substituted,
    busy_cores,
    ceilings,
    impairments_text,
    methodology_warnings,
    one_direction,
    queue_below_bdp,
    sender_receiver_gap,
)
from vpnbench.answers.quality import converged, judged, monitor_frame, outlier_indices, qualities, quality
from vpnbench.answers.significance import compare, compare_all, holm, min_mwu_p, standard_pairs
from vpnbench.answers.stats import (
    cpu_seconds_per_gib,
    efficiency_frame,
    fieller_ratio,
    headline_kind,
    ratio_interval,
    relative_cost,
    relative_ratios,
    welch_difference,
)
from vpnbench.foundation.errors import UserError

COLUMNS = ["measurement_label", "measurement", "technique", "impairment", "repetition", "metric", "value"]


def frame(groups: dict[tuple[str, str, str, str], list[float]]) -> pd.DataFrame:
    """{(measurement_label, technique, impairment, metric): values by repetition} -> the long frame."""
    rows = [(label, label.split("_")[0], technique, impairment, rep, metric, float(v))
            for (label, technique, impairment, metric), values in groups.items()
            for rep, v in enumerate(values, start=1)]
    return pd.DataFrame(rows, columns=COLUMNS)


# --- relative cost --------------------------------------------------------------------------

def test_headline_reads_throughput_as_ratio_and_latency_cpu_as_difference():
    assert headline_kind("throughput_bps") == "ratio"
    assert headline_kind("rtt_avg_ms") == headline_kind("server_cpu_pct") == "difference"


def test_fieller_and_welch_intervals_cover_the_truth_about_95_percent_of_the_time():
    """Coverage over 1500 seeded draws of 5 vs 5 normal values (ratio 0.5, unequal sds): an
    interval that is too narrow or too wide drifts outside 93-97 %."""
    rng = np.random.default_rng(7)
    ratio_hits = diff_hits = 0
    for _ in range(1500):
        a, b = rng.normal(50, 6, 5), rng.normal(100, 3, 5)
        _, low, high = fieller_ratio(a, b)
        ratio_hits += low <= 0.5 <= high
        _, low, high = welch_difference(a, b)
        diff_hits += low <= -50 <= high
    assert 0.93 <= ratio_hits / 1500 <= 0.97
    assert 0.93 <= diff_hits / 1500 <= 0.97


def test_fieller_endpoints_solve_its_quadratic():
    a, b = [9.0, 10.0, 11.0], [4.0, 5.0, 6.0]
    ratio, low, high = fieller_ratio(a, b)
    va = vb = 1 / 3
    df = (va + 4 * vb) ** 2 / (va ** 2 / 2 + 16 * vb ** 2 / 2)
    t = sps.t.ppf(0.975, df)
    assert ratio == 2.0 and low < 2.0 < high
    for rho in (low, high):
        assert (10 - rho * 5) ** 2 == pytest.approx(t ** 2 * (va + rho ** 2 * vb))


def test_unbounded_fieller_gives_no_interval():
    """A baseline mean indistinguishable from 0 leaves Fieller unbounded: the ratio of means, no interval."""
    a, b = [1.0, 2.0, 1.5], [0.1, -0.1, 0.05, 0.2]
    assert fieller_ratio(a, b) is None
    ratio, low, high, method = ratio_interval(a, b)
    assert method == "unbounded" and math.isnan(low) and math.isnan(high)
    assert ratio == pytest.approx(1.5 / 0.0625)


def test_relative_cost_rows_ratio_difference_and_absent_without_baseline():
    data = frame({("tcp", "baseline", "none", "throughput_bps"): [940e6, 935e6, 945e6],
                  ("tcp", "wireguard", "none", "throughput_bps"): [470e6, 465e6, 475e6],
                  ("tcp", "baseline", "none", "server_cpu_pct"): [20, 22, 21],
                  ("tcp", "wireguard", "none", "server_cpu_pct"): [50, 52, 51],
                  ("tcp", "ipsec", "none", "throughput_bps"): [300e6],
                  ("tcp", "wireguard", "delay 40ms", "throughput_bps"): [400e6, 410e6]})
    cost = relative_cost(data, "baseline").set_index(["technique", "impairment", "metric"])
    wg = cost.loc[("wireguard", "none", "throughput_bps")]
    assert wg["ratio"] == pytest.approx(0.5) and wg["ratio_method"] == "fieller"
    assert wg["ratio_low"] < 0.5 < wg["ratio_high"] and wg["headline"] == "ratio"
    cpu = cost.loc[("wireguard", "none", "server_cpu_pct")]
    assert cpu["difference"] == pytest.approx(30) and cpu["difference_low"] < 30 < cpu["difference_high"]
    assert cpu["headline"] == "difference"
    one = cost.loc[("ipsec", "none", "throughput_bps")]
    assert one["ratio_method"] == "none" and math.isnan(one["ratio_low"]) and one["n"] == 1
    assert ("wireguard", "delay 40ms", "throughput_bps") not in cost.index  # no baseline under that impairment
    assert "baseline" not in cost.index.get_level_values("technique")


def test_relative_ratios_for_the_export_field():
    data = frame({("tcp", "baseline", "none", "throughput_bps"): [1e9, 1e9],
                  ("tcp", "wireguard", "none", "throughput_bps"): [5e8, 7e8],
                  ("tcp", "baseline", "none", "retransmits"): [0, 0],
                  ("tcp", "wireguard", "none", "retransmits"): [3, 5],
                  ("tcp", "baseline", "none", "server_samples"): [20, 20],
                  ("tcp", "wireguard", "none", "server_samples"): [10, 10]})
    ratios = relative_ratios(data, "baseline")
    # retransmits: a 0 baseline, left out; server_samples: bookkeeping, not a result
    assert ratios[("wireguard", "none", "tcp")] == {"throughput_bps": pytest.approx(0.6)}
    assert ratios[("baseline", "none", "tcp")] == {"throughput_bps": 1.0}


def cell(technique="wireguard", impairment="none", label="tcp", repetition=1, metrics=None, hosts=None,
         measurement="tcp", measurement_params=None, status="ok", technique_params=None, impairment_params=None):
    return {"technique": technique, "technique_params": technique_params or {"kind": technique, "backend": "userspace"},
            "impairment": impairment, "impairment_params": impairment_params or {},
            "measurement": measurement, "measurement_label": label,
            "measurement_params": measurement_params or {"kind": measurement, "duration": 10.0, "reverse": False},
            "repetition": repetition, "status": status, "metrics": metrics or {"throughput_bps": 1e9},
            "hosts": hosts or {}, "wire_check": "encrypted", "negotiated": {}}


def test_cpu_seconds_per_gib_formula_and_its_refusals():
    """50 % of 2 cores for 10 s = 10 CPU-seconds; 5 GiB received -> 2 CPU-s/GiB."""
    hosts = {"client": {"cpu_pct": 50.0, "cores": [0, 1], "samples": 20},
             "server": {"cpu_pct": 25.0, "cores": [0, 1, 2, 3], "samples": 20},
             "router": {"cpu_pct": 90.0, "cores": [0], "samples": 2}}
    one = cell(metrics={"throughput_bps": 4.3e9, "bytes_received": 5 * 2 ** 30}, hosts=hosts)
    assert cpu_seconds_per_gib(one) == {"client": pytest.approx(2.0), "server": pytest.approx(2.0)}  # router: 2 samples
    by_rate = cell(metrics={"throughput_bps": 8 * 2 ** 30 / 10}, hosts=hosts)  # 1 GiB in 10 s
    assert cpu_seconds_per_gib(by_rate)["client"] == pytest.approx(10.0)
    assert cpu_seconds_per_gib(cell(metrics={"throughput_bps": 0.0}, hosts=hosts)) == {}
    assert cpu_seconds_per_gib(cell(hosts=hosts, status="failed")) == {}
    rows = efficiency_frame([one])
    assert set(rows["metric"]) == {"client_cpu_s_per_gib", "server_cpu_s_per_gib"} and list(rows.columns) == COLUMNS


# --- significance ---------------------------------------------------------------------------

def test_the_same_distribution_under_two_labels_is_not_distinguishable():
    """Baseline twice: "not distinguishable", and over 300 seeded pairs the false alarms stay near 5 %."""
    rng = np.random.default_rng(3)
    data = frame({("tcp", "baseline", "none", "throughput_bps"): rng.normal(940e6, 10e6, 5),
                  ("tcp", "baseline-again", "none", "throughput_bps"): rng.normal(940e6, 10e6, 5)})
    result = compare_all(data, [("baseline-again", "baseline")])
    assert list(result["verdict"]) == ["not distinguishable"]
    alarms = sum(compare(rng.normal(0, 1, 5), rng.normal(0, 1, 5)).verdict != "not distinguishable"
                 for _ in range(300))
    assert alarms / 300 <= 0.08


def test_clearly_different_samples_are_told_apart_with_direction_and_effect():
    result = compare([470, 465, 475, 468], [940, 935, 945, 938], "wireguard", "baseline")
    assert result.test == "welch_t" and result.p_value < 1e-6
    assert result.verdict == "baseline higher" and result.effect_name == "hedges_g" and result.effect_size < -10
    assert compare([940, 935, 945], [470, 465, 475], "baseline", "wireguard").verdict == "baseline higher"


def test_fewer_than_two_repetitions_never_give_a_p_value():
    result = compare([1.0], [2.0, 3.0, 4.0])
    assert result.verdict == "not enough repetitions" and result.p_value is None and result.n_a == 1


def test_mann_whitney_direction_follows_the_ranks_not_a_mean_an_outlier_dragged():
    result = compare([100, 101, 102, 99, 100, 103, -1000], [50, 51, 49, 50, 52, 50, 48], "a", "b")
    assert result.test == "mann_whitney_u" and result.p_value < 0.05
    assert result.verdict == "a higher" and result.effect_size == pytest.approx(35 / 49)  # mean of a is -56


def test_an_outlier_switches_to_mann_whitney_with_cliffs_delta():
    stalled = [940, 941, 939, 942, 120]  # one run stalled
    result = compare(stalled, [500, 505, 498, 502, 501], "baseline", "ipsec")
    assert result.test == "mann_whitney_u" and "gross outlier" in result.why
    assert result.effect_name == "cliffs_delta" and result.effect_size == pytest.approx(0.6)  # 20 of 25 pairs above, 5 below
    steady = compare([940, 941, 939, 942, 938], [500, 505, 498, 502, 501])
    assert steady.test == "welch_t"
    mild = [940, 941, 939, 942, 946]  # 3.4 scaled MADs out, but 4.3 sds of the rest: no reason to leave t
    assert outlier_indices(mild) == [4] and compare(mild, [500, 505, 498, 502, 501]).test == "welch_t"


def test_the_test_choice_keeps_power_and_false_alarms_near_welchs():
    """600 seeded pairs of 5 vs 5 normal values: the rule leaves t for at most ~1 pair in 4
    (3 MADs alone: half), finds a 1.5-sd shift about as often as Welch alone, alarms ~5 %."""
    rng = np.random.default_rng(5)
    pairs = [(rng.normal(0, 1, 5), rng.normal(0, 1, 5)) for _ in range(600)]
    assert np.mean([compare(a, b).test == "mann_whitney_u" for a, b in pairs]) < 0.25
    assert np.mean([compare(a, b).verdict != "not distinguishable" for a, b in pairs]) < 0.075
    found = np.mean([compare(a, b + 1.5).verdict != "not distinguishable" for a, b in pairs])
    welch = np.mean([sps.ttest_ind(a, b + 1.5, equal_var=False).pvalue < 0.05 for a, b in pairs])
    assert found > welch - 0.06


def test_mann_whitney_on_three_values_says_it_cannot_reach_significance():
    assert min_mwu_p(3, 3) == pytest.approx(0.1) and min_mwu_p(5, 5) == pytest.approx(2 / 252)
    result = compare([1.0, 1.01, 5.0], [10.0, 10.1, 10.2])  # A fails Shapiro-Wilk (p 0.004)
    assert result.test == "mann_whitney_u" and "Shapiro" in result.why
    assert result.p_value == pytest.approx(0.1) and result.verdict == "not distinguishable"
    assert "cannot go below 0.10" in result.why and result.effect_size == -1.0


def test_holm_adjusts_step_down_and_skips_missing():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.02, None, 0.5]) == [pytest.approx(0.04), None, pytest.approx(0.5)]


def test_compare_all_verdict_reads_the_adjusted_p():
    """Three comparisons with raw p of 0.02-0.04: each alone would count, the family does not."""
    base = [100.0, 101.5, 98.7, 100.4, 99.6]
    other = [99.1, 101.9, 100.3, 98.8, 100.6]
    data = frame({("tcp", "baseline", "none", "rtt_avg_ms"): base,
                  ("tcp", "a", "none", "rtt_avg_ms"): [v + 1.7 for v in base],
                  ("tcp", "b", "none", "rtt_avg_ms"): [v + 2.0 for v in other],
                  ("tcp", "c", "none", "rtt_avg_ms"): [v + 1.6 for v in base]})
    result = compare_all(data, [("a", "baseline"), ("b", "baseline"), ("c", "baseline")]).set_index("a")
    assert (result["p_value"] < 0.05).all()
    assert (result["p_adjusted"] >= result["p_value"]).all()
    assert set(result["verdict"]) == {"not distinguishable"}
    alone = compare_all(data, [("a", "baseline")])
    assert list(alone["verdict"]) == ["a higher"]
    one_family = compare_all(pd.concat([data, data.assign(impairment="delay 10ms")]), [("a", "baseline")], family=())
    assert list(one_family["p_adjusted"]) == pytest.approx([2 * alone["p_value"][0]] * 2)


def test_standard_pairs_are_each_against_baseline_then_ranking_neighbours():
    data = frame({("tcp", "baseline", "none", "throughput_bps"): [9, 9],
                  ("tcp", "wg", "none", "throughput_bps"): [6, 6],
                  ("tcp", "ipsec", "none", "throughput_bps"): [3, 3]})
    assert standard_pairs(data, "baseline") == [("wg", "baseline"), ("ipsec", "baseline"), ("wg", "ipsec")]
    result = compare_all(data, baseline="baseline")
    assert len(result) == 3 and set(result["verdict"]) == {"baseline higher", "wg higher"}


# --- noise flags -----------------------------------------------------------------------------

def test_outliers_beyond_three_scaled_mads():
    assert outlier_indices([940, 941, 939, 942, 120]) == [4]
    assert outlier_indices([10, 10, 10, 1000]) == [3]  # MAD 0: the mean absolute deviation stands in
    assert outlier_indices([940, 941, 939, 942, 938]) == []
    assert outlier_indices([1, 100]) == []  # too few to judge


def group(values: dict[str, list[float]], technique="wireguard") -> pd.DataFrame:
    return frame({("tcp", technique, "none", metric): v for metric, v in values.items()})


def test_quality_ok_for_a_steady_group():
    result = quality(group({"throughput_bps": [940e6, 941e6, 939e6], "server_cpu_pct": [50, 51, 49],
                            "server_samples": [20, 20, 20], "server_steal_pct": [0.1, 0.0, 0.2],
                            "retransmits": [0, 7, 0]}))
    assert result.verdict == "ok" and result.reasons == () and result.insufficient == ()
    assert "retransmits" not in result.cv  # event counts are noisy by nature


def test_quality_noisy_for_spread_and_for_a_material_outlier():
    spread = quality(group({"throughput_bps": [500e6, 900e6, 700e6]}))
    assert spread.verdict == "noisy" and spread.cv["throughput_bps"] > 0.10
    stalled = quality(group({"throughput_bps": [940e6, 941e6, 939e6, 942e6, 120e6]}), cv_limit=1.0)
    assert stalled.verdict == "noisy" and stalled.outliers == {"throughput_bps": (5,)}
    assert "repetition 5" in stalled.reasons[0]
    tiny = quality(group({"throughput_bps": [940.0e6, 940.1e6, 939.9e6, 940.0e6, 945e6]}))
    assert tiny.outliers == {"throughput_bps": (5,)} and tiny.verdict == "ok"  # 0.5 % off: listed, harmless


def test_spread_statistics_and_small_cpu_wobbles_do_not_make_a_group_noisy():
    assert judged("throughput_bps") and judged("rtt_avg_ms") and judged("server_cpu_pct")
    assert not any(map(judged, ("jitter_ms", "rtt_mdev_ms", "rtt_max_ms", "rtt_p99_ms", "sender_throughput_bps",
                                "retransmits")))
    ping = quality(group({"rtt_avg_ms": [0.78, 0.80, 0.77], "rtt_max_ms": [3.1, 1.2, 0.9],
                          "jitter_ms": [0.01, 0.05, 0.02], "client_cpu_pct": [0.7, 2.1, 0.9]}))
    assert ping.verdict == "ok" and ping.cv["client_cpu_pct"] > 0.5
    assert quality(group({"client_cpu_pct": [20.0, 40.0, 30.0]})).verdict == "noisy"


def test_quality_untrusted_for_steal_not_for_too_few_samples():
    stolen = quality(group({"throughput_bps": [940e6, 941e6], "client_steal_pct": [12.0, 14.0]}))
    assert stolen.verdict == "untrusted" and stolen.steal_pct == {"client": 13.0} and "steal" in stolen.reasons[0]
    short = quality(group({"throughput_bps": [940e6, 941e6], "server_cpu_pct": [50, 51], "client_cpu_pct": [9, 9],
                           "server_samples": [5, 2], "client_samples": [5, 5]}))
    # the monitor's shortfall leaves the CPU figure without basis, not the row's throughput (issue 45)
    assert short.verdict == "ok" and short.insufficient == ("server_cpu_pct",)
    assert "insufficient basis" in short.reasons[0]
    unknown = quality(group({"throughput_bps": [940e6, 941e6], "server_cpu_pct": [50, 51]}))
    assert unknown.verdict == "ok"  # older results without sample counts: silent


def test_monitor_frame_and_qualities_per_group():
    cells = [cell(repetition=r, hosts={"server": {"cpu_pct": 50.0, "samples": 2, "steal_pct": 0.0}}) for r in (1, 2)]
    cells.append(cell(repetition=3, status="failed", hosts={"server": {"samples": 0}}))
    rows = monitor_frame(cells)
    assert sorted(set(rows["metric"])) == ["server_samples", "server_steal_pct"] and len(rows) == 4
    data = pd.concat([rows, frame({("tcp", "wireguard", "none", "server_cpu_pct"): [50, 50]})])
    assert qualities(data)[("tcp", "wireguard", "none")].insufficient == ("server_cpu_pct",)


# --- adaptive repetitions -------------------------------------------------------------------

def sigma_bound(values: list[float]) -> float:
    """The 97.5 % upper confidence bound on sigma the stop rule judges by, from scipy."""
    n = len(values)
    return float(np.std(values, ddof=1)) * math.sqrt((n - 1) / sps.chi2.ppf(0.025, n - 1))


def test_converged_stop_rule():
    assert converged([940, 941], min_n=3).reason == "fewer than min_n"
    done = converged([940, 941, 940, 940, 941])
    assert done.done and done.reason == "converged"
    assert done.rel_halfwidth == pytest.approx(sps.t.ppf(0.975, 4) * sigma_bound([940, 941, 940, 940, 941])
                                               / math.sqrt(5) / 940.4)
    wide = converged([500, 900, 700])
    assert not wide.done and wide.reason == "interval too wide"
    assert converged([500, 900, 700, 600], max_n=4) == converged([500, 900, 700, 600], max_n=4)
    assert converged([500, 900, 700, 600], max_n=4).reason == "max_n reached"
    assert converged([0, 0, 0]).done and converged([-1, 1, 0], max_n=5).rel_halfwidth == math.inf


def test_three_close_values_are_not_luck_enough_to_stop():
    """The issue's case: 100.0, 100.5, 99.8 have a 0.9 % t half-width, but three values that close
    are what a population with a CV of 5 % gives in 1 % of draws; the bound on sigma from 2
    degrees of freedom is 6.3 times s (sqrt(2 / chi2(0.025, 2)) = sqrt(2 / 0.0506)), so the
    half-width the rule vouches for is 4.303 * 0.36 * 6.29 / sqrt(3) / 100.1 = 5.6 %: go on."""
    decision = converged([100.0, 100.5, 99.8])
    assert not decision.done and decision.reason == "interval too wide"
    assert decision.rel_halfwidth == pytest.approx(0.056, abs=0.001)


def simulate_stop_rule(cv: float, cells: int, rng: np.random.Generator, target: float = 0.05,
                       min_n: int = 3, max_n: int = 10) -> tuple[float, float]:
    """(share of cells labelled converged, share whose vouched-for interval holds the true mean)
    for a normal population of mean 100 and the given CV, repeated as rounds.py repeats a cell."""
    converged_cells = covered = 0
    for _ in range(cells):
        draws = rng.normal(100.0, 100.0 * cv, size=max_n)
        for n in range(min_n, max_n + 1):
            decision = converged(draws[:n], target, min_n, max_n)
            if decision.done:
                break
        mean = float(np.mean(draws[:decision.n]))
        converged_cells += decision.reason == "converged"
        covered += abs(mean - 100.0) <= decision.rel_halfwidth * abs(mean)
    return converged_cells / cells, covered / cells


def test_stop_rule_coverage_and_false_convergence_by_simulation():
    """Against known populations (target 5 %, n 3..10, CVs 1-20 %): the interval the rule stops
    on holds the true mean in at least 94 % of cells at every CV (the old rule: 92 % at CV 5 %,
    stopping whenever an estimated interval happened to be narrow), and a cell whose target is out
    of reach is rarely labelled converged. Out of reach: even 10 values of a known sigma give a
    95 % half-width above 5 %, t95(9) * CV / sqrt(10) > 0.05, i.e. CV > 6.99 % (the old rule
    labelled 20 % of such cells converged at CV 10 %)."""
    rng = np.random.default_rng(29)
    reach = 0.05 * math.sqrt(10) / sps.t.ppf(0.975, 9)
    assert reach == pytest.approx(0.0699, abs=1e-4)
    out_of_reach_converged = out_of_reach_cells = 0
    for cv in (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.075, 0.1, 0.15, 0.2):
        share_converged, coverage = simulate_stop_rule(cv, 600, rng)
        assert coverage >= 0.94, (cv, coverage)
        if cv > reach:
            out_of_reach_converged += round(share_converged * 600)
            out_of_reach_cells += 600
        if cv <= 0.02:  # quiet cells still stop: the rule is not merely "never converge"
            assert share_converged == 1.0, (cv, share_converged)
    assert out_of_reach_converged / out_of_reach_cells <= 0.05, out_of_reach_converged / out_of_reach_cells


@pytest.mark.parametrize("kwargs, field", [({"min_n": 1}, "min_n"), ({"max_n": 2}, "max_n"),
                                           ({"target_rel_halfwidth": 0}, "target_rel_halfwidth")])
def test_converged_rejects_a_bad_rule_naming_the_field(kwargs, field):
    with pytest.raises(UserError, match=f"^{field}:"):
        converged([1, 2, 3], **kwargs)


# --- methodology ---------------------------------------------------------------------------

def udp(technique, sent, got, repetition=1, kind=None, **extra):
    return cell(technique, label="udp_400M_1300", measurement="udp", repetition=repetition,
                technique_params={"kind": kind or technique, "backend": "userspace"},
                metrics={"throughput_bps": got, "sender_throughput_bps": sent},
                measurement_params={"kind": "udp", "rate": 400_000_000, "duration": 10.0, "reverse": False}, **extra)


def test_sender_receiver_gap_trips_above_five_percent_and_names_the_receivers_figure():
    warnings = sender_receiver_gap([udp("wg", 400e6, 190e6, 1), udp("wg", 400e6, 399e6, 2)])
    assert [w.code for w in warnings] == ["sender_receiver_gap"]
    assert warnings[0].concerns == (Ref("wg", "none", "udp_400M_1300", 1),)
    assert "190 Mbit/s" in warnings[0].message and "1 of 2" in warnings[0].message
    assert sender_receiver_gap([udp("wg", 400e6, 392e6)]) == []  # 2 %


def tcp(technique, value, repetition, kind=None, impairment="none", impairment_params=None, hosts=None):
    return cell(technique, impairment=impairment, repetition=repetition, impairment_params=impairment_params,
                technique_params={"kind": kind or technique, "backend": "userspace"}, hosts=hosts,
                metrics={"throughput_bps": value, "sender_throughput_bps": value})


def test_a_tunnel_at_the_baselines_ceiling_trips_and_a_slower_one_does_not():
    cells = [tcp("baseline", v, r) for r, v in enumerate((940e6, 930e6, 950e6), 1)]
    same = cells + [tcp("wg", v, r) for r, v in enumerate((935e6, 925e6, 945e6), 1)]
    assert [w.code for w in ceilings(same)] == ["same_ceiling_as_baseline"]
    slower = cells + [tcp("wg", v, r) for r, v in enumerate((670e6, 650e6, 690e6), 1)]
    assert ceilings(slower) == []
    shaped = {"egress_spec": {"rate_bps": 1e9}, "ingress_spec": {}}
    limited = [tcp(c["technique"], c["metrics"]["throughput_bps"], c["repetition"], impairment="rate 1gbit",
                   impairment_params=shaped, kind=c["technique_params"]["kind"]) for c in same]
    # The ceiling asked for, but "the tunnel costs nothing" would be the wrong reading: said, naming the limit.
    (warning,) = ceilings(limited)
    assert warning.code == "same_ceiling_as_baseline" and "the impairment's rate limit (1 Gbit/s)" in warning.message
    # a tunnel 4 % under the baseline on a shaped link (its headers): still the limit that is measured
    headers = [tcp("wg", v * 0.96, r, impairment="rate 1gbit", impairment_params=shaped) for r, v in
               enumerate((935e6, 925e6, 945e6), 1)]
    (warning,) = ceilings(limited[:3] + headers)
    assert warning.code == "rate_limit_reached" and "90 % of the impairment's rate limit (1 Gbit/s)" in warning.message
    far_below = [tcp("wg", v, r, impairment="rate 1gbit", impairment_params=shaped) for r, v in
                 enumerate((670e6, 650e6, 690e6), 1)]
    assert ceilings(limited[:3] + far_below) == []  # 67 %: the tunnel, not the limit, set that


def test_flat_throughput_trips_on_near_zero_variance():
    flat = [tcp("wg", v, r) for r, v in enumerate((499.9e6, 500.0e6, 500.1e6), 1)]
    warnings = ceilings(flat)
    assert [w.code for w in warnings] == ["flat_throughput"] and "500 Mbit/s" in warnings[0].message
    assert ceilings([tcp("wg", v, r) for r, v in enumerate((490e6, 500e6, 510e6), 1)]) == []


def test_groups_at_a_udp_offered_rate_get_one_warning_per_measurement():
    cells = [udp(t, 400e6, v, r, kind="baseline" if t == "baseline" else None)
             for t in ("baseline", "wg", "ipsec") for r, v in enumerate((399.9e6, 400.0e6, 400.1e6), 1)]
    cells += [udp("openvpn", 400e6, v, r) for r, v in enumerate((120e6, 125e6, 130e6), 1)]
    warnings = ceilings(cells)
    assert [w.code for w in warnings] == ["offered_rate_reached"] and len(warnings[0].concerns) == 9
    assert "baseline, wg, ipsec delivered the offered 400 Mbit/s" in warnings[0].message
    assert ceilings(cells[9:]) == []  # openvpn alone fell short of it
    alone = ceilings([udp("wg", 400e6, v, r) for r, v in enumerate((399.9e6, 400.0e6, 400.1e6), 1)])
    assert "wg delivered the offered 400 Mbit/s; this shows it keeps up" in alone[0].message


def test_a_busy_core_names_host_and_core_number():
    busy = {"server": {"cpu_per_core_pct": [40.0, 97.0], "cores": [2, 3], "cpu_softirq_pct": 10.0},
            "client": {"cpu_per_core_pct": [60.0, 50.0], "cores": [0, 1], "cpu_softirq_pct": 5.0}}
    warnings = busy_cores([tcp("wg", 5e8, 1, hosts=busy), tcp("wg", 5e8, 2, hosts={})])
    assert [w.code for w in warnings] == ["core_saturated"]
    assert "server core 3" in warnings[0].message and "1 of 2" in warnings[0].message
    calm = {"server": {"cpu_per_core_pct": [40.0, 80.0], "cores": [2, 3], "cpu_softirq_pct": 10.0}}
    assert busy_cores([tcp("wg", 5e8, 1, hosts=calm)]) == []


def test_unpinned_hosts_report_a_busy_core_once_as_the_machines():
    shared = {"cpu_per_core_pct": [99.0, 20.0], "cores": [0, 1], "cpu_pinned": False, "cpu_softirq_pct": 5.0}
    warnings = busy_cores([tcp("wg", 5e8, 1, hosts={"client": shared, "server": shared})])
    assert len(warnings) == 1 and "machine" in warnings[0].message and "core 0" in warnings[0].message
    assert len(warnings[0].concerns) == 1
    server = {"cpu_per_core_pct": [99.0], "cores": [1], "cpu_pinned": True, "cpu_softirq_pct": 3.0}
    router = {"cpu_per_core_pct": [20.0, 99.0], "cores": [0, 1], "cpu_pinned": False, "cpu_softirq_pct": 3.0}
    warnings = busy_cores([tcp("wg", 5e8, 1, hosts={"server": server, "router": router})])
    assert [w.message.split(":")[1].split(" was")[0] for w in warnings] == [" on the server core 1"]  # not twice


def test_softirq_worth_a_whole_core_trips():
    bound = {"server": {"cpu_per_core_pct": [60.0, 60.0], "cores": [0, 1], "cpu_softirq_pct": 48.0}}
    warnings = busy_cores([tcp("wg", 5e8, 1, hosts=bound)])
    assert [w.code for w in warnings] == ["softirq_bound"] and "server" in warnings[0].message


def test_a_delay_sweep_at_the_baselines_ceiling_is_one_finding_naming_its_cells():
    """A 7-point sweep, four tunnels at the baseline's throughput and flat: one finding per check
    and measurement (the old checks gave one per technique × impairment: 28 + 35 here)."""
    delays = [f"delay {ms}ms" for ms in (10, 20, 30, 40, 60, 80, 100)]
    cells = [tcp(technique, v, r, impairment=delay, kind="baseline" if technique == "baseline" else None)
             for technique in ("baseline", "wireguard", "ipsec", "openvpn", "macsec") for delay in delays
             for r, v in enumerate((499.9e6, 500.0e6, 500.1e6), 1)]
    found = ceilings(cells)
    assert [w.code for w in found] == ["same_ceiling_as_baseline", "flat_throughput"]
    ceiling, flat = found
    assert "tcp: wireguard, ipsec, openvpn, macsec at delay 10–100 ms (84 cells) reach within 3%" in ceiling.message
    assert len(ceiling.concerns) == 84 and len(flat.concerns) == 105
    assert "baseline, wireguard, ipsec, openvpn, macsec at delay 10–100 ms (105 cells) vary less" in flat.message
    assert len(methodology_warnings(cells)) <= 4  # those two and one_direction, not 63


def test_busy_cores_of_a_measurement_are_one_finding_naming_the_cores():
    server = {"server": {"cpu_per_core_pct": [20.0, 99.0], "cores": [0, 1], "cpu_softirq_pct": 5.0}}
    client = {"client": {"cpu_per_core_pct": [98.0, 20.0], "cores": [0, 1], "cpu_softirq_pct": 5.0}}
    cells = [tcp(technique, 5e8, r, hosts=hosts) for technique in ("baseline", "wireguard")
             for r, hosts in enumerate((server, client, {}), 1)]
    cells += [cell("wireguard", label="ping", measurement="ping", hosts=server)]
    found = busy_cores(cells)
    assert [w.code for w in found] == ["core_saturated", "core_saturated"]
    tcp_finding, ping_finding = found
    assert tcp_finding.message.startswith("tcp: a core was at least 95 % busy on the server's core 1, the client's "
                                          "core 0 in baseline, wireguard at no impairment (4 cells)")
    assert len(tcp_finding.concerns) == 4
    assert ping_finding.message.startswith("ping over wireguard (none): on the server core 1")  # alone: as it was


def test_impairments_are_named_compactly():
    assert impairments_text(["delay 10ms", "delay 20ms", "delay 100ms"]) == "delay 10–100 ms"
    assert impairments_text(["loss 0%", "loss 0.5%", "loss 5%", "s1-network-1"]) == "loss 0–5 %, s1-network-1"
    assert impairments_text(["jitter: delay 20ms 1ms", "jitter: delay 20ms 9ms"]) == "jitter: delay 20ms 1–9 ms"
    assert impairments_text(["none", "delay 40ms"]) == "no impairment, delay 40ms"


def test_backend_substituted_only_when_asked_and_different():
    def run(params):
        return backend_substituted([cell(technique_params={"kind": "wireguard", **params})])
    warnings = run({"backend": "userspace", "backend_asked": "kernel"})
    assert [w.code for w in warnings] == ["backend_substituted"] and "userspace" in warnings[0].message
    assert run({"backend": "userspace", "backend_asked": "auto"}) == []
    assert run({"backend": "kernel", "backend_asked": "kernel"}) == []
    assert run({"backend": "userspace"}) == []  # not recorded: nothing to compare


def test_one_direction_trips_until_reverse_is_measured():
    forward = cell(label="tcp")
    warnings = one_direction([forward, cell(technique="baseline", label="tcp")])
    assert [w.code for w in warnings] == ["one_direction"] and "reverse = true" in warnings[0].message
    backward = cell(label="tcp_reverse", measurement_params={"kind": "tcp", "duration": 10.0, "reverse": True})
    ping = cell(label="ping", measurement="ping", measurement_params={"kind": "ping", "count": 10})
    assert one_direction([forward, backward, ping]) == []


def impaired(spec: dict, backend="netem", throughput=5e9):
    return cell(impairment="delay 40ms", metrics={"throughput_bps": throughput},
                impairment_params={"backend": backend, "egress_spec": spec, "ingress_spec": spec})


def test_queue_below_bdp_with_netems_default_limit():
    """5 Gbit/s × 40 ms = 16667 packets of 1500 B; netem's 1000 hold 0.3 Gbit/s worth."""
    warnings = queue_below_bdp([impaired({"delay_us": 40000.0, "limit": None})])
    assert [w.code for w in warnings] == ["queue_below_bdp"]  # one for both directions
    assert warnings[0].concerns == (Ref(impairment="delay 40ms"),)
    assert "netem's default queue limit of 1000" in warnings[0].message and "16667" in warnings[0].message
    assert "5 Gbit/s × 40 ms" in warnings[0].message and "both directions" in warnings[0].message
    assert "about 300 Mbit/s with 1500 B packets" in warnings[0].message
    one_way = cell(impairment="egress delay 40ms / ingress none", metrics={"throughput_bps": 5e9},
                   impairment_params={"backend": "netem", "egress_spec": {"delay_us": 40000.0}, "ingress_spec": {}})
    warnings = queue_below_bdp([one_way])
    assert len(warnings) == 1 and ", egress:" in warnings[0].message


def test_queue_above_bdp_or_sized_by_linkem_or_no_delay_is_silent():
    assert queue_below_bdp([impaired({"delay_us": 40000.0, "limit": 100000})]) == []
    assert queue_below_bdp([impaired({"delay_us": 40000.0, "rate_bps": 1e8, "limit": None}, backend="linkem")]) == []
    assert queue_below_bdp([impaired({"delay_us": 0.0, "loss_pct": 1.0})]) == []
    assert queue_below_bdp([impaired({"delay_us": 1000.0, "limit": None})]) == []  # 417 packets fit


def test_methodology_warnings_skips_failed_cells():
    failed = udp("wg", 400e6, 10e6, status="failed")
    assert methodology_warnings([failed]) == []
    assert {w.code for w in methodology_warnings([udp("wg", 400e6, 10e6)])} == {"sender_receiver_gap", "one_direction"}


def test_distributions_agree_with_scipy():
    """distributions.py replaces scipy in the summary (scipy.stats costs ~0.6 s to import): the
    same p-values and quantiles, on normal, skewed and rounded samples of every size the
    choice of test meets."""
    import numpy as np
    from scipy import stats as sps

    from vpnbench.answers.distributions import chi2_ppf, mann_whitney_p, shapiro_p, skewness, t_ppf, welch_p

    rng = np.random.default_rng(7)
    for n in [*range(3, 30), 50, 200, 1000]:
        for x in (rng.normal(size=n), rng.exponential(size=n), np.round(rng.normal(100, 5, size=n), 1),
                  np.append(rng.normal(size=n - 1), 40.0)):
            if np.ptp(x) > 0:
                assert shapiro_p(list(x)) == pytest.approx(sps.shapiro(x).pvalue, rel=1e-5, abs=1e-12), (n, x)
                assert skewness(list(x)) == pytest.approx(sps.skew(x), rel=1e-9, abs=1e-12)
    for _ in range(500):
        na, nb = rng.integers(2, 25, size=2)
        a, b = rng.normal(0, rng.uniform(0.1, 3), na), rng.normal(rng.uniform(-3, 3), rng.uniform(0.1, 3), nb)
        assert welch_p(list(a), list(b)) == pytest.approx(sps.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-9,
                                                           abs=1e-300)
    for df in (1, 1.5, 2, 2.7, 4, 9.9, 30, 1e3, 1e6):
        assert t_ppf(0.975, df) == pytest.approx(sps.t.ppf(0.975, df), rel=1e-9)
    for df in (1, 2, 3, 9, 29.5, 999, 1e5):
        for p in (0.001, 0.025, 0.5, 0.975):
            assert chi2_ppf(p, df) == pytest.approx(sps.chi2.ppf(p, df), rel=1e-9)
    # Mann-Whitney: exact (no ties, a side of at most 8) and normal (ties, or both sides above 8)
    for _ in range(1000):
        na, nb = rng.integers(2, 30, size=2)
        a, b = rng.normal(0, 1, na), rng.normal(rng.uniform(-2, 2), 1, nb)
        if rng.random() < 0.5:
            a, b = np.round(a, 1), np.round(b, 1)
        assert mann_whitney_p(list(a), list(b)) == pytest.approx(
            sps.mannwhitneyu(a, b, alternative="two-sided").pvalue, rel=1e-6, abs=1e-300), (a, b)
    assert mann_whitney_p([1.0, 1.0], [1.0, 1.0]) == 1.0  # all tied: no spread, no difference


def test_sender_receiver_gaps_are_one_finding_per_measurement_with_each_techniques_range():
    # S1's rehearsal: 78 gapped (technique, impairment) groups printed 78 findings
    techniques = [f"t{n}" for n in range(6)]
    impairments = [f"loss {n}%" for n in range(13)]
    cells = [cell(t, impairment=i, label="udp_400M_1300", measurement="udp",
                  metrics={"throughput_bps": 400e6 * (0.9 - 0.05 * k), "sender_throughput_bps": 400e6})
             for t in techniques for k, i in enumerate(impairments)]
    cells += [cell("t0", label="tcp", metrics={"throughput_bps": 80e6, "sender_throughput_bps": 100e6})]
    warnings = sender_receiver_gap(cells)
    assert len(warnings) == 2 and {len(w.concerns) for w in warnings} == {78, 1}
    grouped = next(w for w in warnings if len(w.concerns) == 78)
    assert grouped.message.startswith("udp_400M_1300: ") and "78 of 78 cells" in grouped.message
    assert "t0 10%–70% less (loss 0–12 %)" in grouped.message  # the sweep named compactly


def test_a_figure_the_receiver_set_is_warned_about_per_measurement():
    from vpnbench.answers.methodology import receiver_limited

    search = dict(label="rate_search_1300", measurement="rate_search")
    cells = [cell("baseline", metrics={"ndr_bps": 187e6, "ndr_limit_receiver": 1.0, "pdr_limit_receiver": 1.0},
                  **search),
             cell("wg", metrics={"ndr_bps": 150e6, "ndr_limit_tunnel_device": 1.0}, **search),
             cell("wg", impairment="delay 1ms", metrics={"ndr_found": 0.0, "ndr_limit_receiver": 1.0}, **search)]
    (warning,) = receiver_limited(cells)
    assert warning.code == "receiver_limited" and len(warning.concerns) == 2
    assert warning.message.startswith("rate_search_1300: the NDR and PDR of baseline, wg (delay 1ms) met the "
                                      "receiving socket's limit")
    assert "receiver_limited" in {w.code for w in methodology_warnings(cells)}


def test_tcp_under_loss_says_its_congestion_control():
    from vpnbench.answers.methodology import congestion_control_under_loss

    lossy = {"egress_spec": {"loss_pct": 5.0}}
    cells = [tcp("wg", 217e6, 1, impairment="loss 5%", impairment_params=lossy),
             tcp("baseline", 900e6, 1, impairment="loss 5%", impairment_params=lossy),
             tcp("wg", 300e6, 1)]  # no loss: nothing to say
    cells[0]["technique_params"]["congestion_control"] = "bbr"
    cells[1]["technique_params"]["congestion_control"] = "cubic"
    (note,) = congestion_control_under_loss(cells)
    assert len(note.concerns) == 2
    assert "tcp under loss (loss 5%): TCP's congestion control was bbr (wg); cubic (baseline)" in note.message
    assert congestion_control_under_loss(cells[2:]) == []
