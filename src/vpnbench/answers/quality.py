"""Can a group's numbers be trusted, and does a cell need more repetitions?

Pure functions over groups of `analysis.metric_frame`'s long frame (one measurement_label ×
technique × impairment, all metrics):

- `quality`: coefficient of variation, outliers beyond 3 scaled MADs (which repetitions),
  CPU steal above a threshold, too few monitor samples to trust a CPU figure → a verdict
  ok / noisy / untrusted with the reasons.
- `converged`: the stop rule for adaptive repetitions (the runner's scheduler, run/rounds.py,
  asks it which groups need another round).
"""

import dataclasses
import functools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vpnbench.answers.analysis import t95
from vpnbench.answers.distributions import chi2_ppf
from vpnbench.foundation.errors import UserError

MAD_SCALE = 1.4826  # MAD × this estimates the sd of a normal sample
MEANAD_SCALE = 1.2533  # mean absolute deviation × this, when the MAD is 0 (Iglewicz & Hoaglin)
OUTLIER_LIMIT = 3.0  # scaled MADs from the median
CV_NOISY = 0.10
MATERIAL_SHARE = 0.10  # an outlier counts when this far from the median, as a share of it
STEAL_LIMIT_PCT = 5.0
MIN_SAMPLES = 3
# Measured quantities whose spread says something about the run. Event counts (retransmits,
# lost packets, loss %) are not among them: 0, 3, 0 retransmits has a CV of 1.7 and is fine.
NOISE_SUFFIXES = ("_bps", "_pps", "_ms", "_cpu_pct", "_s", "_per_gib", "mos")
# Nor are statistics of a spread or a tail (jitter, mdev, max, p95/p99: a 2 s ping's max is
# one packet), nor the sender's rate, which the generator sets. On a real run (baseline and
# WireGuard, 3 × 2 s) these raised 25 of the 40 flags while the figures shown were steady.
SPREAD_WORDS = ("jitter", "mdev", "_max_", "_p9", "sender_")
CPU_SD_FLOOR = 2.0  # percentage points: a 1 % CPU share that wobbles by 1 point is not noise worth telling


def outlier_indices(values: Sequence[float], limit: float = OUTLIER_LIMIT) -> list[int]:
    """Positions of values more than `limit` scaled MADs from the median (n >= 3).

    The MAD, unlike the sd, is not dragged by the outlier it should expose. When more than
    half the values are equal the MAD is 0; the scaled mean absolute deviation stands in,
    so that 10, 10, 10, 1000 still flags 1000."""
    data = np.asarray(values, dtype=float)
    if len(data) < 3:
        return []
    median = np.median(data)
    deviation = np.abs(data - median)
    scale = MAD_SCALE * np.median(deviation) or MEANAD_SCALE * np.mean(deviation)
    if scale == 0:
        return []
    with np.errstate(over="ignore"):  # a subnormal scale: a deviation of inf scales is far out, rightly
        return [int(i) for i in np.flatnonzero(deviation / scale > limit)]


def coefficient_of_variation(values: Sequence[float]) -> float:
    """sd / |mean| (NaN below 2 values or for a zero mean)."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2 or np.mean(data) == 0:
        return math.nan
    return float(np.std(data, ddof=1) / abs(np.mean(data)))


@dataclasses.dataclass(frozen=True)
class Quality:
    """How far one group's numbers can be trusted."""

    verdict: str  # "ok", "noisy" (spread or outliers), "untrusted" (CPU steal)
    reasons: tuple[str, ...]  # one sentence each
    cv: dict[str, float]  # metric -> coefficient of variation
    outliers: dict[str, tuple[int, ...]]  # metric -> repetitions beyond 3 scaled MADs (noisy only when material)
    insufficient: tuple[str, ...]  # metrics to show as "insufficient basis", never as a number
    steal_pct: dict[str, float]  # host -> mean CPU steal


def quality(group: pd.DataFrame, cv_limit: float = CV_NOISY, steal_limit: float = STEAL_LIMIT_PCT,
            material: float = MATERIAL_SHARE) -> Quality:
    """The verdict for one measurement_label × technique × impairment group of the long frame.
    `<host>_samples` and `<host>_steal_pct` rows (see `monitor_frame`) feed the CPU checks;
    where they are absent (older results) those checks are silent."""
    judged_groups = _judge(group.assign(_group=0), ["_group"], cv_limit, steal_limit, material)
    return next(iter(judged_groups.values()), Quality("ok", (), {}, {}, (), {}))


def qualities(frame: pd.DataFrame, **limits) -> dict[tuple[str, str, str], Quality]:
    """{(measurement_label, technique, impairment): Quality} for every group of the long frame."""
    return _judge(frame, ["measurement_label", "technique", "impairment"], **limits)


