"""The answers a run gives, computed once from its cells for the terminal, the export and the
report: each technique's cost relative to the run's baseline, whether a difference is real,
and the methodology warnings that say when a number measures something else.

The statistics themselves are pure functions elsewhere (stats, significance, quality,
methodology); this module only decides what they are applied to.
"""

import dataclasses
import functools
import math

import pandas as pd

from vpnbench.answers.analysis import efficiency_metrics, metric_frame, summarize, without_censored_groups
from vpnbench.answers.builds import BuildsTable, builds_side_by_side, kinds_built_twice
from vpnbench.answers.methodology import MethodologyWarning, Ref, congestion_control_under_loss, methodology_warnings
from vpnbench.answers.quality import Quality, monitor_frame, qualities
from vpnbench.answers.ranking import Ranking, rank, ranked_metrics
from vpnbench.answers.significance import COLUMNS, compare_all
from vpnbench.answers.stats import UNBOUNDED, relative_cost, relative_ratios
from vpnbench.measure import MEASUREMENTS
from vpnbench.store.records import Cell
from vpnbench.techniques import is_reference


def baseline_label(cells: list[Cell]) -> str | None:
    """The run's baseline: the first technique of kind baseline (the unencrypted reference)."""
    return next((c.technique for c in cells if is_reference(c.technique_params)), None)


