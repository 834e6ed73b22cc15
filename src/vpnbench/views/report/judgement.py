"""The report's words for "what does it cost" and "is it real": the run's answers (verdicts.Verdicts:
stats.relative_cost and significance.compare_all rows, computed once for the terminal, the export
and the report) turned into table rows ("0.41 ×", "+0.62 ms", "+38 points", "not distinguishable")."""

import math

import pandas as pd

from vpnbench.answers.stats import UNBOUNDED, UNBOUNDED_WHY

# How a difference reads, by the metric's suffix: (unit, scale).
DIFFERENCE_UNITS = (("_ms", "ms", 1.0), ("_pct", "points", 1.0), ("_per_gib", "s/GiB", 1.0), ("_s", "s", 1.0))
METHODS = {"fieller": "Fieller", "none": "no interval (fewer than 2 repetitions)",
           UNBOUNDED: f"{UNBOUNDED_WHY}; the difference of means instead (Welch)"}


def ratio_text(ratio: float) -> str:
    return "–" if not _finite(ratio) else f"{ratio:.{_digits(ratio)}f} ×"


def difference_text(metric: str, value: float) -> str:
    if not _finite(value):
        return "–"
    unit, scale = next(((u, s) for suffix, u, s in DIFFERENCE_UNITS if metric.endswith(suffix)), ("", 1.0))
    scaled = value * scale
    if metric.endswith("_bps"):
        unit, scaled = "Mbit/s", value * 1e-6
    return f"{scaled:+.{_digits(scaled)}f} {unit}".rstrip()


def cost_rows(relative: pd.DataFrame) -> list[dict]:
    """A row per stats.relative_cost row (technique, impairment and metric): the headline number
    (ratio or difference, as stats.headline_kind says) with its 95 % interval and the ratio's method.
    Where the ratio is unbounded (the baseline's mean is not clearly away from 0) the row gives the difference
    and says why."""
    rows = []
    for row in relative.itertuples():
        kind = "difference" if row.ratio_method == UNBOUNDED else row.headline
        if kind == "ratio":
            text, low, high = ratio_text(row.ratio), row.ratio_low, row.ratio_high
            interval = f"{low:.{_digits(low)}f} – {high:.{_digits(high)}f}" if _finite(low) and _finite(high) else ""
        else:
            text = difference_text(row.metric, row.difference)
            interval = (f"{difference_text(row.metric, row.difference_low)} … "
                        f"{difference_text(row.metric, row.difference_high)}"
                        if _finite(row.difference_low) and _finite(row.difference_high) else "")
        rows.append({"technique": row.technique, "impairment": row.impairment, "metric": row.metric,
                     "headline": text, "interval": interval, "kind": kind,
                     "method": METHODS.get(row.ratio_method, row.ratio_method) if row.headline == "ratio" else "Welch",
                     "ratio": row.ratio, "difference": row.difference})
    return rows


def significance_rows(comparisons: pd.DataFrame) -> list[dict]:
    """A row per significance.compare_all row with a test (a single value gives "not enough
    repetitions": told once, not per row): raw and Holm-adjusted p, the effect size, the verdict."""
    return [{"a": row.a, "b": row.b, "impairment": row.impairment, "metric": row.metric, "test": row.test,
             "p": _p_text(row.p_value), "p_holm": _p_text(row.p_adjusted),
             "effect": "–" if row.effect_size is None or pd.isna(row.effect_size)
             else f"{row.effect_name.replace('_', ' ')} {row.effect_size:+.2f}",
             "verdict": row.verdict, "why": row.why}
            for row in comparisons.itertuples() if row.test != "none"]


def _p_text(p) -> str:
    if p is None or pd.isna(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _digits(value: float) -> int:
    magnitude = abs(value)
    if not _finite(magnitude) or magnitude == 0 or magnitude >= 10:
        return 1 if _finite(magnitude) and magnitude < 100 else 0
    return max(2, 1 - int(math.floor(math.log10(magnitude))))


def _finite(value) -> bool:
    return value is not None and not pd.isna(value) and math.isfinite(value)
