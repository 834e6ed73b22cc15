"""Is a difference real? Welch's t or Mann–Whitney U, an effect size, Holm–Bonferroni.

Pure functions over two samples (`compare`) or over the long frame of
`analysis.metric_frame` (`compare_all`). The choice of test is `choose_test`'s docstring.
"""

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vpnbench.answers.distributions import mann_whitney_p, mean_var, shapiro_p, skewness, t_sf2_many, welch_p
from vpnbench.answers.quality import outlier_indices
from vpnbench.answers.stats import finite_values

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
        reason = _not_normal(np.asarray(values, dtype=float))
        if reason:
            return "mann_whitney_u", f"{name} {reason}"
    return "welch_t", "both samples plausibly normal"


def _not_normal(data: np.ndarray) -> str | None:
    """Why one sample sends its pairs to Mann-Whitney U (see choose_test), or None."""
    if len(data) >= MIN_OUTLIER_N and any(_far_from_the_rest(data, i) for i in outlier_indices(data)):
        return "has a gross outlier (beyond 3 scaled MADs and 5 sds of the rest)"
    if len(data) >= 3 and np.ptp(data) > 0 and shapiro_p(data) < ALPHA:
        return f"fails Shapiro-Wilk at {ALPHA:g}"
    if len(data) >= 20 and np.ptp(data) > 0 and abs(skewness(data)) > 1:
        return "is skewed (|skewness| > 1, n >= 20)"
    return None


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
    return _ranked_pairs(group.groupby("technique", sort=False)["value"].mean().to_dict(), baseline)


def _ranked_pairs(means: dict[str, float], baseline: str | None) -> list[tuple[str, str]]:
    """standard_pairs from each technique's mean (in the order the techniques were met; ties keep it)."""
    ranked = sorted(means, key=lambda t: (math.isnan(means[t]), -means[t] if not math.isnan(means[t]) else 0))
    pairs = [(t, baseline) for t in ranked if baseline in means and t != baseline]
    for higher, lower in zip(ranked, ranked[1:]):
        if (higher, lower) not in pairs and (lower, higher) not in pairs:
            pairs.append((higher, lower))
    return pairs


FAMILY = ("measurement_label", "impairment", "metric")
COLUMNS = [*FAMILY, "a", "b", *(f.name for f in dataclasses.fields(Comparison))]


def compare_all(frame: pd.DataFrame, pairs: Sequence[tuple[str, str]] | None = None, baseline: str | None = None,
                family: Sequence[str] = FAMILY) -> pd.DataFrame:
    """`compare` over every pair (A, B) in every (measurement_label, impairment, metric) group
    where both have values; pairs=None takes `standard_pairs` per group. Holm-Bonferroni runs over
    each `family` (by default one group: the comparisons that answer one question) and the verdict
    reads the adjusted p. family=() corrects over everything at once.

    Group-wise, for reports of tens of thousands of cells: each sample's statistics and test
    choice are taken once (a sample meets several others), and the Welch tests of all pairs run
    as one array computation; the answers are `compare`'s, pair by pair."""
    samples = _Samples(frame)
    rows = [(key, a, b) for key, by_technique in samples.groups.items()
            for a, b in (pairs if pairs is not None else _ranked_pairs(samples.means(key), baseline))
            if a in by_technique and b in by_technique]
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    columns = samples.compare([samples.groups[key][a] for key, a, _ in rows],
                              [samples.groups[key][b] for key, _, b in rows], [a for _, a, _ in rows],
                              [b for _, _, b in rows])
    keys = {name: [key[i] for key, _, _ in rows] for i, name in enumerate(FAMILY)}
    out = pd.DataFrame({**keys, "a": [a for _, a, _ in rows], "b": [b for _, _, b in rows], **columns},
                       columns=COLUMNS)
    adjusted = _holm_by(out, family, columns["p_value"])
    out["p_adjusted"] = pd.Series(adjusted, dtype=object)
    # The adjusted p is never below the raw one: a family can only take a "higher" verdict away.
    out["verdict"] = [said if p is None or p < ALPHA else "not distinguishable"
                      for said, p in zip(columns["verdict"], adjusted)]
    return out


def _holm_by(out: pd.DataFrame, family: Sequence[str], p_values: list[float | None]) -> list[float | None]:
    members: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(*(out[name] for name in family)) if family else ((),) * len(out)):
        members.setdefault(key, []).append(i)
    adjusted: list[float | None] = [None] * len(p_values)
    for index in members.values():
        for i, p in zip(index, holm([p_values[i] for i in index])):
            adjusted[i] = p
    return adjusted


