"""The results store: typed records in, the same records out; series flushed while a cell
runs; schema versions and the migration of files written by earlier versions."""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from vpnbench.foundation.errors import UserError
from vpnbench.store.database import SCHEMA_VERSION, SeriesWriter, Store
from vpnbench.store.records import Bringup, Cell, Event, HostFacts, Run, SeriesPoint, Trial
from vpnbench.views.export import export_csv, export_json, flatten

DATA = Path(__file__).parent / "data"
# The fields ARCHITECTURE.md promises in every exported cell (contract), plus what schema 1 adds.
EXPORT_FIELDS = {"campaign", "technique", "technique_params", "impairment", "impairment_params", "measurement",
                 "measurement_params", "repetition", "status", "error", "metrics", "hosts", "started_at",
                 "finished_at", "wire_check", "negotiated", "bringup_id"}


def new_cell(key, bringup, status="ok", **extra):
    cell = Cell("r1", "c", key, "baseline", {"kind": "baseline", "backend": "kernel"}, "none", {}, "tcp", "tcp",
                {"kind": "tcp", "duration": 2.0}, 1, "t0", status=status,
                error=None if status == "ok" else "boom", metrics={"throughput_bps": 1e9},
                hosts={"client": {"cpu_pct": 50.0}}, finished_at="t1", bringup_id=bringup.id)
    for name, value in extra.items():
        setattr(cell, name, value)
    return cell


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "r.db")
    store.start_run(Run("r1", "c", {"campaign": {}}, {"kernel": "x"}, "t0"))
    yield store
    store.close()


def bringup(store, **extra):
    record = Bringup("r1", "baseline", "baseline", "kernel", "t0", setup_time_s=0.25,
                     wire_check={"verdict": "cleartext", "detail": "marker seen"}, negotiated={"mtu": 1500}, **extra)
    store.save_bringup(record)
    return record


def test_cells_survive_reopen_and_failed_cells_are_replaced(tmp_path, store):
    up = bringup(store)
    failed = new_cell("a", up, "failed")
    store.save_cell(failed, {"iperf3_client": "raw text"})
    store.add_series(failed.id, [SeriesPoint("cpu_pct", 0.5, 12.5, "client")])
    store.save_cell(new_cell("b", up))
    store.close()

    reopened = Store(tmp_path / "r.db")  # a crash after a commit loses nothing
    assert reopened.latest_run("c") == "r1"
    assert reopened.done_keys("r1") == {"b"}
    assert reopened.raw_outputs(failed.id) == {"iperf3_client": "raw text"}
    assert reopened.series(failed.id) == [SeriesPoint("cpu_pct", 0.5, 12.5, "client")]

    reopened.save_cell(new_cell("a", up))  # resume retries the failed cell, and its old outputs go
    assert reopened.done_keys("r1") == {"a", "b"}
    assert len(reopened.cells("r1")) == 2
    assert reopened.raw_outputs(failed.id) == {} and reopened.series(failed.id) == []
    assert reopened.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert reopened.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    reopened.close()


def test_records_round_trip(store):
    up = bringup(store, facts={"interface_mtu": 1420})
    cell = new_cell("a", up)
    trials = [Trial(1, offered_bps=1e8, duration_s=1.0, sent_packets=100, received_packets=99, loss_ratio=0.01,
                    data={"jitter_ms": 0.1}), Trial(2, offered_bps=2e8)]
    store.save_cell(cell, {}, trials)
    store.add_event(Event("r1", "rekey", "t5", {"sa": "child"}, cell_id=cell.id, t=4.5))
    store.save_host_facts(HostFacts("r1", "client", {"cpu_model": "X", "cpu_crypto_flags": {"aes": True}}))

    assert store.bringups("r1") == [up]
    loaded = store.cells("r1")[0]
    assert loaded == cell and loaded.bringup == up  # every stored field back, bring-up attached
    assert [t.offered_bps for t in store.trials(cell.id)] == [1e8, 2e8]
    assert store.trials(cell.id)[0].data == {"jitter_ms": 0.1} and store.trials(cell.id)[0].cell_id == cell.id
    assert store.events("r1")[0].detail == {"sa": "child"} and store.events("r1", cell.id)[0].t == 4.5
    assert store.host_facts("r1")[0].facts["cpu_crypto_flags"] == {"aes": True}


def test_export_keeps_the_contract_fields_from_the_bringup(tmp_path, store):
    up = bringup(store)
    store.save_cell(new_cell("a", up))
    assert export_json(store, tmp_path / "out.json") == 1
    record = json.loads((tmp_path / "out.json").read_text())[0]
    assert EXPORT_FIELDS <= set(record)
    assert record["metrics"] == {"throughput_bps": 1e9, "setup_time_s": 0.25}  # set-up time from its bring-up
    assert record["wire_check"] == "cleartext" and record["negotiated"] == {"mtu": 1500}
    assert record["bringup_id"] == up.id and record["technique_params"]["backend"] == "kernel"
    assert export_csv(store, tmp_path / "out.csv") == 1
    header = (tmp_path / "out.csv").read_text().splitlines()[0]
    assert "metrics.throughput_bps" in header and "hosts.client.cpu_pct" in header


def test_a_cell_the_run_died_in_exports_as_failed_with_its_series(store):
    up = bringup(store)
    cell = new_cell("a", up, status="running", finished_at=None, metrics={})
    store.start_cell(cell)
    writer = SeriesWriter(store, cell.id, flush_seconds=0)  # flush on every add
    writer.add([SeriesPoint("throughput_bps", t, 1e9) for t in (1.0, 2.0)])
    record = store.cells("r1")[0].export()  # as a kill -9 leaves it
    assert record["status"] == "failed" and "ended while this cell was running" in record["error"]
    assert [p.t for p in store.series(cell.id, "throughput_bps")] == [1.0, 2.0]


