"""A lab worker runs only what its own operator allowed (issue 28 item 1).

Whoever holds the shared database's credentials can edit a queued job. Here a job is edited
in a real PostgreSQL (tests/pg.py) the way such a user would: a hook, an ssh setting, a sysctl,
an external address, an inventory, a directory added to its JSON, or its campaign changed after
it was signed. `vpnbench worker` refuses each with one line naming the field and exit 2, before
any host is touched: the hook's file is never made, the blocks stay queued, no worker or run is
written. A worker whose file trusts the signer and allows the hook runs the job (a namespace
testbed, baseline and ping). The list of privileged fields is checked against the whole schema."""

import dataclasses
import datetime
import ipaddress
import json
import os
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from conftest import run_cli
from vpnbench.campaign.privileged import PRIVILEGED, TESTBED_OWNED, privileged_settings
from vpnbench.campaign.spec import CampaignInfo
from vpnbench.commands.lab import expiry_seconds
from vpnbench.foundation.errors import UserError
from vpnbench.impair.model import ImpairmentParams
from vpnbench.lab import signing
from vpnbench.lab.queue import Job, WorkQueue, schedule_signed_id
from vpnbench.lab.ran_jobs import RanJobs
from vpnbench.lab.trust import WorkerPolicy, admit, read_worker_file
from vpnbench.measure import MEASUREMENTS
from vpnbench.store.database import Store
from vpnbench.techniques import TECHNIQUES
from vpnbench.testbeds.spec import TestbedSpec

CAMPAIGN = """
[campaign]
name = "lab"
[testbed]
kind = "local"
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[measurement]]
kind = "ping"
count = 3
interval = "0.2s"
"""

# --- the declared list against the schema -------------------------------------------------------

# Words of a field's name that say it runs something, names a file or reaches somewhere.
RISKY_WORDS = {"hook", "command", "cmd", "argv", "exec", "script", "program", "file", "path", "dir", "directory",
               "inventory", "host", "hosts", "addr", "address", "ipv4", "ipv6", "target", "url", "uri", "server",
               "client", "sysctl", "sysctls", "ssh", "key", "identity", "known", "config", "proxy", "socket", "filter"}
# Fields those words or their types flag that were looked at and do none of it.
REVIEWED = {
    "technique.external.wire_filter": "a tcpdump filter expression: it selects packets, it cannot run or reach anything",
    "testbed.nat": "RFC 4787's NAT type names (a closed set, checked) or their fractions; NATs are made only in the "
                   "run's own namespaces (nodes is kind = 'local' only), so it names no file and reaches no machine",
}


def schema_fields():
    """(dotted name, field) of every field a campaign file can set, nested models included."""
    models = [("campaign", CampaignInfo), ("testbed", TestbedSpec), ("impairment", ImpairmentParams)]
    models += [(f"technique.{kind}", cls.Params) for kind, cls in TECHNIQUES.items()]
    models += [(f"measurement.{kind}", cls.Params) for kind, cls in MEASUREMENTS.items()]
    for prefix, model in models:
        yield from _fields(model, prefix)


def _fields(model, prefix):
    for name, field in model.model_fields.items():
        yield f"{prefix}.{name}", field
        for nested in _types(field.annotation):
            if isinstance(nested, type) and issubclass(nested, BaseModel):
                yield from _fields(nested, f"{prefix}.{name}")


def _types(annotation):
    yield annotation
    for arg in typing.get_args(annotation):
        yield from _types(arg)


def risky(name: str, field) -> bool:
    """A field whose name or type says hook, command, file, path or address, and that takes an
    open value (not a closed set of words, a number or a switch)."""
    types = list(_types(field.annotation))
    reaching = {ipaddress.IPv4Address, ipaddress.IPv6Address, Path}
    if any(t in reaching for t in types) or any(typing.get_origin(t) is list and typing.get_args(t) == (str,)
                                                for t in types):
        return True
    open_value = any(t is str or t is dict or typing.get_origin(t) is dict
                     or (isinstance(t, type) and issubclass(t, BaseModel)) for t in types)
    return open_value and bool(set(re.split(r"[._]", name.split(".")[-1])) & RISKY_WORDS)