class _Samples:
    """The frame's values per (measurement_label, impairment, metric) group and technique, each
    sample's mean and variance (for Welch's t and Hedges' g) and why it is not plausibly normal."""

    def __init__(self, frame: pd.DataFrame):
        self.groups: dict[tuple, dict[str, int]] = {}  # family key -> technique -> sample number
        self.values: list[np.ndarray] = []
        if frame.empty:
            return
        values = frame["value"].to_numpy(dtype=float)
        for key, index in frame.groupby([*FAMILY, "technique"], sort=False).indices.items():
            data = values[index]
            self.groups.setdefault(key[:3], {})[key[3]] = len(self.values)
            self.values.append(data[np.isfinite(data)])
        stats = [_sample_stats(data) for data in self.values] or [(0, math.nan, math.nan, None)]
        self.n, self.mean, self.var = (np.array(column) for column in zip(*(s[:3] for s in stats)))
        self.reason = [s[3] for s in stats]

    def means(self, key: tuple) -> dict[str, float]:
        return {t: float(self.mean[i]) for t, i in self.groups[key].items()}

    def compare(self, ia: list[int], ib: list[int], a_names: list[str], b_names: list[str]) -> dict[str, list]:
        """`Comparison`'s fields, a list each, for the pairs of samples ia[k], ib[k]."""
        ia, ib = np.array(ia), np.array(ib)
        na, nb = self.n[ia], self.n[ib]
        enough = (na >= 2) & (nb >= 2)
        rank_test = enough & np.array([bool(self.reason[i] or self.reason[j]) for i, j in zip(ia, ib)])
        welch = enough & ~rank_test
        p_value, effect = np.full(len(ia), np.nan), np.full(len(ia), np.nan)
        p_value[welch] = self._welch_p(ia[welch], ib[welch])
        effect[welch] = self._hedges_g(ia[welch], ib[welch])
        out = {name: [] for name in ("test", "p_value", "effect_size", "effect_name", "n_a", "n_b", "verdict",
                                     "why", "p_adjusted")}
        for k, (i, j) in enumerate(zip(ia, ib)):
            a, b = a_names[k], b_names[k]
            if not enough[k]:
                result = Comparison("none", None, None, "", int(na[k]), int(nb[k]), "not enough repetitions",
                                    "fewer than 2 values on a side")
            elif welch[k]:
                result = Comparison("welch_t", float(p_value[k]), float(effect[k]), "hedges_g", int(na[k]),
                                    int(nb[k]), verdict(p_value[k], effect[k], a, b), "both samples plausibly normal")
            else:
                result = self._rank_test(i, j, a, b)
            for name in out:
                out[name].append(getattr(result, name))
        return out

    def _rank_test(self, i: int, j: int, a: str, b: str) -> Comparison:
        da, db = self.values[i].tolist(), self.values[j].tolist()
        why = f"A {self.reason[i]}" if self.reason[i] else f"B {self.reason[j]}"
        if min_mwu_p(len(da), len(db)) >= ALPHA:
            why += f"; with {len(da)} and {len(db)} values its p cannot go below {min_mwu_p(len(da), len(db)):.2f}"
        p_value, effect = mann_whitney_p(da, db), cliffs_delta(da, db)
        return Comparison("mann_whitney_u", p_value, effect, "cliffs_delta", len(da), len(db),
                          verdict(p_value, effect, a, b), why)

    def _welch_p(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """Welch's p of each pair; two constant samples have no t: equal (p 1) or different (p 0)."""
        na, nb = self.n[ia], self.n[ib]
        se_a, se_b = self.var[ia] / na, self.var[ib] / nb
        se2 = se_a + se_b
        p = np.where(self.mean[ia] == self.mean[ib], 1.0, 0.0)
        tested = se2 > 0
        se_a, se_b, se2, na, nb = se_a[tested], se_b[tested], se2[tested], na[tested], nb[tested]
        t = (self.mean[ia][tested] - self.mean[ib][tested]) / np.sqrt(se2)
        # Welch-Satterthwaite, in shares of se2 so that tiny variances cannot underflow to 0 / 0.
        wa, wb = se_a / se2, se_b / se2
        p[tested] = t_sf2_many(t, 1 / (wa * wa / (na - 1) + wb * wb / (nb - 1)))
        return p

    def _hedges_g(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """`hedges_g` of each pair."""
        na, nb = self.n[ia], self.n[ib]
        pooled = np.sqrt(((na - 1) * self.var[ia] + (nb - 1) * self.var[ib]) / (na + nb - 2))
        diff = self.mean[ia] - self.mean[ib]
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = diff / pooled * (1 - 3 / (4 * (na + nb) - 9))
        return np.where(pooled == 0, np.where(diff == 0, 0.0, np.copysign(np.inf, diff)), scaled)


def _sample_stats(data: np.ndarray) -> tuple:
    """(n, mean, variance, why not normal) of one sample. Mean and variance are taken on
    the deviations from the first value, so a constant sample has exactly its value and a variance
    of exactly 0 (a mean taken first, 6 × 1.1 / 6, is off by an ulp and its squared deviations are
    rounding noise a t statistic would divide by: issue 22 item 1, the rule compare follows)."""
    n = len(data)
    if n < 2:
        return n, float(data[0]) if n else math.nan, math.nan, None
    values = data.tolist()
    first = values[0]
    deviations = [x - first for x in values]
    shift = math.fsum(deviations) / n
    variance = math.fsum((d - shift) * (d - shift) for d in deviations) / (n - 1)
    return n, first + shift, variance, _not_normal(data)
