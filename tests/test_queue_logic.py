"""The lab's queue and workers (issue 20 item 2) without root: workers on the runner's testbed
doubles, the queue in a real PostgreSQL (tests/pg.py). A worker measures its own baseline,
claims and finishes the shared blocks; a worker that stops renewing its lease mid-block (as
after kill -9) loses the block to another, which continues where it stopped: nothing lost,
nothing doubled. Bad input is one line and writes nothing. The same with real processes and
namespace testbeds: test_queue.py."""

import ast
import datetime
import inspect
import itertools
import threading
import time

import pytest
import sqlalchemy as sa
from rich.console import Console

from runner_doubles import FakeVpn
from test_runner import VPN, campaign, lab  # noqa: F401 - lab is a fixture
from vpnbench.campaign import campaign_from_dict
from vpnbench.commands import lab as commands
from vpnbench.foundation.errors import UserError
from vpnbench.lab import worker as worker_module
from vpnbench.lab.engine import MAX_ATTEMPTS, block_queue
from vpnbench.lab.queue import WORKERS, WorkerRow, WorkQueue
from vpnbench.lab.trust import read_worker_file
from vpnbench.lab.worker import Heartbeat, Worker
from vpnbench.run.lifecycle import Interrupted
from vpnbench.run.runner import Runner
from vpnbench.store.database import Store

QUIET = Console(file=open("/dev/null", "w"))
names = itertools.count()


@pytest.fixture
def queue(postgres):
    store = Store(postgres.create_database(f"queue{next(names)}"))
    yield WorkQueue(store)
    store.close()


def worker(queue, lab, job, name, lease=60.0, cls=Worker):  # noqa: F811
    return cls(queue, job, campaign_from_dict(job.source), name, lease=lease, console=QUIET, make=lab.make,
               clock=lab.clock)


def ok_keys(store: Store, run_ids) -> list[str]:
    return sorted(c.cell_key for run_id in run_ids for c in store.cells(run_id) if c.ok)


def test_a_worker_measures_its_baseline_then_every_queued_block(queue, lab):  # noqa: F811
    lab.network.rtt[VPN] = lambda: 0.5
    job, cells = queue.enqueue(campaign(techniques=("baseline", "fakevpn"), repetitions=2))
    assert cells == 2  # the baseline is not queued: each worker measures it on its own testbed
    outcome = worker(queue, lab, job, "tb1").run()
    assert (outcome.ok, outcome.failed) == (4, 0)
    stored = queue.store.cells(outcome.run_id)
    assert [c.technique for c in stored] == ["baseline", "baseline", "fakevpn", "fakevpn"]
    assert queue.store.run(outcome.run_id).environment["testbed"]["name"] == "tb1"
    assert [b.state for b in queue.blocks(job)] == ["done"]
    [row] = queue.workers(job)
    assert (row.state, row.testbed, row.run_id, row.cells_ok) == ("finished", "tb1", outcome.run_id, 4)
    assert queue.jobs() == []  # finished


def test_the_worker_composes_the_runs_stages_and_overrides_nothing_of_the_runner():
    """Issue 30 item 4: one plan of a run. The worker strings the run's stages (vpnbench.run)
    together as the runner does; it is no Runner, imports no runner, and defines or calls none of
    the runner's private methods (once it overrode the runner's _run and called _open, _run_block)."""
    assert not issubclass(Worker, Runner)
    tree = ast.parse(inspect.getsource(worker_module))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "vpnbench.run.runner" not in imported
    assert {"vpnbench.run.blocks", "vpnbench.run.lifecycle", "vpnbench.run.setup"} <= imported
    runners_own = {name for name in vars(Runner) if name.startswith("_") and not name.startswith("__")}
    named = ({node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
             | {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)})
    assert named & runners_own == set()


class Killed(BaseException):
    """The worker stops dead: no cleanup of its queue state (as after kill -9)."""


class DiesAfterOneQueuedCell(Worker):
    def before_cell(self):
        super().before_cell()
        if any(c.technique == "fakevpn" and c.ok for c in self.store.cells()):
            self.queue.set_state = lambda *args: None  # a killed process tells the queue nothing
            raise Killed


