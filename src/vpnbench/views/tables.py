"""The tables printed after a run: one per measurement, technique rows, mean ± sd columns."""

import math
import statistics

from rich.table import Table

from vpnbench.answers.verdicts import Verdicts, verdicts
from vpnbench.foundation.terminal_text import plain
from vpnbench.measure import MEASUREMENTS
from vpnbench.store.records import Bringup, Cell

HOST_COLUMNS = [("client", "client CPU%"), ("server", "server CPU%")]
EFFICIENCY = ("client_cpu_s_per_gib", "server_cpu_s_per_gib")  # analysis.metric_rows's names


def digits_for(value: float) -> int:
    """Decimals that keep three significant figures for small values and none for large ones."""
    return next(d for limit, d in ((100, 0), (10, 1), (1, 2), (0, 3)) if abs(value) >= limit)


def format_mean_sd(mean: float, sd: float | None) -> str:
    """'mean ± sd', or the mean alone when there is no sd (one value)."""
    if mean is None or math.isnan(mean):
        return "–"
    digits = digits_for(mean)
    if sd is None or math.isnan(sd):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def format_summary(row, scale: float = 1.0) -> str:
    """A summary row as a table gives it: 'mean ± sd', or where some repetitions were censored
    (above their timeout: no mean) the median where known and how many: 'p50 0.300, 1 of 3 > timeout'."""
    censored = getattr(row, "censored", 0) or 0
    if not censored:
        return format_mean_sd(row.mean * scale, row.sd * scale)
    above = f"{censored:g} of {row.n:g} > timeout"
    if math.isnan(row.median):
        return above
    median = row.median * scale
    return f"p50 {median:.{digits_for(median)}f}, {above}"


def mean_sd(values: list[float], scale: float) -> str:
    if not values:
        return "–"
    values = [v * scale for v in values]
    return format_mean_sd(statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else None)


def bringups_of(cells: list[Cell]) -> list[Bringup]:
    """The distinct bring-ups that served these cells, in order."""
    return list({cell.bringup.id: cell.bringup for cell in cells if cell.bringup is not None}.values())


def bringup_times(cells: list[Cell]) -> list[float]:
    """Set-up time of each bring-up that served these cells (each bring-up counted once)."""
    return [b.setup_time_s for b in bringups_of(cells) if b.setup_time_s is not None]


def technique_table(cells: list[Cell]) -> Table:
    """One row per technique: the data path that ran, the wire proof, how long bring-up took."""
    table = Table(title="techniques", title_justify="left")
    for title in ("technique", "backend", "wire check", "setup s", "cells ok/n"):
        table.add_column(title, justify="right" if title in ("setup s", "cells ok/n") else "left")
    for technique in dict.fromkeys(c.technique for c in cells):
        rows = [c for c in cells if c.technique == technique]
        ok = sum(1 for c in rows if c.ok)
        bringups = bringups_of(rows)
        backend = bringups[-1].backend if bringups else rows[0].technique_params.get("backend")
        if bringups and all(b.backend == "none" for b in bringups):
            backend = "unavailable"
        table.add_row(*map(plain, (technique, backend or "–", rows[0].wire_check, mean_sd(bringup_times(rows), 1),
                                   f"{ok}/{len(rows)}")))
    return table


def summary_tables(cells: list[Cell], answers: Verdicts | None = None) -> list[Table]:
    """Per measurement: mean ± sd of its columns and the hosts' CPU, and the first column's cost
    relative to the baseline ('0.41 ×' or '+0.62'; '*' significant, 'n.d.' not distinguishable):
    the run's answers (Verdicts.summary, as the report gives them), never recomputed here."""
    tables = [technique_table(cells)] if cells else []
    answers = answers or verdicts(cells)
    for label in dict.fromkeys(c.measurement_label for c in cells):
        mine = [c for c in cells if c.measurement_label == label]
        kind = MEASUREMENTS.get(mine[0].measurement)
        columns = kind.columns if kind else ()
        groups = list(dict.fromkeys((c.technique, c.impairment) for c in mine))
        impaired = len({c.impairment for c in mine}) > 1 or mine[0].impairment != "none"

        def shown(technique: str, impairment: str, metric: str, scale: float = 1.0) -> str:
            row = answers.stat(label, technique, impairment, metric)
            return "–" if row is None else format_summary(row, scale)

        table = Table(title=plain(label), title_justify="left")
        table.add_column("technique", no_wrap=True)
        if impaired:
            table.add_column("impairment")
        table.add_column("ok/n", justify="right")
        for column in columns:
            table.add_column(column.title, justify="right")
        relative = columns[0] if columns and answers.baseline else None
        if relative:
            table.add_column(f"{relative.title} vs {plain(answers.baseline)}", justify="right")
        for _, title in HOST_COLUMNS:
            table.add_column(title, justify="right")
        moved_bytes = any(answers.stat(label, t, i, m) is not None for t, i in groups for m in EFFICIENCY)
        if moved_bytes:
            table.add_column("CPU-s/GiB client/server", justify="right")
        for technique, impairment in groups:
            rows = [c for c in mine if c.technique == technique and c.impairment == impairment]
            cells_out = [technique] + ([impairment] if impaired else []) + [f"{sum(c.ok for c in rows)}/{len(rows)}"]
            cells_out += [shown(technique, impairment, col.metric, col.scale) for col in columns]
            if relative:
                cells_out.append(answers.cost(technique, impairment, label, relative.metric))
            cells_out += [shown(technique, impairment, f"{host}_cpu_pct") for host, _ in HOST_COLUMNS]
            if moved_bytes:
                cells_out.append(" / ".join(shown(technique, impairment, m) for m in EFFICIENCY))
            table.add_row(*map(plain, cells_out))
        tables.append(table)
    return tables
