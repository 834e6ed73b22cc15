"""The lab's work queue, in the PostgreSQL results database (issue 20): a campaign's technique
blocks as rows that workers on many testbeds claim with PostgreSQL's own row locks
(SELECT ... FOR UPDATE SKIP LOCKED), so there is no coordinator of vpnbench's own to run or lose.

A claimed block carries a lease that its worker's heartbeat renews. A worker killed at any point
stops renewing it; once the lease has run out (on the database's clock, so the machines' clocks
need not agree) another worker claims the block and continues it where it stopped: a cell stored
ok by any worker of the job is not measured again (resume semantics across workers).

The reference technique (baseline) is not queued: every worker measures it on its own testbed
before its first block, so each relative cost and significance test compares cells of one testbed."""

import contextlib
import dataclasses
import datetime
import json
import os
import platform
import secrets
from collections.abc import Callable, Iterator

import croniter
import psycopg
import sqlalchemy as sa
from procrastinate.schema import SchemaManager
from procrastinate.sql import queries as PROCRASTINATE_QUERIES

from vpnbench.campaign import Campaign, TechniqueBlock, campaign_from_dict, expand
from vpnbench.foundation.errors import UserError
from vpnbench.lab.engine import (
    ANY_QUEUE_CHANNEL,
    BLOCK_RETRY,
    BLOCK_TASK,
    FETCH_POLL,
    MAX_ATTEMPTS,
    block_queue,
    next_occurrence,
)
from vpnbench.store.database import Store
from vpnbench.store.database import T as RESULT_TABLES
from vpnbench.techniques import TECHNIQUES