def judged(metric: str) -> bool:
    """Whether a metric's spread counts towards the verdict (see NOISE_SUFFIXES, SPREAD_WORDS)."""
    return metric.endswith(NOISE_SUFFIXES) and not any(word in metric for word in SPREAD_WORDS)


def _judge(frame: pd.DataFrame, keys: list[str], cv_limit: float = CV_NOISY, steal_limit: float = STEAL_LIMIT_PCT,
           material: float = MATERIAL_SHARE) -> dict[tuple, Quality]:
    """`quality` of every group of `keys`, group-wise: the spread and the outliers of every group
    and metric come from a few pandas groupby passes over the whole frame (a report of 10 000
    cells has some 70 000 of them), then each group's reasons are put together in its metrics' order."""
    if frame.empty:
        return {}
    frame = frame.reset_index(drop=True)
    by = [*keys, "metric"]
    values = frame["value"].astype(float)
    grouped = values.groupby([frame[k] for k in by], sort=False)
    stats = grouped.agg(["size", "mean", "std", "min"])
    median = grouped.transform("median")
    deviation = (values - median).abs()
    spread = deviation.groupby([frame[k] for k in by], sort=False)
    scale = MAD_SCALE * spread.transform("median")
    scale = scale.where(scale != 0, MEANAD_SCALE * spread.transform("mean"))  # outlier_indices' fallback
    flagged = (grouped.transform("size") >= 3) & (scale > 0) & (deviation / scale > OUTLIER_LIMIT)
    floor = np.where(frame["metric"].str.endswith("_cpu_pct"), CPU_SD_FLOOR, 0.0)
    serious = flagged & (deviation > np.maximum(material * median.abs(), floor))
    far: dict[tuple, list[tuple[int, bool]]] = {}
    for row in np.flatnonzero(flagged.to_numpy()):
        key = tuple(frame.at[row, k] for k in by)
        far.setdefault(key, []).append((int(frame.at[row, "repetition"]), bool(serious.iloc[row])))
    groups: dict[tuple, list] = {}
    for key, size, mean, sd, low in stats.itertuples(name=None):
        groups.setdefault(key[:-1], []).append((key[-1], size, mean, sd, low, far.get(key, [])))
    return {key if len(keys) > 1 else key[0]: _assemble(metrics, cv_limit, steal_limit, material)
            for key, metrics in groups.items()}


def _assemble(metrics: list[tuple], cv_limit: float, steal_limit: float, material: float) -> Quality:
    """One group's Quality from (metric, n, mean, sd, min, [(repetition, material?) beyond 3 MADs])."""
    cv, outliers, reasons = {}, {}, []
    for metric, size, mean, sd, _, far in metrics:
        if not judged(metric):
            continue
        cv[metric] = math.nan if size < 2 or mean == 0 else float(sd / abs(mean))
        floor = CPU_SD_FLOOR if metric.endswith("_cpu_pct") else 0.0
        if cv[metric] > cv_limit and sd > floor:
            reasons.append(f"{metric} varies by {cv[metric]:.0%} of its mean (limit {cv_limit:.0%})")
        if far:
            outliers[metric] = tuple(repetition for repetition, _ in far)
        serious = [repetition for repetition, matters in far if matters]
        if serious:
            reasons.append(f"{metric}: repetition {', '.join(map(str, serious))} lies beyond "
                           f"{OUTLIER_LIMIT:g} scaled MADs of the median and {material:.0%} away from it")
    noisy = bool(reasons)
    steal: dict[str, float] = {}  # per host: the monitor's `<host>_cpu_steal_pct` (or `<host>_steal_pct`), once
    for metric, _, mean, _, _, _ in sorted(metrics):
        if metric.endswith("_steal_pct"):
            steal.setdefault(metric.removesuffix("_steal_pct").removesuffix("_cpu"), float(mean))
    reasons += [f"{host} lost {pct:.1f} % of its CPU time to steal (limit {steal_limit:g} %): "
                "another guest ran on its cores" for host, pct in steal.items() if pct > steal_limit]
    short = {metric.removesuffix("_samples") for metric, _, _, _, low, _ in metrics
             if metric.endswith("_samples") and low < MIN_SAMPLES}
    insufficient = tuple(m for m, *_ in metrics if any(m.startswith(f"{host}_cpu") for host in short))
    reasons += [f"{metric} rests on fewer than {MIN_SAMPLES} monitor samples: insufficient basis"
                for metric in insufficient]
    # Too few monitor samples leave the CPU figures without basis (`insufficient`: the table says so
    # in their cells), not the row: its throughput and RTTs came from the traffic tools, not the monitor.
    untrusted = any(pct > steal_limit for pct in steal.values())
    verdict = "untrusted" if untrusted else "noisy" if noisy else "ok"
    return Quality(verdict, tuple(reasons), cv, outliers, insufficient, steal)


