"""PostgreSQL as the results store (issue 20 item 1), against a real server (tests/pg.py):
the same campaign into SQLite and into PostgreSQL exports the same fields and values and
reports from both; resume, compare and the metrics view on both; series streamed; and the
bad input (no server, a wrong password, a newer schema) as one line, exit 2, nothing written."""

import json
import os

import pytest

import pg
import test_runner
from conftest import run_cli
from test_runner import VPN, campaign, export_fields, lab  # noqa: F401 - lab is a fixture
from vpnbench.store.database import SCHEMA_VERSION, SeriesWriter, Store
from vpnbench.store.records import Cell, Run, SeriesPoint
from vpnbench.views.export import records as export_records

# What differs between two runs of the same campaign whatever the store: ids, clocks, the run's id,
# and what the monitor saw of this machine's own load (and the warnings and costs drawn from it).
VOLATILE = {"run_id", "cell_id", "bringup_id", "started_at", "finished_at", "hosts", "relative", "warnings"}


def comparable(record: dict) -> dict:
    return {key: value for key, value in record.items() if key not in VOLATILE}


def test_the_same_campaign_into_sqlite_and_postgresql_exports_and_reports_the_same(postgres, lab, tmp_path,  # noqa: F811
                                                                                   monkeypatch):
    url = postgres.create_database("same")
    lab.network.rtt[VPN] = lambda: 0.5
    spec = campaign(repetitions=2)
    outcomes, exports = {}, {}
    for name in ("sqlite", "postgresql"):  # test_runner.run's store: tmp_path/r.db, then the server
        if name == "postgresql":
            monkeypatch.setattr(test_runner, "Store", lambda _path: Store(url))
        outcome, store = test_runner.run(lab, tmp_path, spec)
        outcomes[name] = outcome.run_id
        exports[name] = export_records(store)
        store.close()
    assert export_fields(exports["sqlite"]) == export_fields(exports["postgresql"])
    assert [comparable(r) for r in exports["sqlite"]] == [comparable(r) for r in exports["postgresql"]]
    assert len(exports["postgresql"]) == 4

    db = str(tmp_path / "r.db")
    for target, out in ((db, "s.html"), (url, "p.html")):
        result = run_cli("report", "--db", target, "-o", str(tmp_path / out))
        assert result.returncode == 0, result.stderr
        assert "4 of 4 cells ok" in (tmp_path / out).read_text()
    assert pg.PASSWORD not in (tmp_path / "p.html").read_text()

    result = run_cli("export", "--format", "json", "-o", str(tmp_path / "p.json"), env={**os.environ, "VPNBENCH_DB": url})
    assert result.returncode == 0, result.stderr
    assert [comparable(r) for r in json.loads((tmp_path / "p.json").read_text())] == \
           [comparable(r) for r in json.loads(json.dumps(exports["sqlite"]))]

    result = run_cli("compare", db, f"{url}#{outcomes['postgresql']}")
    assert result.returncode == 0, result.stderr
    assert "B: postgresql://vpnbench:***@/same" in result.stdout and pg.PASSWORD not in result.stdout

    # The tidy view reads the same from psql as from sqlite3.
    query = "SELECT technique, measurement, repetition, metric, value FROM metrics ORDER BY cell_id, metric"
    store = Store(db)
    from_sqlite = [tuple(row) for row in store.db.execute(query).fetchall()]
    store.close()
    from_postgres = postgres.query("same", query)
    assert from_sqlite == from_postgres and ("fakevpn", "ping", 2, "rtt_avg_ms", 0.5) in from_postgres
    testbeds = postgres.query("same", "SELECT DISTINCT testbed, time IS NOT NULL FROM metrics")
    assert len(testbeds) == 1 and testbeds[0][0].endswith("/ssh") and testbeds[0][1]


def test_resume_continues_a_run_in_postgresql(postgres, lab, tmp_path, monkeypatch):  # noqa: F811
    """test_runner's resume test as it is, its store in PostgreSQL."""
    url = postgres.create_database("resume")
    monkeypatch.setattr(test_runner, "Store", lambda _path: Store(url))
    test_runner.test_resume_after_an_interrupt_runs_only_the_cells_not_done(lab, tmp_path)


def test_series_are_in_the_database_while_the_cell_runs(postgres):
    url = postgres.create_database("series")
    store = Store(url)
    store.start_run(Run("r1", "c", {}, {}, "t0"))
    cell = Cell("r1", "c", "k", "baseline", {}, "none", {}, "tcp", "tcp", {}, 1, "t0")
    store.start_cell(cell)
    writer = SeriesWriter(store, cell.id, flush_seconds=0.0)
    writer.add([SeriesPoint("throughput_bps", 0.5, 1e9), SeriesPoint("cpu_pct", 0.5, 12.5, "client")])
    # Another connection (a crash now would keep them) sees both points, the writer still open.
    assert postgres.query("series", "SELECT sum(n) FROM series") == [(2,)]
    assert store.series(cell.id, "throughput_bps") == [SeriesPoint("throughput_bps", 0.5, 1e9)]
    assert store.series_end(cell.id) == 0.5
    store.close()


