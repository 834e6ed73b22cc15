import json

from vpnbench.export import export_csv, export_json, flatten
from vpnbench.store import Store


def record(key, status, **extra):
    base = {"run_id": "r1", "campaign": "c", "cell_key": key, "technique": "baseline",
            "technique_params": {"kind": "baseline", "backend": "kernel"}, "impairment": "none",
            "impairment_params": {}, "measurement": "tcp", "measurement_label": "tcp",
            "measurement_params": {"kind": "tcp", "duration": 2.0}, "repetition": 1, "status": status,
            "error": None if status == "ok" else "boom", "metrics": {"throughput_bps": 1e9},
            "hosts": {"client": {"cpu_pct": 50.0}}, "wire_check": "cleartext", "negotiated": {},
            "started_at": "t0", "finished_at": "t1"}
    base.update(extra)
    return base


def test_cells_survive_reopen_and_failed_cells_are_replaced(tmp_path):
    db = tmp_path / "r.db"
    store = Store(db)
    store.start_run("r1", "c", {"campaign": {}}, {"kernel": "x"})
    store.save_cell(record("a", "failed"), {"iperf3_client": "raw text"}, [{"t": 0.5}])
    store.save_cell(record("b", "ok"), {}, [])
    store.close()

    store = Store(db)  # a crash after a commit loses nothing
    assert store.latest_run("c") == "r1"
    assert store.done_keys("r1") == {"b"}
    failed = store.cells("r1")[0]
    assert store.raw_outputs(failed["id"]) == {"iperf3_client": "raw text"}
    assert store.samples(failed["id"]) == [{"t": 0.5}]

    store.save_cell(record("a", "ok"), {}, [])  # resume retries the failed cell
    assert store.done_keys("r1") == {"a", "b"}
    assert len(store.cells("r1")) == 2
    assert store.raw_outputs(failed["id"]) == {}
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_export_json_and_csv(tmp_path):
    store = Store(tmp_path / "r.db")
    store.start_run("r1", "c", {}, {})
    store.save_cell(record("a", "ok"), {}, [])
    assert export_json(store, tmp_path / "out.json") == 1
    data = json.loads((tmp_path / "out.json").read_text())
    assert data[0]["technique_params"]["backend"] == "kernel"
    assert data[0]["metrics"]["throughput_bps"] == 1e9
    assert export_csv(store, tmp_path / "out.csv") == 1
    header = (tmp_path / "out.csv").read_text().splitlines()[0]
    assert "metrics.throughput_bps" in header and "hosts.client.cpu_pct" in header


def test_flatten_nested():
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": None}) == {"a.b": 1, "a.c": "[1, 2]", "d": None}


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
