"""`vpnbench.load(DB)`: a results file as pandas DataFrames, for notebooks.

    import vpnbench
    results = vpnbench.load("s1.db")            # every run; load("s1.db", run_id="ab12cd") for one
    results.metrics                             # tidy: one row per cell and metric
    results.metrics.pivot_table(index="technique", columns="metric", values="value")
    results.series.query("name == 'throughput_bps'")

Frames (all with run_id; cell_id / bringup_id join them):
  runs        one row per run: campaign, status, started_at, finished_at, environment (dict)
  cells       one row per cell: technique, impairment, measurement, repetition, status, error, ...
  metrics     one row per cell and metric (host CPU as <host>_cpu_pct, steal as <host>_cpu_steal_pct)
  bringups    one row per bring-up: technique, backend, setup_time_s, verdict, error
  series      one row per series point: cell_id, host, name, t (s since the cell started), value
  trials      one row per trial of a search or sweep
  events      one row per event: kind, at, t, detail (dict)
  hosts       one row per run and host: the host facts (dict) and their one-line summary
"""

import dataclasses
from pathlib import Path

import pandas as pd

from vpnbench.answers.analysis import metric_rows
from vpnbench.foundation.errors import UserError
from vpnbench.run.hostfacts import summary_line
from vpnbench.store.database import Store, missing_file
from vpnbench.store.records import Cell


@dataclasses.dataclass
class Results:
    runs: pd.DataFrame
    cells: pd.DataFrame
    metrics: pd.DataFrame
    bringups: pd.DataFrame
    series: pd.DataFrame
    trials: pd.DataFrame
    events: pd.DataFrame
    hosts: pd.DataFrame

    def frames(self) -> dict[str, pd.DataFrame]:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


def load(path: str | Path, run_id: str | None = None) -> Results:
    """Every table of a results file (or of one run in it) as DataFrames."""
    if missing_file(path):
        raise UserError(f"load: {str(path)!r} does not exist")
    store = Store(path, read_only=True)
    try:
        runs = [r for r in store.runs() if run_id in (None, r.run_id)]
        if run_id is not None and not runs:
            raise UserError(f"load: no run {run_id!r} in {store.name!r}")
        cells = [cell for run in runs for cell in store.cells(run.run_id)]
        return Results(
            runs=_frame([dataclasses.asdict(r) for r in runs], ["run_id", "campaign", "status"]),
            cells=_frame([_cell_row(c) for c in cells], ["cell_id", "run_id", "technique"]),
            metrics=_frame([row for c in cells for row in metric_rows(c)], ["cell_id", "metric", "value"]),
            bringups=_frame([_bringup_row(b) for run in runs for b in store.bringups(run.run_id)],
                            ["bringup_id", "run_id", "technique"]),
            series=_frame([{"cell_id": c.id, "run_id": c.run_id, **dataclasses.asdict(p)}
                           for c in cells for p in store.series(c.id)], ["cell_id", "name", "t", "value", "host"]),
            trials=_frame([{"run_id": c.run_id, **dataclasses.asdict(t)} for c in cells for t in store.trials(c.id)],
                          ["cell_id", "number"]),
            events=_frame([dataclasses.asdict(e) for run in runs for e in store.events(run.run_id)],
                          ["run_id", "kind", "at"]),
            hosts=_frame([{"run_id": f.run_id, "host": f.host, "summary": summary_line(f.facts), "facts": f.facts}
                          for run in runs for f in store.host_facts(run.run_id)], ["run_id", "host", "facts"]),
        )
    finally:
        store.close()


def _cell_row(cell: Cell) -> dict:
    row = cell.export()
    row.pop("metrics")
    return row


def _bringup_row(bringup) -> dict:
    row = {f.name: getattr(bringup, f.name) for f in dataclasses.fields(bringup) if f.name != "tunnel"}
    row["bringup_id"] = row.pop("id")
    row["verdict"] = bringup.verdict
    return row


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """A frame with at least these columns, even when there are no rows."""
    frame = pd.DataFrame(rows)
    for column in columns:
        if column not in frame:
            frame[column] = pd.Series(dtype=object)
    return frame