def test_series_writer_flushes_by_time_not_only_at_close(store):
    cell = new_cell("a", bringup(store), status="running")
    store.start_cell(cell)
    writer = SeriesWriter(store, cell.id, flush_seconds=3600)
    writer.add([SeriesPoint("cpu_pct", 0.1, 1.0, "client")])
    assert store.series(cell.id) == []  # not due yet
    writer.flush_seconds = 0
    writer.add([SeriesPoint("cpu_pct", 0.2, 2.0, "client")])
    assert [p.value for p in store.series(cell.id)] == [1.0, 2.0]
    writer.close()
    assert writer.written == 2


def test_flatten_nested():
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": None}) == {"a.b": 1, "a.c": "[1, 2]", "d": None}


def test_a_schema_0_file_migrates_in_place(tmp_path):
    """tests/data/results-v0.db was written by vpnbench 0.1 (tests/data/results-v0.toml, 2 techniques,
    a 2-point delay sweep, tcp/udp/ping, 2 repetitions)."""
    db = tmp_path / "old.db"
    shutil.copy(DATA / "results-v0.db", db)
    before = sqlite3.connect(db).execute("SELECT count(*), sum(status = 'ok') FROM cells").fetchone()
    store = Store(db)
    cells = store.cells()
    assert (len(cells), sum(c.ok for c in cells)) == before == (24, 24)
    bringups = store.bringups(cells[0].run_id)
    assert [(b.technique, b.backend) for b in bringups] == [("baseline", "kernel"), ("wireguard", "userspace")]
    wireguard = [c for c in cells if c.technique == "wireguard"]
    assert {c.bringup_id for c in wireguard} == {bringups[1].id} and wireguard[0].wire_check == "encrypted"
    assert "setup_time_s" not in wireguard[0].metrics and wireguard[0].export()["metrics"]["setup_time_s"] > 0
    names = {name for _, name in store.series_names(cells[0].id)}
    assert {"cpu_pct", "mem_used_bytes"} <= names  # the old samples, now series
    tables = {row[0] for row in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "samples" not in tables and {"bringups", "series", "trials", "events", "host_facts"} <= tables
    store.close()
    Store(db).close()  # opening a migrated file again changes nothing


def test_every_foreign_key_has_an_index(store):
    for (table,) in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        indexed = {row[2] for index in store.db.execute(f"PRAGMA index_list({table})").fetchall()
                   for row in store.db.execute(f"PRAGMA index_info({index[1]})").fetchall()
                   if row[0] == 0}  # the first column of each index
        for key in store.db.execute(f"PRAGMA foreign_key_list({table})").fetchall():
            assert key[3] in indexed, f"{table}.{key[3]} has no index"


def test_a_file_from_a_newer_vpnbench_is_one_clear_error(tmp_path):
    db = tmp_path / "new.db"
    Store(db).close()
    with sqlite3.connect(db) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(UserError, match=f"results schema {SCHEMA_VERSION + 1} is newer than this vpnbench reads"):
        Store(db)


def test_a_file_that_is_no_database_is_one_clear_error_and_stays_as_it_was(tmp_path):
    from conftest import run_cli

    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n" * 100)
    result = run_cli("export", str(notes), "--format", "json", "-o", str(tmp_path / "x.json"))
    assert result.returncode == 2
    assert result.stderr.strip() == (f"vpnbench: error: {str(notes)!r}: not usable as an SQLite results file: "
                                     "file is not a database")
    assert notes.read_text() == "not a database\n" * 100
    assert not (tmp_path / "x.json").exists()


def test_an_old_file_reports_and_exports_through_the_cli(tmp_path):
    from conftest import run_cli

    db = tmp_path / "old.db"
    shutil.copy(DATA / "results-v0.db", db)
    assert run_cli("report", str(db), "-o", str(tmp_path / "r.html")).returncode == 0
    assert "24 of 24 cells ok" in (tmp_path / "r.html").read_text()
    for fmt, name in (("json", "x.json"), ("csv", "x.csv"), ("parquet", "x.parquet")):
        result = run_cli("export", str(db), "--format", fmt, "-o", str(tmp_path / name))
        assert result.returncode == 0, result.stderr
    records = json.loads((tmp_path / "x.json").read_text())
    assert len(records) == 24 and all(EXPORT_FIELDS <= set(r) for r in records)
    import pandas as pd

    metrics = pd.read_parquet(tmp_path / "x.parquet")
    assert set(metrics["metric"]) >= {"throughput_bps", "rtt_avg_ms", "client_cpu_pct"}
    assert (tmp_path / "x.series.parquet").exists() and (tmp_path / "x.bringups.parquet").exists()


def test_load_gives_dataframes(tmp_path):
    import vpnbench

    db = tmp_path / "old.db"
    shutil.copy(DATA / "results-v0.db", db)
    results = vpnbench.load(db)
    assert len(results.cells) == 24 and set(results.cells["technique"]) == {"baseline", "wireguard"}
    tcp = results.metrics.query("measurement == 'tcp' and metric == 'throughput_bps'")
    assert len(tcp) == 8 and (tcp["value"] > 0).all()
    assert results.bringups["verdict"].tolist() == ["cleartext", "encrypted"]
    assert {"cpu_pct"} <= set(results.series["name"])
    with pytest.raises(UserError, match="no run 'nope'"):
        vpnbench.load(db, run_id="nope")