def covered(name: str) -> bool:
    declared = set(PRIVILEGED) | {f"testbed.{key}" for key in TESTBED_OWNED}
    return any(name == d or name.startswith(f"{d}.") for d in declared)


def test_every_field_that_runs_names_a_file_or_reaches_out_is_declared_privileged():
    fields = dict(schema_fields())
    flagged = [name for name, field in fields.items() if risky(name, field)]
    assert [name for name in flagged if not covered(name) and name not in REVIEWED] == []
    # the heuristic finds what the list declares (it would find a new field like them) ...
    assert {"technique.external.up_hook", "technique.external.server_ipv4", "measurement.transfer.directory",
            "testbed.ssh.config_file", "testbed.inventory", "testbed.sysctls"} <= set(flagged)
    # ... and the list names only fields that exist
    assert [name for name in [*PRIVILEGED, *(f"testbed.{k}" for k in TESTBED_OWNED), *REVIEWED]
            if name not in fields] == []
    # privileged_settings reads raw keys: no field may be set under another name
    assert [name for name, field in fields.items() if field.alias or field.validation_alias] == []


def test_privileged_settings_names_each_field_set_and_ignores_defaults():
    source = {"testbed": {"kind": "local", "ssh": {}, "sysctls": {"net.core.rmem_max": 1}, "router": False},
              "technique": [{"kind": "baseline"}, {"kind": "external", "up_hook": ["/bin/true"], "down_hook": None,
                                                   "server_ipv4": "192.0.2.1"}],
              "measurement": [{"kind": "transfer", "directory": "/dev/shm"}, {"kind": "transfer", "directory": "/etc"}]}
    assert [(s.where, s.name) for s in privileged_settings(source)] == [
        ("testbed.sysctls", "testbed.sysctls"), ("technique[2].up_hook", "technique.external.up_hook"),
        ("technique[2].server_ipv4", "technique.external.server_ipv4"),
        ("measurement[2].directory", "measurement.transfer.directory")]


# --- keys and signatures -----------------------------------------------------------------------

@pytest.fixture
def key_pair(tmp_path) -> tuple[Path, str]:
    private, public, line = signing.keygen(str(tmp_path / "enqueuer"))
    assert (os.stat(private).st_mode & 0o777, public.read_text()) == (0o600, line + "\n")
    return private, line


LATER = "2030-01-01T00:00:00Z"


def test_a_signature_covers_the_job_id_lab_expiry_and_campaign_whatever_its_key_order(key_pair):
    key = signing.load_signing_key(str(key_pair[0]))
    public = signing.public_key(key_pair[1])
    key_id, signature = key.sign("job1", "lab-a", LATER, {"a": 1, "b": [1.5, "x"]})
    assert key_id == key.key_id == signing.fingerprint(public)
    assert signing.verify(public, "job1", "lab-a", LATER, {"b": [1.5, "x"], "a": 1}, signature)
    assert not signing.verify(public, "job2", "lab-a", LATER, {"a": 1, "b": [1.5, "x"]}, signature)  # another job
    assert not signing.verify(public, "job1", "lab-b", LATER, {"a": 1, "b": [1.5, "x"]}, signature)  # another lab
    assert not signing.verify(public, "job1", "lab-a", "2031-01-01T00:00:00Z", {"a": 1, "b": [1.5, "x"]}, signature)
    assert not signing.verify(public, "job1", "lab-a", LATER, {"a": 2, "b": [1.5, "x"]}, signature)
    assert not signing.verify(public, "job1", "lab-a", LATER, {"a": 1, "b": [1.5, "x"]}, "not base64!")


# --- a job's scope: its lab, its expiry, unsigned jobs, what a worker ran (issue 39 item 6) ------

HOOKED = {"campaign": {"name": "c"}, "technique": [{"kind": "baseline"},
                                                    {"kind": "external", "protection": "none", "up_hook": ["/bin/true"]}]}
NOW = datetime.datetime(2029, 6, 1, tzinfo=datetime.UTC)


