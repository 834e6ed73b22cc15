"""Exporting cell records as JSON (the contract other tools read) or flat CSV."""

import csv
import json
from pathlib import Path

from vpnbench.store import Store

RECORD_FIELDS = ("run_id", "campaign", "technique", "technique_params", "impairment", "impairment_params",
                 "measurement", "measurement_label", "measurement_params", "repetition", "status", "error",
                 "metrics", "hosts", "wire_check", "negotiated", "started_at", "finished_at")


def records(store: Store) -> list[dict]:
    return [{field: cell[field] for field in RECORD_FIELDS} for cell in store.cells()]


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
