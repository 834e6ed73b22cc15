"""What a technique costs against the baseline: ratio and difference with intervals, efficiency.

Pure functions over the long frame of `analysis.metric_frame` (columns measurement_label,
measurement, technique, impairment, repetition, metric, value) and, for the efficiency
metric, over export-shaped cell dicts. No I/O. Whether a difference is real: significance.py.

- `relative_cost`: per (measurement_label, impairment, metric) and technique, the ratio of
  means to the baseline (Fieller's 95 % interval; "unbounded" where the baseline's own interval
  contains 0, and then no interval at all) and the difference of means (Welch's 95 % interval).
- `efficiency_frame`: CPU-seconds per GiB moved, per host.
"""

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vpnbench.answers.distributions import mean_var, satterthwaite_df, t_ppf

CONFIDENCE = 0.95
COST_KEYS = ["measurement_label", "impairment", "metric"]
# Metrics whose natural reading is "+ so much" rather than "× so much": latencies, shares
# of a CPU or of packets, seconds. Everything else (rates, counts of bytes) reads as a ratio.
DIFFERENCE_SUFFIXES = ("_ms", "_s", "_pct", "_per_gib")


def headline_kind(metric: str) -> str:
    """'difference' for latency / CPU-share / time metrics (+ms, +points), else 'ratio' (throughput ×)."""
    return "difference" if metric.endswith(DIFFERENCE_SUFFIXES) else "ratio"


def _t_quantile(df: float) -> float:
    """Two-sided 95 % Student's t quantile for (possibly fractional) degrees of freedom."""
    return t_ppf(0.5 + CONFIDENCE / 2, df) if df > 0 and math.isfinite(df) else math.nan


@dataclasses.dataclass(frozen=True)
class Moments:
    """n, mean and the variance of the mean (s²/n) of one sample."""

    n: int
    mean: float
    var_mean: float

    @classmethod
    def of(cls, values: Sequence[float]) -> "Moments":
        data = finite_values(values)
        n = len(data)
        if n < 2:
            return cls(n, data[0] if n else math.nan, math.nan)
        mean, var = mean_var(data)  # as Welch's test takes them: a constant sample has exactly 0
        return cls(n, mean, var / n)


def welch_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """mean(a) − mean(b) and its Welch 95 % interval (Welch–Satterthwaite df); NaN bounds below 2 per side."""
    ma, mb = Moments.of(a), Moments.of(b)
    diff = ma.mean - mb.mean
    if ma.n < 2 or mb.n < 2:
        return diff, math.nan, math.nan
    se2 = ma.var_mean + mb.var_mean
    if se2 == 0:  # both samples constant: the difference is exact
        return diff, diff, diff
    half = _t_quantile(satterthwaite_df(ma.var_mean, ma.n, mb.var_mean, mb.n)) * math.sqrt(se2)
    return diff, diff - half, diff + half


def fieller_ratio(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float] | None:
    """mean(a) / mean(b) with Fieller's 95 % interval for independent samples of unequal
    variance (df by Satterthwaite at the estimated ratio, as Tamhane & Logan 2004).
    None when the interval is unbounded: mean(b) is not clearly away from zero at the t the
    interval's endpoints use, g = t²·var(mean b)/mean(b)² ≥ 1 with t at the Welch df of
    var(mean a) + ratio²·var(mean b) (between min(na, nb) - 1 and na + nb - 2: not the baseline's
    own nb - 1, so its own interval may hold 0 while the ratio is bounded, or the reverse);
    or a side has fewer than 2 values. A constant numerator at 0 (retransmits) leaves only the
    baseline's variance, and the df its limit nb - 1."""
    ma, mb = Moments.of(a), Moments.of(b)
    if ma.n < 2 or mb.n < 2 or mb.mean == 0:
        return None
    ratio = ma.mean / mb.mean
    va, vb = ma.var_mean, mb.var_mean
    if va == 0 and vb == 0:  # both constant
        return ratio, ratio, ratio
    weighted = ratio * ratio * vb
    # a numerator of constant 0: va and ratio²·vb are both 0, the df's limit there is the baseline's
    df = satterthwaite_df(va, ma.n, weighted, mb.n) if va + weighted > 0 else mb.n - 1
    t = _t_quantile(df)
    # (a − ρb)² = t²(va + ρ²vb) is a quadratic in ρ: A ρ² − 2ab ρ + C = 0.
    quad_a = mb.mean * mb.mean - t * t * vb
    if not quad_a > 0:
        return None
    root = math.sqrt(max(0.0, t * t * (va * quad_a + vb * ma.mean * ma.mean)))
    low, high = sorted(((ma.mean * mb.mean - root) / quad_a, (ma.mean * mb.mean + root) / quad_a))
    return ratio, low, high


UNBOUNDED = "unbounded"
UNBOUNDED_WHY = "unbounded: the baseline's mean is not clearly away from 0"


def ratio_interval(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float, str]:
    """(ratio, low, high, method): Fieller's interval ('fieller'); 'none' below 2 values a side.
    Where Fieller's interval is unbounded ('unbounded') no finite interval is true to the data,
    so low and high are NaN: a bootstrap's percentiles would be one (at n = 3 it covered the
    true ratio 87-94 % of the time, not 95 %); the difference of means answers there instead."""
    mb = Moments.of(b).mean
    ratio = Moments.of(a).mean / mb if mb else math.nan
    if len(finite_values(a)) < 2 or len(finite_values(b)) < 2:
        return ratio, math.nan, math.nan, "none"
    fieller = fieller_ratio(a, b)
    if fieller is None:
        return ratio, math.nan, math.nan, UNBOUNDED
    return (*fieller, "fieller")