def bad_input_lines(postgres, url: str, tmp_path) -> list[tuple[int, str]]:
    """Each command that takes the results, given url: (exit code, stderr); nothing may be written."""
    outcomes = [run_cli("export", "--db", url, "--format", "json", "-o", str(tmp_path / "x.json")),
                run_cli("report", url, "-o", str(tmp_path / "x.html"))]
    if os.geteuid() == 0:  # run checks for root before it opens the store
        outcomes.append(run_cli("run", "--technique", "baseline", "--measure", "ping", "--db", url))
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "x.html").exists()
    return [(result.returncode, result.stderr) for result in outcomes]


def test_no_server_is_one_clear_line(postgres, tmp_path):
    url = f"postgresql://{pg.USER}:{pg.PASSWORD}@/postgres?host={tmp_path}"
    for code, stderr in bad_input_lines(postgres, url, tmp_path):
        assert code == 2 and len(stderr.splitlines()) == 1, stderr
        assert stderr.startswith(f"vpnbench: error: postgresql://{pg.USER}:***@/postgres?host={tmp_path}: "
                                 "cannot open the results database: connection to server on socket ")
        assert stderr.strip().endswith("failed: No such file or directory") and pg.PASSWORD not in stderr


def test_a_wrong_password_is_one_clear_line(postgres, tmp_path):
    url = postgres.url("postgres", password="wrong")
    for code, stderr in bad_input_lines(postgres, url, tmp_path):
        assert code == 2 and len(stderr.splitlines()) == 1, stderr
        assert stderr.strip().endswith(f'password authentication failed for user "{pg.USER}"'), stderr
        assert "wrong" not in stderr
    assert postgres.query("postgres", "SELECT count(*) FROM pg_tables WHERE tablename = 'cells'") == [(0,)]


def test_a_database_with_a_newer_schema_is_one_clear_line_and_stays_as_it_was(postgres, tmp_path):
    url = postgres.create_database("newer")
    Store(url).close()
    postgres.query("newer", f"UPDATE vpnbench_schema SET version = {SCHEMA_VERSION + 1}")
    tables = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
    before = postgres.query("newer", tables)
    for code, stderr in bad_input_lines(postgres, url, tmp_path):
        assert code == 2 and len(stderr.splitlines()) == 1, stderr
        assert stderr.strip().endswith(f"results schema {SCHEMA_VERSION + 1} is newer than this vpnbench reads "
                                       f"({SCHEMA_VERSION}); upgrade vpnbench"), stderr
    assert postgres.query("newer", tables) == before
    assert postgres.query("newer", "SELECT version FROM vpnbench_schema") == [(SCHEMA_VERSION + 1,)]
    assert postgres.query("newer", "SELECT count(*) FROM runs") == [(0,)]


@pytest.mark.netns
def test_a_real_campaign_into_postgresql_and_sqlite(postgres, tmp_path, clean_machine):
    """The same campaign run for real through the CLI into each store: the same export fields,
    and the report renders from both."""
    url = postgres.create_database("real")
    (tmp_path / "both.toml").write_text('[campaign]\nname = "both"\n[[technique]]\nkind = "baseline"\n'
                                        '[[technique]]\nkind = "wireguard"\n'
                                        '[[measurement]]\nkind = "ping"\ncount = 10\ninterval = "0.05s"\n')
    exported = {}
    for name, db in (("sqlite", str(tmp_path / "r.db")), ("postgresql", url)):
        result = run_cli("run", str(tmp_path / "both.toml"), "--db", db, "--report", str(tmp_path / f"{name}.html"))
        assert result.returncode == 0, result.stdout + result.stderr
        assert pg.PASSWORD not in result.stdout + result.stderr
        assert "2 of 2 cells ok" in (tmp_path / f"{name}.html").read_text()
        result = run_cli("export", db, "--format", "json", "-o", str(tmp_path / f"{name}.json"))
        assert result.returncode == 0, result.stderr
        exported[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert export_fields(exported["sqlite"]) == export_fields(exported["postgresql"])
    assert [(r["technique"], r["status"]) for r in exported["postgresql"]] == [("baseline", "ok"), ("wireguard", "ok")]
    rows = postgres.query("real", "SELECT technique, count(*) FROM metrics WHERE metric = 'rtt_avg_ms' GROUP BY 1 ORDER BY 1")
    assert rows == [("baseline", 1), ("wireguard", 1)]
