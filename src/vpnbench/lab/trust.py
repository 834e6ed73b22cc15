"""A lab worker runs only what its own operator allowed (issue 28).

Whoever can write the shared database can write a queued job, and a worker runs jobs as root.
So a worker takes from a job only the experiment, never the power of a root script:

- its own file (root's, on its machine) is the testbed: a job's [testbed] never sets `kind`,
  `inventory`, `hosts`, `ssh` or `sysctls` (campaign/privileged.py: TESTBED_OWNED), and a job
  that does is refused;
- a job that sets a technique's or measurement's privileged field (a hook, an external address,
  a directory: campaign/privileged.py: PRIVILEGED) runs only where the file's [worker] `allow`
  names that field;
- a job must be signed by a key the file's [worker] `trusted_keys` lists (lab/signing.py), still
  match its signature, be signed for the lab the file's [worker] `lab` names (not copied from
  another lab's database) and not have expired (its signed `not_after`, on this machine's clock);
- unsigned jobs run only where the file says `accept_unsigned = true`, and never with a
  privileged field: a database writer could have written them, or stripped a signed job's
  signature, so what they may do is what the database's writers may do, and `allow` is a
  signer's grant only;
- a job this worker finished is not run again (lab/ran_jobs.py: its own root file, not the
  database, whose writers can re-open a finished job).

Each refusal is one line naming the field, before any host is touched; the job stays queued
for a worker that allows it.
"""

import dataclasses
import datetime
from pathlib import Path
from typing import Literal

import croniter
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, field_validator

from vpnbench.campaign.privileged import PRIVILEGED, TESTBED_OWNED, privileged_settings
from vpnbench.campaign.spec import parse_toml, section_table
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import validate_model
from vpnbench.foundation.safe_files import read_own_file
from vpnbench.lab.engine import next_occurrence
from vpnbench.lab.queue import Job
from vpnbench.lab.signing import fingerprint, public_key, verify