def test_a_block_whose_worker_died_is_continued_by_another_after_its_lease(queue, lab):  # noqa: F811
    lab.network.rtt[VPN] = lambda: 0.5
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn"), repetitions=3))
    with pytest.raises(Killed):
        worker(queue, lab, job, "tb1", lease=3.0, cls=DiesAfterOneQueuedCell).run()
    del queue.set_state  # the dead worker's muzzle off the queue the next worker shares
    [block] = queue.blocks(job)
    assert (block.state, block.claims) == ("running", 1)  # held by the dead worker until its lease runs out
    survivor = worker(queue, lab, job, "tb2", lease=3.0).run()
    runs = [w.run_id for w in queue.workers(job)]
    queued = [k for k in ok_keys(queue.store, runs) if k.startswith("fakevpn")]
    assert queued == ["fakevpn|none|ping|1", "fakevpn|none|ping|2", "fakevpn|none|ping|3"]  # none lost, none doubled
    assert [c.repetition for c in queue.store.cells(survivor.run_id) if c.technique == "fakevpn"] == [2, 3]
    assert [c.technique for c in queue.store.cells(survivor.run_id)].count("baseline") == 3  # its own reference
    assert {w.testbed: w.state for w in queue.workers(job)} == {"tb1": "lost", "tb2": "finished"}
    assert [(b.state, b.claims) for b in queue.blocks(job)] == [("done", 2)]


def test_an_interrupted_worker_gives_its_block_back_at_once(queue, lab):  # noqa: F811
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn")))

    class Interruptible(Worker):
        def before_cell(self):
            if self.heartbeat.block_id is not None:
                raise Interrupted("SIGINT")

    outcome = worker(queue, lab, job, "tb1", cls=Interruptible).run()
    assert outcome.interrupted and outcome.ok == 1  # its baseline
    [(state, reason)] = [(b.state, b.reason) for b in queue.blocks(job)]
    assert state == "queued" and reason.endswith(" interrupted"), reason
    assert [w.state for w in queue.workers(job)] == ["interrupted"]


def test_a_workers_heartbeat_has_stopped_before_it_tells_the_queue_how_it_ended(queue, lab):  # noqa: F811
    """A beat locks procrastinate's worker row, then ours; the end (set_state) takes ours, then
    procrastinate's: a beat during the end deadlocked them (a worker exited 1 in test_lab_engine,
    the machine tests two at a time). The last beat is over before the end starts."""
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn")))
    ending = worker(queue, lab, job, "tb1", lease=3.0)
    beating_at_the_end = []
    tell = queue.set_state
    queue.set_state = lambda *args, **kwargs: (beating_at_the_end.append(ending.heartbeat._thread.is_alive()),
                                               tell(*args, **kwargs))
    try:
        ending.run()
    finally:
        del queue.set_state
    assert beating_at_the_end == [False]
    assert [w.state for w in queue.workers(job)] == ["finished"]


def steal(queue) -> None:
    """Another worker fetched the block (procrastinate's job row now its engine worker's), and
    its heartbeat has since stopped: the block is to be put back for whoever looks next."""
    with queue.engine.begin() as conn:
        other = conn.scalar(sa.text("INSERT INTO procrastinate_workers (last_heartbeat) "
                                    "VALUES (now() - interval '1 hour') RETURNING id"))
        conn.execute(sa.text("UPDATE procrastinate_jobs SET worker_id = :w WHERE status = 'doing'"), {"w": other})


def test_a_lost_lease_stops_the_block_before_its_next_cell(queue, lab):  # noqa: F811
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn"), repetitions=2))

    class LosesItsLeaseOnce(Worker):
        stolen = False

        def before_cell(self):
            if self.heartbeat.block_id is not None and not self.stolen:  # taken over (its lease then runs out)
                self.stolen = True
                steal(queue)
                self.heartbeat.lost = not queue.renew(self.heartbeat.worker_id, self.heartbeat.block_id, 60)
            super().before_cell()

    outcome = worker(queue, lab, job, "tb1", cls=LosesItsLeaseOnce).run()
    # The lost block measured nothing; claimed back once the other's lease ran out, it ran whole.
    assert [(c.technique, c.repetition) for c in queue.store.cells(outcome.run_id)] == [
        ("baseline", 1), ("baseline", 2), ("fakevpn", 1), ("fakevpn", 2)]
    assert [(b.state, b.claims) for b in queue.blocks(job)] == [("done", 2)]