COST_COLUMNS = [*COST_KEYS, "technique", "baseline", "n", "n_baseline", "mean", "baseline_mean", "headline",
                "ratio", "ratio_low", "ratio_high", "ratio_method", "difference", "difference_low",
                "difference_high"]


def relative_cost(frame: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """One row per (measurement_label, impairment, metric) and technique other than `baseline`
    that has a baseline group in the same measurement and impairment (absent otherwise).
    `headline` says which of ratio / difference reads naturally for the metric."""
    frame = _results(frame)
    values = frame["value"].to_numpy()
    samples: dict[tuple, dict[str, np.ndarray]] = {}  # one groupby pass, not a filter per group (large reports)
    for (*key, technique), index in frame.groupby([*COST_KEYS, "technique"], sort=False).indices.items():
        samples.setdefault(tuple(key), {})[technique] = values[index]
    rows = [_cost_row(key, technique, baseline, sample, by_technique[baseline])
            for key, by_technique in samples.items() if baseline in by_technique
            for technique, sample in by_technique.items() if technique != baseline]
    return pd.DataFrame(rows, columns=COST_COLUMNS)


def _cost_row(key: tuple, technique: str, baseline: str, values, base) -> dict:
    ratio, r_low, r_high, method = ratio_interval(values, base)
    diff, d_low, d_high = welch_difference(values, base)
    return {**dict(zip(COST_KEYS, key)), "technique": technique, "baseline": baseline,
            "n": len(values), "n_baseline": len(base), "mean": Moments.of(values).mean,
            "baseline_mean": Moments.of(base).mean, "headline": headline_kind(key[2]),
            "ratio": ratio, "ratio_low": r_low, "ratio_high": r_high, "ratio_method": method,
            "difference": diff, "difference_low": d_low, "difference_high": d_high}


def relative_ratios(frame: pd.DataFrame, baseline: str) -> dict[tuple[str, str, str], dict[str, float | None]]:
    """{(technique, impairment, measurement_label): {metric: mean / baseline mean}} for the export's
    `relative` field; the baseline's own groups map to 1.0. A metric whose baseline mean is 0 or
    missing is left out (JSON has no NaN); one whose ratio is unbounded (`ratio_interval`: the
    baseline's mean is not clearly away from 0) maps to None (null), never to a number the data cannot carry."""
    groups = _results(frame).groupby(["technique", "impairment", "measurement_label", "metric"], sort=False)["value"]
    values = {key: list(group) for key, group in groups}
    out: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for (technique, impairment, label, metric), mine in values.items():
        base = values.get((baseline, impairment, label, metric))
        base_mean = Moments.of(base).mean if base is not None else math.nan
        if base_mean == 0 or not math.isfinite(base_mean):
            continue
        ratio, _, _, method = (1.0, 1.0, 1.0, "same") if technique == baseline else ratio_interval(mine, base)
        # a ratio that overflows (a baseline mean near the smallest float) is no number JSON can carry either
        bounded = method != UNBOUNDED and math.isfinite(ratio)
        out.setdefault((technique, impairment, label), {})[metric] = float(ratio) if bounded else None
    return out


# --- efficiency -------------------------------------------------------------------------

GIB = 2 ** 30
MIN_MONITOR_SAMPLES = 3


def cpu_seconds_per_gib(cell: dict) -> dict[str, float]:
    """{host: CPU-seconds spent per GiB moved} for one export-shaped cell.

        cpu_seconds = cpu_pct / 100 × len(cores) × duration_s
        gib_moved   = bytes_received / 2³⁰   (else throughput_bps × duration_s / 8 / 2³⁰)
        result      = cpu_seconds / gib_moved

    cpu_pct is the busy share averaged over the host's `cores`, so × len(cores) turns it into
    cores busy; duration_s is measurement_params.duration (the measured span, warm-up left out).
    A host with fewer than 3 monitor samples, no cores, or a cell that moved nothing gets no
    figure. On an unpinned netns testbed every host watches all cores, so each host's figure is
    the whole machine's."""
    duration = (cell.get("measurement_params") or {}).get("duration")
    metrics = cell.get("metrics") or {}
    if cell.get("status") != "ok" or not _positive(duration):
        return {}
    moved = metrics.get("bytes_received")
    if not _positive(moved) and _positive(metrics.get("throughput_bps")):
        moved = metrics["throughput_bps"] * duration / 8
    if not _positive(moved):
        return {}
    out = {}
    for host, facts in (cell.get("hosts") or {}).items():
        cores, cpu = facts.get("cores") or [], facts.get("cpu_pct")
        if not cores or not _number(cpu) or (facts.get("samples") or 0) < MIN_MONITOR_SAMPLES:
            continue
        out[host] = cpu / 100 * len(cores) * duration / (moved / GIB)
    return out


def efficiency_frame(cells: list[dict]) -> pd.DataFrame:
    """`<host>_cpu_s_per_gib` rows in metric_frame's long shape, to concatenate with it."""
    rows = [{"measurement_label": cell["measurement_label"], "measurement": cell["measurement"],
             "technique": cell["technique"], "impairment": cell["impairment"], "repetition": cell["repetition"],
             "metric": f"{host}_cpu_s_per_gib", "value": value}
            for cell in cells for host, value in cpu_seconds_per_gib(cell).items()]
    return pd.DataFrame(rows, columns=["measurement_label", "measurement", "technique", "impairment",
                                       "repetition", "metric", "value"])


def _results(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without the monitor's bookkeeping rows (`<host>_samples`): a count of samples is no result."""
    return frame[~frame["metric"].str.endswith("_samples")]


def finite_values(values) -> list[float]:
    return [float(v) for v in values if _number(v)]


def _number(value) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool) \
        and math.isfinite(value)


def _positive(value) -> bool:
    return _number(value) and value > 0