@dataclasses.dataclass
class Verdicts:
    """The run's answers. The comparisons are the report's (each technique against the baseline,
    then neighbours in the ranking by mean), so Holm's correction runs over the same family
    wherever a verdict is read: a '*' in the terminal is a "higher" in the report."""

    baseline: str | None
    relative: pd.DataFrame  # stats.relative_cost rows
    comparisons: pd.DataFrame  # significance.compare_all rows: each technique vs the baseline, then neighbours by rank
    warnings: list[MethodologyWarning]
    ratios: dict[tuple[str, str, str], dict[str, float | None]]  # (technique, impairment, label) -> metric -> ratio
    frame: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)  # analysis.metric_frame of the cells
    monitor: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)  # quality.monitor_frame of the cells
    # measurement label -> what is said in words beside its figures (its kind's declared captions)
    captions: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    # technique kind -> its techniques and the daemon each ran, for kinds run with two or more daemons
    kinds_built_twice: dict[str, list[tuple[str, str]]] = dataclasses.field(default_factory=dict)

    @functools.cached_property
    def summary(self) -> pd.DataFrame:
        """n, mean, sd, median and ci95 of every measurement label × technique × impairment × metric
        (analysis.summarize): the numbers every table gives."""
        return summarize(self.frame)

    @functools.cached_property
    def rankings(self) -> list[Ranking]:
        """Per measurement label, its ranked metrics (ranking.ranked_metrics) and impairment: the
        techniques best first, in groups the comparisons do not separate."""
        out = []
        for label, rows in self.summary.groupby("measurement_label", sort=False):
            kinds = self.frame.loc[self.frame["measurement_label"] == label, "measurement"]
            kind = kinds.iloc[0] if len(kinds) else None
            declared = MEASUREMENTS[kind].headline if kind in MEASUREMENTS else None
            present = set(rows["metric"])
            headline = declared.metrics if declared else tuple(sorted(m for m in present if m.endswith(("_bps", "_ms"))))[:1]
            reached = {(ref.technique, ref.impairment) for w in self.warnings if w.code == "offered_rate_reached"
                       for ref in w.concerns if ref.measurement_label == label}
            for metric in ranked_metrics(headline, present):
                for ranking in rank(self.summary, self.comparisons, label, metric):
                    if metric == "throughput_bps" and all((t, ranking.impairment) in reached for t in ranking.techniques):
                        # a fixed-rate UDP test every technique carried: the rate was the setting
                        ranking = dataclasses.replace(ranking, collapsed="every technique delivered the offered "
                                                      "rate: it shows they keep up, not what they can carry")
                    out.append(ranking)
        return out

    @functools.cached_property
    def builds(self) -> list[BuildsTable]:
        """One technique's builds side by side (builds.builds_side_by_side), per kind run with two or more daemons."""
        return builds_side_by_side(self.kinds_built_twice, self.rankings)

    def stat(self, label: str, technique: str, impairment: str, metric: str):
        """One summary row (n, mean, sd, median, ci95), or None where the group has no such value."""
        return self._summary_index.get((label, technique, impairment, metric))

    @functools.cached_property
    def qualities(self) -> dict[tuple[str, str, str], Quality]:
        """quality.qualities of each (label, technique, impairment) over the metrics a table shows
        (the others only cost time)."""
        if self.frame.empty:
            return {}
        both = pd.concat([self.frame, self.monitor], ignore_index=True)
        return qualities(both[both["metric"].map(shown_metric)])

    def cost(self, technique: str, impairment: str, label: str, metric: str) -> str:
        """'0.41 ×' or '+0.62' (with a significance mark) for a table cell; '' where there is none."""
        row = self._relative_index.get((technique, impairment, label, metric))
        if row is None:
            return ""
        if row.headline == "ratio" and row.ratio_method != UNBOUNDED:
            text = f"{row.ratio:.2f} ×" if math.isfinite(row.ratio) else ""
        else:
            text = _difference_text(metric, row.difference)
            if row.headline == "ratio":  # the baseline's mean is not clear of 0: no ratio to give
                text = f"{text} (ratio unbounded)".strip()
        return f"{text} {self.mark(technique, impairment, label, metric)}".strip()

    def mark(self, technique: str, impairment: str, label: str, metric: str) -> str:
        """'*' when the difference from the baseline is significant (Holm-adjusted p < 0.05),
        'n.d.' when not distinguishable, '' with too few repetitions to say."""
        row = self._comparison_index.get((technique, impairment, label, metric))
        if row is None or row.test == "none":
            return ""
        return "n.d." if row.verdict == "not distinguishable" else "*"

    def relative_of(self, label: str) -> pd.DataFrame:
        """The relative-cost rows of one measurement label."""
        return self._relative_by_label.get(label, self.relative.iloc[0:0])

    def comparisons_of(self, label: str) -> pd.DataFrame:
        """The significance rows of one measurement label."""
        return self._comparisons_by_label.get(label, self.comparisons.iloc[0:0])

    def warnings_for(self, cell: Cell) -> list[dict]:
        return [{"code": w.code, "message": w.message} for w in self.warnings
                if any(_concerns(ref, cell) for ref in w.concerns)]

    # Lookups by key, built once: a table of thousands of rows asks for each of its cells.
    @functools.cached_property
    def _summary_index(self) -> dict:
        return {(r.measurement_label, r.technique, r.impairment, r.metric): r for r in self.summary.itertuples()}

    @functools.cached_property
    def _relative_index(self) -> dict:
        return {(r.technique, r.impairment, r.measurement_label, r.metric): r for r in self.relative.itertuples()}

    @functools.cached_property
    def _comparison_index(self) -> dict:
        against = self.comparisons[self.comparisons["b"] == self.baseline]
        return {(r.a, r.impairment, r.measurement_label, r.metric): r for r in against.itertuples()}

    @functools.cached_property
    def _relative_by_label(self) -> dict[str, pd.DataFrame]:
        return dict(iter(self.relative.groupby("measurement_label", sort=False)))

    @functools.cached_property
    def _comparisons_by_label(self) -> dict[str, pd.DataFrame]:
        return dict(iter(self.comparisons.groupby("measurement_label", sort=False)))


def verdicts(cells: list[Cell]) -> Verdicts:
    frame = metric_frame(cells)
    baseline = baseline_label(cells)
    if baseline is None or frame.empty:
        relative, comparisons, ratios = pd.DataFrame(columns=_RELATIVE_COLUMNS), pd.DataFrame(columns=COLUMNS), {}
    else:
        known = without_censored_groups(frame)
        kept = {pair: answered(*pair) for pair in set(zip(known["measurement"], known["metric"]))}
        asked = known[[kept[pair] for pair in zip(known["measurement"], known["metric"])]]
        relative = relative_cost(asked, baseline)
        comparisons = compare_all(asked, baseline=baseline)
        ratios = relative_ratios(known, baseline)
    exports = [c.export() for c in cells]
    return Verdicts(baseline, relative, comparisons, methodology_warnings(exports), ratios, frame,
                    monitor_frame(exports), captions_of(cells, exports), kinds_built_twice(cells))