def test_a_testbed_that_can_run_no_queued_block_is_one_line_and_writes_nothing(queue, lab):  # noqa: F811
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn")))
    FakeVpn.unavailable = "no fakevpn module in this kernel"
    with pytest.raises(UserError) as refused:
        worker(queue, lab, job, "tb1").run()
    assert str(refused.value) == (f"--testbed: no block of job {job.id} (doubles) can run on testbed 'tb1': "
                                  "technique[2].backend: no backend available "
                                  "(userspace: no fakevpn module in this kernel)")
    assert queue.store.runs() == []
    with queue.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(WORKERS)) == 0


def test_bad_queue_input_is_one_line(queue, tmp_path):
    with pytest.raises(UserError, match=r"^--queue: repetitions = \"auto\""):
        queue.enqueue(campaign(techniques=("baseline",), repetitions="auto"))
    with pytest.raises(UserError, match=r"^--db: the queue needs a PostgreSQL database"):
        commands.open_queue(str(tmp_path / "r.db"))
    assert not (tmp_path / "r.db").exists()
    job, _ = queue.enqueue(campaign_from_dict({
        "campaign": {"name": "axes"}, "testbed": {"mtu": [1400, 1500]},
        "technique": [{"kind": "baseline"}], "measurement": [{"kind": "ping", "count": 2}]}))
    (tmp_path / "tb.toml").write_text("[testbed]\nmtu = [1400]\n[worker]\naccept_unsigned = true\n")
    with pytest.raises(UserError, match=r"^--testbed: mtu is an axis of the queued campaign's plan \(\[1400, 1500\]\)"):
        commands.worker_campaign(job, str(tmp_path / "tb.toml"))
    (tmp_path / "tb.toml").write_text("[testbed]\nrouter = false\n[worker]\naccept_unsigned = true\n")
    mine = commands.worker_campaign(job, str(tmp_path / "tb.toml"))
    assert (mine.testbed.router, mine.testbed.mtu) == (False, [1400, 1500])


def test_testbeds_whose_host_facts_differ_are_named_in_a_warning(queue):
    from vpnbench.store.records import HostFacts, Run, now_iso

    workers = []
    for name, cpu in (("tb1", "Cortex-A72"), ("tb2", "Cortex-A72"), ("tb3", "EPYC 7443")):
        queue.store.start_run(Run(f"run{name}", "c", {}, {}, now_iso()))
        queue.store.save_host_facts(HostFacts(f"run{name}", "client", {"cpu_model": cpu, "cpu_count": 4}))
        workers.append(WorkerRow(f"w{name}", "h", 1, name, f"run{name}", "finished", 0.0, 60.0, None, 1))
    assert commands.facts_differ(queue.store, workers[:2]) == []
    [warning] = commands.facts_differ(queue.store, workers)
    assert warning.startswith("the testbeds' client hosts differ: tb1: Cortex-A72; 4 CPUs")
    assert "tb3: EPYC 7443; 4 CPUs" in warning


def test_the_eta_is_the_mean_cell_time_times_cells_left_over_live_workers():
    assert commands.eta(10.0, 12, 2) == "ETA 1 min 0 s at 2 workers"
    assert commands.eta(None, 12, 1) == "ETA after the first cell"
    assert commands.eta(10.0, 12, 0).startswith("ETA unknown")
    assert commands.eta(10.0, 0, 0) == "finished"


def test_a_cell_measured_while_its_block_was_taken_over_is_not_stored_ok(queue, lab, monkeypatch):  # noqa: F811
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn"), repetitions=2))
    stolen = []

    def steal_once() -> float:  # mid-cell: the block's lease ran out and another worker took it
        if not stolen:
            stolen.append(True)
            steal(queue)
        return 0.5

    lab.network.rtt[VPN] = steal_once
    stored = []
    finish_cell = queue.store.finish_cell
    monkeypatch.setattr(queue.store, "finish_cell", lambda cell, *args: (
        stored.append((cell.technique, cell.repetition, cell.status, cell.error)), finish_cell(cell, *args)))
    outcome = worker(queue, lab, job, "tb1").run()
    assert stored[2:] == [("fakevpn", 1, "failed", "lease lost: another worker took this block over and measures "
                                                   "this cell"),
                          ("fakevpn", 1, "ok", None), ("fakevpn", 2, "ok", None)]  # claimed back once free
    assert [(c.repetition, c.status) for c in queue.store.cells(outcome.run_id) if c.technique == "fakevpn"] == [
        (1, "ok"), (2, "ok")]  # the failed attempt replaced, as a resumed run's is
    assert [(b.state, b.claims) for b in queue.blocks(job)] == [("done", 2)]


