"""The lab's commands: `run --queue` (enqueue; with --every, a schedule), `worker`, `status`,
`cancel` and `scheduler`."""

import dataclasses
import datetime
import math
import re
from pathlib import Path

from rich.console import Console
from rich.table import Table

from vpnbench.campaign import Campaign, campaign_from_dict
from vpnbench.campaign.privileged import privileged_settings
from vpnbench.foundation.errors import UserError, VpnbenchError
from vpnbench.foundation.terminal_text import plain
from vpnbench.foundation.units import parse_duration
from vpnbench.lab import signing
from vpnbench.lab.engine import FETCH_POLL
from vpnbench.lab.queue import FollowerRow, Job, WorkerRow, WorkQueue, queued_blocks
from vpnbench.lab.ran_jobs import RanJobs
from vpnbench.lab.trust import WorkerFile, admit, queued_source, read_worker_file, without_testbed_owned
from vpnbench.run.context import RunOutcome
from vpnbench.run.hostfacts import summary_line
from vpnbench.run.lifecycle import Interrupted, stop_requested, stop_signals_raise
from vpnbench.store.database import Store, display_name, is_url

PLAN_AXES = ("cores", "mtu")  # [testbed] keys that shape the plan: the campaign's, never a worker's
EXPIRES_RANGE = (60.0, 365 * 86400.0)  # a signed job's life: a minute to a year


def expiry_seconds(text: str) -> float:
    """--expires: '7d', '12h', '30m' -> seconds, within EXPIRES_RANGE; UserError otherwise."""
    allowed = "allowed: a duration from 1m to 365d, e.g. 7d, 12h, 90m"
    days = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*d\s*", text)
    try:
        seconds = float(days.group(1)) * 86400 if days else parse_duration(text)
    except ValueError:
        raise UserError(f"--expires: {text!r} is not a duration; {allowed}") from None
    if not EXPIRES_RANGE[0] <= seconds <= EXPIRES_RANGE[1]:
        raise UserError(f"--expires: {text!r} is {seconds:.0f} s; {allowed}")
    return seconds


def open_queue(db: str, read_only: bool = False) -> tuple[Store, WorkQueue]:
    if not is_url(db):
        raise UserError(f"--db: the queue needs a PostgreSQL database (postgresql://...), not the SQLite file "
                        f"{db!r}: workers on other machines must reach it")
    store = Store(db, read_only=read_only)
    try:
        return store, WorkQueue(store)
    except BaseException:
        store.close()
        raise


def enqueue(campaign: Campaign, db: str, console: Console, signing_key: str | None = None,
            expires: str = "7d", every: str | None = None) -> int:
    """Queue the campaign's blocks, signed with the key in the file signing_key (None: unsigned)
    for the database's lab, to be started by workers within `expires` (--expires); with every (a
    cron line), a schedule that `vpnbench scheduler` queues on its cron."""
    seconds = expiry_seconds(expires)
    key = signing.load_signing_key(signing_key) if signing_key else None
    campaign = dataclasses.replace(campaign, source=queued_source(campaign.source))
    store, queue = open_queue(db)
    try:
        if every is not None:
            schedule = queue.schedule(campaign, every, key.sign if key else None, seconds)
            console.print(f"scheduled {schedule.id}: {campaign.name} on cron {every!r} in {display_name(db)}; "
                          "`vpnbench scheduler --db URL` queues each occurrence as a job", highlight=False)
            return 0
        job, cells = queue.enqueue(campaign, key.sign if key else None, seconds)
    finally:
        store.close()
    console.print(f"queued job {job.id}: {campaign.name}, {len(queue_positions(campaign))} blocks, {cells} cells "
                  f"in {display_name(db)}")
    console.print(f"signed by {key.key_id} for lab {job.lab} (workers whose file says [worker] lab = \"{job.lab}\"),"
                  f" to be started before {job.not_after}" if key else
                  "unsigned: workers run it only if their file says accept_unsigned = true, and none of its "
                  "privileged fields (sign with --signing-key FILE or VPNBENCH_SIGNING_KEY)", highlight=False)
    for setting in privileged_settings(campaign.source):
        console.print(f"{setting.where} ({setting.why}): runs only on workers whose file allows {setting.name}",
                      highlight=False)
    console.print(f"start workers (any number, on any machine that reaches the database): "
                  f"vpnbench worker --db URL --testbed TESTBED.toml --queue {job.id}")
    return 0