def captions_of(cells: list[Cell], exports: list[dict]) -> dict[str, list[str]]:
    """Per measurement label, the captions its kind declares (Measurement.captions), in words."""
    declared = {c.measurement_label: MEASUREMENTS[c.measurement].captions for c in cells
                if c.measurement in MEASUREMENTS}
    ok = [(cell, export) for cell, export in zip(cells, exports) if cell.ok]
    out: dict[str, list[str]] = {}
    for label, names in declared.items():
        mine = [pair for pair in ok if pair[0].measurement_label == label]
        out[label] = [text for name in names for text in CAPTIONS[name](mine, ok)]
    return out


def _outcome(cells: list[tuple[Cell, dict]], _everything: list[tuple[Cell, dict]]) -> list[str]:
    """A search's or sweep's outcome in words, per technique and impairment (its last repetition):
    the limit it met, or that no rate was without loss (the methodology warnings say when that
    limit was the receiver)."""
    last = {(cell.technique, cell.impairment): cell for cell, _ in cells}
    return [technique + ("" if impairment == "none" else f" ({impairment})") + ": "
            + MEASUREMENTS[cell.measurement].headline_text(cell.metrics) for (technique, impairment), cell in last.items()]


def _congestion_control(cells: list[tuple[Cell, dict]], _everything: list[tuple[Cell, dict]]) -> list[str]:
    """The congestion control TCP ran with, where the impairment drops packets."""
    return [w.message for w in congestion_control_under_loss([export for _, export in cells])]


def _rekey_cost(cells: list[tuple[Cell, dict]], everything: list[tuple[Cell, dict]]) -> list[str]:
    """The cost of rekeys inside a search's trials (rate_search's rekey_in_trials), per technique
    and impairment: its mean NDR against the mean NDR of the same search without rekeys (the same
    kind and settings but that one) in the same run, when the campaign has both."""
    def settings(cell: Cell) -> dict:
        return {k: v for k, v in cell.measurement_params.items() if k != "rekey_in_trials"}

    def mean_ndr(group: list[Cell]) -> float | None:
        values = [c.metrics["ndr_bps"] for c in group if "ndr_bps" in c.metrics]
        return sum(values) / len(values) if values else None

    rekeyed: dict[tuple[str, str], list[Cell]] = {}
    for cell, _ in cells:
        if cell.measurement_params.get("rekey_in_trials"):
            rekeyed.setdefault((cell.technique, cell.impairment), []).append(cell)
    out = []
    for (technique, impairment), group in rekeyed.items():
        plain = [c for c, _ in everything if (c.technique, c.impairment, c.measurement) == (technique, impairment,
                 group[0].measurement) and not c.measurement_params.get("rekey_in_trials")
                 and settings(c) == settings(group[0])]
        with_rekeys, without = mean_ndr(group), mean_ndr(plain)
        if not without:
            continue
        name = technique + ("" if impairment == "none" else f" ({impairment})")
        against = f"without ({without / 1e6:.1f} Mbit/s, {plain[0].measurement_label})"
        if with_rekeys is None:  # the rekeys lost packets at every load searched (CSIT-1886's finding)
            lowest = min(c.metrics.get("ndr_upper_bound_bps", float("inf")) for c in group)
            even = f": even {lowest / 1e6:.1f} Mbit/s lost packets" if lowest < float("inf") else ""
            out.append(f"{name}: no NDR with rekeys in trials{even}; {against}")
            continue
        change = 100 * (1 - with_rekeys / without)
        out.append(f"{name}: NDR with rekeys in trials {with_rekeys / 1e6:.1f} Mbit/s is {abs(change):.1f} % "
                   + ("below " if change >= 0 else "above ") + against)
    return out