def signed_job(key_pair, lab: str = "lab-a", not_after: str = LATER, source: dict = HOOKED) -> Job:
    key = signing.load_signing_key(str(key_pair[0]))
    return Job("job1", "c", source, *key.sign("job1", lab, not_after, source), lab, not_after)


def policy(key_pair, **worker) -> WorkerPolicy:
    return WorkerPolicy(**{"trusted_keys": [key_pair[1]], "lab": "lab-a",
                           "allow": ["technique.external.up_hook"], **worker})


def refusal(job: Job, worker: WorkerPolicy, now: datetime.datetime = NOW) -> str:
    with pytest.raises(UserError) as refused:
        admit(job, worker, now)
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_a_job_signed_for_another_lab_or_past_its_expiry_is_refused_and_neither_can_be_edited(key_pair):
    job = signed_job(key_pair)
    admit(job, policy(key_pair), NOW)
    admit(job, policy(key_pair), datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC))  # up to not_after itself
    assert refusal(job, policy(key_pair, lab="lab-b")) == (
        "queue_jobs.lab: job job1 is signed for lab 'lab-a', not this worker's 'lab-b' ([worker] lab): copied from "
        "another lab's database; job job1 left queued")
    assert refusal(job, policy(key_pair, lab=None)).startswith(
        "worker.lab: job job1 is signed for lab 'lab-a' and this worker's file names no lab; ")
    assert refusal(job, policy(key_pair), datetime.datetime(2030, 1, 1, 0, 0, 1, tzinfo=datetime.UTC)) == (
        "queue_jobs.not_after: job job1 expired at 2030-01-01T00:00:00Z (it is 2030-01-01T00:00:01Z here); queue "
        "it again (run --queue --expires) to run it; job job1 left queued")
    # a database writer's edits of the lab or the expiry break the signature
    for edited in (dataclasses.replace(job, lab="lab-b"), dataclasses.replace(job, not_after="2099-01-01T00:00:00Z")):
        assert refusal(edited, policy(key_pair, lab=edited.lab)).startswith(
            "queue_jobs.source: job job1 does not match its signature by SHA256:")
    # a job signed before signatures bound a lab and an expiry
    assert refusal(dataclasses.replace(job, lab=None, not_after=None), policy(key_pair)).startswith(
        "queue_jobs.lab: job job1 was signed without a lab and an expiry")


def test_a_forged_occurrence_of_a_signed_schedule_is_refused_and_its_cron_cannot_be_edited(key_pair):
    """A database writer can insert jobs carrying a schedule's signature (issue 43 item 3): only
    the times its signed cron names run. Nightly at 02:00 UTC: 2029-06-01T02:00:00Z is one."""
    key = signing.load_signing_key(str(key_pair[0]))
    cron = "0 2 * * *"
    signed = key.sign(schedule_signed_id("s1", cron), "lab-a", LATER, HOOKED)

    def occurrence(at: datetime.datetime, cron: str = cron) -> Job:
        return Job(f"s1-{int(at.timestamp())}", "c", HOOKED, *signed, "lab-a", LATER, "s1", cron)

    nightly = datetime.datetime(2029, 6, 1, 2, tzinfo=datetime.UTC)
    admit(occurrence(nightly), policy(key_pair), nightly)
    # yesterday's, waiting in the queue at 01:59 today: still the latest the cron named
    admit(occurrence(nightly - datetime.timedelta(days=1)), policy(key_pair), nightly - datetime.timedelta(minutes=1))
    forged = occurrence(nightly + datetime.timedelta(hours=1))  # 03:00: no occurrence of 0 2 * * *
    assert refusal(forged, policy(key_pair), nightly + datetime.timedelta(hours=2)) == (
        f"queue_jobs.id: job {forged.id} claims an occurrence at 2029-06-01T03:00:00Z of schedule s1, whose cron "
        f"'0 2 * * *' names no such time: not queued by the scheduler; job {forged.id} left queued")
    assert refusal(occurrence(nightly + datetime.timedelta(days=1)), policy(key_pair), nightly).startswith(
        f"queue_jobs.id: job s1-{int(nightly.timestamp()) + 86400} is the occurrence at 2029-06-02T02:00:00Z of "
        "schedule s1, not due yet")
    assert refusal(dataclasses.replace(occurrence(nightly), id="s1-tonight"), policy(key_pair), nightly).startswith(
        "queue_jobs.id: job s1-tonight is not an occurrence of schedule s1")
    # the cron edited to name the forged time breaks the signature
    hourly = occurrence(nightly + datetime.timedelta(hours=1), cron="0 * * * *")
    assert refusal(hourly, policy(key_pair), nightly + datetime.timedelta(hours=2)).startswith(
        f"queue_jobs.source: job {hourly.id} does not match its signature by SHA256:")