def keygen(out: str, console: Console) -> int:
    """`vpnbench keygen -o FILE`: a key pair to sign queued jobs with, and how workers trust it."""
    private_path, public_path, line = signing.keygen(out)
    console.print(f"wrote {private_path} (the private key, 0600: sign jobs with run --queue --signing-key "
                  f"{private_path}, or VPNBENCH_SIGNING_KEY) and {public_path}", highlight=False)
    console.print("a worker runs your jobs when its testbed file trusts the public key:", highlight=False)
    console.print(f"[worker]\ntrusted_keys = [\"{line}\"]", markup=False, highlight=False)
    return 0


def queue_positions(campaign: Campaign) -> list[int]:

    return [position for position, _ in queued_blocks(campaign)]


def worker_campaign(job: Job, testbed_file: str, now: datetime.datetime | None = None) -> Campaign:
    return campaign_on(job, read_worker_file(testbed_file), now or datetime.datetime.now(datetime.UTC))


def campaign_on(job: Job, own: WorkerFile, now: datetime.datetime) -> Campaign:
    """The queued campaign on this worker's testbed, if the worker's file lets it run the job
    (lab/trust.py): the file's [testbed] laid over the campaign's, which keeps its plan axes
    (cores, mtu) and never gives the keys the worker's file decides."""
    admit(job, own.policy, now)
    source = without_testbed_owned(job.source)
    queued = source.get("testbed", {})
    for axis in PLAN_AXES:
        if axis in own.testbed and own.testbed[axis] != queued.get(axis, []):
            raise UserError(f"--testbed: {axis} is an axis of the queued campaign's plan ({queued.get(axis, [])}); "
                            f"leave it out of the worker's testbed file")
    return campaign_from_dict({**source, "testbed": {**queued, **own.testbed}})


def work(db: str, testbed_file: str, job_id: str | None, name: str | None, lease: float, console: Console,
         follow: bool = False) -> int:
    if not lease >= 3:
        raise UserError(f"--lease: {lease:g} s; allowed: 3 s or more (the heartbeat renews it every third)")
    if follow and job_id:
        raise UserError(f"--queue: {job_id}: a worker that follows the queue takes every job it may run in turn; "
                        "allowed: --follow or --queue JOB, not both")
    store, queue = open_queue(db)
    try:
        if follow:
            return follow_queue(queue, testbed_file, name, lease, console)
        outcome = work_on(queue, queue.job(job_id), testbed_file, name, lease, console)
    finally:
        store.close()
    console.print(f"{outcome.ok} ok, {outcome.failed} failed — results in {display_name(db)} (run {outcome.run_id})")
    if outcome.interrupted:
        return 130
    return 1 if outcome.failed else 0


def work_on(queue: WorkQueue, job: Job, testbed_file: str, name: str | None, lease: float,
            console: Console) -> RunOutcome:
    """One job worked on this testbed until no block it can run is left, if its file lets it."""
    from vpnbench.lab.worker import Worker  # the runner (~0.5 s to load) only for `lab work`

    own = read_worker_file(testbed_file)
    campaign = campaign_for(queue, job, own, datetime.datetime.now(datetime.UTC))
    ran = RanJobs(own.policy.jobs_file)
    ran.refuse_finished(job)  # the database cannot say: its writers can re-open a finished job
    worker = Worker(queue, job, campaign, name or Path(testbed_file).stem, lease=lease, console=console)
    ran.started(job)
    outcome = worker.run()
    if not outcome.interrupted:
        ran.finished(job)  # no block this testbed can run is left: never again here
    return outcome


def campaign_for(queue: WorkQueue, job: Job, own: WorkerFile, now: datetime.datetime) -> Campaign:
    """campaign_on, and an occurrence of a schedule only while the schedule is there: a cancelled
    (or deleted) schedule's occurrence left in the queue does not run once more."""
    if job.schedule is not None and not queue.schedule_exists(job.schedule):
        raise UserError(f"queue_jobs.schedule: job {job.id} is an occurrence of schedule {job.schedule}, which is "
                        "no longer in lab_schedules (cancelled); job left queued")
    return campaign_on(job, own, now)


