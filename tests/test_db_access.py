"""Who may open the results database, and what of its URL is shown (issue 28 items 2 and 7),
against a real PostgreSQL (tests/pg.py) through the CLI as a user runs it.

Readers (status, report, trend, export, the metrics view) work with a role allowed only CONNECT,
USAGE and SELECT; an old or empty schema is one line naming `vpnbench db upgrade`, which the
owner runs. The URL's password is never in a process's argv (--db-file, $VPNBENCH_DB, libpq's
$PGPASSWORD and passfile), nor in any line or page, in every form libpq takes it."""

import json
import os
import socket
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

import pg
import test_runner
from conftest import VPNBENCH, run_cli
from test_runner import campaign, lab  # noqa: F401 - lab is a fixture
from vpnbench.lab.queue import WorkQueue
from vpnbench.store.database import SCHEMA_VERSION, Store
from vpnbench.store.records import Run

READER, READER_PASSWORD = "analyst", "analyst-pw-7f3a"
# Every character a URL gives a meaning to, and libpq's passfile its own (':' and '\').
ODD, ODD_PASSWORD = "odd", "p/ss?w#rd@h:st%41 &x=\\y"


def grant_read_only(postgres, database: str, role: str = READER, password: str = READER_PASSWORD) -> str:
    """A role allowed to connect, see the schema and SELECT, and nothing more; its URL (no password)."""
    create_role(postgres, role, password)
    postgres.query(database, f'REVOKE ALL ON DATABASE "{database}" FROM PUBLIC; '
                             f'GRANT CONNECT ON DATABASE "{database}" TO {role}; '
                             "REVOKE CREATE ON SCHEMA public FROM PUBLIC; "
                             f"GRANT USAGE ON SCHEMA public TO {role}; "
                             f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    return f"postgresql://{role}@/{database}?host={postgres.socket_dir}"


def create_role(postgres, role: str, password: str) -> None:
    """The role, made once a session (a role that holds grants in a database cannot be dropped)."""
    if not postgres.query("postgres", f"SELECT 1 FROM pg_roles WHERE rolname = '{role}'"):
        quoted = password.replace("'", "''")
        postgres.query("postgres", f"CREATE ROLE {role} LOGIN PASSWORD '{quoted}'")


def as_reader(url: str, password: str = READER_PASSWORD) -> dict:
    """The environment a reader runs vpnbench in: the URL and libpq's password, none in argv."""
    return {**os.environ, "VPNBENCH_DB": url, "PGPASSWORD": password}


def psql(url: str, sql: str, password: str = READER_PASSWORD) -> subprocess.CompletedProcess:
    return subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", url, "-c", sql], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PGPASSWORD": password})


@pytest.fixture
def results(postgres, lab, tmp_path, monkeypatch):  # noqa: F811
    """A database holding two runs of a campaign and a queued job, written by its owner; its name."""
    database = f"ro{os.getpid()}"
    url = postgres.create_database(database)
    monkeypatch.setattr(test_runner, "Store", lambda _path: Store(url))
    for _ in range(2):
        _, store = test_runner.run(lab, tmp_path, campaign(repetitions=2))
        store.close()
    store = Store(url)
    WorkQueue(store).enqueue(campaign(repetitions=1))
    store.close()
    return database


def test_a_read_only_role_reads_status_report_trend_export_and_the_metrics_view(postgres, results, tmp_path):
    url = grant_read_only(postgres, results)
    # The role is what it claims: it may not create (what every command did on open before).
    refused = psql(url, "CREATE TABLE probe (x int)")
    assert refused.returncode != 0 and "permission denied for schema public" in refused.stderr
    env = as_reader(url)

    status = run_cli("status", env=env)
    assert status.returncode == 0, status.stderr
    assert "job " in status.stdout and "0 of 1 blocks done" in status.stdout
    report = run_cli("report", "-o", str(tmp_path / "r.html"), env=env)
    assert report.returncode == 0, report.stderr
    assert "4 of 4 cells ok" in (tmp_path / "r.html").read_text()
    trend = run_cli("trend", "--campaign", "doubles", env=env)
    assert trend.returncode == 0, trend.stderr
    assert "doubles: 2 runs" in trend.stdout
    export = run_cli("export", "--format", "json", "-o", str(tmp_path / "r.json"), env=env)
    assert export.returncode == 0, export.stderr
    assert len(json.loads((tmp_path / "r.json").read_text())) == 8
    metrics = psql(url, "SELECT count(*) FROM metrics WHERE metric = 'rtt_avg_ms'")
    assert metrics.returncode == 0 and int(metrics.stdout) == 8, metrics.stderr
    # Reading changed nothing the owner made.
    assert postgres.query(results, "SELECT version FROM vpnbench_schema") == [(SCHEMA_VERSION,)]


