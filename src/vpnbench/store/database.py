"""Results in SQLite (WAL) or PostgreSQL: the records of records.py, one table each, committed
as they happen.

One schema for both engines, defined here once with SQLAlchemy Core (tables from records.py,
plus raw output, series chunks and the `metrics` view); `--db FILE` (or $VPNBENCH_DB, or
--db-file) is an SQLite file, `postgresql://user@host/dbname` a PostgreSQL database (a Unix
socket: `postgresql://user@/dbname?host=/run/postgresql`; where the password comes from and how
it is masked: db_url.py).

A cell is written when it starts (status `running`) and again when it ends; its time series
are flushed while it runs (SeriesWriter, at least every FLUSH_SECONDS), so a crash loses at
most the last few seconds of what was measured. --resume continues the latest run of a
campaign and skips its cells that already succeeded.

The database carries its schema version (SQLite: PRAGMA user_version; PostgreSQL: the table
vpnbench_schema); an older one is migrated in place when opened by a writer (run, worker,
`vpnbench db upgrade`; an SQLite file by anyone), a newer one is refused with one clear line,
before anything is written. A reader of PostgreSQL (read_only) only SELECTs, so a role allowed
nothing more reads it; an older schema is one line naming `vpnbench db upgrade`.
"""

import contextlib
import json
import os
import re
import sqlite3
import threading
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool
from sqlalchemy.schema import CreateIndex, CreateTable

from vpnbench.foundation.errors import SchemaError, UserError
from vpnbench.store.db_url import display_name, is_url, scrub
from vpnbench.store.migrations import MIGRATIONS
from vpnbench.store.records import (
    Bringup,
    Cell,
    Event,
    HostFacts,
    Run,
    SeriesPoint,
    Trial,
    as_row,
    column_type,
    field_names,
    json_fields,
    now_iso,
    stored_fields,
)
from vpnbench.store.series_codec import decode_chunk, encode_chunks

__all__ = ["Store", "SeriesWriter", "now_iso", "SCHEMA_VERSION", "is_url", "missing_file", "display_name"]

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
FOREIGN_KEYS = {"run_id": "runs.run_id", "bringup_id": "bringups.id", "cell_id": "cells.id"}
COLUMN_TYPES = {"INTEGER": sa.Integer, "REAL": sa.Float, "TEXT": sa.Text}


def _record_table(metadata: sa.MetaData, table: str) -> sa.Table:
    record_type, primary = TABLES[table]
    columns, indexes = [], []
    if primary is None:
        # Rows in the order they were written: SQLite's own rowid (this column is its alias in
        # files made since; older files have the implicit one), a serial column on PostgreSQL.
        columns.append(sa.Column("rowid", sa.Integer, primary_key=True, autoincrement=True))
    for field in stored_fields(record_type):
        kind = COLUMN_TYPES[column_type(field, record_type)]
        if field.name == primary:
            columns.append(sa.Column(field.name, kind, primary_key=True, autoincrement=kind is sa.Integer))
        elif field.name in FOREIGN_KEYS:
            columns.append(sa.Column(field.name, kind, sa.ForeignKey(FOREIGN_KEYS[field.name])))
            indexes.append(sa.Index(f"{table}_{field.name}", field.name))
        else:
            columns.append(sa.Column(field.name, kind))
    return sa.Table(table, metadata, *columns, *indexes)


def _metadata() -> sa.MetaData:
    """Every table and index, for SQLite and PostgreSQL alike. Tables that are not one record
    per row: raw tool output, and series stored in chunks (t as float32 offsets from t0, values
    as float32, each deflated: see bench/store.py)."""
    metadata = sa.MetaData()
    for table in TABLES:
        _record_table(metadata, table)
    sa.Table("raw_outputs", metadata,
             sa.Column("cell_id", sa.Integer, sa.ForeignKey("cells.id"), nullable=False),
             sa.Column("name", sa.Text, nullable=False),
             sa.Column("text", sa.Text, nullable=False),
             sa.Index("raw_outputs_cell", "cell_id"))
    sa.Table("series", metadata,
             sa.Column("cell_id", sa.Integer, sa.ForeignKey("cells.id"), nullable=False),
             sa.Column("host", sa.Text, nullable=False),
             sa.Column("name", sa.Text, nullable=False),
             sa.Column("t0", sa.Float, nullable=False),
             sa.Column("n", sa.Integer, nullable=False),
             sa.Column("t", sa.LargeBinary, nullable=False),
             sa.Column("v", sa.LargeBinary, nullable=False),
             sa.Index("series_cell", "cell_id", "name"))
    sa.Index("cells_by_run", metadata.tables["cells"].c.run_id, metadata.tables["cells"].c.cell_key)
    sa.Index("host_facts_key", metadata.tables["host_facts"].c.run_id, metadata.tables["host_facts"].c.host,
             unique=True)
    return metadata


