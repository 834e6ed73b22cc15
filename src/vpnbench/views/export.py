"""Exporting cell records as JSON (the contract other tools read), flat CSV, or Parquet."""

import csv
import json
from pathlib import Path

from vpnbench.store.database import Store


def records(store: Store) -> list[dict]:
    """Every cell as its export record (records.Cell.export: the fields ARCHITECTURE.md lists),
    with its cost relative to its run's baseline, the methodology warnings that concern it and
    its events."""
    from vpnbench.answers.verdicts import export_records  # noqa: PLC0415 - pandas only when exporting

    out = []
    for run in store.runs():
        events = events_by_cell(store, run.run_id)
        out += [{**record, "events": events.get(record["cell_id"], [])}
                for record in export_records(store.cells(run.run_id))]
    return out


def events_by_cell(store: Store, run_id: str) -> dict[int, list[dict]]:
    """Each cell's own events (a soak's stalls and segments, a load's start, rekeys), read once per
    run; a cell without any gets [], so every record has the same keys."""
    out: dict[int, list[dict]] = {}
    for e in store.events(run_id):
        if e.cell_id is not None:
            out.setdefault(e.cell_id, []).append({"kind": e.kind, "t": e.t, "detail": e.detail})
    return out


def export_json(store: Store, out: Path) -> int:
    data = records(store)
    out.write_text(json.dumps(data, indent=1) + "\n")
    return len(data)


def flatten(record: dict) -> dict:
    """One CSV row: nested objects become dotted columns (metrics.throughput_bps, hosts.client.cpu_pct)."""
    row = {}

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list):
            row[prefix] = json.dumps(value)
        else:
            row[prefix] = value

    walk("", record)
    return row


def export_csv(store: Store, out: Path) -> int:
    rows = [flatten(r) for r in records(store)]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def export_parquet(store: Store, out: Path) -> int:
    """The tidy metrics (one row per cell and metric) to out; every other non-empty table of
    vpnbench.load beside it as <stem>.<table>.parquet (series, bringups, trials, ...)."""
    from vpnbench.views.dataset import load  # noqa: PLC0415 - pandas/pyarrow only when asked for

    results = load(store.target)
    for name, frame in results.frames().items():
        target = out if name == "metrics" else out.with_name(f"{out.stem}.{name}.parquet")
        if name == "metrics" or not frame.empty:
            _json_columns_as_text(frame).to_parquet(target, index=False)
    return len(results.cells)


def _json_columns_as_text(frame):
    """Parquet wants one type per column: nested dicts and lists are written as JSON text."""
    frame = frame.copy()
    for column in frame.columns:
        if frame[column].map(lambda v: isinstance(v, (dict, list))).any():
            frame[column] = frame[column].map(lambda v: json.dumps(v) if isinstance(v, (dict, list)) else v)
    return frame
