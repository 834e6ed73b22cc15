"""`vpnbench worker --db URL --testbed TESTBED.toml`: one testbed working a queued job.

A worker is a run strung from the run's stages (vpnbench.run), as the runner is, whose blocks
come from the queue instead of the plan's rounds: its testbed up once, the reference measured on
it, then block after block claimed, run and marked done, until no block it can run is left. Its
cells go into a run of its own, named after its testbed, so each testbed's costs are against its
own baseline.

Its blocks are procrastinate jobs (lab/engine.py): it fetches them only from the queues of the
techniques its testbed can run. A heartbeat thread beats procrastinate's worker heartbeat; a
worker whose heartbeat stopped for a lease (kill -9) has its block put back by the next worker
that looks (procrastinate's stalled jobs, retried). Should a block be lost anyway (the database
unreachable for a whole lease), it stops before its next cell, so a cell is never measured twice.
A block whose job was cancelled (procrastinate's abort request) stops there too; a block that
failed is tried again while procrastinate's retry strategy allows."""

import threading
import time

import sqlalchemy as sa
from rich.console import Console
from rich.markup import escape

from vpnbench.campaign import Campaign, TechniqueBlock, expand
from vpnbench.foundation.errors import UserError, VpnbenchError
from vpnbench.hosts.resources import RunResources
from vpnbench.lab.engine import block_queue
from vpnbench.lab.queue import Claim, Job, WorkQueue
from vpnbench.run.blocks import BlockStage, open_run
from vpnbench.run.context import Clock, RunOutcome
from vpnbench.run.display import Display
from vpnbench.run.lifecycle import in_process, underway
from vpnbench.run.setup import Prepared, TestbedMaker, Unavailable, environment, prepare
from vpnbench.store.db_url import scrub
from vpnbench.testbeds.make import make_testbed


class LeaseLost(VpnbenchError):
    """Another worker holds this block now."""


class Cancelled(VpnbenchError):
    """The operator cancelled the block's job (vpnbench cancel): it stops between cells."""


