"""Root writing where another user may have been first (issue 21): the transfer's scratch
directory on a tmpfs everyone can write, and files written through a name someone planted.

The other user is real: a forked child that drops to `nobody` (os.setuid) before it acts.
The host is a double that runs the real commands on this machine (a namespace host does the
same through `ip netns exec`, which would need the test lock for nothing: the files are the
machine's either way)."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

from vpnbench.foundation.safe_files import (
    DIRS_RECORD,
    UnsafePath,
    check_parent,
    make_dir,
    recorded_dirs,
    wipe,
    write_private,
)
from vpnbench.hosts.base import Host, completed
from vpnbench.servers.base import config_dir, scratch_dir

NOBODY = 65534


class ThisMachine(Host):
    """Runs argv here; files like a namespace host (write_private)."""

    def __init__(self, workdir: Path):
        super().__init__("server", None)
        self.workdir = workdir

    def run(self, argv, timeout=30.0, check=True, input=None):
        return completed(list(argv), subprocess.run(argv, capture_output=True, text=True, timeout=timeout))

    def spawn(self, argv, name, env=None, interactive=False):
        raise NotImplementedError

    def write_file(self, path, data, mode=0o600):
        write_private(Path(path), data.encode() if isinstance(data, str) else data, mode)

    def pids(self):
        return []

    def has_command(self, name):
        return True


def as_nobody(action) -> None:
    """Run action() in a child that is `nobody`; fail the test if it failed."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            action()
            code = 0
        finally:
            os._exit(code)
    assert os.waitpid(pid, 0)[1] == 0, "the unprivileged user's action failed"


@pytest.fixture
def run_host(tmp_path):
    """A host whose run id is fresh (its run directory is 0700, as RunResources makes it)."""
    workdir = tmp_path / "run" / os.urandom(3).hex()
    workdir.mkdir(parents=True, mode=0o700)
    return ThisMachine(workdir)


@pytest.fixture
def victim(tmp_path):
    """A root-owned 0600 file the attack aims at."""
    path = tmp_path / "root-only" / "secret"
    path.parent.mkdir(mode=0o755)
    path.write_text("root's\n")
    path.chmod(0o600)
    return path


def shm_entry(host) -> Path:
    return Path("/dev/shm") / f"vpnbench-{host.workdir.name}"


def test_a_scratch_parent_precreated_by_another_user_is_refused_and_nothing_written_into_it(run_host):
    entry = shm_entry(run_host)
    as_nobody(lambda: (os.mkdir(entry), os.chmod(entry, 0o777)))  # the run id is public: they go first
    try:
        with pytest.raises(UnsafePath) as refused:
            scratch_dir(run_host, Path("/dev/shm"))
        message = str(refused.value)
        assert "\n" not in message and str(entry) in message and f"uid {NOBODY}" in message, message
        assert os.listdir(entry) == []  # root made nothing in it, so there was nothing to swap
        # nor is it named for the wipe at the run's end or cleanup (issue 28): recorded once made and checked
        assert str(entry) not in recorded_dirs(run_host.workdir / DIRS_RECORD)
    finally:
        os.rmdir(entry)


def test_a_planted_symlink_is_refused_and_nothing_written_through_it(run_host, victim):
    entry = shm_entry(run_host)
    as_nobody(lambda: os.symlink(victim.parent, entry))
    try:
        with pytest.raises(UnsafePath) as refused:
            scratch_dir(run_host, Path("/dev/shm"))
        assert "symbolic link" in str(refused.value)
        assert os.listdir(victim.parent) == ["secret"] and victim.read_text() == "root's\n"
    finally:
        os.unlink(entry)


def test_scratch_and_config_directories_are_fresh_root_owned_and_private(run_host):
    data = scratch_dir(run_host, Path("/dev/shm"))
    conf = config_dir(run_host)
    try:
        parent = os.lstat(data.parent)
        assert stat.S_ISDIR(parent.st_mode) and parent.st_uid == 0 and stat.S_IMODE(parent.st_mode) == 0o700
        assert stat.S_IMODE(os.lstat(data).st_mode) == 0o755  # readable by the servers' workers, inside a 0700 one
        info = os.lstat(conf)
        assert conf.parent == run_host.workdir and info.st_uid == 0 and stat.S_IMODE(info.st_mode) == 0o700
        # the cleanup record names both, so `vpnbench cleanup` finds them after a kill -9
        assert {str(data.parent), str(conf)} <= set((run_host.workdir / "dirs").read_text().split())
        second = scratch_dir(run_host, Path("/dev/shm"))  # the run's own directory is reused, a cell's is new
        assert second.parent == data.parent and second != data
    finally:
        wipe(run_host, data.parent)
        wipe(run_host, conf)
    assert not data.parent.exists() and not conf.exists()


