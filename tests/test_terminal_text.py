"""Stored strings on a terminal (issue 28 item 9): a worker's host name, a testbed's or a
technique's label holding an escape sequence and rich markup prints as it is, through the CLI's
status (a real PostgreSQL), trend and compare, and the run's summary tables: the markup shown
literally, the control characters as \\xNN, no ESC byte in the output."""

import io
import sqlite3

from rich.console import Console

import test_runner
from conftest import run_cli
from test_runner import campaign, lab  # noqa: F401 - lab is a fixture
from vpnbench.foundation.terminal_text import plain
from vpnbench.lab.queue import JOBS, WORKERS, WorkQueue
from vpnbench.store.database import Store
from vpnbench.views.tables import summary_tables

EVIL = "\x1b[2J[blink red]evil[/]\x9b\u202e"
SHOWN = "\\x1b[2J[blink red]evil[/]\\x9b\\u202e"  # what the terminal must show instead


def shown_literally(output: str, times: int = 1) -> None:
    assert "\x1b" not in output and "\x9b" not in output and "\u202e" not in output
    assert output.count(SHOWN) >= times, output


def test_plain_escapes_markup_and_shows_control_characters():
    out = io.StringIO()
    backslashed = plain("a path ending in a backslash\\")
    Console(file=out, width=200).print(f"[bold]{plain(EVIL)}[/] and [italic]{backslashed}[/]")
    assert out.getvalue() == f"{SHOWN} and a path ending in a backslash\\\n"
    assert plain("tab\tand\nnewline") == "tab\tand\nnewline"


def test_status_prints_a_stored_worker_row_as_it_is(postgres):
    url = postgres.create_database("injection")
    store = Store(url)
    queue = WorkQueue(store)
    job, _ = queue.enqueue(campaign(techniques=("baseline",)))
    with store.engine.begin() as conn:
        conn.execute(JOBS.update().values(campaign=EVIL))
        conn.execute(WORKERS.insert().values(id="w1", job_id=job.id, hostname=EVIL, pid=1, testbed="tb",
                                             lease_seconds=60.0, state="working"))
        conn.execute(WORKERS.insert().values(id="w2", job_id=job.id, hostname="h", pid=2, testbed=EVIL,
                                             lease_seconds=60.0, state="working"))
    store.close()
    result = run_cli("status", "--db", url)
    assert result.returncode == 0, result.stderr
    shown_literally(result.stdout, times=3)  # the job line, a host, a testbed


def test_trend_compare_and_the_run_summary_print_stored_labels_as_they_are(lab, tmp_path):  # noqa: F811
    lab.network.rtt[test_runner.VPN] = lambda: 0.5
    for _ in range(2):
        _, store = test_runner.run(lab, tmp_path, campaign(repetitions=2))
        store.close()
    db = sqlite3.connect(tmp_path / "r.db")
    with db:
        db.execute("UPDATE cells SET technique = ? WHERE technique = 'fakevpn'", (EVIL,))
        db.execute("UPDATE runs SET environment = json_set(environment, '$.testbed.name', ?)", (EVIL,))
    db.close()

    trend = run_cli("trend", "--db", str(tmp_path / "r.db"), "--campaign", "doubles")
    assert trend.returncode == 0, trend.stderr
    shown_literally(trend.stdout, times=2)  # testbed and technique
    runs = [run.run_id for run in Store(tmp_path / "r.db", read_only=True).runs()]
    compare = run_cli("compare", *(f"{tmp_path / 'r.db'}:{run_id}" for run_id in runs))
    assert compare.returncode == 0, compare.stderr
    shown_literally(compare.stdout, times=3)  # two titles (testbed), the technique's row

    store = Store(tmp_path / "r.db")
    out = io.StringIO()
    for table in summary_tables(store.cells(runs[0])):
        Console(file=out, width=300).print(table)
    store.close()
    shown_literally(out.getvalue(), times=2)  # the techniques table and the measurement's