def test_a_backlog_of_a_signed_schedules_past_occurrences_is_refused(key_pair):
    """Issue 43: a database writer could insert every past occurrence the cron names within the
    signed expiry (7 days: 7 nightly runs, 168 hourly ones). A worker runs an occurrence only while
    it is the latest one due, within the clocks' slack (CLOCKS_APART, 600 s)."""
    key = signing.load_signing_key(str(key_pair[0]))
    cron = "0 * * * *"  # hourly
    signed = key.sign(schedule_signed_id("s1", cron), "lab-a", LATER, HOOKED)
    now = datetime.datetime(2029, 6, 1, 12, 30, tzinfo=datetime.UTC)

    def occurrence(hours_ago: int) -> Job:
        at = int((now.replace(minute=0) - datetime.timedelta(hours=hours_ago)).timestamp())
        return Job(f"s1-{at}", "c", HOOKED, *signed, "lab-a", LATER, "s1", cron)

    admit(occurrence(0), policy(key_pair), now)  # 12:00, the latest
    admit(occurrence(1), policy(key_pair), now.replace(minute=9))  # 11:00 at 12:09: within the slack
    for hours_ago in (1, 5, 24 * 3):
        assert refusal(occurrence(hours_ago), policy(key_pair), now).startswith(
            f"queue_jobs.id: job {occurrence(hours_ago).id} is the occurrence at ")
        assert "superseded by the one at " in refusal(occurrence(hours_ago), policy(key_pair), now)


def test_an_unsigned_job_runs_no_privileged_field_even_where_allowed_so_a_stripped_signature_gains_nothing(key_pair):
    job = signed_job(key_pair)
    stripped = dataclasses.replace(job, key_id=None, signature=None)
    worker = policy(key_pair, accept_unsigned=True)
    admit(job, worker, NOW)
    assert refusal(stripped, worker).startswith(
        "technique[2].up_hook: a command run as root on the worker's machine, and job job1 is not signed: this worker "
        "runs privileged fields only from jobs signed by a key its file trusts")
    plain = {"campaign": {"name": "c"}, "technique": [{"kind": "baseline"}]}
    admit(Job("job2", "c", plain), worker, NOW)  # what any database writer could queue, where the file accepts it
    assert refusal(Job("job2", "c", plain), policy(key_pair)).startswith("queue_jobs.signature: job job2 is not signed")