def test_a_reader_of_an_old_or_empty_schema_is_told_to_run_db_upgrade(postgres, tmp_path):
    database = f"old{os.getpid()}"
    owner = postgres.create_database(database)
    url = grant_read_only(postgres, database)
    upgrade = "run `vpnbench db upgrade` with the database owner's credentials, then read it again"
    for command in (["export", "--format", "json", "-o", str(tmp_path / "x.json")], ["status"],
                    ["report", "-o", str(tmp_path / "x.html")], ["trend", "--campaign", "c"]):
        result = run_cli(*command, env=as_reader(url))
        assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stderr == (f"vpnbench: error: postgresql://{READER}@/{database}?host={postgres.socket_dir}: "
                                 f"no vpnbench results schema (this vpnbench reads {SCHEMA_VERSION}); {upgrade}\n")
    assert postgres.query(database, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == [(0,)]

    done = run_cli("db", "upgrade", env={**os.environ, "VPNBENCH_DB": owner})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"postgresql://{pg.USER}:***@/{database}?host={postgres.socket_dir}: "
                                   f"results schema {SCHEMA_VERSION}, queue tables ready")
    url = grant_read_only(postgres, database)  # SELECT on the tables made now
    status = run_cli("status", env=as_reader(url))
    assert status.returncode == 0 and "no unfinished job" in status.stdout, status.stderr

    postgres.query(database, f"UPDATE vpnbench_schema SET version = {SCHEMA_VERSION - 1}")
    result = run_cli("export", "--format", "json", "-o", str(tmp_path / "x.json"), env=as_reader(url))
    assert result.returncode == 2 and result.stderr.endswith(
        f"results schema {SCHEMA_VERSION - 1} (this vpnbench reads {SCHEMA_VERSION}); {upgrade}\n"), result.stderr


def odd_role(postgres, database: str) -> None:
    """A role whose password holds / ? # @ : % & = \\ and a space, owning database."""
    create_role(postgres, ODD, ODD_PASSWORD)
    postgres.query("postgres", f'ALTER DATABASE "{database}" OWNER TO {ODD}')
    postgres.query(database, f"GRANT ALL ON SCHEMA public TO {ODD}")


def leaked(text: str) -> list[str]:
    """The password's forms found in text: as it is, percent-encoded, its parts around the '@'."""
    forms = {ODD_PASSWORD, quote(ODD_PASSWORD, safe=""), quote(ODD_PASSWORD), "p/ss?w#rd", "st%41 &x"}
    return [form for form in forms if form in text]


