"""Results in SQLite (WAL): the records of records.py, one table each, committed as they happen.

A cell is written when it starts (status `running`) and again when it ends; its time series
are flushed while it runs (SeriesWriter, at least every FLUSH_SECONDS), so a crash loses at
most the last few seconds of what was measured. --resume continues the latest run of a
campaign and skips its cells that already succeeded.

The file carries its schema version (PRAGMA user_version); an older file is migrated in
place when opened, a newer one is refused with one clear line.
"""

import array
import zlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from vpnbench.errors import SchemaError, UserError
from vpnbench.records import (Bringup, Cell, Event, HostFacts, Run, SeriesPoint, Trial, as_row, column_type,
                              field_names, json_fields, now_iso, stored_fields)

__all__ = ["Store", "SeriesWriter", "now_iso", "SCHEMA_VERSION"]

SCHEMA_VERSION = 2
FLUSH_SECONDS = 5.0

# table -> (record type, primary key column); every *_id column is a foreign key with an index.
TABLES = {
    "runs": (Run, "run_id"),
    "host_facts": (HostFacts, None),
    "bringups": (Bringup, "id"),
    "cells": (Cell, "id"),
    "trials": (Trial, "id"),
    "events": (Event, "id"),
}
FOREIGN_KEYS = {"run_id": "runs(run_id)", "bringup_id": "bringups(id)", "cell_id": "cells(id)"}
# Tables that are not one record per row: raw tool output, and series stored in chunks
# (t as float32 offsets from t0, values as float32, each deflated: see bench/store.py).
EXTRA_SCHEMA = """
CREATE TABLE IF NOT EXISTS raw_outputs (
    cell_id INTEGER NOT NULL REFERENCES cells(id),
    name TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS raw_outputs_cell ON raw_outputs(cell_id);
CREATE TABLE IF NOT EXISTS series (
    cell_id INTEGER NOT NULL REFERENCES cells(id),
    host TEXT NOT NULL,
    name TEXT NOT NULL,
    t0 REAL NOT NULL,
    n INTEGER NOT NULL,
    t BLOB NOT NULL,
    v BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS series_cell ON series(cell_id, name);
CREATE INDEX IF NOT EXISTS cells_by_run ON cells(run_id, cell_key);
CREATE UNIQUE INDEX IF NOT EXISTS host_facts_key ON host_facts(run_id, host);
"""


def table_sql(table: str) -> str:
    record_type, primary = TABLES[table]
    columns, indexes = [], []
    for field in stored_fields(record_type):
        sql = f"{field.name} {column_type(field, record_type)}"
        if field.name == primary:
            sql += " PRIMARY KEY"
        elif field.name in FOREIGN_KEYS and field.name != primary:
            sql += f" REFERENCES {FOREIGN_KEYS[field.name]}"
            indexes.append(f"CREATE INDEX IF NOT EXISTS {table}_{field.name} ON {table}({field.name});")
        columns.append(sql)
    return f"CREATE TABLE IF NOT EXISTS {table} (\n    " + ",\n    ".join(columns) + "\n);\n" + "\n".join(indexes)


def schema_sql() -> str:
    return "\n".join(table_sql(table) for table in TABLES) + EXTRA_SCHEMA