def test_a_job_this_machine_finished_is_refused_one_it_left_unfinished_may_be_joined_again(key_pair, tmp_path):
    job = signed_job(key_pair)
    ran = RanJobs(str(tmp_path / "state" / "worker-jobs"))
    ran.refuse_finished(job)
    ran.started(job)
    ran.refuse_finished(job)  # interrupted or killed: this worker may continue it
    assert oct((tmp_path / "state").stat().st_mode & 0o777) == "0o700"
    assert oct((tmp_path / "state" / "worker-jobs").stat().st_mode & 0o777) == "0o600"
    ran.finished(job)
    with pytest.raises(UserError, match=r"^queue_jobs.finished_at: job job1 was finished by this machine's worker at "
                                        r"\S+Z \(.*worker-jobs\); a finished job is never run again \(re-opened in the "
                                        r"database\?\); job left queued$"):
        ran.refuse_finished(job)
    same_signature = dataclasses.replace(job, id="renamed")  # the id edited: its signature is the one that ran
    with pytest.raises(UserError, match=r"^queue_jobs.finished_at: job renamed was finished"):
        ran.refuse_finished(same_signature)
    ran.refuse_finished(Job("job2", "c", {}))  # another job

    os.chmod(tmp_path / "state" / "worker-jobs", 0o644)  # what decides replays is root's alone
    with pytest.raises(UserError, match=r"^worker.jobs_file: .* mode 0644; allowed: a regular file of this user"):
        ran.refuse_finished(job)
    os.chmod(tmp_path / "state" / "worker-jobs", 0o600)
    os.chmod(tmp_path / "state", 0o777)
    with pytest.raises(UserError, match=r"^worker.jobs_file: .*/state is owned by uid 0 with mode 0777; allowed: "):
        ran.refuse_finished(job)
    os.chmod(tmp_path / "state", 0o700)
    (tmp_path / "elsewhere").write_text("")
    os.symlink(tmp_path / "elsewhere", tmp_path / "state" / "linked")
    with pytest.raises(UserError, match=r"^worker.jobs_file: .*linked: Too many levels of symbolic links$"):
        RanJobs(str(tmp_path / "state" / "linked")).refuse_finished(job)


def test_expires_takes_a_minute_to_a_year_and_a_bad_one_queues_nothing(postgres, tmp_path):
    assert [expiry_seconds(text) for text in ("7d", "12h", "90m", "1m", "365d")] == [
        604800, 43200, 5400, 60, 31536000]
    url = postgres.create_database("trust_expires")
    (tmp_path / "lab.toml").write_text(CAMPAIGN)
    for text, why in (("2y", "is not a duration"), ("30s", "is 30 s"), ("366d", "is 31622400 s")):
        result = run_cli("run", str(tmp_path / "lab.toml"), "--db", url, "--queue", "--expires", text)
        assert result.returncode == 2 and result.stderr == (
            f"vpnbench: error: --expires: '{text}' {why}; allowed: a duration from 1m to 365d, e.g. 7d, 12h, 90m\n")
    assert postgres.query("trust_expires", "SELECT to_regclass('queue_jobs') IS NULL") == [(True,)]  # not opened


def test_a_signing_key_others_may_read_is_refused_and_keygen_never_overwrites(key_pair, tmp_path):
    private, _ = key_pair
    os.chmod(private, 0o640)
    with pytest.raises(UserError, match=r"^--signing-key: .* mode 0640; allowed: .* that only it may read \(chmod 600\)$"):
        signing.load_signing_key(str(private))
    before = private.read_bytes()
    with pytest.raises(UserError, match=r"^-o: .* exists; keygen never overwrites a key"):
        signing.keygen(str(private))
    assert private.read_bytes() == before


def test_a_worker_file_others_may_write_is_refused(tmp_path):
    path = tmp_path / "tb.toml"
    path.write_text("[testbed]\n[worker]\naccept_unsigned = true\n")
    assert read_worker_file(str(path)).policy.accept_unsigned
    os.chmod(path, 0o666)
    with pytest.raises(UserError, match=r"^--testbed: .* mode 0666; allowed: .* no one else may write \(chmod go-w\): a worker's file "
                                        r"decides what it runs as root$"):
        read_worker_file(str(path))
    os.chmod(path, 0o644)
    path.write_text("[worker]\nallow = [\"technique.external.hook\"]\n")
    with pytest.raises(UserError, match=r"^worker.allow: 'technique.external.hook' is not allowed; allowed values: "
                                        r"'technique.external.up_hook', "):
        read_worker_file(str(path))
    path.write_text("[worker]\ntrusted_keys = [\"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ\"]\n")
    with pytest.raises(UserError, match=r"^worker.trusted_keys: 'ssh-rsa AAAA"):
        read_worker_file(str(path))


# --- a worker and a job edited in the database --------------------------------------------------

