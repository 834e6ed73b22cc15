"""The lab's job engine: procrastinate (issue 43 item 3), in the lab's own PostgreSQL database.

What procrastinate holds and decides:
- each queued block is a procrastinate job (task `vpnbench.lab.block`) in `procrastinate_jobs`,
  claimed by procrastinate's own fetch (`procrastinate_fetch_job_v2`: FOR UPDATE SKIP LOCKED);
- its queue names what a testbed must be able to run: `vpnbench.<job>.t<technique index>`
  (`block_queue`). A worker fetches only from the queues of the techniques its testbed resolved
  a backend for, so a block is claimed only by a testbed that can run it;
- a worker is a row of `procrastinate_workers` whose heartbeat (`procrastinate_update_heartbeat_v1`)
  its heartbeat thread beats; a block held by a worker whose heartbeat is older than the lease
  is a stalled job (the query of procrastinate's `get_stalled_jobs`) and is put back with
  `procrastinate_retry_job_v2`, as procrastinate's documentation says to retry stalled jobs
  ("howto/production/retry_stalled_jobs");
- a failed block is retried while the task's `RetryStrategy` (its `max_attempts`) allows;
- cancelling is procrastinate's `cancel_job_by_id(abort=True)`: a queued block is cancelled, a
  running one gets `abort_requested`, which the worker reads between cells;
- a campaign on a schedule is a procrastinate periodic task (`vpnbench scheduler`), deferred by
  procrastinate's own worker on its cron (a 6th field, last, gives seconds: croniter's order).

vpnbench's worker drives the fetch/finish/retry calls itself rather than running procrastinate's
worker loop for blocks: a block's cells must be measured in the main thread, where Ctrl-C and
SIGTERM stop a cell and tear its namespaces down (run/lifecycle.py), and the fence that keeps a
cell from being stored ok twice must lock the block's job row in the transaction that stores the
cell (lab/worker.py), which procrastinate's loop does not offer. The calls are the engine's own
stored procedures, so its tooling (`procrastinate shell`, its admin) reads the same rows."""

import contextlib
from collections.abc import Iterator

import croniter
from procrastinate import App, PsycopgConnector, RetryStrategy, SyncPsycopgConnector

BLOCK_TASK = "vpnbench.lab.block"
SCHEDULE_TASK = "vpnbench.lab.scheduled"
SCHEDULE_QUEUE = "vpnbench.schedule"
MAX_ATTEMPTS = 3  # a block that failed (not a killed worker's) is tried at most this many times in all
BLOCK_RETRY = RetryStrategy(max_attempts=MAX_ATTEMPTS - 1)  # procrastinate counts the retries after the first
# How late the scheduler defers a missed occurrence when it starts (procrastinate's periodic
# max_delay, 10 min by default, after which a missed run is dropped). A user whose scheduler was
# down for a day expects one catch-up run of the nightly campaign, not none and not 24 of an
# hourly one: procrastinate defers only the latest missed occurrence at start, however late (a
# year: longer than any signed expiry), and WorkQueue.occur queues an occurrence only while it is
# the latest the cron names (no backlog older than one period) and not before its schedule existed.
CATCH_UP = 366 * 86400.0
FETCH_POLL = 5.0  # seconds an idle worker waits for a notification before it looks anyway (procrastinate's default)
ANY_QUEUE_CHANNEL = "procrastinate_any_queue_v1"  # procrastinate's NOTIFY on every job deferred (its schema's trigger)


def block_queue(job_id: str, technique_index: int) -> str:
    """The queue of a job's blocks of one technique: only a testbed that runs it listens there."""
    return f"vpnbench.{job_id}.t{technique_index}"


def make_app(conninfo: str, worker: bool = False) -> App:
    """The procrastinate app of the lab: its one block task (retried per BLOCK_RETRY). worker: an
    app whose own worker runs (the scheduler's), which needs procrastinate's async connector."""
    connector = PsycopgConnector(conninfo=conninfo) if worker else SyncPsycopgConnector(conninfo=conninfo)
    app = App(connector=connector, periodic_defaults={"max_delay": CATCH_UP})

    @app.task(name=BLOCK_TASK, retry=BLOCK_RETRY, pass_context=True)
    def block(context, job: str, position: int) -> None:  # noqa: ARG001 - run by vpnbench worker, not here
        raise RuntimeError("a block is measured by `vpnbench worker`, which fetches it itself")

    return app


def next_occurrence(cron: str, at: int) -> int:
    """The time after `at` (epoch seconds) that the cron names, as procrastinate's deferrer counts."""
    return round(croniter.croniter(cron, at).get_next(float))


@contextlib.contextmanager
def opened(conninfo: str) -> Iterator[App]:
    app = make_app(conninfo)
    app.open()
    try:
        yield app
    finally:
        app.close()