METADATA = sa.MetaData()
JOBS = sa.Table(
    "queue_jobs", METADATA,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("campaign", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False),  # the campaign's validated input (JSON): what workers run
    # who queued it (lab/signing.py): the signing key's fingerprint and its signature of id, lab,
    # not_after and source; the lab (queue_lab's name when it was queued) and the time (UTC, ISO
    # 8601) after which no worker starts it: both signed, so only a new signature changes them
    sa.Column("key_id", sa.Text),
    sa.Column("signature", sa.Text),
    sa.Column("lab", sa.Text),
    sa.Column("not_after", sa.Text),
    sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
    sa.Column("schedule", sa.Text),  # the schedule it is an occurrence of, whose signature it carries
    sa.Column("cron", sa.Text),  # that schedule's cron, which its signature covers (schedule_signed_id)
)
# A campaign on a schedule (`run --queue --every CRON`): signed as a job is (its id in the job's
# place, with its cron: schedule_signed_id); `vpnbench scheduler` defers it on its cron as a
# procrastinate periodic task, and each occurrence is a job of its own, id SCHEDULE-TIMESTAMP,
# carrying the schedule's signature: a worker runs it only at a time the signed cron names
# (lab/trust.py), so a database writer cannot add occurrences of their own.
SCHEDULES = sa.Table(
    "lab_schedules", METADATA,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("campaign", sa.Text, nullable=False),
    sa.Column("cron", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("key_id", sa.Text),
    sa.Column("signature", sa.Text),
    sa.Column("lab", sa.Text),
    sa.Column("not_after", sa.Text),
    sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
)
# The lab's name, made once with the queue: an enqueuer signs it into each job, and a worker runs
# only jobs signed for the lab its own file names, so a job copied into another lab's database
# is refused there. One row.
LAB = sa.Table("queue_lab", METADATA, sa.Column("name", sa.Text, primary_key=True))
# A block is a procrastinate job (procrastinate_jobs: its state, attempts, the engine worker
# holding it, an abort request); this row ties it to its lab job, its place in the campaign and
# its cells, and says why it failed or stopped.
BLOCKS = sa.Table(
    "lab_blocks", METADATA,
    sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),  # procrastinate_jobs.id
    sa.Column("job_id", sa.Text, sa.ForeignKey("queue_jobs.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),  # the block's place in campaign.expand's list
    sa.Column("label", sa.Text, nullable=False),
    sa.Column("cell_keys", sa.Text, nullable=False),  # JSON list: how many cells, and which
    sa.Column("worker_id", sa.Text),  # the vpnbench worker that last held it
    sa.Column("reason", sa.Text),  # why its last attempt ended other than done (error, cancelled, lost)
    # attempts that failed: what the retry limit counts. procrastinate's attempts count a killed
    # or stopped worker's too (each put back is a retry_job), but a worker killed, restarted by
    # systemd or stopped with SIGTERM is no fault of the block: its cells were not the trouble.
    sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
    sa.Index("lab_blocks_job", "job_id"),
)
WORKERS = sa.Table(
    "queue_workers", METADATA,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("job_id", sa.Text, sa.ForeignKey("queue_jobs.id"), nullable=False),
    sa.Column("run_id", sa.Text),  # the worker's run: the cells of its testbed
    sa.Column("hostname", sa.Text, nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("testbed", sa.Text, nullable=False),
    sa.Column("lease_seconds", sa.Float, nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.Column("last_seen", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.Column("state", sa.Text, nullable=False),  # working, finished, interrupted, failed, lost, cancelled
    sa.Column("block_id", sa.BigInteger),  # the block it holds now
    sa.Column("engine_worker", sa.BigInteger),  # its procrastinate_workers.id: the heartbeat procrastinate reads
)
# A worker that follows the queue (`vpnbench worker --follow`): one row per process, whatever job
# it works on, so `status` shows it idle between jobs too.
FOLLOWERS = sa.Table(
    "lab_followers", METADATA,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("hostname", sa.Text, nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("testbed", sa.Text, nullable=False),
    sa.Column("state", sa.Text, nullable=False),  # idle, working, stopped
    sa.Column("job_id", sa.Text),  # the job it works on
    sa.Column("started_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.Column("last_seen", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
)


@dataclasses.dataclass(frozen=True)
class Job:
    id: str
    campaign: str
    source: dict
    key_id: str | None = None  # None: unsigned
    signature: str | None = None
    lab: str | None = None  # what the signature binds (None in jobs signed before it did)
    not_after: str | None = None
    schedule: str | None = None  # an occurrence of this schedule: its signature is the schedule's
    cron: str | None = None  # the schedule's cron (an occurrence's)

    @property
    def signed_id(self) -> str:
        """The id its signature covers: the job's, or its schedule's with the cron."""
        return schedule_signed_id(self.schedule, self.cron) if self.schedule else self.id

    @classmethod
    def from_row(cls, row) -> "Job":
        return cls(row.id, row.campaign, json.loads(row.source), row.key_id, row.signature, row.lab, row.not_after,
                   getattr(row, "schedule", None), getattr(row, "cron", None))


def schedule_signed_id(schedule_id: str, cron: str | None) -> str:
    """What a schedule's signature covers in a job id's place: its id and its cron, so an edited
    cron breaks the signature and a worker can tell an occurrence the enqueuer signed from a forged one."""
    return f"{schedule_id} every {cron}"


@dataclasses.dataclass(frozen=True)
class Claim:
    """A block a worker holds: its row and its place in the campaign's expansion."""

    block_id: int  # its procrastinate job's id
    position: int
    label: str
    took_over_from: str | None  # the worker whose lease ran out, when this continues its block


@dataclasses.dataclass(frozen=True)
class BlockRow:
    position: int
    label: str
    cells: int
    state: str  # queued, running, stopping (cancelled while running), done, failed, cancelled
    worker_id: str | None
    claims: int  # attempts: procrastinate's, the running one counted
    reason: str | None = None  # why its last attempt ended other than done


@dataclasses.dataclass(frozen=True)
class WorkerRow:
    id: str
    hostname: str
    pid: int
    testbed: str
    run_id: str | None
    state: str
    seen_ago: float  # seconds since its last heartbeat
    lease: float
    block: str | None  # the label of the block it holds
    cells_ok: int


@dataclasses.dataclass(frozen=True)
class FollowerRow:
    id: str
    hostname: str
    pid: int
    testbed: str
    state: str  # idle, working, stopped
    job_id: str | None
    seen_ago: float  # seconds since it last looked for a job (idle) or started its job (working)


def queued_blocks(campaign: Campaign) -> list[tuple[int, TechniqueBlock]]:
    """The blocks workers share: every technique's but the reference's (each worker measures that
    on its own testbed); a campaign of nothing but the reference queues its blocks."""
    blocks = list(enumerate(expand(campaign)))
    shared = [(i, b) for i, b in blocks if not is_reference_block(campaign, b)]
    return shared or blocks


def is_reference_block(campaign: Campaign, block: TechniqueBlock) -> bool:
    return TECHNIQUES[campaign.techniques[block.index].kind].is_reference


ENGINE_STATES = {"todo": "queued", "doing": "running", "succeeded": "done", "failed": "failed",
                 "cancelled": "cancelled", "aborted": "cancelled"}  # procrastinate's job status: the block's
OPEN = ("todo", "doing")  # procrastinate's states of a block not ended


def _call(conn: sa.Connection, query: str, **params):
    """One of procrastinate's own queries (procrastinate/sql/queries.sql) on this connection."""
    return conn.exec_driver_sql(PROCRASTINATE_QUERIES[query], params)


class WorkQueue:
    """The lab's tables and procrastinate's (lab/engine.py) in the store's PostgreSQL database.
    Every call is its own short transaction on its own connection (the heartbeat thread calls in
    beside the worker)."""

    def __init__(self, store: Store):
        if store.sqlite:
            raise UserError(f"--db: the queue needs a PostgreSQL database (postgresql://...), "
                            f"not the SQLite file {store.name!r}: workers on other machines must reach it")
        self.store, self.engine = store, store.engine
        if store.read_only:  # status and a job's report: SELECTs only (a reader's role may do no more)
            with self.engine.connect() as conn:
                if not sa.inspect(conn).has_table(JOBS.name):
                    raise UserError(f"--db: no queue in {store.name}; enqueue a job with "
                                    "`vpnbench run CAMPAIGN --queue`")
            return
        with self.engine.begin() as conn:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(20200002)"))  # workers starting at once
            if conn.scalar(sa.text("SELECT to_regclass('procrastinate_jobs')")) is None:
                conn.exec_driver_sql(SchemaManager.get_schema().replace("%", "%%"))  # the engine's tables and functions
            METADATA.create_all(conn)
            known = {column["name"] for column in sa.inspect(conn).get_columns(JOBS.name)}
            for column in ("key_id", "signature", "lab", "not_after", "schedule", "cron"):  # a database queued into before
                if column not in known:                                 # jobs were signed, or bound to a lab
                    conn.execute(sa.text(f"ALTER TABLE {JOBS.name} ADD COLUMN {column} TEXT"))
            known = {column["name"] for column in sa.inspect(conn).get_columns(WORKERS.name)}
            if "engine_worker" not in known:  # a database queued into before the engine was procrastinate
                conn.execute(sa.text(f"ALTER TABLE {WORKERS.name} ADD COLUMN engine_worker BIGINT"))
            if "failures" not in {column["name"] for column in sa.inspect(conn).get_columns(BLOCKS.name)}:
                conn.execute(sa.text(f"ALTER TABLE {BLOCKS.name} ADD COLUMN failures INTEGER NOT NULL DEFAULT 0"))
            if conn.scalar(sa.select(sa.func.count()).select_from(LAB)) == 0:
                conn.execute(LAB.insert().values(name=f"lab-{secrets.token_hex(4)}"))

    def lab(self) -> str:
        """The name jobs queued here are signed for (queue_lab)."""
        with self.engine.connect() as conn:
            names = list(conn.scalars(sa.select(LAB.c.name)))
        if len(names) != 1:
            raise UserError(f"queue_lab: {len(names)} rows in {self.store.name}; the queue's lab has one name "
                            "(a database writer changed it: put the lab's name back)")
        return names[0]

    # --- jobs -------------------------------------------------------------------------------

    def enqueue(self, campaign: Campaign, sign: Callable[[str, str, str, dict], tuple[str, str]] | None = None,
                expires: float = 7 * 86400) -> tuple[Job, int]:
        """A job of the campaign's shared blocks, signed when sign (job id, lab, not_after, source ->
        key id, signature) is given, for this database's lab and until `expires` seconds from now
        (this machine's clock); returns it and how many cells were queued. Each block is deferred
        as a procrastinate job on its technique's queue, in the transaction that stores the job."""
        if campaign.info.adaptive:
            raise UserError("--queue: repetitions = \"auto\" decides each round from the last one, which "
                            "workers on several testbeds cannot share; give a number of repetitions")
        job = self._signed(secrets.token_hex(4), campaign, sign, expires)
        with self.engine.begin() as conn:
            return job, self._defer(conn, job, campaign)

    def _signed(self, job_id: str, campaign: Campaign, sign, expires: float, signed_id: str | None = None) -> Job:
        source = json.loads(json.dumps(campaign.source))  # signed as a worker reads it back
        if sign:
            lab = self.lab()
            not_after = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=expires)
                         ).strftime("%Y-%m-%dT%H:%M:%SZ")
            return Job(job_id, campaign.info.name, source, *sign(signed_id or job_id, lab, not_after, source), lab,
                       not_after)
        return Job(job_id, campaign.info.name, source)  # nothing binds an unsigned job: a database writer could write any

    def schedule(self, campaign: Campaign, cron: str, sign=None, expires: float = 7 * 86400) -> Job:
        """A campaign on a schedule, signed as a job is; `vpnbench scheduler` queues it on its cron."""
        if campaign.info.adaptive:
            raise UserError("--queue: repetitions = \"auto\" decides each round from the last one, which "
                            "workers on several testbeds cannot share; give a number of repetitions")
        try:
            croniter.croniter(cron)
        except (ValueError, KeyError) as exc:
            raise UserError(f"--every: {cron!r} is not a cron line ({exc}); allowed: five fields (minute hour "
                            "day month weekday), and a sixth, last, for seconds, e.g. \"0 2 * * *\" nightly") from None
        schedule_id = f"s{secrets.token_hex(4)}"
        schedule = self._signed(schedule_id, campaign, sign, expires, schedule_signed_id(schedule_id, cron))
        with self.engine.begin() as conn:
            conn.execute(SCHEDULES.insert().values(id=schedule.id, campaign=schedule.campaign, cron=cron,
                                                   source=json.dumps(schedule.source), key_id=schedule.key_id,
                                                   signature=schedule.signature, lab=schedule.lab,
                                                   not_after=schedule.not_after))
        return schedule

    def schedules(self) -> list[tuple[str, str]]:
        """(schedule id, cron) of every schedule."""
        with self.engine.connect() as conn:
            return [(r.id, r.cron) for r in conn.execute(sa.select(SCHEDULES).order_by(SCHEDULES.c.created_at))]

    def occur(self, schedule_id: str, timestamp: int, now: float | None = None) -> Job | None:
        """The schedule's occurrence at this time (procrastinate's periodic timestamp) queued as a
        job; None when it was already (procrastinate defers each timestamp once), when its schedule
        was cancelled, when it is older than the schedule, or when the cron names a later time that
        has come: a scheduler that was down (or a process that slept) catches up with the latest
        occurrence only, never a backlog (engine.CATCH_UP)."""
        now = datetime.datetime.now(datetime.UTC).timestamp() if now is None else now
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(SCHEDULES).where(SCHEDULES.c.id == schedule_id)).first()
            if row is None or timestamp < row.created_at.timestamp() or next_occurrence(row.cron, timestamp) <= now:
                return None
            job = Job(f"{schedule_id}-{timestamp}", row.campaign, json.loads(row.source), row.key_id, row.signature,
                      row.lab, row.not_after, schedule_id, row.cron)
            if conn.scalar(sa.select(sa.func.count()).where(JOBS.c.id == job.id)):
                return None
            self._defer(conn, job, campaign_from_dict(job.source))
        return job

    def cancel_schedule(self, schedule_id: str) -> list[tuple[Job, int, int]] | None:
        """The schedule removed (the scheduler queues nothing more of it, a worker refuses its
        occurrences) and each of its unfinished occurrences cancelled as a job is; None when there
        is no such schedule. Returns (occurrence, cancelled, asked to stop)."""
        with self.engine.begin() as conn:
            if conn.execute(SCHEDULES.delete().where(SCHEDULES.c.id == schedule_id)).rowcount == 0:
                return None
        occurrences = [job for job in self.jobs() if job.schedule == schedule_id]
        return [(job, *self.cancel(job)) for job in occurrences]

    def schedule_exists(self, schedule_id: str) -> bool:
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(sa.func.count()).where(SCHEDULES.c.id == schedule_id)) == 1

    def _defer(self, conn: sa.Connection, job: Job, campaign: Campaign) -> int:
        shared = queued_blocks(campaign)
        conn.execute(JOBS.insert().values(id=job.id, campaign=job.campaign, source=json.dumps(job.source),
                                          key_id=job.key_id, signature=job.signature, lab=job.lab,
                                          not_after=job.not_after, schedule=job.schedule, cron=job.cron))
        for position, block in shared:
            engine_id = conn.scalar(sa.text(
                "SELECT unnest(procrastinate_defer_jobs_v1(ARRAY[ROW(:queue, :task, :priority, NULL, NULL, "
                "CAST(:args AS jsonb), NULL)::procrastinate_job_to_defer_v1]))"),
                {"queue": block_queue(job.id, block.index), "task": BLOCK_TASK, "priority": -position,
                 "args": json.dumps({"job": job.id, "position": position})})
            conn.execute(BLOCKS.insert().values(id=engine_id, job_id=job.id, position=position, label=block.label,
                                                cell_keys=json.dumps([c.key for c in block.cells])))
        return sum(len(block.cells) for _, block in shared)

    def job(self, job_id: str | None) -> Job:
        """The job asked for, or the oldest one not finished."""
        query = sa.select(JOBS)
        query = (query.where(JOBS.c.id == job_id) if job_id
                 else query.where(JOBS.c.finished_at.is_(None)).order_by(JOBS.c.created_at).limit(1))
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        if row is None:
            raise UserError(f"--queue: no job {job_id!r} in {self.store.name}" if job_id
                            else f"--db: no unfinished job in {self.store.name}; enqueue one with "
                                 "`vpnbench run CAMPAIGN --db URL --queue`")
        return Job.from_row(row)

    def jobs(self, job_id: str | None = None, unfinished: bool = True) -> list[Job]:
        query = sa.select(JOBS).order_by(JOBS.c.created_at)
        if job_id:
            query = query.where(JOBS.c.id == job_id)
        elif unfinished:
            query = query.where(JOBS.c.finished_at.is_(None))
        with self.engine.connect() as conn:
            return [Job.from_row(row) for row in conn.execute(query)]

    def positions(self, job: Job) -> set[int]:
        with self.engine.connect() as conn:
            return set(conn.scalars(sa.select(BLOCKS.c.position).where(BLOCKS.c.job_id == job.id)))

    def cancel(self, job: Job) -> tuple[int, int]:
        """procrastinate's cancel with abort: queued blocks cancelled, running ones asked to stop
        (their worker stops before its next cell). Returns (cancelled, asked to stop)."""
        with self.engine.begin() as conn:
            rows = conn.execute(sa.text(
                "SELECT j.id, j.status FROM procrastinate_jobs j JOIN lab_blocks b ON b.id = j.id "
                "WHERE b.job_id = :job AND j.status IN ('todo', 'doing') FOR UPDATE OF j"), {"job": job.id}).all()
            for row in rows:
                _call(conn, "cancel_job", job_id=row.id, abort=True, delete_job=False)
            conn.execute(BLOCKS.update().where(BLOCKS.c.id.in_([r.id for r in rows]))
                         .values(reason="cancelled by the operator"))
            self._finish_if_done(conn, job)
        return sum(r.status == "todo" for r in rows), sum(r.status == "doing" for r in rows)

    # --- workers ----------------------------------------------------------------------------

    def register(self, job: Job, testbed: str, run_id: str, lease: float) -> str:
        worker_id = f"{platform.node()}-{os.getpid()}-{secrets.token_hex(2)}"
        with self.engine.begin() as conn:
            engine_worker = _call(conn, "register_worker").first().worker_id
            conn.execute(WORKERS.insert().values(id=worker_id, job_id=job.id, run_id=run_id, hostname=platform.node(),
                                                 pid=os.getpid(), testbed=testbed, lease_seconds=lease,
                                                 state="working", engine_worker=engine_worker))
        return worker_id

    def set_state(self, worker_id: str, state: str, reason: str | None = None) -> None:
        """How the worker ended. One that did not finish gives its block back at once (procrastinate's
        retry, its heartbeat not awaited); its engine worker row is removed either way."""
        with self.engine.begin() as conn:
            engine_worker = conn.scalar(sa.select(WORKERS.c.engine_worker).where(WORKERS.c.id == worker_id))
            if state != "finished":
                held = conn.scalars(sa.text("SELECT id FROM procrastinate_jobs WHERE worker_id = :w AND "
                                            "status = 'doing' FOR UPDATE"), {"w": engine_worker}).all()
                for block_id in held:
                    _call(conn, "retry_job", job_id=block_id, retry_at=datetime.datetime.now(datetime.UTC),
                          new_priority=None, new_queue_name=None, new_lock=None)
                conn.execute(BLOCKS.update().where(BLOCKS.c.id.in_(held))
                             .values(reason=f"worker {worker_id} {state}" + (f": {reason}" if reason else "")))
            conn.execute(WORKERS.update().where(WORKERS.c.id == worker_id)
                         .values(state=state, block_id=None, last_seen=sa.func.now()))
            if engine_worker is not None:
                _call(conn, "unregister_worker", worker_id=engine_worker)

    def _engine_worker(self, conn: sa.Connection, worker_id: str) -> int:
        return conn.scalar(sa.select(WORKERS.c.engine_worker).where(WORKERS.c.id == worker_id))

    # --- workers that follow the queue (`vpnbench worker --follow`) -------------------------

    def follow(self, testbed: str) -> str:
        follower_id = f"{platform.node()}-{os.getpid()}-follow"
        with self.engine.begin() as conn:
            conn.execute(FOLLOWERS.delete().where(FOLLOWERS.c.id == follower_id))  # a pid used again
            conn.execute(FOLLOWERS.insert().values(id=follower_id, hostname=platform.node(), pid=os.getpid(),
                                                   testbed=testbed, state="idle"))
        return follower_id

    def follower_state(self, follower_id: str, state: str, job_id: str | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(FOLLOWERS.update().where(FOLLOWERS.c.id == follower_id)
                         .values(state=state, job_id=job_id, last_seen=sa.func.now()))

    def followers(self) -> list[FollowerRow]:
        """The following workers not stopped (a killed one stays, its last_seen growing)."""
        ago = sa.func.extract("epoch", sa.func.now() - FOLLOWERS.c.last_seen)
        with self.engine.connect() as conn:
            if not sa.inspect(conn).has_table(FOLLOWERS.name):  # a queue made before workers followed it
                return []
            query = (sa.select(FOLLOWERS, ago.label("ago")).where(FOLLOWERS.c.state != "stopped")
                     .order_by(FOLLOWERS.c.started_at))
            return [FollowerRow(r.id, r.hostname, r.pid, r.testbed, r.state, r.job_id, float(r.ago))
                    for r in conn.execute(query)]

    @contextlib.contextmanager
    def listening(self) -> Iterator[Callable[[float], bool]]:
        """wait(seconds): until procrastinate notifies a job deferred on any queue (its schema's
        trigger: NOTIFY procrastinate_any_queue_v1) or the seconds have passed; True when notified.
        LISTEN starts here, before the caller first looks for a job, so a job queued while the
        caller looks or works is not missed: its notification waits in the connection."""
        with psycopg.connect(str(self.store.target), autocommit=True) as listener:
            listener.execute(f'LISTEN "{ANY_QUEUE_CHANNEL}"')

            def wait(seconds: float = FETCH_POLL) -> bool:
                notified = any(True for _ in listener.notifies(timeout=seconds, stop_after=1))
                while any(True for _ in listener.notifies(timeout=0)):  # the rest of a job's blocks: one look
                    pass
                return notified

            yield wait

    # --- blocks -----------------------------------------------------------------------------

    def retry_stalled(self, job: Job, lease: float) -> list[tuple[int, str | None]]:
        """The job's blocks held by a worker whose procrastinate heartbeat is older than the lease
        (procrastinate's stalled jobs) put back to be fetched again; their workers marked lost.
        Returns (block, the worker that held it)."""
        with self.engine.begin() as conn:
            stalled = conn.execute(sa.text(
                "SELECT j.id, b.worker_id FROM procrastinate_jobs j JOIN lab_blocks b ON b.id = j.id "
                "LEFT JOIN procrastinate_workers w ON w.id = j.worker_id "
                "WHERE b.job_id = :job AND j.status = 'doing' "
                "AND (w.id IS NULL OR w.last_heartbeat < now() - make_interval(secs => :lease)) "
                "FOR UPDATE OF j SKIP LOCKED"), {"job": job.id, "lease": lease}).all()
            for row in stalled:
                _call(conn, "retry_job", job_id=row.id, retry_at=datetime.datetime.now(datetime.UTC),
                      new_priority=None, new_queue_name=None, new_lock=None)
                conn.execute(BLOCKS.update().where(BLOCKS.c.id == row.id)
                             .values(reason=f"worker {row.worker_id} stopped beating (no heartbeat for {lease:g} s)"))
                conn.execute(WORKERS.update().where(WORKERS.c.id == row.worker_id, WORKERS.c.state == "working")
                             .values(state="lost", block_id=None))
        return [(row.id, row.worker_id) for row in stalled]

    def claim(self, job: Job, worker_id: str, queues: set[str], lease: float) -> Claim | None:
        """The next block on these queues (procrastinate's fetch), after putting back those whose
        worker's heartbeat stopped."""
        took_over = dict(self.retry_stalled(job, lease))
        with self.engine.begin() as conn:
            engine_worker = self._engine_worker(conn, worker_id)
            row = _call(conn, "fetch_job", queues=sorted(queues), worker_id=engine_worker).first()
            if row is None or row.id is None:
                return None
            block = conn.execute(sa.select(BLOCKS).where(BLOCKS.c.id == row.id)).first()
            previous = took_over.get(row.id) or (block.worker_id if row.attempts and block.worker_id != worker_id
                                                 else None)
            conn.execute(BLOCKS.update().where(BLOCKS.c.id == row.id).values(worker_id=worker_id))
            conn.execute(WORKERS.update().where(WORKERS.c.id == worker_id).values(block_id=row.id))
        return Claim(row.id, block.position, block.label, previous)

    def renew(self, worker_id: str, block_id: int | None, lease: float, within: sa.Connection | None = None) -> bool:
        """The heartbeat: procrastinate's worker heartbeat and ours beaten. False when the block is
        no longer this worker's (its heartbeat stopped long enough that another worker put it back).
        within: a transaction of the caller's, which then holds the block's job row locked until it
        commits (the worker's fence): procrastinate's retry waits for that lock."""
        with contextlib.nullcontext(within) if within is not None else self.engine.begin() as conn:
            engine_worker = self._engine_worker(conn, worker_id)
            if engine_worker is not None:
                _call(conn, "update_heartbeat", worker_id=engine_worker)
            # The job row before the worker's row, as claim() and end() lock them: the worker's main
            # thread may be ending the block while this (its heartbeat thread) runs, and the other
            # order deadlocked the two (PostgreSQL aborted one; a worker exited 1)
            held = block_id is None or conn.scalar(sa.text(
                "SELECT count(*) FROM (SELECT 1 FROM procrastinate_jobs WHERE id = :b AND status = 'doing' AND "
                "worker_id = :w FOR UPDATE) AS mine"), {"b": block_id, "w": engine_worker}) == 1
            conn.execute(WORKERS.update().where(WORKERS.c.id == worker_id).values(last_seen=sa.func.now()))
            return held

    def abort_requested(self, block_id: int) -> bool:
        """procrastinate's abort request on the block (the operator cancelled its job)."""
        with self.engine.connect() as conn:
            return bool(conn.scalar(sa.text("SELECT abort_requested FROM procrastinate_jobs WHERE id = :b"),
                                    {"b": block_id}))

    def end(self, job: Job, worker_id: str, block_id: int, status: str, reason: str | None = None) -> None:
        """The block's attempt over: succeeded, aborted (cancelled), or failed, which procrastinate's
        retry strategy (engine.BLOCK_RETRY) turns into another attempt while attempts are left."""
        with self.engine.begin() as conn:
            engine_worker = self._engine_worker(conn, worker_id)
            row = conn.execute(sa.text("SELECT j.id, b.failures FROM procrastinate_jobs j JOIN lab_blocks b ON "
                                       "b.id = j.id WHERE j.id = :b AND j.status = 'doing' AND j.worker_id = :w "
                                       "FOR UPDATE OF j"),
                               {"b": block_id, "w": engine_worker}).first()
            if row is not None:
                failures = row.failures + (status == "failed")
                # the strategy sees the failed attempts only (lab_blocks.failures), not the stalls
                if status == "failed" and BLOCK_RETRY.get_retry_decision(
                        exception=RuntimeError(reason), job=_attempts(failures - 1)) is not None:
                    _call(conn, "retry_job", job_id=block_id, retry_at=datetime.datetime.now(datetime.UTC),
                          new_priority=None, new_queue_name=None, new_lock=None)
                    reason = f"attempt {failures} of {MAX_ATTEMPTS} failed, retried: {reason}"
                else:
                    _call(conn, "finish_job", job_id=block_id, status=status, delete_job=False)
                conn.execute(BLOCKS.update().where(BLOCKS.c.id == block_id).values(reason=reason, failures=failures))
            conn.execute(WORKERS.update().where(WORKERS.c.id == worker_id).values(block_id=None))
            self._finish_if_done(conn, job)

    def finish(self, job: Job, worker_id: str, block_id: int) -> None:
        self.end(job, worker_id, block_id, "succeeded")

    def _finish_if_done(self, conn: sa.Connection, job: Job) -> None:
        left = conn.scalar(sa.text("SELECT count(*) FROM procrastinate_jobs j JOIN lab_blocks b ON b.id = j.id "
                                   "WHERE b.job_id = :job AND j.status IN ('todo', 'doing')"), {"job": job.id})
        if left == 0:
            conn.execute(JOBS.update().where(JOBS.c.id == job.id, JOBS.c.finished_at.is_(None))
                         .values(finished_at=sa.func.now()))

    def outstanding(self, job: Job, positions: set[int]) -> int:
        """Blocks among these not ended yet (queued, or held by a worker)."""
        with self.engine.connect() as conn:
            return conn.scalar(sa.text(
                "SELECT count(*) FROM procrastinate_jobs j JOIN lab_blocks b ON b.id = j.id "
                "WHERE b.job_id = :job AND b.position = ANY(:positions) AND j.status IN ('todo', 'doing')"),
                {"job": job.id, "positions": sorted(positions)})

    def done_keys(self, job: Job) -> set[str]:
        """The cells stored ok by any worker of the job: not measured again."""
        cells = RESULT_TABLES["cells"]
        query = (sa.select(cells.c.cell_key).join(WORKERS, WORKERS.c.run_id == cells.c.run_id)
                 .where(WORKERS.c.job_id == job.id, cells.c.status == "ok"))
        with self.engine.connect() as conn:
            return set(conn.scalars(query))

    # --- what `vpnbench status` shows --------------------------------------------------------

    def blocks(self, job: Job) -> list[BlockRow]:
        query = sa.text("SELECT b.position, b.label, b.cell_keys, b.worker_id, b.reason, j.status, j.attempts, "
                        "j.abort_requested FROM lab_blocks b JOIN procrastinate_jobs j ON j.id = b.id "
                        "WHERE b.job_id = :job ORDER BY b.position")
        with self.engine.connect() as conn:
            return [BlockRow(r.position, r.label, len(json.loads(r.cell_keys)),
                             "stopping" if r.abort_requested and r.status == "doing" else ENGINE_STATES[r.status],
                             r.worker_id, r.attempts + (r.status == "doing"), r.reason)
                    for r in conn.execute(query, {"job": job.id})]

    def workers(self, job: Job) -> list[WorkerRow]:
        cells = RESULT_TABLES["cells"]
        ok = (sa.select(sa.func.count()).where(cells.c.run_id == WORKERS.c.run_id, cells.c.status == "ok")
              .scalar_subquery())
        ago = sa.func.extract("epoch", sa.func.now() - WORKERS.c.last_seen)
        query = (sa.select(WORKERS, ago.label("ago"), BLOCKS.c.label.label("block_label"), ok.label("ok"))
                 .outerjoin(BLOCKS, BLOCKS.c.id == WORKERS.c.block_id)
                 .where(WORKERS.c.job_id == job.id).order_by(WORKERS.c.started_at))
        with self.engine.connect() as conn:
            return [WorkerRow(r.id, r.hostname, r.pid, r.testbed, r.run_id, r.state, float(r.ago), r.lease_seconds,
                              r.block_label, r.ok)
                    for r in conn.execute(query)]

    def cell_seconds(self, job: Job) -> float | None:
        """The mean wall time of the job's cells so far (for the ETA)."""
        cells = RESULT_TABLES["cells"]
        query = (sa.select(cells.c.started_at, cells.c.finished_at).join(WORKERS, WORKERS.c.run_id == cells.c.run_id)
                 .where(WORKERS.c.job_id == job.id, cells.c.finished_at.is_not(None)))
        with self.engine.connect() as conn:
            spans = [_seconds(r.started_at, r.finished_at) for r in conn.execute(query)]
        spans = [s for s in spans if s is not None]
        return sum(spans) / len(spans) if spans else None


def _attempts(attempts: int):
    """What procrastinate's RetryStrategy reads of a job: its attempts so far."""
    return dataclasses.make_dataclass("AttemptsSoFar", [("attempts", int)])(attempts)


def _seconds(started: str | None, finished: str | None) -> float | None:
    try:
        return (datetime.datetime.fromisoformat(finished) - datetime.datetime.fromisoformat(started)).total_seconds()
    except (TypeError, ValueError):
        return None