def queue_job(postgres, tmp_path, name: str, *flags: str, campaign: str = CAMPAIGN) -> tuple[str, str]:
    """A job queued through the CLI into a new database: its URL and id."""
    url = postgres.create_database(name)
    (tmp_path / "lab.toml").write_text(campaign)
    queued = run_cli("run", str(tmp_path / "lab.toml"), "--db", url, "--queue", *flags)
    assert queued.returncode == 0, queued.stderr
    return url, queued.stdout.split()[2].rstrip(":")


def edit_source(postgres, database: str, edit) -> None:
    """What a holder of the database's credentials can do: rewrite a job's JSON."""
    [(job_id, text)] = postgres.query(database, "SELECT id, source FROM queue_jobs")
    source = json.loads(text)
    edit(source)
    literal = json.dumps(source).replace("'", "''")
    postgres.query(database, f"UPDATE queue_jobs SET source = '{literal}' WHERE id = '{job_id}'")


def worker_refuses(postgres, database: str, url: str, worker_file: Path) -> str:
    """Run a worker; assert it refused with one line, exit 2, and wrote nothing; the line."""
    result = run_cli("worker", "--db", url, "--testbed", str(worker_file), "--lease", "3", timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stdout + result.stderr
    assert postgres.query(database, "SELECT count(*) FROM procrastinate_jobs WHERE status <> 'todo'") == [(0,)]
    assert postgres.query(database, "SELECT count(*) FROM queue_workers") == [(0,)]
    assert postgres.query(database, "SELECT count(*) FROM runs") == [(0,)]
    return result.stderr


def add_external(**fields):
    return lambda source: source["technique"].append({"kind": "external", "protection": "none", **fields})


def set_testbed(key, value):
    return lambda source: source.setdefault("testbed", {}).__setitem__(key, value)


def change_measurement(source):
    source["measurement"][0]["count"] = 1000


EDITS = {
    "hook": (lambda hook: add_external(up_hook=["/bin/sh", "-c", f"id > {hook}"]), "technique[3].up_hook: a command"),
    "ssh": (lambda hook: set_testbed("ssh", {"config_file": "/tmp/evil_ssh_config"}), "testbed.ssh: set by the queued"),
    "sysctl": (lambda hook: set_testbed("sysctls", {"net.ipv4.ip_forward": 1}), "testbed.sysctls: set by the queued"),
    "address": (lambda hook: add_external(server_ipv4="192.0.2.1"), "technique[3].server_ipv4: an address"),
    "inventory": (lambda hook: set_testbed("inventory", str(hook)), "testbed.inventory: set by the queued"),
    "kind": (lambda hook: set_testbed("kind", "ssh"), "testbed.kind: set by the queued"),
    "directory": (lambda hook: lambda s: s["measurement"].append({"kind": "transfer", "directory": "/etc"}),
                  "measurement[2].directory: a directory"),
}


@pytest.mark.parametrize("edit", EDITS)
def test_a_job_edited_to_carry_a_privileged_field_is_refused_and_nothing_runs(postgres, tmp_path, edit):
    database = f"trust_{edit}"
    url, job_id = queue_job(postgres, tmp_path, database)  # unsigned: a one-person lab's worker accepts that
    hook = tmp_path / "root-was-here"
    make_edit, expected = EDITS[edit]
    edit_source(postgres, database, make_edit(hook))
    (tmp_path / "tb.toml").write_text("[testbed]\nkind = \"local\"\n[worker]\naccept_unsigned = true\n")
    refusal = worker_refuses(postgres, database, url, tmp_path / "tb.toml")
    assert refusal.startswith(f"vpnbench: error: {expected}"), refusal
    assert f"; job {job_id} left queued" in refusal, refusal
    assert not hook.exists()


def test_jobs_not_signed_by_a_trusted_key_or_changed_since_are_refused(postgres, tmp_path, key_pair):
    private, line = key_pair
    url, job_id = queue_job(postgres, tmp_path, "trust_signed", "--signing-key", str(private))
    key_id = signing.load_signing_key(str(private)).key_id
    [(stored_key,)] = postgres.query("trust_signed", "SELECT key_id FROM queue_jobs")
    assert stored_key == key_id

    worker_file = tmp_path / "tb.toml"
    worker_file.write_text("[testbed]\n[worker]\naccept_unsigned = true\n")  # unsigned ones, but not others' keys
    refusal = worker_refuses(postgres, "trust_signed", url, worker_file)
    assert refusal.startswith(f"vpnbench: error: queue_jobs.key_id: job {job_id} is signed by '{key_id}', a key "
                              "this worker's file does not trust"), refusal

    worker_file.write_text(f"[testbed]\n[worker]\ntrusted_keys = [\"{line}\"]\n")
    edit_source(postgres, "trust_signed", change_measurement)  # harmless, but not what was signed
    refusal = worker_refuses(postgres, "trust_signed", url, worker_file)
    assert refusal.startswith(f"vpnbench: error: queue_jobs.source: job {job_id} does not match its signature by "
                              f"{key_id}: it was changed after it was queued"), refusal

    postgres.query("trust_signed", "UPDATE queue_jobs SET key_id = NULL, signature = NULL")  # stripped
    refusal = worker_refuses(postgres, "trust_signed", url, worker_file)
    assert refusal.startswith(f"vpnbench: error: queue_jobs.signature: job {job_id} is not signed"), refusal


def sql_literal(value) -> str:
    return "NULL" if value is None else str(value) if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'"


def copy_rows(postgres, source: str, target: str, table: str, columns: str) -> None:
    """What a writer of both databases can do: copy rows, signatures and all, from one to the other."""
    for row in postgres.query(source, f"SELECT {columns} FROM {table}"):
        postgres.query(target, f"INSERT INTO {table} ({columns}) VALUES ({', '.join(map(sql_literal, row))})")


def test_a_signed_job_copied_into_another_labs_database_is_refused_there(postgres, tmp_path, key_pair):
    private, line = key_pair
    url_a, job_id = queue_job(postgres, tmp_path, "trust_lab_a", "--signing-key", str(private))
    url_b = postgres.create_database("trust_lab_b")
    store = Store(url_b)
    try:
        WorkQueue(store)  # lab B's queue, with a name of its own
    finally:
        store.close()
    [(lab_a,)] = postgres.query("trust_lab_a", "SELECT name FROM queue_lab")
    [(lab_b,)] = postgres.query("trust_lab_b", "SELECT name FROM queue_lab")
    assert lab_a != lab_b and re.fullmatch(r"lab-[0-9a-f]{8}", lab_b)
    copy_rows(postgres, "trust_lab_a", "trust_lab_b", "queue_jobs", "id, campaign, source, key_id, signature, lab, not_after")
    # (its blocks need not be copied: the worker refuses the job before it fetches any)
    worker_file = tmp_path / "tb.toml"
    worker_file.write_text(f"[testbed]\n[worker]\ntrusted_keys = [\"{line}\"]\nlab = \"{lab_b}\"\n"
                           f"jobs_file = \"{tmp_path / 'worker-jobs'}\"\n")
    refusal = worker_refuses(postgres, "trust_lab_b", url_b, worker_file)
    assert refusal == (f"vpnbench: error: queue_jobs.lab: job {job_id} is signed for lab '{lab_a}', not this worker's "
                       f"'{lab_b}' ([worker] lab): copied from another lab's database; job {job_id} left queued\n")
    assert not (tmp_path / "worker-jobs").exists()  # refused before the worker's own record is opened


def test_a_campaign_that_sets_a_workers_testbed_is_not_queued(postgres, tmp_path):
    url = postgres.create_database("trust_enqueue")
    (tmp_path / "lab.toml").write_text(CAMPAIGN.replace("[testbed]\n", "[testbed]\nsysctls = { \"net.core.rmem_max\" = 1 }\n"))
    result = run_cli("run", str(tmp_path / "lab.toml"), "--db", url, "--queue")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("vpnbench: error: testbed.sysctls: kernel settings applied as root on the hosts: "
                                    "each worker's own --testbed file decides it"), result.stderr
    assert postgres.query("trust_enqueue", "SELECT to_regclass('queue_jobs') IS NULL") == [(True,)]  # not opened


@pytest.mark.netns
def test_a_worker_whose_file_trusts_the_signer_and_allows_the_hook_runs_it(postgres, tmp_path, key_pair,
                                                                            clean_machine):
    private, line = key_pair
    hook = tmp_path / "hook-ran"
    campaign = CAMPAIGN.replace('kind = "wireguard"', f'kind = "external"\nlabel = "box"\nprotection = "none"\n'
                                                      f'up_hook = ["touch", "{hook}"]')
    url = postgres.create_database("trust_allowed")
    (tmp_path / "lab.toml").write_text(campaign)
    queued = run_cli("run", str(tmp_path / "lab.toml"), "--db", url, "--queue",
                     env={**os.environ, "VPNBENCH_SIGNING_KEY": str(private)})  # the key's path, never the key
    assert queued.returncode == 0, queued.stderr
    said = " ".join(queued.stdout.split())
    assert f"signed by {signing.load_signing_key(str(private)).key_id}" in said
    assert "technique[2].up_hook (a command run as root on the worker's machine): runs only on workers whose " \
           "file allows technique.external.up_hook" in said

    [(lab,)] = postgres.query("trust_allowed", "SELECT name FROM queue_lab")
    assert f"signed by {signing.load_signing_key(str(private)).key_id} for lab {lab}" in said
    (tmp_path / "tb.toml").write_text(f"[testbed]\nrouter = false\n[worker]\ntrusted_keys = [\"{line}\"]\n"
                                      f"lab = \"{lab}\"\njobs_file = \"{tmp_path / 'state' / 'worker-jobs'}\"\n"
                                      "allow = [\"technique.external.up_hook\"]\n")
    result = run_cli("worker", "--db", url, "--testbed", str(tmp_path / "tb.toml"), "--lease", "3", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert hook.exists()
    assert postgres.query("trust_allowed", "SELECT status::text FROM procrastinate_jobs") == [("succeeded",)]
    assert postgres.query("trust_allowed", "SELECT technique, status FROM cells ORDER BY id") == [
        ("baseline", "ok"), ("box", "ok")]

    # A database writer re-opens the finished job: its signature still verifies, but this worker ran it.
    hook.unlink()
    postgres.query("trust_allowed", "UPDATE procrastinate_jobs SET status = 'todo', worker_id = NULL")
    postgres.query("trust_allowed", "UPDATE queue_jobs SET finished_at = NULL")
    replayed = run_cli("worker", "--db", url, "--testbed", str(tmp_path / "tb.toml"), "--lease", "3", timeout=60)
    assert replayed.returncode == 2 and replayed.stderr.count("\n") == 1, replayed.stdout + replayed.stderr
    assert re.fullmatch(rf"vpnbench: error: queue_jobs.finished_at: job {result_job(said)} was finished by this "
                        r"machine's worker at \S+Z \(.*/state/worker-jobs\); a finished job is never run again "
                        r"\(re-opened in the database\?\); job left queued\n", replayed.stderr), replayed.stderr
    assert not hook.exists()  # the hook did not run again
    assert postgres.query("trust_allowed", "SELECT count(*) FROM runs") == [(1,)]
    assert postgres.query("trust_allowed", "SELECT status::text FROM procrastinate_jobs") == [("todo",)]


def result_job(said: str) -> str:
    return said.split()[2].rstrip(":")


def test_a_database_queued_into_before_jobs_were_signed_gets_the_columns_and_its_jobs_are_unsigned(postgres):
    url = postgres.create_database("trust_old_schema")
    postgres.query("trust_old_schema", "CREATE TABLE queue_jobs (id TEXT PRIMARY KEY, campaign TEXT NOT NULL, "
                                       "source TEXT NOT NULL, created_at TIMESTAMPTZ DEFAULT now() NOT NULL, "
                                       "finished_at TIMESTAMPTZ)")
    postgres.query("trust_old_schema", "INSERT INTO queue_jobs (id, campaign, source) VALUES ('old1', 'c', '{}')")
    store = Store(url)
    try:
        job = WorkQueue(store).job("old1")
    finally:
        store.close()
    assert (job.key_id, job.signature) == (None, None)