METADATA = _metadata()
T = METADATA.tables
# PostgreSQL's schema version (SQLite keeps it in PRAGMA user_version, as every earlier vpnbench did).
VERSION_TABLE = sa.Table("vpnbench_schema", sa.MetaData(), sa.Column("version", sa.Integer, nullable=False))

# The tidy view of the metrics: one row per cell and numeric metric, with what the cell was and
# where and when it ran, for psql, Grafana or Superset. {j(doc, path)} reads a JSON text field.
METRICS_VIEW = """
SELECT c.id AS cell_id, c.run_id AS run_id, c.campaign AS campaign,
       COALESCE({j_testbed_name}, COALESCE({j_hostname}, '?') || '/' || COALESCE({j_testbed_kind}, 'local')) AS testbed,
       c.technique AS technique, c.impairment AS impairment, c.measurement AS measurement,
       c.measurement_label AS measurement_label, c.repetition AS repetition, c.status AS status,
       c.started_at AS started_at, c.finished_at AS time, m.key AS metric, {value} AS value
FROM cells AS c JOIN runs AS r ON r.run_id = c.run_id{each}
WHERE {numeric}
"""
# Python writes NaN and Infinity into JSON text, which neither engine's JSON functions take: null here.
_JSON = "replace(replace(replace({}, 'NaN', 'null'), '-Infinity', 'null'), 'Infinity', 'null')"


def metrics_view_sql(dialect: str) -> str:
    """The same view in each engine's JSON functions (the one thing SQLAlchemy Core does not abstract)."""
    metrics, env = _JSON.format("c.metrics"), _JSON.format("r.environment")
    if dialect == "sqlite":
        body = METRICS_VIEW.format(
            j_testbed_name=f"json_extract({env}, '$.testbed.name')", j_hostname=f"json_extract({env}, '$.hostname')",
            j_testbed_kind=f"json_extract({env}, '$.testbed.kind')", value="m.value",
            each=f", json_each({metrics}) AS m", numeric="m.type IN ('integer', 'real')")
        return f"CREATE VIEW IF NOT EXISTS metrics AS{body}"
    env = f"({env})::json"
    body = METRICS_VIEW.format(
        j_testbed_name=f"{env} #>> '{{testbed,name}}'", j_hostname=f"{env} #>> '{{hostname}}'",
        j_testbed_kind=f"{env} #>> '{{testbed,kind}}'", value="(m.value #>> '{}')::double precision",
        each=f" CROSS JOIN LATERAL json_each(({metrics})::json) AS m", numeric="json_typeof(m.value) = 'number'")
    return f"CREATE OR REPLACE VIEW metrics AS{body}"


def schema_statements(dialect: sa.engine.Dialect) -> list[str]:
    """CREATE ... IF NOT EXISTS for every table, index and the metrics view, in this dialect."""
    statements = []
    for table in METADATA.sorted_tables:
        statements.append(str(CreateTable(table, if_not_exists=True).compile(dialect=dialect)).strip())
        statements += [str(CreateIndex(index, if_not_exists=True).compile(dialect=dialect)).strip()
                       for index in sorted(table.indexes, key=lambda i: i.name)]
    return [*statements, metrics_view_sql(dialect.name).strip()]


def schema_sql() -> str:
    """The whole schema as one SQLite script (the migrations of old files run it)."""
    return "".join(f"{statement};\n" for statement in schema_statements(sqlite_dialect.dialect()))


def missing_file(target: str | Path) -> bool:
    """An SQLite file that is not there (a server's database is asked when it is opened)."""
    return not is_url(target) and not Path(target).is_file()