def follow_queue(queue: WorkQueue, testbed_file: str, name: str | None, lease: float, console: Console) -> int:
    """`vpnbench worker --follow`: job after job, the oldest unfinished one this worker has not
    passed, until SIGTERM or SIGINT. Idle, it waits on procrastinate's NOTIFY of a deferred job
    (WorkQueue.listening), looking anyway every FETCH_POLL seconds as procrastinate's worker does.
    A signal while a job runs stops it as it stops `vpnbench worker` (the cell in flight torn
    down, not stored ok; its block back in the queue for any worker, which measures that cell;
    nothing left on this machine: run/lifecycle.py); then the worker ends with 0, as a service
    that was told to stop does."""
    testbed = name or Path(testbed_file).stem
    read_worker_file(testbed_file)  # a bad file is one line now, not at the first job
    passed: set[str] = set()  # jobs this process worked on, or may not run: not looked at again
    follower = queue.follow(testbed)
    console.print(f"worker {follower} follows the queue on testbed {testbed}: every job it may run, until SIGTERM",
                  highlight=False)
    try:
        with stop_signals_raise(), queue.listening() as wait:
            while True:
                job = next((j for j in queue.jobs() if j.id not in passed), None)
                if stop_requested():  # a stop that came while the last job cleaned up (held there)
                    break
                if job is None:
                    queue.follower_state(follower, "idle")
                    wait(FETCH_POLL)
                    continue
                passed.add(job.id)
                queue.follower_state(follower, "working", job.id)
                try:
                    outcome = work_on(queue, job, testbed_file, name, lease, console)
                except VpnbenchError as exc:  # refused here (one line), or its testbed failed: the next job
                    console.print(f"passed job {job.id}: {exc}", highlight=False, markup=False)
                    continue
                console.print(f"job {job.id}: {outcome.ok} ok, {outcome.failed} failed (run {outcome.run_id})",
                              highlight=False)
                if outcome.interrupted:
                    break
    except Interrupted:
        pass  # between jobs, or while one was being started: nothing of a job's to give back
    finally:
        queue.follower_state(follower, "stopped")
    console.print(f"worker {follower} stopped", highlight=False)
    return 0


def cancel(db: str, job_id: str, console: Console) -> int:
    """`vpnbench cancel --queue JOB`: procrastinate's cancel with abort on each of the job's blocks.
    Queued ones never start; a running one stops before its next cell, its testbed torn down as
    after any block. A schedule's id (sXXXXXXXX) cancels the schedule and its unfinished occurrences."""
    store, queue = open_queue(db)
    try:
        occurrences = queue.cancel_schedule(job_id)
        if occurrences is not None:
            console.print(f"schedule {job_id} cancelled: the scheduler queues no more of it", highlight=False)
            for job, cancelled, stopping in occurrences:
                console.print(f"job {job.id}: {cancelled} queued blocks cancelled, {stopping} running ones stop "
                              "before their next cell", highlight=False)
            return 0
        job = queue.job(job_id)
        cancelled, stopping = queue.cancel(job)
    finally:
        store.close()
    console.print(f"job {job.id}: {cancelled} queued blocks cancelled, {stopping} running ones stop before their "
                  "next cell", highlight=False)
    return 0


def scheduler(db: str, console: Console) -> int:
    """`vpnbench scheduler`: procrastinate's worker deferring each schedule (lab_schedules) on its
    cron as a periodic task, whose run queues the occurrence as a job. Runs until SIGINT/SIGTERM."""
    from vpnbench.lab.engine import SCHEDULE_QUEUE, SCHEDULE_TASK, make_app

    store, queue = open_queue(db)
    try:
        schedules = queue.schedules()
        if not schedules:
            raise UserError(f"--db: no schedule in {display_name(db)}; make one with "
                            "`vpnbench run CAMPAIGN --queue --every CRON`")
        app = make_app(str(store.target), worker=True)

        @app.task(name=SCHEDULE_TASK, queue=SCHEDULE_QUEUE)
        def occur(timestamp: int, schedule: str) -> None:
            job = queue.occur(schedule, timestamp)
            if job is not None:
                console.print(f"queued job {job.id}: {job.campaign} (schedule {schedule})", highlight=False)

        for schedule_id, cron in schedules:
            app.periodic(cron=cron, periodic_id=schedule_id, task_kwargs={"schedule": schedule_id})(occur)
            console.print(f"schedule {schedule_id}: cron {cron!r}", highlight=False)
        app.run_worker(queues=[SCHEDULE_QUEUE], wait=True, install_signal_handlers=True)
    finally:
        store.close()
    return 0


def status(db: str, job_id: str | None, every: bool, console: Console) -> int:
    store, queue = open_queue(db, read_only=True)
    try:
        jobs = queue.jobs(job_id, unfinished=not every)
        if job_id and not jobs:
            raise UserError(f"--queue: no job {job_id!r} in {display_name(db)}")
        if not jobs:
            console.print(f"no unfinished job in {display_name(db)} (--all lists the finished ones)")
        for job in jobs:
            show_job(store, queue, job, console)
        show_followers(queue.followers(), console)
    finally:
        store.close()
    return 0