def test_no_password_in_any_line_or_page_whatever_form_the_url_gives_it_in(postgres, tmp_path):
    database = f"odd{os.getpid()}"
    postgres.create_database(database)
    odd_role(postgres, database)
    where = f"/{database}?host={postgres.socket_dir}"
    encoded = quote(ODD_PASSWORD, safe="")
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"*:*:*:{ODD}:{ODD_PASSWORD.replace(chr(92), chr(92) * 2).replace(':', chr(92) + ':')}\n")
    passfile.chmod(0o600)
    url_file = tmp_path / "db.url"
    url_file.write_text(f"postgresql://{ODD}:{encoded}@{where}\n")
    url_file.chmod(0o600)
    no_password = f"postgresql://{ODD}@{where}"
    ways = {  # how the password reaches libpq: (arguments, environment)
        "userinfo": ([], {"VPNBENCH_DB": f"postgresql://{ODD}:{encoded}@{where}"}),
        "password=": ([], {"VPNBENCH_DB": f"{no_password}&password={encoded}"}),
        "PGPASSWORD": ([], {"VPNBENCH_DB": no_password, "PGPASSWORD": ODD_PASSWORD}),
        "PGPASSFILE": ([], {"VPNBENCH_DB": no_password, "PGPASSFILE": str(passfile)}),
        "passfile=": ([], {"VPNBENCH_DB": f"{no_password}&passfile={passfile}"}),
        "--db-file": (["--db-file", str(url_file)], {}),
    }
    first = True
    for way, (flags, env) in ways.items():
        if first:  # the owner creates the schema, the password in the environment only
            done = run_cli("db", "upgrade", *flags, env={**os.environ, **env})
            assert done.returncode == 0 and not leaked(done.stdout + done.stderr), (way, done.stdout, done.stderr)
            first = False
        out = tmp_path / f"{way}.json"
        result = run_cli("export", *flags, "--format", "json", "-o", str(out), env={**os.environ, **env})
        assert result.returncode == 0, (way, result.stderr)
        assert "wrote 0 cells" in result.stdout and not leaked(result.stdout + result.stderr + out.read_text()), way

    # A URL given whole is shown masked in the compare page and its terminal lines (the page held a
    # ?password= twice), and in error lines: a wrong password, an unreachable server, a URL SQLAlchemy
    # cannot parse.
    store = Store(f"postgresql://{ODD}:{encoded}@{where}")
    store.start_run(Run("r1", "c", {}, {}, "2026-01-01T00:00:00"))
    store.close()
    page = tmp_path / "compare.html"
    shown = run_cli("compare", f"{no_password}&password={encoded}#r1", f"postgresql://{ODD}:{encoded}@{where}#r1",
                    "-o", str(page))
    assert shown.returncode == 0, shown.stderr
    assert f"A: postgresql://{ODD}@/{database}?host={postgres.socket_dir}&password=***#r1" in shown.stdout
    assert not leaked(shown.stdout + shown.stderr + page.read_text())
    wrong = quote("wr/ng?p#ss@x", safe="")
    for url in (f"postgresql://{ODD}:{wrong}@{where}", f"{no_password}&password={wrong}",
                f"postgresql://{ODD}:{encoded}@/{database}?host={tmp_path}",
                f"postgresql://{ODD}:{ODD_PASSWORD}@{where}"):  # not encoded: SQLAlchemy cuts it at the '@'
        result = run_cli("export", "--format", "json", "-o", str(tmp_path / "x.json"),
                         env={**os.environ, "VPNBENCH_DB": url})
        assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
        assert not leaked(result.stderr) and "wr/ng" not in result.stderr and wrong not in result.stderr, result.stderr


def test_a_url_file_others_can_read_is_refused(postgres, tmp_path):
    url_file = tmp_path / "db.url"
    url_file.write_text(postgres.url("postgres") + "\n")
    url_file.chmod(0o640)
    result = run_cli("status", "--db-file", str(url_file))
    assert result.returncode == 2 and result.stderr == (
        f"vpnbench: error: --db-file: {str(url_file)!r} is readable by others (mode 0640); allowed: 0600 or "
        f"stricter (chmod 600 {url_file})\n")
    result = run_cli("status", "--db-file", str(url_file), "--db", "x.db")
    assert result.returncode == 2 and "give the database once" in result.stderr


class SilentServer:
    """A Unix socket where PostgreSQL's would be that accepts and never answers: a vpnbench
    connecting to it stays alive, its argv readable, until the test ends it."""

    def __init__(self, directory: Path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.bind(str(directory / ".s.PGSQL.5432"))
        self.socket.listen(8)
        self.socket.settimeout(60)

    def wait_for_client(self) -> socket.socket:
        return self.socket.accept()[0]


def argv_of_every_process(tree: set[int] | None = None) -> list[str]:
    """Every process's command line; of these processes and their descendants when tree is given."""
    if tree is not None:
        parents = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue  # ended meanwhile
        while grown := {pid for pid, parent in parents.items() if parent in tree} - tree:
            tree = tree | grown
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        if tree is not None and int(cmdline.parent.name) not in tree:
            continue
        try:
            found.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue  # ended meanwhile
    return found


@pytest.mark.parametrize("way", ["VPNBENCH_DB", "--db-file"])
def test_a_running_vpnbench_holds_no_password_in_its_argv(tmp_path, way):
    server = SilentServer(tmp_path)
    url = f"postgresql://{ODD}:{quote(ODD_PASSWORD, safe='')}@/results?host={tmp_path}&connect_timeout=60"
    url_file = tmp_path / "db.url"
    url_file.write_text(url)
    url_file.chmod(0o600)
    flags, env = (["--db-file", str(url_file)], os.environ) if way == "--db-file" else \
        ([], {**os.environ, "VPNBENCH_DB": url})
    process = subprocess.Popen([*VPNBENCH, "status", *flags], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        client = server.wait_for_client()  # it has read its arguments and is connecting
        argv = argv_of_every_process()
        assert any("vpnbench status" in line for line in argv)
        assert [line for line in argv if leaked(line)] == []
        client.close()
    finally:
        process.kill()
        process.wait(timeout=30)
