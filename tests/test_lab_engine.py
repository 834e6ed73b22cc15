"""The lab on procrastinate (issue 43 item 3), with real parts: a real PostgreSQL, real
`vpnbench` processes, namespace testbeds. A campaign on a schedule of every 2 s is queued twice
by `vpnbench scheduler` on its own, and each occurrence runs (one a database writer added at
a time the cron does not name is refused); a cancelled job stops between cells
and leaves nothing behind (clean_machine). The kill -9 of one of two workers: test_queue.py."""

import os
import signal
import subprocess
import time

import pytest

from conftest import VPNBENCH, run_cli

pytestmark = pytest.mark.netns

CAMPAIGN = """
[campaign]
name = "{name}"
repetitions = {repetitions}
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[measurement]]
kind = "ping"
count = 3
interval = "0.2s"
"""


def setup_lab(postgres, tmp_path, database: str, name: str, repetitions: int) -> dict:
    url = postgres.create_database(database)
    (tmp_path / "lab.toml").write_text(CAMPAIGN.format(name=name, repetitions=repetitions))
    (tmp_path / "tb.toml").write_text(f"[testbed]\nkind = \"local\"\n[worker]\naccept_unsigned = true\n"
                                      f"jobs_file = \"{tmp_path / 'worker-jobs'}\"\n")
    return {**os.environ, "VPNBENCH_DB": url}