def test_a_parent_others_can_write_without_the_sticky_bit_is_refused(run_host, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could rename root's directory away and put their own in its place
    with pytest.raises(UnsafePath, match="not writable by others unless sticky"):
        check_parent(run_host, shared)
    owned = tmp_path / "theirs"
    owned.mkdir()
    os.chown(owned, NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match=f"owned by uid {NOBODY}"):
        check_parent(run_host, owned / ".." / "theirs")
    with pytest.raises(UnsafePath, match="does not exist"):
        check_parent(run_host, tmp_path / "missing")
    assert check_parent(run_host, Path("/dev/shm")) == Path("/dev/shm")


def test_make_dir_never_accepts_an_existing_directory_unless_it_is_roots_own(run_host, tmp_path):
    existing = tmp_path / "d"
    existing.mkdir(mode=0o700)
    with pytest.raises(UnsafePath, match="refusing to use it"):
        make_dir(run_host, existing, 0o700)  # not -p: an existing one is not a fresh one
    assert make_dir(run_host, existing, 0o700, reuse=True) == existing  # root's, 0700: only root made it
    existing.chmod(0o755)
    with pytest.raises(UnsafePath, match="mode 755"):
        make_dir(run_host, existing, 0o700, reuse=True)


def test_write_file_replaces_a_planted_symlink_and_never_writes_through_it(run_host, victim):
    """The namespace host's write_file: O_CREAT|O_EXCL|O_NOFOLLOW on a fresh name, renamed over the
    target. A symlink at the target (here planted by root for the test: in a 0700 run directory
    nobody else can) is replaced; the file it pointed to keeps its bytes and mode."""
    from vpnbench.hosts.netns import NetnsHost
    host = NetnsHost("server", "unused", run_host.workdir)
    link = run_host.workdir / "nginx.conf"
    link.symlink_to(victim)
    host.write_file(link, "load_module /tmp/evil.so;\n", 0o600)
    assert victim.read_text() == "root's\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert not link.is_symlink() and link.read_text() == "load_module /tmp/evil.so;\n"
    assert stat.S_IMODE(link.stat().st_mode) == 0o600
    assert sorted(p.name for p in run_host.workdir.iterdir()) == ["nginx.conf"]  # no temporary left
    (run_host.workdir / "sub").symlink_to(victim.parent)
    with pytest.raises(OSError):  # a symlinked directory is not followed either
        host.write_file(run_host.workdir / "sub" / "secret", "x")
    assert victim.read_text() == "root's\n"


def test_cleanup_removes_recorded_directories_but_never_another_users(run_host, tmp_path):
    """After a kill -9: the run's recorded directories go, wherever the campaign put them; one that
    is not root's (someone made it first) stays for its owner."""
    from vpnbench.hosts.resources import remove_recorded_dirs
    custom = tmp_path / "xfer"
    custom.mkdir()
    data = scratch_dir(run_host, custom)
    (data / "original.bin").write_bytes(os.urandom(1000))
    theirs = shm_entry(run_host)
    as_nobody(lambda: os.mkdir(theirs))
    try:
        with open(run_host.workdir / "dirs", "a") as record:
            record.write(f"{theirs}\n")
        with pytest.warns(UserWarning) as warned:
            removed = remove_recorded_dirs(run_host.workdir, run_host.workdir.name)
        assert removed == [f"directory {data.parent}"] and not data.parent.exists()
        assert theirs.is_dir()
        assert [str(w.message) for w in warned if str(theirs) in str(w.message) and f"uid {NOBODY}" in str(w.message)]
    finally:
        os.rmdir(theirs)


def test_the_remote_write_replaces_a_planted_symlink_too(run_host, victim):
    """SshHost.write_file's script (mktemp + mv -T), run here as the remote shell would run it."""
    from vpnbench.foundation.safe_files import REMOTE_WRITE
    link = run_host.workdir / "vsftpd.conf"
    link.symlink_to(victim)
    done = subprocess.run(["sh", "-c", REMOTE_WRITE, "write", str(link), "600"], input=b"write_enable=YES\n",
                          capture_output=True)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "root's\n" and not link.is_symlink() and link.read_text() == "write_enable=YES\n"
    assert stat.S_IMODE(link.stat().st_mode) == 0o600
    assert sorted(p.name for p in run_host.workdir.iterdir()) == ["vsftpd.conf"]


def test_remote_cleanup_wipes_recorded_directories_and_says_which_were_there(tmp_path):
    """After a kill -9, cleanup's reconnected runner wipes the directories the run recorded on a
    host (a cell's keys, the scratch data); here a local runner stands in for ssh."""
    from vpnbench.hosts.ssh import remove_remote
    cell = tmp_path / "cell-0a0b0c"
    cell.mkdir(mode=0o700)
    (cell / "host_key").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    gone = tmp_path / "never-made"

    def run(argv, timeout=30, check=False):
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    removed = remove_remote(run, {"dirs": [str(cell), str(gone)]}, tmp_path / "workdir")
    assert removed == [f"remote directory {cell}"] and not cell.exists()


@pytest.mark.parametrize("planted", ["the file", "its -wal"])
@pytest.mark.parametrize("target_exists", [False, True])
def test_a_results_file_that_is_a_symbolic_link_is_refused_and_nothing_written(tmp_path, victim, planted,
                                                                              target_exists):
    """SQLite follows a symbolic link at the results path (or at its -wal): root would create or
    write the file it points to (issue 28). Refused in one line naming the path, exit 2, before
    anything is written anywhere."""
    from conftest import run_cli
    target = victim if target_exists else victim.parent / "made-by-root"
    db = tmp_path / "results.db"
    link = db if planted == "the file" else Path(f"{db}-wal")
    link.symlink_to(target)
    (tmp_path / "c.toml").write_text('[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "tcp"\n')
    before = sorted(os.listdir(tmp_path)), sorted(os.listdir(victim.parent))
    done = run_cli("run", str(tmp_path / "c.toml"), "--db", str(db))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and str(link) in done.stderr and "symbolic link" in done.stderr, done.stderr
    assert (sorted(os.listdir(tmp_path)), sorted(os.listdir(victim.parent))) == before
    assert victim.read_text() == "root's\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
