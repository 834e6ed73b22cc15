"""Aggregation of stored cells: n, mean, sd, median and a 95 % confidence interval per group.

Cells become a long table (one row per successful cell and metric, host CPU included as
`<host>_cpu_pct`, and CPU-seconds per GiB moved as `<host>_cpu_s_per_gib`), grouped by measurement, technique and impairment in the order the run
met them. The interval is Student's t on the repetitions: with the 3–5 repetitions the
studies used, the normal 1.96 would understate it by up to a factor of two.
"""

import math

import pandas as pd

from vpnbench.answers.distributions import t_ppf
from vpnbench.answers.stats import cpu_seconds_per_gib
from vpnbench.measure.setup import CENSORED, censored_percentile
from vpnbench.store.records import Cell

GROUP = ["measurement_label", "technique", "impairment", "metric"]
def t95(degrees_of_freedom: float) -> float:
    """Two-sided 95 % quantile of Student's t (12.706 at 1 df, 2.040 at 31, 1.984 at 100); NaN below 1."""
    if not degrees_of_freedom >= 1:
        return math.nan
    return t_ppf(0.975, degrees_of_freedom)


# Host facts of the monitor's summary that become metrics `<host>_<name>` (the CPU a host
# spent, and the steal time that says whether that number can be trusted).
HOST_METRICS = ("cpu_pct", "cpu_steal_pct")
COLUMNS = ["measurement_label", "measurement", "technique", "impairment", "repetition", "metric", "value"]


def efficiency_metrics(exported: dict) -> dict[str, float]:
    """Efficiency beside throughput, `<host>_cpu_s_per_gib`: the CPU-seconds each host spent per
    GiB the cell moved (none for cells that move no bytes or have too few monitor samples)."""
    return {f"{host}_cpu_s_per_gib": value for host, value in cpu_seconds_per_gib(exported).items()}


def metric_rows(cell: Cell) -> list[dict]:
    """A cell's numbers in tidy form: its exported metrics, then each host's CPU and steal time."""
    base = {"cell_id": cell.id, "run_id": cell.run_id, "technique": cell.technique, "impairment": cell.impairment,
            "measurement": cell.measurement, "measurement_label": cell.measurement_label,
            "repetition": cell.repetition, "status": cell.status}
    exported = cell.export()
    values = {name: value for name, value in exported["metrics"].items() if _is_number(value)}
    for host, facts in cell.hosts.items():
        values.update({f"{host}_{name}": facts[name] for name in HOST_METRICS if _is_number(facts.get(name))})
    values.update(efficiency_metrics(exported))
    return [{**base, "metric": name, "value": float(value)} for name, value in values.items()]


def metric_frame(cells: list[Cell]) -> pd.DataFrame:
    """One row per successful cell and numeric metric (host CPU shares become metrics too)."""
    rows = [row for cell in cells if cell.ok for row in metric_rows(cell)]
    return pd.DataFrame(rows, columns=COLUMNS) if rows else pd.DataFrame(columns=COLUMNS)


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """n, mean, sd, median and ci95 (half-width) per measurement × technique × impairment × metric,
    and `censored`: how many of the n repetitions gave the metric only as above their timeout
    (a cell's `x_censored` = 1, the setup kind's percentiles). Such a group is summarised as one
    cell summarises its censored cycles (measure/setup.censored_percentile): the repetitions
    ranked above every known one, the median where it falls on known ones, and no mean, sd or
    interval (they are only bounded below), never the mean of the repetitions that finished."""
    columns = [*GROUP, "n", "mean", "sd", "median", "ci95", "censored"]
    known, marks = split_censored(frame)
    if known.empty and marks.empty:
        return pd.DataFrame(columns=columns)
    grouped = known.groupby(GROUP, sort=False)["value"]
    summary = grouped.agg(n="count", mean="mean", sd="std", median="median").reset_index()
    summary["ci95"] = [t95(n - 1) * sd / math.sqrt(n) if n > 1 else math.nan
                       for n, sd in zip(summary["n"], summary["sd"])]
    summary["censored"] = 0
    if marks.empty:
        return summary[columns]
    values = {key: sorted(group) for key, group in grouped}
    rows = {tuple(row[GROUP]): row.to_dict() for _, row in summary.iterrows()}
    counted = marks.assign(metric=marks["metric"].str.removesuffix(CENSORED)).groupby(GROUP, sort=False).size()
    for key, censored in counted.items():
        finished = values.get(key, [])
        median = censored_percentile(finished, int(censored), 0.5)
        rows[key] = {**dict(zip(GROUP, key)), "n": len(finished) + int(censored), "mean": math.nan, "sd": math.nan,
                     "median": math.nan if median is None else median, "ci95": math.nan, "censored": int(censored)}
    return pd.DataFrame(list(rows.values()), columns=columns).astype({"n": int, "censored": int})


def split_censored(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the rows of known values, the `x_censored` marks), and no known value of a group that has
    a censored repetition is dropped: the caller sees them all."""
    if frame.empty:
        return frame, frame
    marked = frame["metric"].str.endswith(CENSORED)
    return frame[~marked], frame[marked]


def without_censored_groups(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without the censored marks and without every group that has one: a cost or a test
    over only the repetitions that finished would say the technique is faster than it is."""
    known, marks = split_censored(frame)
    if marks.empty:
        return known
    hit = set(marks.assign(metric=marks["metric"].str.removesuffix(CENSORED))[GROUP].itertuples(index=False, name=None))
    return known[[key not in hit for key in known[GROUP].itertuples(index=False, name=None)]]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