def monitor_frame(cells: list[dict]) -> pd.DataFrame:
    """`<host>_samples` and `<host>_steal_pct` rows in metric_frame's long shape, from the
    hosts' monitor facts of successful cells, to concatenate with it for `quality`."""
    rows = []
    for cell in cells:
        if cell.get("status") != "ok":
            continue
        for host, facts in (cell.get("hosts") or {}).items():
            for key in ("samples", "steal_pct"):
                value = facts.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                    rows.append({"measurement_label": cell["measurement_label"], "measurement": cell["measurement"],
                                 "technique": cell["technique"], "impairment": cell["impairment"],
                                 "repetition": cell["repetition"], "metric": f"{host}_{key}",
                                 "value": float(value)})
    return pd.DataFrame(rows, columns=["measurement_label", "measurement", "technique", "impairment",
                                       "repetition", "metric", "value"])


# --- adaptive repetitions ------------------------------------------------------------------

# How sure the stop rule is that sigma is no larger than its bound. The rule looks after every
# repetition, and each look is a chance to stop on a standard deviation that came out low by
# luck; a 95 % bound still labelled 7.8 % of cells converged whose target even max_n values of a
# known sigma do not reach (CV 7 %, target 5 %, n 3..10), 97.5 % labels 4.2 % (simulated in
# tests/test_stats.py, with the coverage).
SIGMA_BOUND_CONFIDENCE = 0.975


@dataclasses.dataclass(frozen=True)
class Decision:
    """Whether a cell has been repeated enough."""

    done: bool
    reason: str  # "fewer than min_n", "converged", "max_n reached", "interval too wide"
    rel_halfwidth: float  # the half-width the rule vouches for / |mean| (NaN below 2 values)
    n: int


def converged(values: Sequence[float], target_rel_halfwidth: float = 0.05, min_n: int = 3,
              max_n: int = 10) -> Decision:
    """The stop rule, checked after every repetition of a cell:

    1. fewer than min_n values: go on (an interval from 2 values is too wide to judge by);
    2. the 95 % half-width with sigma at its upper confidence bound, t95(n-1) * s_up / sqrt(n)
       where s_up = s * sqrt((n-1) / chi2(1 - SIGMA_BOUND_CONFIDENCE, n-1)), over |mean|, at or
       below the target: stop, converged;
    3. max_n values: stop, whatever the width (the budget; the report shows the wide interval);
    4. otherwise go on.
    Why the bound: stopping when the estimated interval happens to be narrow stops on luck (three
    values within 0.7 % of each other stop a cell whose true CV is 5 %), and the interval it
    stopped on then holds the true mean in only ~92 % of cells. With sigma at its bound the rule
    stops only where the data show the spread to be small, the interval it vouches for (recorded
    as rel_halfwidth) holds the mean in over 99 % of cells, and a cell whose target is out of
    reach at max_n is rarely called converged (tests/test_stats.py simulates both). The cost:
    a quiet cell needs a few more values (CV 2 %, target 5 %: 6 on average instead of 3-4).
    A zero mean has a relative half-width of 0 when the values are all equal, else infinity."""
    _check_rule(target_rel_halfwidth, min_n, max_n)
    data = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    n = len(data)
    width = _rel_halfwidth(data)
    if n < min_n:
        return Decision(False, "fewer than min_n", width, n)
    if width <= target_rel_halfwidth:
        return Decision(True, "converged", width, n)
    if n >= max_n:
        return Decision(True, "max_n reached", width, n)
    return Decision(False, "interval too wide", width, n)


def _rel_halfwidth(data: np.ndarray) -> float:
    """The 95 % half-width / |mean| with sigma at its SIGMA_BOUND_CONFIDENCE upper bound."""
    if len(data) < 2:
        return math.nan
    half = t95(len(data) - 1) * float(np.std(data, ddof=1)) * _sigma_bound_factor(len(data) - 1) / math.sqrt(len(data))
    mean = abs(float(np.mean(data)))
    if mean == 0:
        return 0.0 if half == 0 else math.inf
    return half / mean


@functools.cache
def _sigma_bound_factor(degrees_of_freedom: int) -> float:
    """s * this is the upper confidence bound on sigma: (n-1) s^2 / sigma^2 is chi-square with
    n-1 degrees of freedom, so sigma <= s * sqrt((n-1) / chi2(1 - confidence, n-1))."""
    return math.sqrt(degrees_of_freedom / chi2_ppf(1 - SIGMA_BOUND_CONFIDENCE, degrees_of_freedom))


def _check_rule(target: float, min_n: int, max_n: int) -> None:
    if not target > 0:
        raise UserError(f"target_rel_halfwidth: must be above 0, got {target!r}")
    if min_n < 2:
        raise UserError(f"min_n: must be at least 2 (an interval needs 2 values), got {min_n!r}")
    if max_n < min_n:
        raise UserError(f"max_n: must be at least min_n ({min_n}), got {max_n!r}")
