"""Is a difference real? Welch's t or Mann–Whitney U, an effect size, Holm–Bonferroni.

Pure functions over two samples (`compare`) or over the long frame of
`analysis.metric_frame` (`compare_all`). The choice of test is `choose_test`'s docstring.
"""

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vpnbench.distributions import mann_whitney_p, mean_var, shapiro_p, skewness, welch_p
from vpnbench.quality import outlier_indices
from vpnbench.stats import finite_values

ALPHA = 0.05
MIN_OUTLIER_N = 5
GROSS_SDS = 5.0


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The answer to "is A different from B?" for one metric."""

    test: str  # "welch_t", "mann_whitney_u", or "none" (not enough repetitions)
    p_value: float | None  # raw, two-sided; None when no test was run
    effect_size: float | None  # sign: positive when A is higher
    effect_name: str  # "hedges_g" or "cliffs_delta" (= rank-biserial r for Mann-Whitney U)
    n_a: int
    n_b: int
    verdict: str  # "not enough repetitions", "not distinguishable", "<A> higher", "<B> higher"
    why: str  # why this test was chosen
    p_adjusted: float | None = None  # Holm-Bonferroni within the family (compare_all)


def choose_test(a: Sequence[float], b: Sequence[float]) -> tuple[str, str]:
    """(test, why). Welch's t unless a sample looks non-normal, then Mann-Whitney U.

    Welch's t is the default: techniques differ in spread (a tunnel is often noisier than the
    baseline), so the pooled-variance t would be wrong, and with the 3-5 repetitions the
    studies ran Welch is the only test that can reach p < 0.05 at all: Mann-Whitney's exact
    two-sided p cannot go below 0.10 with 3 against 3. Mann-Whitney U is taken when
    - a sample of n >= 3 fails Shapiro-Wilk at 0.05, or
    - a sample of n >= 5 has a gross outlier: beyond 3 scaled MADs of its median and more than
      5 sds of the other values from their mean (one stalled run makes the mean and sd describe
      that run, and t loses its power). 3 MADs alone would switch 26 % of clean normal samples
      of 5 (20 % of 10), and with them half of all pairs, costing power for nothing; with the
      second condition 10 % (1.4 %). From 3 or 4 values the MAD is too unsteady to judge by. Or
    - a sample has n >= 20 and |skewness| > 1 (there the central limit theorem would carry t
      through mild non-normality, but not strong skew, e.g. latency tails)."""
    for name, values in (("A", a), ("B", b)):
        data = np.asarray(values, dtype=float)
        if len(data) >= MIN_OUTLIER_N and any(_far_from_the_rest(data, i) for i in outlier_indices(data)):
            return "mann_whitney_u", f"{name} has a gross outlier (beyond 3 scaled MADs and 5 sds of the rest)"
        if len(data) >= 3 and np.ptp(data) > 0 and shapiro_p(data) < ALPHA:
            return "mann_whitney_u", f"{name} fails Shapiro-Wilk at {ALPHA:g}"
        if len(data) >= 20 and np.ptp(data) > 0 and abs(skewness(data)) > 1:
            return "mann_whitney_u", f"{name} is skewed (|skewness| > 1, n >= 20)"
    return "welch_t", "both samples plausibly normal"


def _far_from_the_rest(data: np.ndarray, index: int, sds: float = GROSS_SDS) -> bool:
    rest = np.delete(data, index)
    spread = np.std(rest, ddof=1)
    return abs(data[index] - np.mean(rest)) > sds * spread if spread > 0 else data[index] != rest[0]


def compare(a_values: Sequence[float], b_values: Sequence[float], a: str = "A", b: str = "B") -> Comparison:
    """Is A different from B? Below 2 values on a side: "not enough repetitions", never a p-value."""
    da, db = finite_values(a_values), finite_values(b_values)
    if len(da) < 2 or len(db) < 2:
        return Comparison("none", None, None, "", len(da), len(db), "not enough repetitions",
                          "fewer than 2 values on a side")
    test, why = choose_test(da, db)
    if test == "welch_t":
        p_value, effect, effect_name = welch_p(da, db), hedges_g(da, db), "hedges_g"
    else:
        p_value = mann_whitney_p(da, db)
        effect, effect_name = cliffs_delta(da, db), "cliffs_delta"
    if test == "mann_whitney_u" and min_mwu_p(len(da), len(db)) >= ALPHA:
        why += f"; with {len(da)} and {len(db)} values its p cannot go below {min_mwu_p(len(da), len(db)):.2f}"
    # The direction is the effect's sign: for Mann-Whitney the ranks', which an outlier cannot flip.
    return Comparison(test, p_value, effect, effect_name, len(da), len(db), verdict(p_value, effect, a, b), why)


def min_mwu_p(n_a: int, n_b: int) -> float:
    """The smallest exact two-sided p Mann-Whitney U can give: 2 / C(n_a + n_b, n_a)."""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


def verdict(p_value: float, direction: float, a: str = "A", b: str = "B") -> str:
    """"<A> higher" / "<B> higher" by the sign of `direction` when p < ALPHA, else "not distinguishable"."""
    if p_value >= ALPHA or direction == 0:
        return "not distinguishable"
    return f"{a} higher" if direction > 0 else f"{b} higher"


def hedges_g(a: Sequence[float], b: Sequence[float]) -> float:
    """(mean a − mean b) / pooled sd, times the small-sample correction 1 − 3 / (4(na + nb) − 9).
    Means and variances from distributions.mean_var, as Welch's p: two constant samples give 0
    when equal and ±inf when not, never a ratio of rounding noise."""
    na, nb = len(a), len(b)
    (ma, va), (mb, vb) = mean_var(a), mean_var(b)
    pooled = math.sqrt(((na - 1) * va + (nb - 1) * vb) / (na + nb - 2))
    diff = ma - mb
    if pooled == 0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / pooled * (1 - 3 / (4 * (na + nb) - 9))


def cliffs_delta(a: Sequence[float], b: Sequence[float]) -> float:
    """P(a > b) − P(a < b) over all pairs; equals the rank-biserial correlation of Mann-Whitney U."""
    da, db = np.asarray(a, dtype=float)[:, None], np.asarray(b, dtype=float)[None, :]
    return float((np.sum(da > db) - np.sum(da < db)) / (da.size * db.size))


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values (None stays None and is not counted in the family)."""
    ranked = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(ranked):
        running = max(running, min(1.0, (len(ranked) - rank) * p))
        out[i] = running
    return out