def test_a_campaign_on_a_schedule_is_queued_twice_on_its_own_and_each_occurrence_runs(postgres, tmp_path,
                                                                                    clean_machine):
    env = setup_lab(postgres, tmp_path, "scheduled", "nightly", 1)
    scheduled = run_cli("run", str(tmp_path / "lab.toml"), "--queue", "--every", "* * * * * */2", env=env)
    assert scheduled.returncode == 0, scheduled.stderr
    scheduler = subprocess.Popen([*VPNBENCH, "scheduler"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 20  # two occurrences 2 s apart, the first within 2 s of the start
        while len(postgres.query("scheduled", "SELECT id FROM queue_jobs WHERE schedule IS NOT NULL")) < 2:
            if time.monotonic() > deadline or scheduler.poll() is not None:
                scheduler.kill()
                pytest.fail(f"the schedule was not queued twice: {scheduler.communicate()[0]}")
            time.sleep(0.2)
    finally:
        scheduler.send_signal(signal.SIGTERM)
        said = scheduler.communicate(timeout=30)[0]
    assert said.count("queued job ") >= 2, said
    jobs = [job for (job,) in postgres.query("scheduled", "SELECT id FROM queue_jobs ORDER BY id")][:2]
    # a database writer's extra occurrence, at an odd second the cron (every even one) never names: refused
    forged = f"{jobs[0].rsplit('-', 1)[0]}-{int(jobs[0].rsplit('-', 1)[1]) + 1}"
    postgres.query("scheduled", f"INSERT INTO queue_jobs (id, campaign, source, schedule, cron) SELECT '{forged}', "
                                f"campaign, source, schedule, cron FROM queue_jobs WHERE id = '{jobs[0]}'")
    refused = run_cli("worker", "--testbed", str(tmp_path / "tb.toml"), "--queue", forged, env=env)
    assert refused.returncode == 2 and "names no such time: not queued by the scheduler" in refused.stderr, \
        refused.stdout + refused.stderr
    for job in jobs:  # each occurrence is a job of its own: its own worker run, its own cells
        worked = run_cli("worker", "--testbed", str(tmp_path / "tb.toml"), "--queue", job, "--lease", "3", env=env)
        assert worked.returncode == 0, worked.stdout + worked.stderr
    rows = postgres.query("scheduled", "SELECT w.job_id, c.cell_key FROM cells c JOIN queue_workers w "
                                       "ON w.run_id = c.run_id WHERE c.status = 'ok' AND c.technique = 'wireguard'")
    assert sorted(rows) == sorted((job, "wireguard|none|ping|1") for job in jobs)  # ran twice, once each


def test_a_cancelled_job_stops_between_cells_and_leaves_nothing_behind(postgres, tmp_path, clean_machine):
    env = setup_lab(postgres, tmp_path, "cancelled", "long", 30)
    queued = run_cli("run", str(tmp_path / "lab.toml"), "--queue", env=env)
    assert queued.returncode == 0, queued.stderr
    job = queued.stdout.split()[2].rstrip(":")
    worker = subprocess.Popen([*VPNBENCH, "worker", "--testbed", str(tmp_path / "tb.toml"), "--lease", "3"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not postgres.query("cancelled", "SELECT 1 FROM cells WHERE technique = 'wireguard' AND status = 'ok'"):
            assert time.monotonic() < deadline and worker.poll() is None, "no wireguard cell measured"
            time.sleep(0.2)
        cancelled = run_cli("cancel", "--queue", job, env=env)
        assert cancelled.returncode == 0, cancelled.stderr
        assert "1 running ones stop before their next cell" in cancelled.stdout
        said = worker.communicate(timeout=60)[0]
    finally:
        worker.kill()
        worker.wait()
    assert "stopped wireguard" in said and "cancelled" in said, said
    measured = postgres.query("cancelled", "SELECT status FROM cells WHERE technique = 'wireguard'")
    # 0.6 s a cell of 3 pings 0.2 s apart against 30 cells: stopped well before the block's end, and
    # every cell it began was finished (stopped between cells, none cut short)
    assert 1 <= len(measured) < 30 and {status for (status,) in measured} == {"ok"}, measured
    [(state,)] = postgres.query("cancelled", "SELECT j.status FROM procrastinate_jobs j JOIN lab_blocks b "
                                             "ON b.id = j.id")
    assert state == "aborted"
    status = run_cli("status", "--all", env=env)
    assert status.returncode == 0 and "1 cancelled" in status.stdout and "its job was cancelled" in status.stdout, \
        status.stdout


def test_a_following_worker_runs_two_jobs_queued_one_after_the_other_then_stops_on_sigterm(postgres, tmp_path,
                                                                                         clean_machine):
    """Issue 43: `worker --follow` is a lab's service: it takes the second job, queued only after
    the first finished, with nobody starting it, shows in `status` idle between them, leaves
    `cleanup` nothing of its own while it lives, and ends 0 on SIGTERM with nothing left behind."""
    env = setup_lab(postgres, tmp_path, "follow", "followed", 1)

    def wireguard_ok() -> list[str]:
        return [job for (job,) in postgres.query("follow", "SELECT w.job_id FROM cells c JOIN queue_workers w ON "
                                                           "w.run_id = c.run_id WHERE c.status = 'ok' AND "
                                                           "c.technique = 'wireguard' ORDER BY c.id")]

    def until(done, what: str) -> None:
        deadline = time.monotonic() + 120
        while not done():
            if time.monotonic() > deadline or worker.poll() is not None:
                worker.kill()
                pytest.fail(f"{what}: {worker.communicate()[0]}")
            time.sleep(0.2)

    worker = subprocess.Popen([*VPNBENCH, "worker", "--testbed", str(tmp_path / "tb.toml"), "--lease", "3",
                               "--follow"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = run_cli("run", str(tmp_path / "lab.toml"), "--queue", env=env)
        assert first.returncode == 0, first.stderr
        until(lambda: postgres.query("follow", "SELECT 1 FROM queue_jobs WHERE finished_at IS NOT NULL")
              and postgres.query("follow", "SELECT 1 FROM lab_followers WHERE state = 'idle'"), "first job not run")
        status = run_cli("status", "--all", env=env)
        assert status.returncode == 0 and "following worker" in status.stdout and "idle" in status.stdout, \
            status.stdout
        swept = run_cli("cleanup")  # the live worker's nothing is stale: cleanup leaves it be
        assert swept.returncode == 0 and "nothing left behind" in swept.stdout, swept.stdout + swept.stderr
        second = run_cli("run", str(tmp_path / "lab.toml"), "--queue", env=env)
        assert second.returncode == 0, second.stderr
        until(lambda: len(postgres.query("follow", "SELECT 1 FROM queue_jobs WHERE finished_at IS NOT NULL")) == 2,
              "second job not run")
        worker.send_signal(signal.SIGTERM)
        said = worker.communicate(timeout=60)[0]
    finally:
        worker.kill()
        worker.wait()
    assert worker.returncode == 0, said
    jobs = [job for (job,) in postgres.query("follow", "SELECT id FROM queue_jobs ORDER BY created_at")]
    assert wireguard_ok() == jobs  # each job's one wireguard cell, once, by the one worker
    assert said.count("follows the queue") == 1 and "stopped" in said, said
    assert postgres.query("follow", "SELECT state FROM lab_followers") == [("stopped",)]
