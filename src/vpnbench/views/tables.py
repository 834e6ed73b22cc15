"""The tables printed after a run: one per measurement, technique rows, mean ± sd columns."""

import dataclasses
import io
import math
import statistics

from rich.console import Console
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


@dataclasses.dataclass
class Column:
    """One column of a measurement's table: its values by row, and whether a narrow terminal
    keeps it in the first table (essential) and repeats it in a continued one (key)."""
    header: str
    values: list[str]
    essential: bool = False
    key: bool = False
    justify: str = "right"
    no_wrap: bool = False


def summary_tables(cells: list[Cell], answers: Verdicts | None = None, width: int | None = None) -> list[Table]:
    """Per measurement: mean ± sd of its columns and the hosts' CPU, and the first column's cost
    relative to the baseline ('0.41 ×' or '+0.62'; '*' significant, 'n.d.' not distinguishable):
    the run's answers (Verdicts.summary, as the report gives them), never recomputed here.
    With a terminal's `width`, a table wider than it is split (fitted): the essential columns
    first, the others as the width allows, the rest in a continued table; nothing is left out."""
    tables = [technique_table(cells)] if cells else []
    answers = answers or verdicts(cells)
    for label in dict.fromkeys(c.measurement_label for c in cells):
        columns = measurement_columns([c for c in cells if c.measurement_label == label], label, answers)
        tables += fitted(plain(label), columns, width)
    return tables


def measurement_columns(mine: list[Cell], label: str, answers: Verdicts) -> list[Column]:
    """The columns of one measurement's table (the essential ones are shown first)."""
    kind = MEASUREMENTS.get(mine[0].measurement)
    declared = kind.columns if kind else ()
    groups = list(dict.fromkeys((c.technique, c.impairment) for c in mine))
    impaired = len({c.impairment for c in mine}) > 1 or mine[0].impairment != "none"

    def shown(metric: str, scale: float = 1.0) -> list[str]:
        values = []
        for technique, impairment in groups:
            row = answers.stat(label, technique, impairment, metric)
            values.append("–" if row is None else format_summary(row, scale))
        return values

    columns = [Column("technique", [t for t, _ in groups], essential=True, key=True, justify="left", no_wrap=True)]
    if impaired:
        columns.append(Column("impairment", [i for _, i in groups], essential=True, key=True, justify="left"))
    ok = [sum(c.ok for c in mine if (c.technique, c.impairment) == group) for group in groups]
    total = [sum(1 for c in mine if (c.technique, c.impairment) == group) for group in groups]
    columns.append(Column("ok/n", [f"{o}/{n}" for o, n in zip(ok, total)], essential=True))
    # The headline (a kind's first column) and its cost against the baseline are what a run is read for.
    columns += [Column(column.title, shown(column.metric, column.scale), essential=number == 0)
                for number, column in enumerate(declared)]
    relative = declared[0] if declared and answers.baseline else None
    if relative:
        columns.append(Column(f"{relative.title} vs {answers.baseline}", essential=True,
                              values=[answers.cost(t, i, label, relative.metric) for t, i in groups]))
    # A mesh's hosts are its nodes, not a client and a server: a column with nothing in it is left out
    host_columns = [Column(title, shown(f"{host}_cpu_pct")) for host, title in HOST_COLUMNS]
    columns += [column for column in host_columns if any(value != "–" for value in column.values)]
    if any(answers.stat(label, t, i, m) is not None for t, i in groups for m in EFFICIENCY):
        per_metric = [shown(metric) for metric in EFFICIENCY]
        columns.append(Column("CPU-s/GiB client/server", [" / ".join(pair) for pair in zip(*per_metric)]))
    return columns


def fitted(title: str, columns: list[Column], width: int | None) -> list[Table]:
    """The columns as one table, the essential ones first, or, where that is wider than `width`,
    as several: the first with the essential columns and then every other that still fits, in order; each continued one with
    the key columns (which rows these are) and the rest, as many as fit."""
    keys = [column for column in columns if column.key]
    shown = [column for column in columns if column.essential]
    pending = [column for column in columns if not column.essential]
    if width is None or table_width(table_of(title, shown + pending)) <= width:
        return [table_of(title, shown + pending)]
    tables = []
    while True:
        left = []
        for column in pending:
            if table_width(table_of(title, [*shown, column])) <= width or shown == keys:
                shown.append(column)  # a continued table takes at least one column, however wide
            else:
                left.append(column)
        tables.append(table_of(title if not tables else f"{title} (continued)", shown))
        if not left:
            return tables
        shown, pending = list(keys), left


def table_of(title: str, columns: list[Column]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(plain(column.header), justify=column.justify, no_wrap=column.no_wrap)
    for row in zip(*(column.values for column in columns)):
        table.add_row(*map(plain, row))
    return table


def table_width(table: Table) -> int:
    """The columns a table takes unwrapped."""
    return _MEASURING.measure(table).maximum


_MEASURING = Console(width=100_000, file=io.StringIO())  # only measures: wide enough that nothing wraps