def standard_pairs(group: pd.DataFrame, baseline: str | None) -> list[tuple[str, str]]:
    """Each technique against the baseline, then neighbours in the ranking by mean (highest first)."""
    means = group.groupby("technique", sort=False)["value"].mean().sort_values(ascending=False)
    pairs = [(t, baseline) for t in means.index if baseline in means.index and t != baseline]
    for higher, lower in zip(means.index, means.index[1:]):
        if (higher, lower) not in pairs and (lower, higher) not in pairs:
            pairs.append((higher, lower))
    return pairs


FAMILY = ("measurement_label", "impairment", "metric")


def compare_all(frame: pd.DataFrame, pairs: Sequence[tuple[str, str]] | None = None, baseline: str | None = None,
                family: Sequence[str] = FAMILY) -> pd.DataFrame:
    """`compare` over every pair (A, B) in every (measurement_label, impairment, metric) group
    where both have values; pairs=None takes `standard_pairs` per group. Holm-Bonferroni runs over
    each `family` (by default one group: the comparisons that answer one question) and the verdict
    reads the adjusted p. family=() corrects over everything at once."""
    rows = []
    for key, group in frame.groupby(list(FAMILY), sort=False):
        present = set(group["technique"])
        for a, b in pairs if pairs is not None else standard_pairs(group, baseline):
            if a in present and b in present:
                result = compare(_values(group, a), _values(group, b), a, b)
                rows.append({**dict(zip(FAMILY, key)), "a": a, "b": b, **dataclasses.asdict(result)})
    out = pd.DataFrame(rows, columns=[*FAMILY, "a", "b", *(f.name for f in dataclasses.fields(Comparison))])
    if out.empty:
        return out
    by = list(family) or (lambda _: 0)
    for _, index in out.groupby(by, sort=False).groups.items():
        raw = [None if pd.isna(p) else float(p) for p in out.loc[index, "p_value"]]
        out.loc[index, "p_adjusted"] = pd.Series(holm(raw), index=index, dtype=object)
    # The adjusted p is never below the raw one: a family can only take a "higher" verdict away.
    out["verdict"] = [row.verdict if row.p_adjusted is None or pd.isna(row.p_adjusted) or row.p_adjusted < ALPHA
                      else "not distinguishable" for row in out.itertuples()]
    return out


def _values(group: pd.DataFrame, technique: str) -> list[float]:
    return list(group.loc[group["technique"] == technique, "value"])
