"""The answers a run gives, computed once from its cells for the terminal, the export and the
report: each technique's cost relative to the run's baseline, whether a difference is real,
and the methodology warnings that say when a number measures something else.

The statistics themselves are pure functions elsewhere (stats, significance, quality,
methodology); this module only decides what they are applied to.
"""

import dataclasses
import math

import pandas as pd

from vpnbench.analysis import efficiency_metrics, metric_frame
from vpnbench.methodology import MethodologyWarning, Ref, methodology_warnings
from vpnbench.records import Cell
from vpnbench.significance import compare_all
from vpnbench.stats import relative_cost, relative_ratios
from vpnbench.techniques import is_reference


def baseline_label(cells: list[Cell]) -> str | None:
    """The run's baseline: the first technique of kind baseline (the unencrypted reference)."""
    return next((c.technique for c in cells if is_reference(c.technique_params)), None)


@dataclasses.dataclass
class Verdicts:
    baseline: str | None
    relative: pd.DataFrame  # stats.relative_cost rows
    comparisons: pd.DataFrame  # significance.compare_all rows: each technique vs the baseline
    warnings: list[MethodologyWarning]
    ratios: dict[tuple[str, str, str], dict[str, float]]  # (technique, impairment, label) -> metric -> ratio

    def cost(self, technique: str, impairment: str, label: str, metric: str) -> str:
        """'0.41 ×' or '+0.62' (with a significance mark) for a table cell; '' where there is none."""
        rows = self.relative[(self.relative["technique"] == technique) & (self.relative["impairment"] == impairment)
                             & (self.relative["measurement_label"] == label) & (self.relative["metric"] == metric)]
        if rows.empty:
            return ""
        row = rows.iloc[0]
        if row["headline"] == "ratio":
            text = f"{row['ratio']:.2f} ×" if math.isfinite(row["ratio"]) else ""
        else:
            text = f"{row['difference']:+.3g}" if math.isfinite(row["difference"]) else ""
        return f"{text} {self.mark(technique, impairment, label, metric)}".strip()

    def mark(self, technique: str, impairment: str, label: str, metric: str) -> str:
        """'*' when the difference from the baseline is significant (Holm-adjusted p < 0.05),
        'n.d.' when not distinguishable, '' with too few repetitions to say."""
        c = self.comparisons
        if c.empty:
            return ""
        rows = c[(c["a"] == technique) & (c["impairment"] == impairment) & (c["measurement_label"] == label)
                 & (c["metric"] == metric)]
        if rows.empty or rows.iloc[0]["test"] == "none":
            return ""
        return "n.d." if rows.iloc[0]["verdict"] == "not distinguishable" else "*"

    def warnings_for(self, cell: Cell) -> list[dict]:
        return [{"code": w.code, "message": w.message} for w in self.warnings
                if any(_concerns(ref, cell) for ref in w.concerns)]


def verdicts(cells: list[Cell]) -> Verdicts:
    frame = metric_frame(cells)
    baseline = baseline_label(cells)
    if baseline is None or frame.empty:
        relative, comparisons, ratios = pd.DataFrame(columns=_RELATIVE_COLUMNS), pd.DataFrame(), {}
    else:
        relative = relative_cost(frame, baseline)
        pairs = [(t, baseline) for t in dict.fromkeys(frame["technique"]) if t != baseline]
        comparisons = compare_all(frame, pairs=pairs)
        ratios = relative_ratios(frame, baseline)
    return Verdicts(baseline, relative, comparisons, methodology_warnings([c.export() for c in cells]), ratios)


_RELATIVE_COLUMNS = ["measurement_label", "impairment", "metric", "technique", "headline", "ratio", "difference"]


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
