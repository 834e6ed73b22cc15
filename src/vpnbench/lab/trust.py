"""A lab worker runs only what its own operator allowed (issue 28).

Whoever can write the shared database can write a queued job, and a worker runs jobs as root.
So a worker takes from a job only the experiment, never the power of a root script:

- its own file (root's, on its machine) is the testbed: a job's [testbed] never sets `kind`,
  `inventory`, `hosts`, `ssh` or `sysctls` (campaign/privileged.py: TESTBED_OWNED), and a job
  that does is refused;
- a job that sets a technique's or measurement's privileged field (a hook, an external address,
  a directory: campaign/privileged.py: PRIVILEGED) runs only where the file's [worker] `allow`
  names that field;
- a job must be signed by a key the file's [worker] `trusted_keys` lists (lab/signing.py), and
  still match its signature; unsigned jobs run only where the file says `accept_unsigned = true`.

Each refusal is one line naming the field, before any host is touched; the job stays queued
for a worker that allows it.
"""

import dataclasses
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, field_validator

from vpnbench.campaign.privileged import PRIVILEGED, TESTBED_OWNED, privileged_settings
from vpnbench.campaign.spec import parse_toml, section_table
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import validate_model
from vpnbench.foundation.safe_files import read_own_file
from vpnbench.lab.queue import Job
from vpnbench.lab.signing import fingerprint, public_key, verify


class WorkerPolicy(BaseModel):
    """A worker file's [worker] table: whose jobs it runs, and which privileged fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trusted_keys: list[str] = []  # "ssh-ed25519 AAAA... comment" lines: the enqueuers it trusts
    # true: jobs without a signature run too (a lab whose database only its operator can write)
    accept_unsigned: bool = False
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


def admit(job: Job, policy: WorkerPolicy) -> None:
    """Nothing, when this worker may run the job; else UserError, one line naming the field."""
    left = f"job {job.id} left queued"
    _check_signature(job, policy, f"{left} for a worker that trusts its signer")
    if not isinstance(job.source, dict):
        raise UserError(f"queue_jobs.source: job {job.id} holds no campaign (a JSON object); {left}")
    for setting in privileged_settings(job.source):
        if setting.testbed_owned:
            raise UserError(f"{setting.where}: set by the queued job ({setting.why}); a worker's testbed is its "
                            f"own --testbed file's, never a job's; {left}")
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
    if not verify(key, job.id, job.source, job.signature):
        raise UserError(f"queue_jobs.source: job {job.id} does not match its signature by {job.key_id}: it was "
                        f"changed after it was queued; {left}")


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
