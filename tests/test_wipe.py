"""The wipe (issue 28): keys overwritten before removal, on every host, through the one script
safe_files runs there; and never a file of someone else's, nor one a symbolic link leads to.

Real files on this machine. What was wiped is seen through a hard link made beforehand: the
link keeps the inode, so after the wipe it shows what the wipe left in the file's blocks. The
other user is real (`nobody`, a forked child that drops to it, as in test_safe_files)."""

import contextlib
import json
import os
import secrets
import shutil
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import VPNBENCH, leftovers
from test_safe_files import NOBODY, ThisMachine, as_nobody  # noqa: F401 - victim: a fixture
from test_safe_files import victim as victim
from vpnbench.foundation.safe_files import DIRS_RECORD, SMALL_BYTES, recorded_dirs, wipe, wipe_command, wipe_here
from vpnbench.hosts.resources import run_id_prefix

OVERWRITTEN = [1, 400, 2048, SMALL_BYTES - 1]  # keys, configurations, NSS databases, logs
ONLY_REMOVED = [SMALL_BYTES, SMALL_BYTES + 1]  # the transfers' random data


def remote_wipe(path: Path) -> None:
    """The script an ssh host runs (SshHost and cleanup's reconnected runner), run here."""
    done = subprocess.run(wipe_command([str(path)]), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and str(path) in done.stdout, (done.stdout, done.stderr)


def local_wipe(path: Path) -> None:
    """A namespace host's wipe: the same script through the host's run()."""
    wipe(ThisMachine(path.parent), path)


def key_with_link(tmp_path: Path, size: int) -> tuple[Path, Path, bytes]:
    """A root-only directory holding one file of random bytes, and a hard link to it outside."""
    directory = tmp_path / "cell"
    directory.mkdir(mode=0o700)
    content = os.urandom(size)
    key = directory / "host_key"
    key.write_bytes(content)
    link = tmp_path / "link"
    os.link(key, link)
    return directory, link, content


@pytest.mark.parametrize("how", [remote_wipe, local_wipe], ids=["remote", "local"])
@pytest.mark.parametrize("target", ["directory", "file"])
@pytest.mark.parametrize("size", OVERWRITTEN + ONLY_REMOVED)
def test_a_file_under_the_threshold_is_overwritten_before_removal_a_larger_one_only_removed(
        tmp_path, size, target, how):
    directory, link, content = key_with_link(tmp_path, size)
    how(directory if target == "directory" else directory / "host_key")
    assert not (directory / "host_key").exists()
    assert (target == "file") == directory.exists()
    left = link.read_bytes()
    if size in OVERWRITTEN:
        assert left.strip(b"\0") == b"", f"{size} B: the key's bytes are still in the file"
    else:
        assert left == content, f"{size} B: random data is removed, not overwritten (it is no secret)"


@pytest.fixture
def shared():
    """A directory everyone may create in, sticky, like /dev/shm (and on it: nobody reaches it)."""
    path = Path("/dev/shm") / f"vpbt-wipe-{os.urandom(3).hex()}"
    path.mkdir()
    path.chmod(0o1777)
    yield path
    subprocess.run(["rm", "-rf", "--", str(path)], check=True)


def test_a_directory_another_user_made_is_left_as_it_is_and_named_in_one_line(shared):
    theirs = shared / "vpnbench-0a0b0c"

    def make():
        os.mkdir(theirs, 0o700)
        (theirs / "notes").write_text("theirs\n")
    as_nobody(make)
    open_to_all = shared / "vpnbench-0d0e0f"  # root's, but anyone may write in it: anyone may have put things there
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    (open_to_all / "notes").write_text("someone's\n")
    with pytest.warns(UserWarning) as warned:
        assert wipe_here([theirs, open_to_all]) == []
    assert (theirs / "notes").read_text() == "theirs\n" and (open_to_all / "notes").read_text() == "someone's\n"
    lines = [str(w.message) for w in warned]
    assert len(lines) == 2 and all("\n" not in line for line in lines), lines
    assert str(theirs) in lines[0] and f"uid {NOBODY}" in lines[0], lines[0]
    assert str(open_to_all) in lines[1] and "mode 777" in lines[1], lines[1]


def test_a_symbolic_link_at_the_path_is_removed_never_followed(tmp_path, victim):
    link = tmp_path / "cell-0a0b0c"
    link.symlink_to(victim.parent)
    assert wipe_here([link]) == [str(link)]  # the link only: it is in root's own directory
    assert not link.is_symlink() and victim.read_text() == "root's\n"


def swapping(place: Path, victim: Path, seconds: float) -> int:
    """Fork `nobody`, who for `seconds` turns place/k between an empty regular file and a symbolic
    link to victim as fast as it can (the wipe's find sees a file; shred may open the link)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            key, tmp = str(place / "k"), str(place / "k.new")
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                for make in (lambda: os.close(os.open(tmp, os.O_CREAT | os.O_WRONLY, 0o600)),
                             lambda: os.symlink(victim, tmp)):
                    try:
                        make()
                        os.rename(tmp, key)
                    except OSError:
                        pass
        finally:
            os._exit(0)
    return pid


@pytest.mark.parametrize("where", ["their directory", "a subdirectory others can write"])
def test_a_symbolic_link_swapped_in_while_wiping_is_never_followed(shared, victim, where):
    """Their directory: not root's, so the wipe leaves it (as above). A subdirectory of root's
    own directory that others can write: removed, never shredded in (names there can change)."""
    for attempt in range(5):  # the script before issue 28 lost the race at the first attempt here
        top = shared / f"vpnbench-{attempt}"
        if where == "their directory":
            as_nobody(lambda: os.mkdir(top, 0o755))
            place = top
        else:
            top.mkdir(mode=0o700)
            place = top / "upload"
            place.mkdir()
            place.chmod(0o777)
        attacker = swapping(place, victim, 0.2)
        try:
            time.sleep(0.02)
            done = subprocess.run(wipe_command([str(top)]), capture_output=True, text=True, timeout=60)
        finally:
            os.waitpid(attacker, 0)
        assert victim.read_text() == "root's\n" and oct(victim.stat().st_mode)[-3:] == "600", attempt
        verdict = "left" if where == "their directory" else "removed"
        assert done.stdout.startswith(f"{verdict}\t{top}"), done.stdout
        assert (where == "their directory") == top.exists()


RUNS = Path("/run/vpnbench")
# private keys a cell of OpenVPN (TLS) and an scp transfer put on the hosts
KEYS = {"ovpn-server.key", "ovpn-client.key", "ovpn-tls-crypt.key", "host_key", "client_key"}


class Linker(threading.Thread):
    """Every 20 ms while a run goes on: a hard link (in `into`, on the run directory's filesystem)
    to each file in the run's directory (/run/vpnbench/<id>: the controller's, and on the ssh lab,
    whose machines share this filesystem, each host's too) and in each directory the run recorded
    (`dirs` here, remote-<role>.json on ssh hosts). A path written twice (on the lab both hosts
    write the same name) is followed to its latest file."""

    def __init__(self, into: Path):
        super().__init__(daemon=True)
        self.into, self.stop = into, threading.Event()
        self.before = set(os.listdir(RUNS)) if RUNS.is_dir() else set()  # other runs: not looked at
        self.latest: dict[str, tuple[int, Path]] = {}  # path -> (inode, link) of the file there now
        self.recorded: set[str] = set()  # directories the run recorded for cleanup

    def run(self) -> None:
        while not self.stop.is_set():
            ours = run_id_prefix()  # not a side-by-side worker's runs
            for run_dir in [d for d in RUNS.glob(f"{ours}*") if d.name not in self.before]:
                try:
                    self.recorded.update(recorded_dirs(run_dir / DIRS_RECORD))
                except (OSError, ValueError):  # being overwritten by the run's own wipe at its end
                    pass
                try:
                    records = list(run_dir.glob("remote-*.json"))
                except OSError:  # the run's directory removed at its end, between the two looks
                    records = []
                for record in records:
                    try:
                        self.recorded.update(json.loads(record.read_text())["dirs"])
                    except (OSError, ValueError):
                        continue
                for directory in [run_dir, *self.recorded]:
                    try:
                        for path in Path(directory).rglob("*"):
                            self.link(path)
                    except OSError:  # removed while walked
                        continue
            time.sleep(0.02)

    def link(self, path: Path) -> None:
        try:
            info = path.lstat()
        except OSError:
            return
        if not stat.S_ISREG(info.st_mode) or info.st_size == 0 or self.latest.get(str(path), (0,))[0] == info.st_ino:
            return
        link = self.into / f"{len(self.latest)}-{info.st_ino}-{path.name}"
        try:
            os.link(path, link, follow_symlinks=False)
        except OSError:
            return
        self.latest[str(path)] = (link.stat().st_ino, link)

    def __enter__(self) -> "Linker":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.join()


@pytest.fixture
def links():
    """A root-only directory for the hard links, on the run directory's filesystem (/run)."""
    path = Path("/run") / f"vpbt-links-{secrets.token_hex(3)}"
    path.mkdir(mode=0o700)
    yield path
    shutil.rmtree(path)


def assert_keys_overwritten(linker: Linker) -> None:
    keys = {path: link for path, (_, link) in linker.latest.items() if Path(path).name in KEYS}
    assert {Path(path).name for path in keys} == KEYS, sorted(linker.latest)
    for path, link in keys.items():
        assert not Path(path).exists(), path
        assert link.read_bytes().strip(b"\0") == b"", f"{path} was removed, not overwritten"


def left_lines(stderr: str, path: Path) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("vpnbench: warning: left") and str(path) in line]


@pytest.mark.netns
def test_at_a_local_runs_end_keys_are_overwritten_and_a_directory_another_user_took_is_left(
        tmp_path, clean_machine, links, victim):
    """The namespace testbed: the same wipe through the namespace hosts, and the run directory's
    own at the end. The transfer's tmpfs directory is removed when its cell ends; `nobody` then
    makes one of the same name, with a symbolic link to a root file in it: left, named in one line."""
    (tmp_path / "c.toml").write_text(KEYS_AND_A_LATER_CELL)
    with a_run_whose_tmpfs_directory_nobody_takes([*VPNBENCH, "run", str(tmp_path / "c.toml"), "--db",
                                                   str(tmp_path / "c.db")], links, victim) as (err, theirs):
        lines = left_lines(err, theirs)
        assert len(lines) == 1 and "on this machine" in lines[0] and f"uid {NOBODY}" in lines[0], err


@contextlib.contextmanager
def a_run_whose_tmpfs_directory_nobody_takes(argv: list[str], links, victim: Path):
    """Runs argv (a vpnbench run of KEYS_AND_A_LATER_CELL) while `nobody` takes the transfer's
    tmpfs directory once its cell removed it; checks the run ended well, every key was overwritten
    and their directory and the root file it links to were left as they were; yields (the run's
    standard error, their directory) for the caller's checks of the lines naming it."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    theirs = None
    try:
        with Linker(links) as linker:
            theirs = take_the_tmpfs_directory_once_removed(linker, proc, victim)
            out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
        assert_keys_overwritten(linker)
        assert os.listdir(theirs) == ["k"] and os.lstat(theirs).st_uid == NOBODY
        assert victim.read_text() == "root's\n"
        yield err, theirs
        assert leftovers() == [f"tmpfs dir {theirs}"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if theirs is not None:
            shutil.rmtree(theirs, ignore_errors=True)


# OpenVPN's keys (TLS), sshd's and scp's for a transfer, then a cell that outlasts the transfer's directory
KEYS_AND_A_LATER_CELL = """
[[technique]]
kind = "openvpn"
mode = "tls"

[[measurement]]
kind = "transfer"
protocol = "scp"
size = "1M"

[[measurement]]
kind = "tcp"
duration = "3s"
"""


def take_the_tmpfs_directory_once_removed(linker: Linker, proc: subprocess.Popen, victim: Path) -> Path:
    """Wait until the run's tmpfs directory was made and removed again (its transfer cell ended),
    then make one of the same name as `nobody` (the run id is public), a link to victim in it."""
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, "the transfer never ended"
        made = {d for d in set(linker.recorded) if d.startswith("/dev/shm/")}
        if made and not any(Path(d).exists() for d in made):
            theirs = Path(made.pop())

            def take():
                os.mkdir(theirs, 0o755)
                os.symlink(victim, theirs / "k")
            as_nobody(take)
            return theirs
        time.sleep(0.02)
