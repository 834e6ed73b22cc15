"""The wipe (issue 28): keys overwritten before removal, on every host, through the one script
safe_files runs there; and never a file of someone else's, nor one a symbolic link leads to.

Real files on this machine. What was wiped is seen through a hard link made beforehand: the
link keeps the inode, so after the wipe it shows what the wipe left in the file's blocks. The
other user is real (`nobody`, a forked child that drops to it, as in test_safe_files)."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from test_safe_files import NOBODY, ThisMachine, as_nobody
from vpnbench.safe_files import SMALL_BYTES, wipe, wipe_command, wipe_here

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
def victim(tmp_path):
    """A root-only 0600 file outside every directory wiped."""
    path = tmp_path / "root-only" / "secret"
    path.parent.mkdir(mode=0o700)
    path.write_text("root's\n")
    path.chmod(0o600)
    return path


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