def create_private(path: Path) -> None:
    """A new results file is made 0600 before SQLite opens it (it holds host names, the inventory
    and hook paths); SQLite gives its -wal and -shm files the database file's mode. An existing
    file keeps the mode its owner gave it. A symbolic link there (or at its -wal or -shm) is
    refused before anything is written: SQLite follows it, and root would create or write
    whatever it points to."""
    for name in (path, f"{path}-wal", f"{path}-shm"):
        refuse_link(Path(name))
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except FileExistsError:
        refuse_link(Path(path))  # O_EXCL: a link planted since the check is "existing" too
    except OSError:
        pass  # a directory that is not there or not writable: sqlite3 says so in its own words


def refuse_link(name: Path) -> None:
    if name.is_symlink():
        raise UserError(f"{name}: a symbolic link; allowed: a results file that is a regular file or a new name "
                        f"(vpnbench runs as root and would write wherever the link points)")


def _sqlite_engine(path: Path) -> sa.Engine:
    engine = sa.create_engine(sa.URL.create("sqlite", database=str(path)), poolclass=NullPool,
                              connect_args={"timeout": 10, "check_same_thread": False})

    @sa.event.listens_for(engine, "connect")
    def pragmas(raw, _record):
        raw.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL loses nothing when vpnbench crashes or is killed (only a power cut
        # may lose the last commits), and saves an fsync per commit: several per cell.
        raw.execute("PRAGMA synchronous=NORMAL")
        raw.execute("PRAGMA foreign_keys=ON")

    return engine


def _server_engine(target: str) -> sa.Engine:
    url = make_url(target)
    url = url.set(drivername="postgresql+psycopg")
    connect_args = {} if "connect_timeout" in url.query else {"connect_timeout": 10}
    return sa.create_engine(url, poolclass=NullPool, connect_args=connect_args)


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return " ".join(text.splitlines()[0].split()) if text else type(exc).__name__


class Store:
    def __init__(self, target: str | Path, read_only: bool = False):
        """target: an SQLite file's path, or a postgresql:// URL. read_only (report, export, trend,
        status...): a PostgreSQL database's schema is checked, never created or migrated, so a role
        allowed only SELECT reads it; an SQLite file, whose reader is its owner, is migrated as ever."""
        self.target = target if is_url(target) else Path(target)
        self.read_only = read_only
        self.name = display_name(target)
        self.path = None if is_url(target) else self.target  # the SQLite file, when it is one
        self.lock = threading.RLock()  # the monitor's thread flushes series while the runner writes cells
        if self.path is not None:
            create_private(self.path)
            self.engine = _sqlite_engine(self.path)
        else:
            try:
                self.engine = _server_engine(target)
            except (sa.exc.ArgumentError, ValueError) as exc:  # SQLAlchemy's message quotes the whole URL
                raise UserError(f"{self.name}: not a database URL: {scrub(str(exc), target)}") from None
        self.sqlite = self.engine.dialect.name == "sqlite"
        try:
            self.conn = self.engine.connect()
        except sa.exc.DBAPIError as exc:
            self.engine.dispose()
            raise self._unusable(exc) from None
        except ImportError as exc:  # psycopg missing: an install without the PostgreSQL driver
            raise UserError(f"{self.name}: no PostgreSQL driver: {scrub(str(exc), target)}") from None
        try:
            self._open_schema()
        except (sa.exc.DBAPIError, sqlite3.DatabaseError) as exc:
            self.close()
            raise self._unusable(exc) from None
        except SchemaError:
            self.close()
            raise

    def _unusable(self, exc: BaseException) -> UserError:
        if self.path is not None:
            # e.g. not a database, or a 9p/network filesystem without the shared memory WAL needs
            return UserError(f"{self.name!r}: not usable as an SQLite results file: {_first_line(exc)}")
        # psycopg's own prefix ("connection failed: ", "connection is bad: ") says nothing the line does not
        reason = re.sub(r"^connection (failed|is bad): ", "", _first_line(exc))
        return UserError(f"{self.name}: cannot open the results database: {scrub(reason, self.target)}")

    @property
    def db(self) -> sqlite3.Connection:
        """The sqlite3 connection underneath (SQLite only): PRAGMAs of tools and tests."""
        assert self.sqlite, "an SQLite results file only"
        return self.conn.connection.driver_connection

    def _version(self) -> int:
        if self.sqlite:
            return self.db.execute("PRAGMA user_version").fetchone()[0]
        if not sa.inspect(self.conn).has_table(VERSION_TABLE.name):
            return 0
        return self.conn.execute(sa.select(sa.func.max(VERSION_TABLE.c.version))).scalar() or 0

    def _open_schema(self) -> None:
        if self.sqlite:
            self._open_sqlite_schema()
            return
        if self.read_only:
            self._check_readable()
            return
        with self.conn.begin():
            # Workers opening one database at once: one of them creates or migrates it.
            self.conn.execute(sa.text("SELECT pg_advisory_xact_lock(20200001)"))
            version = self._check_version()
            if version < SCHEMA_VERSION and sa.inspect(self.conn).has_table("cells"):
                raise SchemaError(f"{self.name}: results schema {version} predates PostgreSQL support; "
                                  "this database was not written by vpnbench")
            for statement in schema_statements(self.engine.dialect):
                self.conn.exec_driver_sql(statement)
            VERSION_TABLE.create(self.conn, checkfirst=True)
            self.conn.execute(VERSION_TABLE.delete())
            self.conn.execute(VERSION_TABLE.insert().values(version=SCHEMA_VERSION))

    def _check_readable(self) -> None:
        """A reader's check, in SELECTs only: the schema this vpnbench reads, or one line naming
        the command that brings it there."""
        with self.conn.begin():
            version = self._check_version()
        if version < SCHEMA_VERSION:
            found = f"results schema {version}" if version else "no vpnbench results schema"
            raise SchemaError(f"{self.name}: {found} (this vpnbench reads {SCHEMA_VERSION}); run `vpnbench db "
                              "upgrade` with the database owner's credentials, then read it again")

    def _check_version(self) -> int:
        version = self._version()
        if version > SCHEMA_VERSION:
            raise SchemaError(f"{self.name!r}: results schema {version} is newer than this vpnbench reads "
                              f"({SCHEMA_VERSION}); upgrade vpnbench")
        return version

    def _open_sqlite_schema(self) -> None:
        """Files from schema 0 and 1 (SQLite only: PostgreSQL came with schema 2) are migrated in
        place, on the sqlite3 connection, in one transaction with creating what is missing."""
        version = self._check_version()
        db = self.db
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        db.row_factory = sqlite3.Row
        try:
            with db:
                if "cells" in tables:
                    for step in range(version, SCHEMA_VERSION):
                        MIGRATIONS[step](db, schema_sql())
                db.executescript(schema_sql())
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            db.row_factory = None

    def close(self) -> None:
        with self.lock:
            self.conn.close()
            self.engine.dispose()

    def transaction(self):
        """One transaction around several calls (a lab worker's lease check and the cell it guards)."""
        return self._tx()

    @contextlib.contextmanager
    def _tx(self):
        """One transaction (committed at the end, rolled back on an error); nested ones join it."""
        with self.lock:
            if self.conn.in_transaction():
                yield self.conn
            else:
                with self.conn.begin():
                    yield self.conn

    # --- generic record I/O -------------------------------------------------------------

    @staticmethod
    def _encode(record) -> dict:
        """The record's stored fields as column values: dicts and lists as JSON text."""
        encoded = json_fields(type(record))
        return {name: json.dumps(value) if name in encoded else value for name, value in as_row(record).items()}

    def _insert(self, table: str, record) -> int:
        row = self._encode(record)
        if row.get("id", 0) is None:
            del row["id"]  # the database assigns it
        with self._tx() as conn:
            result = conn.execute(T[table].insert().values(**row))
        key = result.inserted_primary_key
        return key[0] if key else None

    def _update(self, table: str, record, key: str = "id") -> None:
        row = self._encode(record)
        with self._tx() as conn:
            conn.execute(T[table].update().where(T[table].c[key] == row[key])
                         .values(**{name: value for name, value in row.items() if name != key}))

    def _select(self, record_type: type, query) -> list:
        encoded = json_fields(record_type)
        names = field_names(record_type)
        with self._tx() as conn:
            rows = conn.execute(query).mappings().all()
        return [record_type(**{name: json.loads(row[name]) if name in encoded else row[name] for name in names})
                for row in rows]

    def _rows(self, query) -> list:
        with self._tx() as conn:
            return conn.execute(query).mappings().all()

    # --- runs -----------------------------------------------------------------------------

    def start_run(self, run: Run) -> None:
        self._insert("runs", run)

    def annotate_run(self, run_id: str, **facts) -> None:
        """Add facts learned while the run sets up (sysctls applied, backends chosen)."""
        with self._tx():
            run = self.run(run_id)
            run.environment = {**run.environment, **facts}
            self._update("runs", run, key="run_id")

    def run(self, run_id: str) -> Run | None:
        found = self._select(Run, T["runs"].select().where(T["runs"].c.run_id == run_id))
        return found[0] if found else None

    def runs(self) -> list[Run]:
        return self._select(Run, T["runs"].select().order_by(T["runs"].c.started_at))

    def finish_run(self, run_id: str, status: str) -> None:
        runs = T["runs"]
        with self._tx() as conn:
            conn.execute(runs.update().where(runs.c.run_id == run_id).values(finished_at=now_iso(), status=status))

    def latest_run(self, campaign: str | None = None) -> str | None:
        """The newest run of campaign (of any campaign when None)."""
        runs = T["runs"]
        query = sa.select(runs.c.run_id).order_by(runs.c.started_at.desc()).limit(1)
        if campaign:
            query = query.where(runs.c.campaign == campaign)
        rows = self._rows(query)
        return rows[0]["run_id"] if rows else None

    def done_keys(self, run_id: str) -> set[str]:
        cells = T["cells"]
        rows = self._rows(sa.select(cells.c.cell_key).where(cells.c.run_id == run_id, cells.c.status == "ok"))
        return {row["cell_key"] for row in rows}

    # --- host facts, bring-ups, events ------------------------------------------------------

    def save_host_facts(self, facts: HostFacts) -> None:
        table = T["host_facts"]
        with self._tx() as conn:
            conn.execute(table.delete().where(table.c.run_id == facts.run_id, table.c.host == facts.host))
            self._insert("host_facts", facts)

    def host_facts(self, run_id: str) -> list[HostFacts]:
        table = T["host_facts"]
        return self._select(HostFacts, table.select().where(table.c.run_id == run_id).order_by(table.c.rowid))

    def campaign_host_facts(self, campaign: str) -> dict[str, list[HostFacts]]:
        """Every run of a campaign's host facts (run id -> as host_facts gives them), in one query."""
        table, runs = T["host_facts"], T["runs"]
        query = (table.select().join(runs, runs.c.run_id == table.c.run_id).where(runs.c.campaign == campaign)
                 .order_by(table.c.rowid))
        found: dict[str, list[HostFacts]] = {}
        for facts in self._select(HostFacts, query):
            found.setdefault(facts.run_id, []).append(facts)
        return found

    def save_bringup(self, bringup: Bringup) -> int:
        """Insert a new bring-up (sets its id) or update an existing one."""
        if bringup.id is None:
            bringup.id = self._insert("bringups", bringup)
        else:
            self._update("bringups", bringup)
        return bringup.id

    def bringups(self, run_id: str) -> list[Bringup]:
        table = T["bringups"]
        return self._select(Bringup, table.select().where(table.c.run_id == run_id).order_by(table.c.id))

    def add_event(self, event: Event) -> int:
        event.id = self._insert("events", event)
        return event.id

    def events(self, run_id: str, cell_id: int | None = None) -> list[Event]:
        table = T["events"]
        query = table.select().where(table.c.run_id == run_id)
        if cell_id is not None:
            query = query.where(table.c.cell_id == cell_id)
        return self._select(Event, query.order_by(table.c.id))

    # --- cells ----------------------------------------------------------------------------

    def start_cell(self, cell: Cell) -> int:
        """Write a cell as it starts (status running), replacing an earlier attempt at its key."""
        cells = T["cells"]
        with self._tx() as conn:
            for old in conn.execute(sa.select(cells.c.id).where(cells.c.run_id == cell.run_id,
                                                                cells.c.cell_key == cell.cell_key)).all():
                self._delete_cell(old.id)
            cell.id = self._insert("cells", cell)
        return cell.id

    def unfinished_cell(self, run_id: str, cell_key: str) -> Cell | None:
        """The attempt at this key that was cut short (status still running: killed or interrupted)."""
        cells = T["cells"]
        found = self._select(Cell, cells.select().where(cells.c.run_id == run_id, cells.c.cell_key == cell_key,
                                                        cells.c.status == "running")
                             .order_by(cells.c.id.desc()).limit(1))
        return found[0] if found else None

    def continue_cell(self, cell: Cell) -> None:
        """Write a cell that continues an unfinished attempt (cell.id set): its series and events stay."""
        self._update("cells", cell)

    def series_end(self, cell_id: int) -> float:
        """The last time the cell's own series (the measurement's, host "") reached, 0 without any."""
        series = T["series"]
        rows = self._rows(sa.select(series.c.host, series.c.name, series.c.t0, series.c.t, series.c.v)
                          .where(series.c.cell_id == cell_id, series.c.host == ""))
        ends = [decode_chunk(r["host"], r["name"], r["t0"], r["t"], r["v"])[-1].t for r in rows]
        return max(ends, default=0.0)

    def _delete_cell(self, cell_id: int) -> None:
        with self._tx() as conn:
            for table in ("raw_outputs", "series", "trials", "events"):
                conn.execute(T[table].delete().where(T[table].c.cell_id == cell_id))
            conn.execute(T["cells"].delete().where(T["cells"].c.id == cell_id))

    def finish_cell(self, cell: Cell, raw: dict[str, str], trials: list[Trial] = ()) -> None:
        """The cell's outcome, its raw tool output and its trials, in one commit."""
        with self._tx() as conn:
            self._update("cells", cell)
            if raw:
                conn.execute(T["raw_outputs"].insert(),
                             [{"cell_id": cell.id, "name": name, "text": text} for name, text in raw.items()])
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
        table = T["cells"]
        query = table.select().order_by(table.c.id)
        if run_id:
            query = query.where(table.c.run_id == run_id)
        bringup_table = T["bringups"]
        with self._tx():
            cells = self._select(Cell, query)
            if run_id:  # the run's own bring-ups, not an archive's every one (30 000 decoded a run's report)
                bringups = {b.id: b for b in self._select(Bringup, bringup_table.select()
                                                          .where(bringup_table.c.run_id == run_id))}
                elsewhere = sorted({c.bringup_id for c in cells if c.bringup_id and c.bringup_id not in bringups})
                if elsewhere:  # a cell whose bring-up another run recorded, if ever: read by id
                    bringups.update((b.id, b) for b in self._select(Bringup, bringup_table.select()
                                                                    .where(bringup_table.c.id.in_(elsewhere))))
            else:
                bringups = {b.id: b for b in self._select(Bringup, bringup_table.select())}
        for cell in cells:
            cell.bringup = bringups.get(cell.bringup_id)
        return cells

    def cell_metrics(self, campaign: str) -> list[tuple[str, str, str, str, str, dict]]:
        """(run_id, technique, impairment, measurement, measurement_label, metrics) of every
        finished cell (status ok) of every run of a campaign, in one query: `cells` per run
        decodes every field of each cell and reads every bring-up, some 30 s over 10 000 runs
        of 60 cells where this takes 2 (bench/trend.py)."""
        cells, runs = T["cells"], T["runs"]
        query = (sa.select(cells.c.run_id, cells.c.technique, cells.c.impairment, cells.c.measurement,
                           cells.c.measurement_label, cells.c.metrics)
                 .join(runs, runs.c.run_id == cells.c.run_id)
                 .where(runs.c.campaign == campaign, cells.c.status == "ok").order_by(cells.c.id))
        rows = self._tuples(query)
        # One JSON array for all: a json.loads per cell spends more in its own call than in the text.
        metrics = json.loads("[" + ",".join(row[5] for row in rows) + "]")
        return [(*row[:5], found) for row, found in zip(rows, metrics)]

    def cell_rows(self) -> list[tuple[int, str, str, str, str, str, int, str, dict]]:
        """(id, run_id, technique, impairment, measurement, measurement_label, repetition, status,
        metrics) of every cell of every run, in the order they ran: what `site` shows of each cell,
        in one query as cell_metrics reads them (`cells` decodes every field: some 30 s over 600 000)."""
        cells = T["cells"]
        rows = self._tuples(sa.select(cells.c.id, cells.c.run_id, cells.c.technique, cells.c.impairment,
                                      cells.c.measurement, cells.c.measurement_label, cells.c.repetition,
                                      cells.c.status, cells.c.metrics).order_by(cells.c.id))
        metrics = json.loads("[" + ",".join(row[8] for row in rows) + "]")
        return [(*row[:8], found) for row, found in zip(rows, metrics)]

    def _tuples(self, query) -> list[tuple]:
        """The query's rows as plain tuples, through the driver's own cursor: SQLAlchemy's Row per
        cell cost 0.7 s of CPU over 600 000 cells (bench/trend.py) for nothing a tuple does not give."""
        with self._tx() as conn:
            compiled = query.compile(dialect=conn.dialect)
            params = compiled.params
            if compiled.positional:  # sqlite's "?" marks take the values in order
                params = tuple(params[name] for name in compiled.positiontup)
            cursor = conn.connection.dbapi_connection.cursor()
            try:
                cursor.execute(str(compiled), params)
                return cursor.fetchall()
            finally:
                cursor.close()

    def versioned_bringups(self, campaign: str | None = None) -> list[tuple[str, str, dict]]:
        """(run_id, technique, negotiated) of every bring-up of a campaign's runs whose negotiated
        record names a version (a built daemon's, daemon_version.py), in the order they were made.
        The text is matched before it is decoded: most bring-ups (the baseline, kernel paths) name
        none, and `trend` reads tens of thousands."""
        bringups, runs = T["bringups"], T["runs"]
        query = (sa.select(bringups.c.run_id, bringups.c.technique, bringups.c.negotiated)
                 .join(runs, runs.c.run_id == bringups.c.run_id)
                 .where(bringups.c.negotiated.like('%"version"%')).order_by(bringups.c.id))
        if campaign is not None:  # None: every campaign's (the site's version pages)
            query = query.where(runs.c.campaign == campaign)
        with self._tx() as conn:
            rows = conn.execute(query).all()
        records = json.loads("[" + ",".join(row[2] for row in rows) + "]")  # one decoding, as cell_metrics
        return [(run_id, technique, record) for (run_id, technique, _), record in zip(rows, records)]

    def raw_outputs(self, cell_id: int) -> dict[str, str]:
        table = T["raw_outputs"]
        rows = self._rows(sa.select(table.c.name, table.c.text).where(table.c.cell_id == cell_id))
        return {row["name"]: row["text"] for row in rows}

    def trials(self, cell_id: int) -> list[Trial]:
        table = T["trials"]
        return self._select(Trial, table.select().where(table.c.cell_id == cell_id)
                            .order_by(table.c.number, table.c.id))

    # --- series ---------------------------------------------------------------------------

    def add_series(self, cell_id: int, points: list[SeriesPoint]) -> None:
        """One chunk row per (host, name) of points, in one commit."""
        columns = [column.name for column in T["series"].columns]
        rows = [dict(zip(columns, row)) for row in encode_chunks(cell_id, points)]
        if rows:
            with self._tx() as conn:
                conn.execute(T["series"].insert(), rows)

    def series(self, cell_id: int, name: str | None = None) -> list[SeriesPoint]:
        """The cell's series points (of one name, or all), in time order per series."""
        table = T["series"]
        query = sa.select(table.c.host, table.c.name, table.c.t0, table.c.t, table.c.v).where(table.c.cell_id == cell_id)
        if name:
            query = query.where(table.c.name == name)
        rows = self._rows(query.order_by(table.c.host, table.c.name, table.c.t0))
        return [point for row in rows for point in decode_chunk(row["host"], row["name"], row["t0"], row["t"], row["v"])]

    def series_names(self, cell_id: int) -> list[tuple[str, str]]:
        table = T["series"]
        rows = self._rows(sa.select(table.c.host, table.c.name).distinct().where(table.c.cell_id == cell_id))
        return [(row["host"], row["name"]) for row in rows]


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
