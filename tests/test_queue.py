"""The lab's queue with real parts (issue 20 item 2): `vpnbench run --queue` into a real
PostgreSQL, two `vpnbench worker` processes on two local namespace testbeds, one killed with
SIGKILL in the middle of a block. The other finishes the job: every queued cell stored ok
exactly once, each worker's run with its own baseline, `status` showing the job finished, and
`vpnbench cleanup` removing what the killed worker left. The URL reaches the workers in
--db-file and $VPNBENCH_DB: no argv of theirs or of what they start holds the password. The logic, without root:
test_queue_logic.py; one vs two workers' wall time: bench/workers.py."""

import collections
import os
import signal
import subprocess
import time

import pytest

import pg
from conftest import VPNBENCH, leftovers, run_cli
from test_db_access import argv_of_every_process

pytestmark = pytest.mark.netns

CAMPAIGN = """
[campaign]
name = "lab"
repetitions = 3
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[technique]]
kind = "openvpn"
[[measurement]]
kind = "tcp"
duration = "1s"
"""


def ok_cells(postgres, database: str) -> list[tuple[str, str]]:
    return postgres.query(database, "SELECT w.testbed, c.cell_key FROM cells c JOIN queue_workers w "
                                    "ON w.run_id = c.run_id WHERE c.status = 'ok' ORDER BY c.id")


def test_two_workers_one_killed_mid_block_the_other_finishes_nothing_lost_nothing_doubled(postgres, tmp_path,
                                                                                           clean_machine):
    url = postgres.create_database("lab")
    (tmp_path / "lab.toml").write_text(CAMPAIGN)
    keygen = run_cli("keygen", "-o", str(tmp_path / "enqueuer"))
    assert keygen.returncode == 0, keygen.stderr
    env = {**os.environ, "VPNBENCH_DB": url}
    queued = run_cli("run", str(tmp_path / "lab.toml"), "--queue", "--signing-key", str(tmp_path / "enqueuer"),
                     env=env)
    assert queued.returncode == 0, queued.stderr
    [(lab,)] = postgres.query("lab", "SELECT name FROM queue_lab")
    trust = (f"[worker]\ntrusted_keys = [\"{(tmp_path / 'enqueuer.pub').read_text().strip()}\"]\nlab = \"{lab}\"\n"
             f"jobs_file = \"{tmp_path / 'worker-jobs'}\"\n")  # both workers on this machine: one record
    (tmp_path / "tb1.toml").write_text("[testbed]\nkind = \"local\"\n" + trust)
    (tmp_path / "tb2.toml").write_text("[testbed]\nkind = \"local\"\nrouter = false\n" + trust)
    assert "2 blocks, 6 cells" in queued.stdout
    (tmp_path / "db.url").write_text(url)
    (tmp_path / "db.url").chmod(0o600)
    given = {"tb1": (["--db-file", str(tmp_path / "db.url")], os.environ), "tb2": ([], env)}
    workers = {name: subprocess.Popen([*VPNBENCH, "worker", *flags, "--testbed", str(tmp_path / f"{name}.toml"),
                                       "--lease", "3"], env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
               for name, (flags, environ) in given.items()}
    try:
        deadline = time.monotonic() + 120
        seen = 0
        while not any(tb == "tb1" and not key.startswith("baseline") for tb, key in ok_cells(postgres, "lab")):
            assert time.monotonic() < deadline and workers["tb1"].poll() is None, "tb1 stored no queued cell"
            argv = argv_of_every_process({proc.pid for proc in workers.values()})
            assert [line for line in argv if pg.PASSWORD in line] == []
            seen = max(seen, len(argv))
            time.sleep(0.2)
        assert seen > 2  # the workers and what they started (ip, wg, iperf3, ...)
        workers["tb1"].send_signal(signal.SIGKILL)  # mid-block: its first queued cell stored, the next measuring
        survivor = workers["tb2"].communicate(timeout=240)[0]
        assert workers["tb2"].returncode == 0, survivor
    finally:
        for proc in workers.values():
            proc.kill()
            proc.wait()
    assert "stopped renewing its lease" in survivor

    cells = ok_cells(postgres, "lab")
    queued_keys = collections.Counter(key for _, key in cells if not key.startswith("baseline"))
    assert sorted(queued_keys) == [f"{t}|none|tcp|{r}" for t in ("openvpn", "wireguard") for r in (1, 2, 3)]
    assert set(queued_keys.values()) == {1}  # nothing lost, nothing doubled
    baselines = collections.Counter(tb for tb, key in cells if key.startswith("baseline"))
    assert baselines["tb2"] == 3  # the survivor's costs are against its own testbed's baseline

    status = run_cli("status", "--all", env=env)
    assert status.returncode == 0, status.stderr
    assert "2 of 2 blocks done" in status.stdout and "finished" in status.stdout
    assert "lost" in status.stdout  # the killed worker, as the survivor found it

    job = queued.stdout.split()[2].rstrip(":")
    report = run_cli("report", "--queue", job, "-o", str(tmp_path / "job.html"), env=env)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "job.html").read_text()
    assert "<td>tb1</td>" in page and "<td>tb2</td>" in page  # the testbeds side by side

    assert leftovers()  # the killed worker's namespaces and daemons ...
    removed = run_cli("cleanup")
    assert removed.returncode == 0, removed.stderr
    assert leftovers() == []  # ... gone after cleanup


def test_the_queue_refuses_an_sqlite_file_and_a_worker_needs_a_database(tmp_path):
    (tmp_path / "lab.toml").write_text(CAMPAIGN)
    result = run_cli("run", str(tmp_path / "lab.toml"), "--db", str(tmp_path / "r.db"), "--queue")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "the queue needs a PostgreSQL database" in result.stderr and not (tmp_path / "r.db").exists()
    result = run_cli("worker", "--testbed", str(tmp_path / "lab.toml"), env={**os.environ, "VPNBENCH_DB": ""})
    assert result.returncode == 2 and "give the database with --db" in result.stderr, result.stderr