class Heartbeat:
    """Renews the worker's lease every third of it, in a thread beside the measurements."""

    def __init__(self, queue: WorkQueue, worker_id: str, lease: float):
        self.queue, self.worker_id, self.lease = queue, worker_id, lease
        self.block_id: int | None = None
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="vpnbench-heartbeat", daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """No beat after this returns (a second call does nothing)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def hold(self, block_id: int | None) -> None:
        self.block_id, self.lost = block_id, False

    def _beat(self) -> None:
        while not self._stop.wait(self.lease / 3):
            block_id = self.block_id
            try:
                if not self.queue.renew(self.worker_id, block_id, self.lease) and block_id == self.block_id:
                    self.lost = True
            except sa.exc.DBAPIError:
                pass  # the database away for a moment: the next beat tries again, within the lease


class Worker:
    """One testbed working a job: the run's stages (vpnbench.run) with the queue's two hooks, the
    block stage's before_cell and the run's fence. make: how the testbed is obtained, and clock:
    the time stages read; the queue's unit tests give the runner's doubles for both."""

    def __init__(self, queue: WorkQueue, job: Job, campaign: Campaign, testbed_name: str, lease: float = 60.0,
                 console: Console | None = None, make: TestbedMaker = make_testbed, clock: Clock = Clock()):
        self.queue, self.store, self.job, self.campaign = queue, queue.store, job, campaign
        self.testbed_name, self.lease = testbed_name, lease
        self.display = Display(console or Console(stderr=True))
        self.make, self.clock = make, clock
        self.poll = min(1.0, lease / 4)  # how often an idle worker looks for a lease that ran out
        self.heartbeat: Heartbeat | None = None

    def run(self) -> RunOutcome:
        return in_process(self._run_job)

    def environment(self, prepared: Prepared) -> dict:
        """What the run records of where it runs: the runner's, with the testbed's name and the job."""
        found = environment(self.campaign, prepared.testbed, prepared.backends)
        found["testbed"] = {**found["testbed"], "name": self.testbed_name}
        found["queue"] = {"job": self.job.id}
        return found

    def before_cell(self) -> None:
        """A block whose lease was lost, or whose job was cancelled, stops here, before its next cell."""
        if self.heartbeat is None:
            return
        if self.heartbeat.lost:
            raise LeaseLost("the block's lease ran out and another worker holds it")
        if self.heartbeat.block_id is not None and self.queue.abort_requested(self.heartbeat.block_id):
            raise Cancelled("its job was cancelled (vpnbench cancel)")

    def _fence(self, worker_id: str) -> str | None:
        """Asked before a cell of a queued block is stored ok: the lease renewed there and then,
        so a worker that lost its block (alive, but cut off from the database for a whole lease)
        stores its last cell failed rather than beside the other worker's. The renewal runs in the
        transaction that stores the cell (run/cell.py), so the block's row stays locked until the
        cell is committed: no other worker claims it in between, however long this one stalls."""
        block_id = self.heartbeat.block_id if self.heartbeat is not None else None
        if block_id is None:
            return None  # its own baseline
        try:
            # A savepoint: a failed renewal leaves the cell's transaction usable, to store the cell failed.
            with self.store.transaction() as conn, conn.begin_nested():
                held = self.queue.renew(worker_id, block_id, self.lease, within=conn)
        except sa.exc.DBAPIError as exc:
            reason = scrub(str(exc.orig or exc).strip().splitlines()[0], self.store.target)
            return f"lease not confirmed (the database: {reason})"
        if not held:
            self.heartbeat.lost = True
            return "lease lost: another worker took this block over and measures this cell"
        return None

    def _run_job(self, resources: RunResources) -> RunOutcome:
        prepared = prepare(self.campaign, resources, self.display, self.make, skip_unavailable=True)
        blocks = expand(self.campaign)
        shared = self.queue.positions(self.job)
        mine = {p for p in shared if not isinstance(prepared.backends[blocks[p].index], Unavailable)}
        queues = {block_queue(self.job.id, blocks[p].index) for p in mine}  # what this testbed can run
        if not mine:
            prepared.testbed.down()
            reason = next(str(b) for b in prepared.backends if isinstance(b, Unavailable))
            raise UserError(f"--testbed: no block of job {self.job.id} ({self.job.campaign}) can run on testbed "
                            f"{self.testbed_name!r}: {reason}")
        run, _ = open_run(self.campaign, self.store, resources, prepared, self.display, self.clock,
                          recorded=self.environment(prepared))
        worker_id = self.queue.register(self.job, self.testbed_name, run.run_id, self.lease)
        run.fence = lambda: self._fence(worker_id)
        outcome = RunOutcome(run.run_id)
        self.display.say(f"[bold]{escape(self.campaign.name)}[/]: worker {worker_id} on testbed "
                         f"{escape(self.testbed_name)} (job {self.job.id}, {len(mine)} of {len(shared)} blocks "
                         f"runnable here) — run {run.run_id}")
        stage = BlockStage(run, prepared.backends, outcome, before_cell=self.before_cell)
        references = [b for p, b in enumerate(blocks) if p not in shared]

        def ended(state: str) -> None:  # told to the queue; an interrupted or failed worker's block goes back at once
            # The last beat first: a beat locks procrastinate's worker row, then ours; set_state the
            # other way round, and the two deadlocked (PostgreSQL aborted the ending worker: exit 1,
            # seen with the machine tests two at a time, a 3 s lease beating every second).
            self.heartbeat.stop()
            self.queue.set_state(worker_id, state)

        # The heartbeat beats from before the testbed is set up until the queue is told how the run ended.
        with (Heartbeat(self.queue, worker_id, self.lease) as self.heartbeat,
              underway(run, outcome, prepared.impairment_backend, "the block goes back to the queue; cleaning up",
                       ended),
              self.display.cells(sum(len(b.cells) for p, b in enumerate(blocks) if p in mine or p not in shared))):
            stage.run_all(references)  # this testbed's own baseline, before any shared block
            self._work(stage, blocks, mine, queues, worker_id)
        return outcome

    def _work(self, stage: BlockStage, blocks: list[TechniqueBlock], mine: set[int], queues: set[str],
              worker_id: str) -> None:
        """Fetch, run, end, until no block this testbed can run is left undone."""
        while True:
            claim = self.queue.claim(self.job, worker_id, queues, self.lease)
            if claim is None:
                if self.queue.outstanding(self.job, mine) == 0:
                    return
                time.sleep(self.poll)  # others hold the rest: wait for them, or for a lease to run out
                continue
            block = self._block(blocks, claim)
            self.heartbeat.hold(claim.block_id)
            if claim.took_over_from:
                self.display.say(f"  continuing {escape(block.label)}: worker {claim.took_over_from} stopped "
                                 "renewing its lease")
            try:
                stage.run_all([block], self.queue.done_keys(self.job))  # what other workers stored ok is done
            except LeaseLost as exc:
                self.display.say(f"  [yellow]left {escape(block.label)}[/]: {exc}")
                continue
            except Cancelled as exc:
                self.display.say(f"  [yellow]stopped {escape(block.label)}[/]: {exc}")
                self.queue.end(self.job, worker_id, claim.block_id, "aborted", str(exc))
                continue
            except (VpnbenchError, OSError) as exc:  # the block's attempt failed: retried while attempts are left
                self.display.say(f"  [red]block {escape(block.label)} failed[/]: {escape(str(exc))}")
                self.queue.end(self.job, worker_id, claim.block_id, "failed", str(exc))
                continue
            finally:
                self.heartbeat.hold(None)
            self.queue.finish(self.job, worker_id, claim.block_id)

    def _block(self, blocks: list[TechniqueBlock], claim: Claim) -> TechniqueBlock:
        block = blocks[claim.position] if claim.position < len(blocks) else None
        if block is None or block.label != claim.label:
            raise UserError(f"job {self.job.id}: block {claim.position} is {claim.label!r} in the queue but "
                            f"{block.label if block else 'missing'!r} here: the job was queued by another "
                            "vpnbench version; run workers of the version that queued it")
        return block