def test_a_worker_stalled_between_its_lease_check_and_the_cell_write_keeps_its_block(queue, lab, monkeypatch):  # noqa: F811
    """Issue 28 item 10b: the fence's renewal and the ok cell are one transaction. A worker that
    stalls right after its lease check (SIGSTOP, a paused VM: its heartbeat stalls too) for longer
    than its lease holds the block's row locked meanwhile, so no other worker claims the block and
    measures again the cell it is about to store ok."""
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn"), repetitions=2))
    monkeypatch.setattr(Heartbeat, "_beat", lambda self: None)
    lease = 1.0
    others: list = []

    class Stalls(Worker):
        def _fence(self, worker_id):
            lost = super()._fence(worker_id)
            if self.heartbeat.block_id is not None and not others:
                time.sleep(1.5 * lease)  # the lease runs out on the database's clock meanwhile
                others.append(queue.claim(job, "another-worker", queue.positions(job), lease))
            return lost

    outcome = worker(queue, lab, job, "tb1", lease=lease, cls=Stalls).run()
    assert others == [None]  # on separate transactions the other worker took the block here
    assert [(c.technique, c.repetition, c.status) for c in queue.store.cells(outcome.run_id)] == [
        ("baseline", 1, "ok"), ("baseline", 2, "ok"), ("fakevpn", 1, "ok"), ("fakevpn", 2, "ok")]
    assert [(b.state, b.worker_id is not None, b.claims) for b in queue.blocks(job)] == [("done", True, 1)]


def test_a_stalled_or_stopped_attempt_does_not_count_toward_the_retry_limit(queue, lab):  # noqa: F811
    """Issue 43: a killed worker's block is put back (a stall), and so is a stopped one's
    (SIGTERM: set_state interrupted); neither is the block's failure. Twice put back, then one
    failed attempt: the block is still retried (3 failed attempts are its limit, not 3 claims)."""
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn")))
    queues = {block_queue(job.id, 1)}
    killed = queue.register(job, "tb1", None, 60.0)
    assert queue.claim(job, killed, queues, 60.0) is not None
    with queue.engine.begin() as conn:  # its heartbeat stopped an hour ago (kill -9)
        conn.execute(sa.text("UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 hour'"))
    stopped = queue.register(job, "tb2", None, 60.0)
    assert queue.claim(job, stopped, queues, 60.0).took_over_from == killed
    queue.set_state(stopped, "interrupted")  # SIGTERM: its block given back at once
    failing = queue.register(job, "tb3", None, 60.0)
    claim = queue.claim(job, failing, queues, 60.0)
    queue.end(job, failing, claim.block_id, "failed", "the testbed's link went away")
    [block] = queue.blocks(job)
    assert (block.state, block.claims) == ("queued", 3), block  # procrastinate's 3 attempts, 1 of them failed
    assert block.reason.startswith(f"attempt 1 of {MAX_ATTEMPTS} failed, retried"), block.reason
    for attempt in (2, 3):  # the limit still holds for failures
        claim = queue.claim(job, failing, queues, 60.0)
        queue.end(job, failing, claim.block_id, "failed", "again")
    assert [b.state for b in queue.blocks(job)] == ["failed"]


