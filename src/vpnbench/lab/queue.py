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
from collections.abc import Callable

import sqlalchemy as sa

from vpnbench.campaign import Campaign, TechniqueBlock, expand
from vpnbench.foundation.errors import UserError
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
)
# The lab's name, made once with the queue: an enqueuer signs it into each job, and a worker runs
# only jobs signed for the lab its own file names, so a job copied into another lab's database
# is refused there. One row.
LAB = sa.Table("queue_lab", METADATA, sa.Column("name", sa.Text, primary_key=True))
BLOCKS = sa.Table(
    "queue_blocks", METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("job_id", sa.Text, sa.ForeignKey("queue_jobs.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),  # the block's place in campaign.expand's list
    sa.Column("label", sa.Text, nullable=False),
    sa.Column("cell_keys", sa.Text, nullable=False),  # JSON list: how many cells, and which
    sa.Column("state", sa.Text, nullable=False, server_default="queued"),  # queued, running, done
    sa.Column("worker_id", sa.Text),
    sa.Column("lease_until", sa.DateTime(timezone=True)),
    sa.Column("claims", sa.Integer, nullable=False, server_default="0"),
    sa.Index("queue_blocks_job_state", "job_id", "state"),
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
    sa.Column("state", sa.Text, nullable=False),  # working, finished, interrupted, failed, lost
    sa.Column("block_id", sa.Integer),  # the block it holds now
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

    @classmethod
    def from_row(cls, row) -> "Job":
        return cls(row.id, row.campaign, json.loads(row.source), row.key_id, row.signature, row.lab, row.not_after)


@dataclasses.dataclass(frozen=True)
class Claim:
    """A block a worker holds: its row and its place in the campaign's expansion."""

    block_id: int
    position: int
    label: str
    took_over_from: str | None  # the worker whose lease ran out, when this continues its block


@dataclasses.dataclass(frozen=True)
class BlockRow:
    position: int
    label: str
    cells: int
    state: str
    worker_id: str | None
    claims: int


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


def queued_blocks(campaign: Campaign) -> list[tuple[int, TechniqueBlock]]:
    """The blocks workers share: every technique's but the reference's (each worker measures that
    on its own testbed); a campaign of nothing but the reference queues its blocks."""
    blocks = list(enumerate(expand(campaign)))
    shared = [(i, b) for i, b in blocks if not is_reference_block(campaign, b)]
    return shared or blocks


def is_reference_block(campaign: Campaign, block: TechniqueBlock) -> bool:
    return TECHNIQUES[campaign.techniques[block.index].kind].is_reference


class WorkQueue:
    """The queue tables in the store's PostgreSQL database. Every call is its own short
    transaction on its own connection (the heartbeat thread calls in beside the worker)."""

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
            METADATA.create_all(conn)
            known = {column["name"] for column in sa.inspect(conn).get_columns(JOBS.name)}
            for column in ("key_id", "signature", "lab", "not_after"):  # a database queued into before
                if column not in known:                                 # jobs were signed, or bound to a lab
                    conn.execute(sa.text(f"ALTER TABLE {JOBS.name} ADD COLUMN {column} TEXT"))
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
        (this machine's clock); returns it and how many cells were queued."""
        if campaign.info.adaptive:
            raise UserError("--queue: repetitions = \"auto\" decides each round from the last one, which "
                            "workers on several testbeds cannot share; give a number of repetitions")
        job_id, text = secrets.token_hex(4), json.dumps(campaign.source)
        source = json.loads(text)  # signed as a worker reads it back
        if sign:
            lab = self.lab()
            not_after = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=expires)
                         ).strftime("%Y-%m-%dT%H:%M:%SZ")
            job = Job(job_id, campaign.info.name, source, *sign(job_id, lab, not_after, source), lab, not_after)
        else:  # nothing binds an unsigned job: a database writer could write any (lab/trust.py)
            job = Job(job_id, campaign.info.name, source)
        shared = queued_blocks(campaign)
        with self.engine.begin() as conn:
            conn.execute(JOBS.insert().values(id=job.id, campaign=job.campaign, source=text, key_id=job.key_id,
                                              signature=job.signature, lab=job.lab, not_after=job.not_after))
            conn.execute(BLOCKS.insert(), [{"job_id": job.id, "position": position, "label": block.label,
                                            "cell_keys": json.dumps([c.key for c in block.cells])}
                                           for position, block in shared])
        return job, sum(len(block.cells) for _, block in shared)

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

    # --- workers ----------------------------------------------------------------------------

    def register(self, job: Job, testbed: str, run_id: str, lease: float) -> str:
        worker_id = f"{platform.node()}-{os.getpid()}-{secrets.token_hex(2)}"
        with self.engine.begin() as conn:
            conn.execute(WORKERS.insert().values(id=worker_id, job_id=job.id, run_id=run_id, hostname=platform.node(),
                                                 pid=os.getpid(), testbed=testbed, lease_seconds=lease,
                                                 state="working"))
        return worker_id

    def set_state(self, worker_id: str, state: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(WORKERS.update().where(WORKERS.c.id == worker_id)
                         .values(state=state, block_id=None, last_seen=sa.func.now()))
            if state != "finished":  # an interrupted worker's block goes back at once, its lease not awaited
                conn.execute(BLOCKS.update().where(BLOCKS.c.worker_id == worker_id, BLOCKS.c.state == "running")
                             .values(state="queued", worker_id=None, lease_until=None))

    # --- blocks -----------------------------------------------------------------------------

    def claim(self, job: Job, worker_id: str, positions: set[int], lease: float) -> Claim | None:
        """The first block this worker can run that is queued or whose holder's lease ran out."""
        claimable = sa.or_(BLOCKS.c.state == "queued",
                           sa.and_(BLOCKS.c.state == "running", BLOCKS.c.lease_until < sa.func.now()))
        with self.engine.begin() as conn:
            row = conn.execute(
                sa.select(BLOCKS).where(BLOCKS.c.job_id == job.id, BLOCKS.c.position.in_(positions), claimable)
                .order_by(BLOCKS.c.position).limit(1).with_for_update(skip_locked=True)).first()
            if row is None:
                return None
            previous = row.worker_id if row.state == "running" else None
            conn.execute(BLOCKS.update().where(BLOCKS.c.id == row.id).values(
                state="running", worker_id=worker_id, claims=BLOCKS.c.claims + 1,
                lease_until=sa.func.now() + datetime.timedelta(seconds=lease)))
            conn.execute(WORKERS.update().where(WORKERS.c.id == worker_id).values(block_id=row.id))
            if previous is not None:
                conn.execute(WORKERS.update().where(WORKERS.c.id == previous, WORKERS.c.state == "working")
                             .values(state="lost", block_id=None))
        return Claim(row.id, row.position, row.label, previous)

    def renew(self, worker_id: str, block_id: int | None, lease: float, within: sa.Connection | None = None) -> bool:
        """The heartbeat: the worker seen now, its block's lease extended. False when the block is
        no longer this worker's (its lease ran out and another worker took it). within: a transaction
        of the caller's, which then holds the block's row locked until it commits (the worker's fence)."""
        with contextlib.nullcontext(within) if within is not None else self.engine.begin() as conn:
            conn.execute(WORKERS.update().where(WORKERS.c.id == worker_id).values(last_seen=sa.func.now()))
            if block_id is None:
                return True
            held = conn.execute(BLOCKS.update().where(BLOCKS.c.id == block_id, BLOCKS.c.worker_id == worker_id,
                                                      BLOCKS.c.state == "running")
                                .values(lease_until=sa.func.now() + datetime.timedelta(seconds=lease)))
            return held.rowcount == 1

    def finish(self, job: Job, worker_id: str, block_id: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(BLOCKS.update().where(BLOCKS.c.id == block_id, BLOCKS.c.worker_id == worker_id)
                         .values(state="done", lease_until=None))
            conn.execute(WORKERS.update().where(WORKERS.c.id == worker_id).values(block_id=None))
            left = conn.scalar(sa.select(sa.func.count()).where(BLOCKS.c.job_id == job.id, BLOCKS.c.state != "done"))
            if left == 0:
                conn.execute(JOBS.update().where(JOBS.c.id == job.id, JOBS.c.finished_at.is_(None))
                             .values(finished_at=sa.func.now()))

    def outstanding(self, job: Job, positions: set[int]) -> int:
        """Blocks among these not done yet (queued, or held by a worker)."""
        with self.engine.connect() as conn:
            return conn.scalar(sa.select(sa.func.count()).where(
                BLOCKS.c.job_id == job.id, BLOCKS.c.position.in_(positions), BLOCKS.c.state != "done"))

    def done_keys(self, job: Job) -> set[str]:
        """The cells stored ok by any worker of the job: not measured again."""
        cells = RESULT_TABLES["cells"]
        query = (sa.select(cells.c.cell_key).join(WORKERS, WORKERS.c.run_id == cells.c.run_id)
                 .where(WORKERS.c.job_id == job.id, cells.c.status == "ok"))
        with self.engine.connect() as conn:
            return set(conn.scalars(query))

    # --- what `vpnbench status` shows --------------------------------------------------------

    def blocks(self, job: Job) -> list[BlockRow]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(BLOCKS).where(BLOCKS.c.job_id == job.id).order_by(BLOCKS.c.position))
            return [BlockRow(r.position, r.label, len(json.loads(r.cell_keys)), r.state, r.worker_id, r.claims)
                    for r in rows]

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


def _seconds(started: str | None, finished: str | None) -> float | None:
    try:
        return (datetime.datetime.fromisoformat(finished) - datetime.datetime.fromisoformat(started)).total_seconds()
    except (TypeError, ValueError):
        return None
