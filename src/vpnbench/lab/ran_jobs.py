"""The jobs a worker machine has run, in a file of its own (issue 39 item 6).

A database writer can re-open a finished job (its blocks set back to queued), and its
signature still verifies: the database cannot say which jobs already ran. So each worker
remembers them itself, in its file's [worker] `jobs_file` (default /var/lib/vpnbench/worker-jobs):
root's, 0600, a regular file in directories that are root's and writable by no one else (sticky
ones such as /tmp aside), read and appended under an exclusive lock, one JSON line per event:

    {"job": "1a2b3c4d", "signature_sha256": "..." or null, "event": "started" | "finished", "at": "...Z"}

A job (by id, or by its signature's digest) this machine finished is refused; one it started and
did not finish (Ctrl-C, kill -9, a lost database) may be joined again, as any worker of the lab
may continue it; another worker of this machine may join it while the first still works.
"""

import contextlib
import datetime
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from vpnbench.foundation.errors import UserError
from vpnbench.lab.queue import Job
from vpnbench.lab.signing import digest


class RanJobs:
    def __init__(self, path: str):
        self.path = Path(path)
        self.where = f"worker.jobs_file: {path}"

    def refuse_finished(self, job: Job) -> None:
        """Nothing, unless this machine finished the job: then UserError, one line."""
        with self._locked() as fd:
            finished = [entry for entry in self._entries(fd) if entry.get("event") == "finished"]
        # an occurrence of a schedule carries the schedule's signature: its id (SCHEDULE-TIMESTAMP) says which
        signature = digest(job.signature) if job.signature and job.schedule is None else None
        for entry in finished:
            if entry.get("job") == job.id or (signature and entry.get("signature_sha256") == signature):
                raise UserError(f"queue_jobs.finished_at: job {job.id} was finished by this machine's worker at "
                                f"{entry.get('at')} ({self.path}); a finished job is never run again (re-opened "
                                "in the database?); job left queued")

    def started(self, job: Job) -> None:
        self._append(job, "started")

    def finished(self, job: Job) -> None:
        self._append(job, "finished")

    def _append(self, job: Job, event: str) -> None:
        entry = {"job": job.id, "signature_sha256": digest(job.signature) if job.signature else None,
                 "event": event, "at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        with self._locked() as fd:
            os.lseek(fd, 0, os.SEEK_END)
            os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode())
            os.fsync(fd)

    def _entries(self, fd: int) -> list[dict]:
        os.lseek(fd, 0, os.SEEK_SET)
        with os.fdopen(os.dup(fd), "rb") as file:
            lines = file.read().decode(errors="replace").splitlines()
        entries = []
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
            except ValueError:
                entry = None
            if not isinstance(entry, dict):
                raise UserError(f"{self.where}: line {number} is not one of this worker's JSON lines; the file is "
                                "root's own record of the jobs it ran: restore it, or move it away to start afresh")
            entries.append(entry)
        return entries

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        """The file, created 0600 if missing (and its directory 0700), opened without following a
        link, checked to be root's own and locked while it is read or appended to."""
        self._check_directory()
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise UserError(f"{self.where}: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) != 0o600:
                raise UserError(f"{self.where}: owned by uid {info.st_uid} with mode {stat.S_IMODE(info.st_mode):04o}; "
                                f"allowed: a regular file of this user (uid {os.geteuid()}) with mode 0600: it "
                                "decides which jobs this worker runs again")
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)

    def _check_directory(self) -> None:
        directory = self.path.parent
        if not directory.exists():
            try:
                directory.mkdir(mode=0o700)
            except OSError as exc:
                raise UserError(f"{self.where}: {directory}: {exc.strerror}") from None
        real = directory.resolve()
        for path in (real, *real.parents):
            info = os.lstat(path)
            if info.st_uid not in (0, os.geteuid()) or (info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX):
                raise UserError(f"{self.where}: {path} is owned by uid {info.st_uid} with mode "
                                f"{stat.S_IMODE(info.st_mode):04o}; allowed: directories of root (or this user), "
                                "writable by no one else unless sticky")
