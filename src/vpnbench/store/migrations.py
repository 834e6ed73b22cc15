"""Migrations of older results files, one function per schema step, run inside one
transaction when the file is opened (store.Store). MIGRATIONS[n](db, schema) takes a file
from schema n to n + 1 (schema: today's SQL, for the tables a step fills); the tables that did
not exist yet are created afterwards from records.py.

Schema 1 -> 2: cells gained `segments`.

These steps run on SQLite files only (on the sqlite3 connection): PostgreSQL came with schema 2.
A step to schema 3 and beyond must serve both engines: write it with SQLAlchemy Core on the
store's connection (store.T, sa.text for what Core does not say), as the schema is defined.

Schema 0 (vpnbench 0.1, no user_version): a cell row carried its bring-up's wire verdict
and negotiated parameters and, in its metrics, the set-up time; monitor samples were JSON
rows in `samples`.
"""

import json
import sqlite3

from vpnbench.store.records import SeriesPoint
from vpnbench.store.series_codec import encode_chunks, sample_points


def _v0_to_v1(db: sqlite3.Connection, schema: str) -> None:
    db.executescript(_without_cell_indexes(schema))
    db.execute("ALTER TABLE cells ADD COLUMN bringup_id INTEGER REFERENCES bringups(id)")
    _bringups_from_cells(db)
    db.execute("UPDATE cells SET metrics = json_remove(metrics, '$.setup_time_s')")
    db.execute("ALTER TABLE cells DROP COLUMN wire_check")
    db.execute("ALTER TABLE cells DROP COLUMN negotiated")
    _samples_to_series(db)
    db.execute("DROP TABLE samples")


def _without_cell_indexes(sql: str) -> str:
    """The new tables, but not yet the indexes on cells columns that schema 0 lacks."""
    return "\n".join(line for line in sql.splitlines() if not line.startswith("CREATE INDEX IF NOT EXISTS cells_"))


def _bringups_from_cells(db: sqlite3.Connection) -> None:
    """Schema 0 kept one bring-up's facts in every cell it served; a new bring-up shows as a
    new set-up time (or a new 'bring-up failed' error) within a technique, in cell order."""
    current: dict[tuple[str, str], tuple[object, int]] = {}
    rows = db.execute("SELECT id, run_id, technique, technique_params, status, error, metrics, wire_check, "
                      "negotiated, started_at, finished_at FROM cells ORDER BY id").fetchall()
    for row in rows:
        metrics = json.loads(row["metrics"])
        failed_bringup = (row["error"] or "").startswith("bring-up failed")
        identity = row["error"] if failed_bringup else metrics.get("setup_time_s")
        key = (row["run_id"], row["technique"])
        if key not in current or current[key][0] != identity:
            params = json.loads(row["technique_params"])
            bringup_id = db.execute(
                "INSERT INTO bringups (run_id, technique, kind, backend, started_at, backend_asked, setup_time_s, "
                "wire_check, negotiated, facts, evidence, error, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row["run_id"], row["technique"], params.get("kind", ""), params.get("backend") or "",
                 row["started_at"], "unknown", None if failed_bringup else metrics.get("setup_time_s"),
                 json.dumps({"verdict": row["wire_check"]}), row["negotiated"], "{}", "{}",
                 row["error"] if failed_bringup else None, row["finished_at"])).lastrowid
            current[key] = (identity, bringup_id)
        bringup_id = current[key][1]
        db.execute("UPDATE cells SET bringup_id = ? WHERE id = ?", (bringup_id, row["id"]))
        db.execute("UPDATE bringups SET ended_at = ? WHERE id = ?", (row["finished_at"], bringup_id))


def _samples_to_series(db: sqlite3.Connection) -> None:
    # Schema 0's samples listed per-core values without the core numbers; the cell's host summary has them.
    cores = {(row["id"], host): facts.get("cores") for row in db.execute("SELECT id, hosts FROM cells")
             for host, facts in json.loads(row["hosts"]).items()}
    by_cell: dict[int, list[SeriesPoint]] = {}
    for row in db.execute("SELECT cell_id, data FROM samples ORDER BY rowid"):
        sample = json.loads(row["data"])
        sample.setdefault("cores", cores.get((row["cell_id"], sample.get("host"))))
        by_cell.setdefault(row["cell_id"], []).extend(sample_points(sample))
    for cell_id, points in by_cell.items():
        db.executemany("INSERT INTO series VALUES (?, ?, ?, ?, ?, ?, ?)", encode_chunks(cell_id, points))


def _v1_to_v2(db: sqlite3.Connection, schema: str) -> None:
    """Schema 2: a cell can run in segments (a soak resumed after a kill); earlier cells had one."""
    db.execute("ALTER TABLE cells ADD COLUMN segments INTEGER DEFAULT 1")


MIGRATIONS = {0: _v0_to_v1, 1: _v1_to_v2}