def _setups_censored(cells: list[tuple[Cell, dict]], everything: list[tuple[Cell, dict]]) -> list[str]:
    """Set-ups not up within their timeout, per technique and impairment over its repetitions, and
    the median of what the daemons' logs counted of each key exchange (the `setup` kind)."""
    found: dict[tuple[str, str], list[dict]] = {}
    for cell, _ in cells:
        found.setdefault((cell.technique, cell.impairment), []).append(cell.metrics)
    lines = []
    for (technique, impairment), metrics in found.items():
        failed, total = sum(m.get("setups_failed", 0) for m in metrics), sum(m.get("cycles", 0) for m in metrics)
        counts = [f"{name.removesuffix('_p50').replace('_', ' ')} {value:g}" for name, value in metrics[-1].items()
                  if name.endswith("_p50")]
        if failed or counts:
            lines.append(f"{technique} ({impairment}): {failed:g} of {total:g} set-ups not up within "
                         f"{metrics[-1].get('setup_timeout_s', 0):g} s"
                         + (f"; median per set-up: {', '.join(counts)}" if counts else ""))
    return lines


# What a Measurement's `captions` names: the words each gives from a label's ok cells (and their
# exports), given every ok cell of the run too (for a cost against another label's cells).
CAPTIONS = {"outcome": _outcome, "congestion_control": _congestion_control, "rekey_cost": _rekey_cost,
            "setups_censored": _setups_censored}


def shown_metric(metric: str, known=frozenset(c.metric for m in MEASUREMENTS.values() for c in m.columns)) -> bool:
    """The metrics a table shows: a measurement's columns, the hosts' CPU, steal and efficiency."""
    return metric in known or metric.startswith(("client_", "server_", "router_"))


def answered(kind: str, metric: str) -> bool:
    """Whether a cost and a test are taken of a metric: its measurement's headline (the report's
    cost and significance tables), its first column (the terminal's cost column), the hosts' CPU
    share and CPU-seconds per GiB. The others stay in the table and the export; a cost and a
    test of each would only cost time (a report of 10 000 cells has some 70 000 of them)."""
    measurement = MEASUREMENTS.get(kind)
    if metric.endswith(("_cpu_pct", "_cpu_s_per_gib")) and metric.startswith(("client_", "server_", "router_")):
        return True
    if measurement is None or measurement.headline is None:  # the report picks its first rate or time metric
        return True
    first = measurement.columns[0].metric if measurement.columns else None
    return metric in measurement.headline.metrics or metric == first


_RELATIVE_COLUMNS = ["measurement_label", "impairment", "metric", "technique", "headline", "ratio", "ratio_method",
                     "difference"]


def _difference_text(metric: str, value: float) -> str:
    if not math.isfinite(value):
        return ""
    return f"{value / 1e6:+.3g} Mbit/s" if metric.endswith("_bps") else f"{value:+.3g}"


def _concerns(ref: Ref, cell: Cell) -> bool:
    return all(want is None or want == have for want, have in (
        (ref.technique, cell.technique), (ref.impairment, cell.impairment),
        (ref.measurement_label, cell.measurement_label), (ref.repetition, cell.repetition)))


def export_records(cells: list[Cell]) -> list[dict]:
    """Export records of one run's cells with `relative` (metric -> ratio to the same run's baseline
    in the same impairment and measurement; absent for the baseline and without one), the
    `efficiency` of a cell that moved bytes (`<host>_cpu_s_per_gib`) and the methodology
    `warnings` that concern each cell."""
    answers = verdicts(cells)
    records = []
    for cell in cells:
        record = cell.export()
        if answers.baseline is not None and cell.technique != answers.baseline:
            ratios = answers.ratios.get((cell.technique, cell.impairment, cell.measurement_label))
            if ratios is not None:
                record["relative"] = ratios
        record["efficiency"] = efficiency_metrics(record)  # {} where no bytes moved: the same keys in every record
        record["warnings"] = answers.warnings_for(cell)
        records.append(record)
    return records