def test_the_scheduler_queues_the_latest_occurrence_never_a_backlog_nor_one_before_the_schedule(queue, lab):  # noqa: F811
    """Issue 43: a scheduler down for a day catches up with one run, not one per missed hour, and a
    new schedule does not run at once for a time before it existed."""
    schedule = queue.schedule(campaign(techniques=("baseline", "fakevpn")), "0 * * * *")  # hourly
    now = time.time() + 2 * 86400  # two days after the schedule was made
    latest = int(now // 3600 * 3600)
    for hours_ago in (24, 2, 1):  # the backlog of a scheduler down for a day
        assert queue.occur(schedule.id, latest - 3600 * hours_ago, now=now) is None
    assert queue.occur(schedule.id, latest, now=now).id == f"{schedule.id}-{latest}"
    assert queue.occur(schedule.id, latest, now=now) is None  # once
    made = int(time.time() // 3600 * 3600)  # the hour the schedule was made in, before it existed
    assert queue.occur(schedule.id, made, now=made + 60) is None
    assert [job.id for job in queue.jobs()] == [f"{schedule.id}-{latest}"]


def test_a_cancelled_schedule_queues_nothing_more_and_its_waiting_occurrence_does_not_run(queue, lab, tmp_path):  # noqa: F811
    schedule = queue.schedule(campaign(techniques=("baseline", "fakevpn"), testbed={}), "* * * * * */2")
    at = (int(time.time()) // 2 + 1) * 2  # the next even second: none before the schedule was made
    queued = queue.occur(schedule.id, at, now=at)
    (tmp_path / "tb.toml").write_text("[testbed]\nkind = \"local\"\n[worker]\naccept_unsigned = true\n")
    own = read_worker_file(str(tmp_path / "tb.toml"))
    commands.campaign_for(queue, queued, own, datetime.datetime.fromtimestamp(at, datetime.UTC))
    with queue.engine.begin() as conn:  # cleared by hand: the waiting occurrence must not run once more
        conn.execute(sa.text("DELETE FROM lab_schedules"))
    with pytest.raises(UserError, match=rf"^queue_jobs.schedule: job {queued.id} is an occurrence of schedule "):
        commands.campaign_for(queue, queued, own, datetime.datetime.fromtimestamp(at, datetime.UTC))
    assert queue.occur(schedule.id, at + 2, now=at + 2) is None

    again = queue.schedule(campaign(techniques=("baseline", "fakevpn"), testbed={}), "* * * * * */2")
    waiting = queue.occur(again.id, at + 2, now=at + 2)
    [(job, cancelled, stopping)] = queue.cancel_schedule(again.id)  # `vpnbench cancel --queue sXXXXXXXX`
    assert (job.id, cancelled, stopping) == (waiting.id, 1, 0)
    assert queue.occur(again.id, at + 4, now=at + 4) is None
    assert queue.cancel_schedule(again.id) is None
    assert [j.id for j in queue.jobs()] == [queued.id]  # the hand-cleared one's occurrence left, refused


def test_the_heartbeat_and_the_end_of_a_block_take_their_locks_in_one_order(queue, lab):  # noqa: F811
    """The worker's heartbeat thread renews while its main thread ends the block, each on its own
    connection. end() locks the block's job row, then the worker's row; renew() locked the worker's
    row, then the job row: interleaved, PostgreSQL found a deadlock and the survivor of
    test_queue's two workers exited 1 (halved CPU, 29 Nov). Here the interleaving is forced: end()'s
    first lock is held while renew() runs, then end()'s second is taken; it must not deadlock."""
    job, _ = queue.enqueue(campaign(techniques=("baseline", "fakevpn")))
    worker_id = queue.register(job, "tb1", None, 60.0)
    claim = queue.claim(job, worker_id, {block_queue(job.id, 1)}, 60.0)
    renewed: list = []
    with queue.engine.begin() as ending:  # end()'s order: the job row first ...
        ending.execute(sa.text("SET LOCAL deadlock_timeout = '100ms'"))
        ending.execute(sa.text("SELECT 1 FROM procrastinate_jobs WHERE id = :b FOR UPDATE"), {"b": claim.block_id})
        beat = threading.Thread(target=lambda: renewed.append(queue.renew(worker_id, claim.block_id, 60.0)))
        beat.start()
        beat.join(1.0)  # renew() now waits for the job row (and, before the fix, held the worker's row)
        # ... then the worker's row: blocks forever on a renew() that holds it, until the deadlock detector
        ending.execute(WORKERS.update().where(WORKERS.c.id == worker_id).values(block_id=None))
    beat.join(10.0)
    assert renewed == [True]
