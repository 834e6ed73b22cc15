"""The statistics a large report needs, computed group-wise (issue 19 item 4), give the per-group
answers: significance.compare_all is `compare` pair by pair (random samples of many sizes, both
tests chosen, tied, constant and too small samples), quality.qualities is `quality` per group."""

import math
import random

import pandas as pd
import pytest

from vpnbench.answers.quality import qualities, quality
from vpnbench.answers.significance import compare, compare_all, holm

TECHNIQUES = ("baseline", "wireguard", "ipsec", "openvpn")


def frame_of(groups: dict[tuple[str, str], dict[str, list[float]]]) -> pd.DataFrame:
    rows = [{"measurement_label": "tcp", "impairment": impairment, "metric": metric, "technique": technique,
             "repetition": i, "value": value}
            for (impairment, metric), by_technique in groups.items()
            for technique, values in by_technique.items() for i, value in enumerate(values, 1)]
    return pd.DataFrame(rows)


def expected(a: list[float], b: list[float], a_name: str, b_name: str):
    """compare's answer, or None for two constant samples: there the rule is checked directly
    (issue 22 item 1: compare's old guard read numpy's rounding noise as a variance)."""
    if len(a) >= 2 and len(b) >= 2 and len(set(a)) == 1 and len(set(b)) == 1:
        return None
    return compare(a, b, a_name, b_name)


def random_groups(rng: random.Random, count: int) -> dict:
    groups = {}
    for number in range(count):
        by_technique = {}
        for technique in TECHNIQUES:
            n = rng.choice((1, 2, 3, 5, 8, 25))
            shape = rng.choice(("normal", "outlier", "skewed", "tied", "constant"))
            centre = rng.choice((1.1, 34.8, 940e6, 0.0)) * rng.choice((1, 1, 1.02))
            if shape == "normal":
                values = [rng.gauss(centre, abs(centre) * 0.05 + 0.01) for _ in range(n)]
            elif shape == "outlier":
                values = [rng.gauss(centre, abs(centre) * 0.01 + 0.01) for _ in range(n - 1)] + [centre * 10 + 5]
            elif shape == "skewed":
                values = [centre + rng.expovariate(1.0) ** 3 for _ in range(n)]
            elif shape == "tied":
                values = [centre + rng.choice((0.0, 1.0)) for _ in range(n)]
            else:
                values = [centre] * n
            by_technique[technique] = values
        groups[(f"delay {number}ms", rng.choice(("throughput_bps", "rtt_avg_ms")))] = by_technique
    return groups


@pytest.mark.parametrize("seed", range(4))
def test_groupwise_compare_all_is_compare_pair_by_pair(seed):
    groups = random_groups(random.Random(seed), 60)
    result = compare_all(frame_of(groups), baseline="baseline")
    assert len(result) >= 60 * 3  # each technique against the baseline at least
    checked = 0
    for row in result.itertuples():
        by_technique = groups[(row.impairment, row.metric)]
        want = expected(by_technique[row.a], by_technique[row.b], row.a, row.b)
        if want is None:  # two constants: no t; equal (p 1, no effect) or different (p 0)
            equal = by_technique[row.a][0] == by_technique[row.b][0]
            assert row.test == "welch_t" and row.p_value == (1.0 if equal else 0.0)
            assert row.effect_size == 0.0 if equal else math.isinf(row.effect_size)
            continue
        checked += 1
        assert (row.test, row.effect_name, row.n_a, row.n_b, row.why) == (
            want.test, want.effect_name, want.n_a, want.n_b, want.why)
        if want.p_value is None:
            assert pd.isna(row.p_value) and pd.isna(row.effect_size) and row.verdict == "not enough repetitions"
            continue
        assert row.p_value == pytest.approx(want.p_value, rel=1e-9, abs=1e-300)  # means taken two ways: ulps
        assert row.effect_size == pytest.approx(want.effect_size, rel=1e-12) or (
            math.isinf(want.effect_size) and row.effect_size == want.effect_size)
    assert checked > len(result) // 2
    assert {"welch_t", "mann_whitney_u", "none"} <= set(result["test"])


def test_groupwise_holm_and_verdicts_read_the_adjusted_p():
    groups = random_groups(random.Random(7), 30)
    result = compare_all(frame_of(groups), baseline="baseline")
    for _, family in result.groupby(["impairment", "metric"], sort=False):
        raw = [None if pd.isna(p) else float(p) for p in family["p_value"]]
        assert list(family["p_adjusted"]) == holm(raw)
        for row in family.itertuples():
            want = expected(groups[(row.impairment, row.metric)][row.a], groups[(row.impairment, row.metric)][row.b],
                            row.a, row.b)
            if want is not None and row.p_adjusted is not None and row.p_adjusted < 0.05:
                assert row.verdict == want.verdict


def test_constant_and_tied_samples_never_crash():
    # numpy's variance of [1.1] * 6 is rounding noise (5e-29), fsum's is 0: compare's guard and
    # Welch's formula disagree there (issue 22 item 1). The group-wise path takes no t-test.
    groups = {("none", "rtt_avg_ms"): {"baseline": [1.1] * 6, "wireguard": [1.1] * 2, "ipsec": [34.8] * 7,
                                       "openvpn": [34.8] * 2}}
    result = compare_all(frame_of(groups), baseline="baseline")
    result = result[result["b"] == "baseline"].set_index("a")
    assert result.loc["wireguard", "p_value"] == 1.0  # equal constants: no difference
    assert result.loc["ipsec", "p_value"] == 0.0 and result.loc["ipsec", "verdict"] == "ipsec higher"
    assert result.loc["wireguard", "effect_size"] == 0.0


def test_qualities_of_a_whole_frame_are_each_groups_own():
    # Group-wise, one groupby over the frame: no group's median, MAD or spread may leak into another's.
    rng = random.Random(3)
    rows = []
    for label in ("tcp", "ping"):
        for technique in TECHNIQUES:
            for impairment in ("none", "delay 5ms"):
                n, samples, steal = rng.choice((2, 3, 5)), rng.choice((2, 30, 30, 30)), rng.choice((0.0, 0.0, 0.0, 9.0))
                rows += [{"measurement_label": label, "technique": technique, "impairment": impairment,
                          "metric": metric, "repetition": i, "value": value} for i in range(1, n + 1)
                         for metric, value in (("client_samples", samples), ("client_steal_pct", steal))]
                for metric in ("throughput_bps", "client_cpu_pct"):
                    values = [rng.gauss(100, rng.choice((1, 30))) for _ in range(n)]
                    if rng.random() < 0.3:
                        values[-1] *= 5  # a stalled or runaway repetition
                    rows += [{"measurement_label": label, "technique": technique, "impairment": impairment,
                              "metric": metric, "repetition": i, "value": v} for i, v in enumerate(values, 1)]
    data = pd.DataFrame(rows).sample(frac=1, random_state=1)  # interleaved, as a real frame's rows are not
    judged = qualities(data)
    assert len(judged) == 2 * len(TECHNIQUES) * 2
    assert {q.verdict for q in judged.values()} == {"ok", "noisy", "untrusted"}
    assert any(q.outliers for q in judged.values()) and any(q.insufficient for q in judged.values())
    for key, group in data.groupby(["measurement_label", "technique", "impairment"], sort=False):
        alone = quality(group)
        assert (judged[key].verdict, judged[key].reasons, judged[key].outliers, judged[key].steal_pct,
                judged[key].insufficient) == (alone.verdict, alone.reasons, alone.outliers, alone.steal_pct,
                                              alone.insufficient)