def show_job(store: Store, queue: WorkQueue, job: Job, console: Console) -> None:
    blocks, workers = queue.blocks(job), queue.workers(job)
    states = {state: sum(1 for b in blocks if b.state == state)
              for state in ("done", "running", "queued", "failed", "cancelled", "stopping")}
    done_keys = queue.done_keys(job)
    cells_total = sum(b.cells for b in blocks)
    live = [w for w in workers if w.state == "working" and w.seen_ago <= w.lease]
    left = sum(b.cells for b in blocks if b.state in ("queued", "running", "stopping"))
    console.print(f"[bold]job {plain(job.id)}[/] {plain(job.campaign)}: {states['done']} of {len(blocks)} blocks done, "
                  f"{states['running']} running, {states['queued']} queued"
                  + "".join(f", {states[s]} {s}" for s in ("failed", "cancelled", "stopping") if states[s])
                  + f"; {left} of {cells_total} queued cells "
                  f"left; {len(done_keys)} cells ok in all; {eta(queue.cell_seconds(job), left, len(live))}")
    table = Table("worker", "host", "testbed", "state", "last seen", "block", "cells ok", "run", title_justify="left")
    for w in workers:
        table.add_row(*map(plain, (w.id, w.hostname, w.testbed, w.state, f"{w.seen_ago:.0f} s ago", w.block or "",
                                   w.cells_ok, w.run_id or "")))
    console.print(table)
    ended = [b for b in blocks if b.reason]
    if ended:  # the operator's why: procrastinate's state and attempts, vpnbench's reason
        why = Table("block", "state", "attempts", "why", title_justify="left")
        for b in ended:
            why.add_row(*map(plain, (b.label, b.state, b.claims, b.reason)))
        console.print(why)
    for warning in facts_differ(store, workers):
        console.print(f"[yellow]warning:[/] {plain(warning)}")


def show_followers(followers: list[FollowerRow], console: Console) -> None:
    """The workers that follow the queue (worker --follow), idle between jobs or working on one."""
    if not followers:
        return
    table = Table("following worker", "host", "testbed", "state", "last seen", title_justify="left")
    for f in followers:
        # an idle one looks every FETCH_POLL s: three looks missed, it was killed (kill -9, a reboot)
        state = (f"working on job {f.job_id}" if f.state == "working"
                 else "gone? (idle, not seen for 3 looks)" if f.seen_ago > 3 * FETCH_POLL else f.state)
        table.add_row(*map(plain, (f.id, f.hostname, f.testbed, state, f"{f.seen_ago:.0f} s ago")))
    console.print(table)


def eta(cell_seconds: float | None, cells_left: int, live_workers: int) -> str:
    if cells_left == 0:
        return "finished"
    if cell_seconds is None or live_workers == 0:
        return "ETA unknown (no worker measuring yet)" if live_workers == 0 else "ETA after the first cell"
    seconds = math.ceil(cell_seconds * cells_left / live_workers)
    return f"ETA {seconds // 60} min {seconds % 60} s at {live_workers} worker{'s' if live_workers > 1 else ''}"


def facts_differ(store: Store, workers: list[WorkerRow]) -> list[str]:
    """One line per role whose host facts differ between the job's testbeds: their costs are each
    against their own baseline, but their absolute numbers are not one population."""
    by_role: dict[str, dict[str, str]] = {}
    for worker in workers:
        if worker.run_id is None:
            continue
        for facts in store.host_facts(worker.run_id):
            by_role.setdefault(facts.host, {})[worker.testbed] = summary_line(facts.facts)
    return [f"the testbeds' {role} hosts differ: " + "; ".join(f"{tb}: {line}" for tb, line in seen.items())
            for role, seen in by_role.items() if len(set(seen.values())) > 1]


def report_job(db: str, job_id: str, output: str, console: Console) -> int:
    """A job's report: its testbeds side by side (the compare page; each testbed's costs against
    its own baseline), with a warning when their host facts differ."""
    from vpnbench.views.compare import terminal_table, write_compare  # the report and pandas (~1.3 s) only here

    out = Path(output)
    store, queue = open_queue(db, read_only=True)
    try:
        job = queue.job(job_id)
        workers = [w for w in queue.workers(job) if w.run_id and w.cells_ok]
        warnings = facts_differ(store, workers)
    finally:
        store.close()
    if len(workers) < 2:
        raise UserError(f"--queue: job {job.id} has results from {len(workers)} testbed(s); its report sets "
                        f"two or more side by side (one testbed: vpnbench report --run RUN)")
    sources, rows = write_compare([f"{db}#{w.run_id}" for w in workers], out, warnings)
    for source in sources:
        console.print(plain(source.title))
    console.print(terminal_table(sources, rows))
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {plain(warning)}")
    console.print(f"wrote job {job.id}'s report to {out}")
    return 0