class WorkerPolicy(BaseModel):
    """A worker file's [worker] table: whose jobs it runs, and which privileged fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trusted_keys: list[str] = []  # "ssh-ed25519 AAAA... comment" lines: the enqueuers it trusts
    # true: jobs without a signature run too, with no privileged field (a lab whose database only its operator writes)
    accept_unsigned: bool = False
    lab: str | None = None  # the lab whose signed jobs it runs: its queue database's name (queue_lab)
    jobs_file: str = "/var/lib/vpnbench/worker-jobs"  # the jobs it ran (lab/ran_jobs.py), root's, 0600
    allow: list[Literal[tuple(PRIVILEGED)]] = []  # privileged fields a job may set, e.g. technique.external.up_hook

    @field_validator("trusted_keys")
    @classmethod
    def _ed25519(cls, lines: list[str]) -> list[str]:
        for line in lines:
            public_key(line)
        return lines

    def keys(self) -> dict[str, Ed25519PublicKey]:
        return {fingerprint(key): key for key in map(public_key, self.trusted_keys)}


@dataclasses.dataclass(frozen=True)
class WorkerFile:
    testbed: dict  # its [testbed] as written
    policy: WorkerPolicy


def read_worker_file(path: str) -> WorkerFile:
    """The worker's file, read through the descriptor whose owner and mode were checked: it
    decides what this worker runs as root, so only this user may write it."""
    text = read_own_file(path, f"--testbed: {path}", 0o022, "no one else may write (chmod go-w): a worker's "
                         "file decides what it runs as root").decode(errors="replace")
    data = parse_toml(text, Path(path))
    return WorkerFile(section_table(data, "testbed"), validate_model(WorkerPolicy, section_table(data, "worker"),
                                                                     "worker"))


def admit(job: Job, policy: WorkerPolicy, now: datetime.datetime) -> None:
    """Nothing, when this worker may run the job at `now` (aware, this machine's clock); else
    UserError, one line naming the field."""
    left = f"job {job.id} left queued"
    _check_signature(job, policy, f"{left} for a worker that trusts its signer")
    if job.signature is not None:
        _check_scope(job, policy, now, left)
    if job.schedule is not None:
        _check_occurrence(job, now, left)
    if not isinstance(job.source, dict):
        raise UserError(f"queue_jobs.source: job {job.id} holds no campaign (a JSON object); {left}")
    for setting in privileged_settings(job.source):
        if setting.testbed_owned:
            raise UserError(f"{setting.where}: set by the queued job ({setting.why}); a worker's testbed is its "
                            f"own --testbed file's, never a job's; {left}")
        if job.signature is None:
            raise UserError(f"{setting.where}: {setting.why}, and job {job.id} is not signed: this worker runs "
                            "privileged fields only from jobs signed by a key its file trusts ([worker] "
                            f"trusted_keys and allow), as anyone who writes the database could write this one; {left}")
        if setting.name not in policy.allow:
            raise UserError(f"{setting.where}: {setting.why}, which this worker's file does not allow "
                            f"([worker] allow = [\"{setting.name}\"]); {left} for a worker that allows it")


def _check_signature(job: Job, policy: WorkerPolicy, left: str) -> None:
    if job.signature is None:
        if not policy.accept_unsigned:
            raise UserError(f"queue_jobs.signature: job {job.id} is not signed; this worker runs jobs signed by a "
                            "key its file trusts ([worker] trusted_keys; the enqueuer's run --queue --signing-key), "
                            f"unsigned ones only if its file says accept_unsigned = true; {left}")
        return
    key = policy.keys().get(job.key_id)
    if key is None:
        raise UserError(f"queue_jobs.key_id: job {job.id} is signed by {job.key_id!r}, a key this worker's file "
                        f"does not trust ([worker] trusted_keys); {left}")
    if job.lab is None or job.not_after is None:
        raise UserError(f"queue_jobs.lab: job {job.id} was signed without a lab and an expiry (the first "
                        f"version of job signatures); queue it again with run --queue --signing-key; {left}")
    if not verify(key, job.signed_id, job.lab, job.not_after, job.source, job.signature):
        raise UserError(f"queue_jobs.source: job {job.id} does not match its signature by {job.key_id}: it was "
                        f"changed after it was queued; {left}")


def _check_scope(job: Job, policy: WorkerPolicy, now: datetime.datetime, left: str) -> None:
    """A verified job: signed for this worker's lab, and not expired."""
    if policy.lab is None:
        raise UserError(f"worker.lab: job {job.id} is signed for lab {job.lab!r} and this worker's file names no lab; "
                        f"a worker of that lab says so in its file ([worker] lab = \"{job.lab}\", the name `run "
                        f"--queue` prints); {left}")
    if job.lab != policy.lab:
        raise UserError(f"queue_jobs.lab: job {job.id} is signed for lab {job.lab!r}, not this worker's "
                        f"{policy.lab!r} ([worker] lab): copied from another lab's database; {left}")
    try:
        not_after = datetime.datetime.fromisoformat(job.not_after)
    except ValueError:
        not_after = None
    if not_after is None or not_after.tzinfo is None:
        raise UserError(f"queue_jobs.not_after: job {job.id} expires at {job.not_after!r}, not a UTC time; {left}")
    if now > not_after:
        raise UserError(f"queue_jobs.not_after: job {job.id} expired at {job.not_after} (it is "
                        f"{now.astimezone(datetime.UTC):%Y-%m-%dT%H:%M:%SZ} here); queue it again "
                        f"(run --queue --expires) to run it; {left}")


CLOCKS_APART = 600  # seconds the scheduler's clock may run ahead of a worker's (docs: within minutes)


def _check_occurrence(job: Job, now: datetime.datetime, left: str) -> None:
    """An occurrence of a schedule (id SCHEDULE-TIMESTAMP) at a time its cron names, and not one
    to come: a database writer may insert jobs that carry a schedule's signature, but only at the
    times the enqueuer signed (each once per machine: ran_jobs)."""
    stamp = job.id.removeprefix(f"{job.schedule}-")
    if stamp == job.id or not stamp.isdigit():
        raise UserError(f"queue_jobs.id: job {job.id} is not an occurrence of schedule {job.schedule} (its id is "
                        f"{job.schedule}-TIMESTAMP); {left}")
    at = int(stamp)
    try:  # as procrastinate's periodic deferrer counts: croniter on the epoch seconds (UTC)
        named = round(croniter.croniter(job.cron or "", at - 1).get_next(float))
    except (ValueError, KeyError, TypeError):
        named = None
    when = f"{datetime.datetime.fromtimestamp(at, datetime.UTC):%Y-%m-%dT%H:%M:%SZ}"
    if named != at:
        raise UserError(f"queue_jobs.id: job {job.id} claims an occurrence at {when} of schedule {job.schedule}, "
                        f"whose cron {job.cron!r} names no such time: not queued by the scheduler; {left}")
    if at > now.timestamp() + CLOCKS_APART:
        raise UserError(f"queue_jobs.id: job {job.id} is the occurrence at {when} of schedule {job.schedule}, not "
                        f"due yet (it is {now.astimezone(datetime.UTC):%Y-%m-%dT%H:%M:%SZ} here); {left}")
    # and not a backlog: the scheduler queues only the latest occurrence due (lab/engine.py: CATCH_UP),
    # so one the cron has named a later time after (beyond the clocks' slack) is a database
    # writer's, or one no worker started within its period: the later occurrence runs instead
    later = next_occurrence(job.cron, at)
    if later + CLOCKS_APART <= now.timestamp():
        raise UserError(f"queue_jobs.id: job {job.id} is the occurrence at {when} of schedule {job.schedule}, "
                        f"superseded by the one at {datetime.datetime.fromtimestamp(later, datetime.UTC):%Y-%m-%dT%H:%M:%SZ}"
                        f" (a schedule runs its latest occurrence, never a backlog); {left}")


def queued_source(source: dict) -> dict:
    """What a job carries: the campaign without the [testbed] keys each worker's own file decides.
    Such a key set to other than its default is refused: the workers would not honour it."""
    for setting in privileged_settings(source):
        if setting.testbed_owned:
            raise UserError(f"{setting.where}: {setting.why}: each worker's own --testbed file decides it, not a "
                            "queued campaign; leave it out of the campaign (put it in the workers' files)")
    return without_testbed_owned(source)


def without_testbed_owned(source: dict) -> dict:
    if not isinstance(source.get("testbed"), dict):
        return source
    return {**source, "testbed": {k: v for k, v in source["testbed"].items() if k not in TESTBED_OWNED}}