def create_private(path: Path) -> None:
    """A new results file is made 0600 before SQLite opens it (it holds host names, the inventory
    and hook paths); SQLite gives its -wal and -shm files the database file's mode. An existing
    file keeps the mode its owner gave it."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except FileExistsError:
        pass
    except OSError:
        pass  # a directory that is not there or not writable: sqlite3 says so in its own words


class Store:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.lock = threading.RLock()  # the monitor's thread flushes series while the runner writes cells
        create_private(self.path)
        self.db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL loses nothing when vpnbench crashes or is killed (only a power cut
            # may lose the last commits), and saves an fsync per commit: several per cell.
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._open_schema()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            # e.g. not a database, or a 9p/network filesystem without the shared memory WAL needs
            raise UserError(f"{str(self.path)!r}: not usable as an SQLite results file: {exc}") from None
        except SchemaError:
            self.db.close()
            raise

    def _open_schema(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SchemaError(f"{str(self.path)!r}: results schema {version} is newer than this vpnbench reads "
                              f"({SCHEMA_VERSION}); upgrade vpnbench")
        tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        from vpnbench.migrations import MIGRATIONS  # noqa: PLC0415 - migrations import this module's schema

        with self.db:
            if "cells" in tables:
                for step in range(version, SCHEMA_VERSION):
                    MIGRATIONS[step](self.db)
            self.db.executescript(schema_sql())
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self) -> None:
        with self.lock:
            self.db.close()

    # --- generic record I/O -------------------------------------------------------------

    @staticmethod
    def _encode(record) -> dict:
        """The record's stored fields as SQLite values: dicts and lists as JSON text."""
        encoded = json_fields(type(record))
        return {name: json.dumps(value) if name in encoded else value for name, value in as_row(record).items()}

    def _insert(self, table: str, record) -> int:
        row = self._encode(record)
        if row.get("id", 0) is None:
            del row["id"]  # SQLite assigns it
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        return self.db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(row.values())).lastrowid

    def _update(self, table: str, record, key: str = "id") -> None:
        row = self._encode(record)
        sets = ", ".join(f"{name} = ?" for name in row if name != key)
        self.db.execute(f"UPDATE {table} SET {sets} WHERE {key} = ?",
                        [value for name, value in row.items() if name != key] + [row[key]])

    def _select(self, record_type: type, query: str, args=()) -> list:
        encoded = json_fields(record_type)
        names = field_names(record_type)
        return [record_type(**{name: json.loads(row[name]) if name in encoded else row[name] for name in names})
                for row in self.db.execute(query, args)]

    # --- runs -----------------------------------------------------------------------------

    def start_run(self, run: Run) -> None:
        with self.lock, self.db:
            self._insert("runs", run)

    def annotate_run(self, run_id: str, **facts) -> None:
        """Add facts learned while the run sets up (sysctls applied, backends chosen)."""
        with self.lock, self.db:
            run = self.run(run_id)
            run.environment = {**run.environment, **facts}
            self._update("runs", run, key="run_id")

    def run(self, run_id: str) -> Run | None:
        with self.lock:
            found = self._select(Run, "SELECT * FROM runs WHERE run_id = ?", (run_id,))
        return found[0] if found else None

    def runs(self) -> list[Run]:
        with self.lock:
            return self._select(Run, "SELECT * FROM runs ORDER BY started_at")

    def finish_run(self, run_id: str, status: str) -> None:
        with self.lock, self.db:
            self.db.execute("UPDATE runs SET finished_at = ?, status = ? WHERE run_id = ?", (now_iso(), status, run_id))

    def latest_run(self, campaign: str | None = None) -> str | None:
        """The newest run of campaign (of any campaign when None)."""
        where, args = ("WHERE campaign = ?", (campaign,)) if campaign else ("", ())
        with self.lock:
            row = self.db.execute(f"SELECT run_id FROM runs {where} ORDER BY started_at DESC LIMIT 1", args).fetchone()
        return row["run_id"] if row else None

    def done_keys(self, run_id: str) -> set[str]:
        with self.lock:
            rows = self.db.execute("SELECT cell_key FROM cells WHERE run_id = ? AND status = 'ok'", (run_id,))
            return {row["cell_key"] for row in rows}

    # --- host facts, bring-ups, events ------------------------------------------------------

    def save_host_facts(self, facts: HostFacts) -> None:
        with self.lock, self.db:
            self.db.execute("DELETE FROM host_facts WHERE run_id = ? AND host = ?", (facts.run_id, facts.host))
            self._insert("host_facts", facts)

    def host_facts(self, run_id: str) -> list[HostFacts]:
        with self.lock:
            return self._select(HostFacts, "SELECT * FROM host_facts WHERE run_id = ? ORDER BY rowid", (run_id,))

    def save_bringup(self, bringup: Bringup) -> int:
        """Insert a new bring-up (sets its id) or update an existing one."""
        with self.lock, self.db:
            if bringup.id is None:
                bringup.id = self._insert("bringups", bringup)
            else:
                self._update("bringups", bringup)
        return bringup.id

    def bringups(self, run_id: str) -> list[Bringup]:
        with self.lock:
            return self._select(Bringup, "SELECT * FROM bringups WHERE run_id = ? ORDER BY id", (run_id,))

    def add_event(self, event: Event) -> int:
        with self.lock, self.db:
            event.id = self._insert("events", event)
        return event.id

    def events(self, run_id: str, cell_id: int | None = None) -> list[Event]:
        query, args = "SELECT * FROM events WHERE run_id = ?", [run_id]
        if cell_id is not None:
            query, args = query + " AND cell_id = ?", [*args, cell_id]
        with self.lock:
            return self._select(Event, query + " ORDER BY id", args)

    # --- cells ----------------------------------------------------------------------------

    def start_cell(self, cell: Cell) -> int:
        """Write a cell as it starts (status running), replacing an earlier attempt at its key."""
        with self.lock, self.db:
            for old in self.db.execute("SELECT id FROM cells WHERE run_id = ? AND cell_key = ?",
                                       (cell.run_id, cell.cell_key)).fetchall():
                self._delete_cell(old["id"])
            cell.id = self._insert("cells", cell)
        return cell.id

    def unfinished_cell(self, run_id: str, cell_key: str) -> Cell | None:
        """The attempt at this key that was cut short (status still running: killed or interrupted)."""
        with self.lock:
            found = self._select(Cell, "SELECT * FROM cells WHERE run_id = ? AND cell_key = ? AND status = 'running' "
                                       "ORDER BY id DESC LIMIT 1", (run_id, cell_key))
        return found[0] if found else None

    def continue_cell(self, cell: Cell) -> None:
        """Write a cell that continues an unfinished attempt (cell.id set): its series and events stay."""
        with self.lock, self.db:
            self._update("cells", cell)

    def series_end(self, cell_id: int) -> float:
        """The last time the cell's own series (the measurement's, host "") reached, 0 without any."""
        with self.lock:
            rows = self.db.execute("SELECT host, name, t0, t, v FROM series WHERE cell_id = ? AND host = ''",
                                   (cell_id,)).fetchall()
        ends = [decode_chunk(r["host"], r["name"], r["t0"], r["t"], r["v"])[-1].t for r in rows]
        return max(ends, default=0.0)

    def _delete_cell(self, cell_id: int) -> None:
        for table in ("raw_outputs", "series", "trials", "events"):
            self.db.execute(f"DELETE FROM {table} WHERE cell_id = ?", (cell_id,))
        self.db.execute("DELETE FROM cells WHERE id = ?", (cell_id,))

    def finish_cell(self, cell: Cell, raw: dict[str, str], trials: list[Trial] = ()) -> None:
        """The cell's outcome, its raw tool output and its trials, in one commit."""
        with self.lock, self.db:
            self._update("cells", cell)
            self.db.executemany("INSERT INTO raw_outputs VALUES (?, ?, ?)",
                                [(cell.id, name, text) for name, text in raw.items()])
            for trial in trials:
                trial.cell_id = cell.id
                trial.id = self._insert("trials", trial)

    def save_cell(self, cell: Cell, raw: dict[str, str] | None = None, trials: list[Trial] = ()) -> int:
        """A cell written whole (one that never ran: its bring-up failed)."""
        self.start_cell(cell)
        self.finish_cell(cell, raw or {}, trials)
        return cell.id

    def cells(self, run_id: str | None = None) -> list[Cell]:
        """Cells in the order they ran, each with its bring-up attached."""
        query = "SELECT * FROM cells" + (" WHERE run_id = ?" if run_id else "") + " ORDER BY id"
        with self.lock:
            cells = self._select(Cell, query, (run_id,) if run_id else ())
            bringups = {b.id: b for b in self._select(Bringup, "SELECT * FROM bringups")}
        for cell in cells:
            cell.bringup = bringups.get(cell.bringup_id)
        return cells

    def raw_outputs(self, cell_id: int) -> dict[str, str]:
        with self.lock:
            rows = self.db.execute("SELECT name, text FROM raw_outputs WHERE cell_id = ?", (cell_id,))
            return {row["name"]: row["text"] for row in rows}

    def trials(self, cell_id: int) -> list[Trial]:
        with self.lock:
            return self._select(Trial, "SELECT * FROM trials WHERE cell_id = ? ORDER BY number, id", (cell_id,))

    # --- series ---------------------------------------------------------------------------

    def add_series(self, cell_id: int, points: list[SeriesPoint]) -> None:
        """One chunk row per (host, name) of points, in one commit."""
        rows = encode_chunks(cell_id, points)
        with self.lock, self.db:
            self.db.executemany("INSERT INTO series VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def series(self, cell_id: int, name: str | None = None) -> list[SeriesPoint]:
        """The cell's series points (of one name, or all), in time order per series."""
        query = "SELECT host, name, t0, t, v FROM series WHERE cell_id = ?" + (" AND name = ?" if name else "")
        with self.lock:
            rows = self.db.execute(query + " ORDER BY host, name, t0", (cell_id, name) if name else (cell_id,)).fetchall()
        return [point for row in rows for point in decode_chunk(row["host"], row["name"], row["t0"], row["t"], row["v"])]

    def series_names(self, cell_id: int) -> list[tuple[str, str]]:
        with self.lock:
            rows = self.db.execute("SELECT DISTINCT host, name FROM series WHERE cell_id = ?", (cell_id,))
            return [(row["host"], row["name"]) for row in rows]


def encode_chunks(cell_id: int, points: list[SeriesPoint]) -> list[tuple]:
    """Rows of the series table: one per (host, name), times as offsets from the first."""
    chunks: dict[tuple[str, str], list[SeriesPoint]] = {}
    for point in points:
        chunks.setdefault((point.host, point.name), []).append(point)
    rows = []
    for (host, name), mine in chunks.items():
        t0 = mine[0].t
        rows.append((cell_id, host, name, t0, len(mine), _pack([p.t - t0 for p in mine]),
                     _pack([p.value for p in mine])))
    return rows


def _pack(values: list[float]) -> bytes:
    """float32s, deflated: sample times are evenly spaced and many series (memory, steal) barely
    change, so a 20-hour soak fits the size target (bench/store.py)."""
    return zlib.compress(array.array("f", values).tobytes(), 1)


def decode_chunk(host: str, name: str, t0: float, t_blob: bytes, v_blob: bytes) -> list[SeriesPoint]:
    times, values = array.array("f"), array.array("f")
    times.frombytes(zlib.decompress(t_blob))
    values.frombytes(zlib.decompress(v_blob))
    return [SeriesPoint(name, round(t0 + dt, 4), value, host) for dt, value in zip(times, values)]


class SeriesWriter:
    """Collects a running cell's series points from any thread and writes them at least
    every FLUSH_SECONDS (and at close), so a crash keeps what was measured before it."""

    def __init__(self, store: Store, cell_id: int, flush_seconds: float = FLUSH_SECONDS):
        self.store = store
        self.cell_id = cell_id
        self.flush_seconds = flush_seconds
        self._points: list[SeriesPoint] = []
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()
        self.written = 0

    def add(self, points: list[SeriesPoint]) -> None:
        with self._lock:
            self._points.extend(points)
            due = time.monotonic() - self._last_flush >= self.flush_seconds
        if due:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            points, self._points = self._points, []
            self._last_flush = time.monotonic()
        if points:
            self.store.add_series(self.cell_id, points)
            self.written += len(points)

    def close(self) -> None:
        self.flush()
