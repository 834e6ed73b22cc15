"""Results in SQLite (WAL): one row per cell, committed as each cell ends.

A crash loses at most the cell in flight; --resume continues the latest run of a campaign
and skips its cells that already succeeded. Raw tool output and monitor samples are kept
beside every cell.
"""

import datetime
import json
import sqlite3
from pathlib import Path

from vpnbench.errors import UserError

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    campaign TEXT NOT NULL,
    spec TEXT NOT NULL,
    environment TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cells (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    campaign TEXT NOT NULL,
    cell_key TEXT NOT NULL,
    technique TEXT NOT NULL,
    technique_params TEXT NOT NULL,
    impairment TEXT NOT NULL,
    impairment_params TEXT NOT NULL,
    measurement TEXT NOT NULL,
    measurement_label TEXT NOT NULL,
    measurement_params TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    metrics TEXT NOT NULL,
    hosts TEXT NOT NULL,
    wire_check TEXT NOT NULL,
    negotiated TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cells_by_run ON cells(run_id, cell_key);
CREATE TABLE IF NOT EXISTS raw_outputs (
    cell_id INTEGER NOT NULL REFERENCES cells(id),
    name TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
    cell_id INTEGER NOT NULL REFERENCES cells(id),
    data TEXT NOT NULL
);
"""

JSON_COLUMNS = ("technique_params", "impairment_params", "measurement_params", "metrics", "hosts", "negotiated")


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


class Store:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.db = sqlite3.connect(self.path, timeout=10)
        self.db.row_factory = sqlite3.Row
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(SCHEMA)
            self.db.commit()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            # e.g. not a database, or a 9p/network filesystem without the shared memory WAL needs
            raise UserError(f"{str(self.path)!r}: not usable as an SQLite results file: {exc}") from None

    def close(self) -> None:
        self.db.close()

    def start_run(self, run_id: str, campaign: str, spec: dict, environment: dict) -> None:
        self.db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, NULL, 'running')",
                        (run_id, campaign, json.dumps(spec), json.dumps(environment), now_iso()))
        self.db.commit()

    def annotate_run(self, run_id: str, **facts) -> None:
        """Add facts learned while the run sets up (sysctls applied, backends chosen)."""
        row = self.db.execute("SELECT environment FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        environment = {**json.loads(row["environment"]), **facts}
        self.db.execute("UPDATE runs SET environment = ? WHERE run_id = ?", (json.dumps(environment), run_id))
        self.db.commit()

    def run_info(self, run_id: str) -> dict:
        row = self.db.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        info = dict(row)
        info["spec"], info["environment"] = json.loads(info["spec"]), json.loads(info["environment"])
        return info

    def finish_run(self, run_id: str, status: str) -> None:
        self.db.execute("UPDATE runs SET finished_at = ?, status = ? WHERE run_id = ?", (now_iso(), status, run_id))
        self.db.commit()

    def latest_run(self, campaign: str | None = None) -> str | None:
        """The newest run of campaign (of any campaign when None)."""
        where, args = ("WHERE campaign = ?", (campaign,)) if campaign else ("", ())
        row = self.db.execute(f"SELECT run_id FROM runs {where} ORDER BY started_at DESC LIMIT 1", args).fetchone()
        return row["run_id"] if row else None

    def done_keys(self, run_id: str) -> set[str]:
        rows = self.db.execute("SELECT cell_key FROM cells WHERE run_id = ? AND status = 'ok'", (run_id,))
        return {row["cell_key"] for row in rows}

    def save_cell(self, record: dict, raw: dict[str, str], samples: list[dict]) -> int:
        """Insert one finished cell (replacing an earlier failed attempt at the same key) and commit."""
        values = dict(record)
        for column in JSON_COLUMNS:
            values[column] = json.dumps(values[column])
        with self.db:
            self.db.execute("DELETE FROM raw_outputs WHERE cell_id IN (SELECT id FROM cells WHERE run_id = ? AND cell_key = ?)",
                            (values["run_id"], values["cell_key"]))
            self.db.execute("DELETE FROM samples WHERE cell_id IN (SELECT id FROM cells WHERE run_id = ? AND cell_key = ?)",
                            (values["run_id"], values["cell_key"]))
            self.db.execute("DELETE FROM cells WHERE run_id = ? AND cell_key = ?", (values["run_id"], values["cell_key"]))
            columns = ", ".join(values)
            marks = ", ".join("?" for _ in values)
            cell_id = self.db.execute(f"INSERT INTO cells ({columns}) VALUES ({marks})", list(values.values())).lastrowid
            self.db.executemany("INSERT INTO raw_outputs VALUES (?, ?, ?)",
                                [(cell_id, name, text) for name, text in raw.items()])
            self.db.executemany("INSERT INTO samples VALUES (?, ?)", [(cell_id, json.dumps(s)) for s in samples])
        return cell_id

    def cells(self, run_id: str | None = None) -> list[dict]:
        query = "SELECT * FROM cells" + (" WHERE run_id = ?" if run_id else "") + " ORDER BY id"
        rows = self.db.execute(query, (run_id,) if run_id else ())
        return [_decode(dict(row)) for row in rows]

    def raw_outputs(self, cell_id: int) -> dict[str, str]:
        rows = self.db.execute("SELECT name, text FROM raw_outputs WHERE cell_id = ?", (cell_id,))
        return {row["name"]: row["text"] for row in rows}

    def samples(self, cell_id: int) -> list[dict]:
        rows = self.db.execute("SELECT data FROM samples WHERE cell_id = ?", (cell_id,))
        return [json.loads(row["data"]) for row in rows]


def _decode(row: dict) -> dict:
    for column in JSON_COLUMNS:
        row[column] = json.loads(row[column])
    return row
