"""Issue 28 on the ssh test lab (sshd in namespaces, see sshlab.py): every key file on a host is
overwritten before it is removed, at the run's end and by `vpnbench cleanup` after a kill -9;
a directory of the run's that another user holds by then is left as it is, named in one line;
a symbolic link swapped in is never followed.

The lab's machines share this machine's filesystem, so what the wipe did to a key file is seen
through a hard link made while the run goes on (the link keeps the inode: after the wipe it holds
what the wipe left in the file). Which files are on a host is read from what the run records
(remote-<role>.json), as in test_ssh_security."""

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
from test_safe_files import NOBODY, as_nobody
from test_ssh_hosts import in_lab, lab as lab  # noqa: F401 - lab: the fixture (sshd in namespaces, checked for strays)
from test_wipe import swapping

pytestmark = pytest.mark.netns

RUNS = Path("/run/vpnbench")
# private keys a cell of OpenVPN (TLS) and an scp transfer put on the hosts
KEYS = {"ovpn-server.key", "ovpn-client.key", "ovpn-tls-crypt.key", "host_key", "client_key"}


class Linker(threading.Thread):
    """Every 20 ms while a run goes on: a hard link (in `into`, on the same filesystem as the run's
    directory) to each file the run has recorded on a host, or that is in a directory it recorded.
    A path written twice (the lab's hosts share one filesystem: both write the same name) is
    followed to its latest file."""

    def __init__(self, into: Path):
        super().__init__(daemon=True)
        self.into, self.stop = into, threading.Event()
        self.latest: dict[str, tuple[int, Path]] = {}  # path -> (inode, link) of the file there now
        self.records: dict[str, dict] = {}  # role -> its record, as last read

    def run(self) -> None:
        while not self.stop.is_set():
            for path in RUNS.glob("*/remote-*.json"):
                try:
                    record = json.loads(path.read_text())
                except (OSError, ValueError):
                    continue
                self.records[path.stem.removeprefix("remote-")] = record
                for name in record["files"]:
                    self.link(Path(name))
                for directory in record["dirs"]:
                    for name in Path(directory).rglob("*"):
                        self.link(name)
            time.sleep(0.02)

    def link(self, path: Path) -> None:
        try:
            info = path.lstat()
        except OSError:
            return
        if not stat.S_ISREG(info.st_mode) or info.st_size == 0 or self.latest.get(str(path), (0,))[0] == info.st_ino:
            return
        link = self.into / f"{len(list(self.into.iterdir()))}-{path.name}"
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


@pytest.fixture
def victim(tmp_path):
    """A root-only 0600 file that an attacker points symbolic links at."""
    path = tmp_path / "root-only" / "secret"
    path.parent.mkdir(mode=0o700)
    path.write_text("root's\n")
    path.chmod(0o600)
    return path


def assert_keys_overwritten(linker: Linker) -> None:
    keys = {path: link for path, (_, link) in linker.latest.items() if Path(path).name in KEYS}
    assert {Path(path).name for path in keys} == KEYS, sorted(linker.latest)
    for path, link in keys.items():
        assert not Path(path).exists(), path
        assert link.read_bytes().strip(b"\0") == b"", f"{path} was removed, not overwritten"


def left_lines(stderr: str, path: Path) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("vpnbench: warning: left") and str(path) in line]


def test_at_the_runs_end_keys_are_overwritten_and_a_directory_another_user_took_is_left(tmp_path, lab, links, victim):
    """The transfer's tmpfs directory is removed when its cell ends; `nobody` then makes one of
    the same name (the run id is public), with a symbolic link to a root file in it. At the end
    the run still names that path for wiping on each host: it is left, named in one line."""
    campaign = lab.testbed_toml() + """
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
    (tmp_path / "c.toml").write_text(campaign)
    proc = subprocess.Popen([*lab.exec_argv(), *VPNBENCH, "run", str(tmp_path / "c.toml"), "--db",
                             str(tmp_path / "c.db")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    theirs = None
    try:
        with Linker(links) as linker:
            deadline = time.monotonic() + 120
            while theirs is None:  # the run's tmpfs directory: made for the transfer, gone after it
                assert proc.poll() is None and time.monotonic() < deadline, "the transfer never ended"
                made = {d for r in list(linker.records.values()) for d in r["dirs"] if d.startswith("/dev/shm/")}
                if made and not any(Path(d).exists() for d in made):
                    theirs = Path(made.pop())

                    def take():
                        os.mkdir(theirs, 0o755)
                        os.symlink(victim, theirs / "k")
                    as_nobody(take)
                time.sleep(0.02)
            out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
        assert_keys_overwritten(linker)
        assert os.listdir(theirs) == ["k"] and os.lstat(theirs).st_uid == NOBODY
        assert victim.read_text() == "root's\n"
        lines = left_lines(err, theirs)
        assert lines and all(f"uid {NOBODY}" in line for line in lines), err
        assert leftovers() == [f"tmpfs dir {theirs}"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if theirs is not None:
            shutil.rmtree(theirs, ignore_errors=True)


def test_after_a_kill9_cleanup_overwrites_the_keys_and_leaves_a_directory_another_user_holds(tmp_path, lab, links, victim):
    """Killed mid-transfer: the keys of OpenVPN, sshd and scp are on the hosts. Before cleanup the
    transfer's directory becomes `nobody`'s, who keeps swapping a file in it for a symbolic link
    to a root file while cleanup runs: it is left as it is, named in one line; the keys go,
    overwritten first."""
    campaign = lab.testbed_toml() + """
[[technique]]
kind = "openvpn"
mode = "tls"

[[measurement]]
kind = "transfer"
protocol = "scp"
size = "256M"
"""
    (tmp_path / "k.toml").write_text(campaign)
    proc = subprocess.Popen([*lab.exec_argv(), *VPNBENCH, "run", str(tmp_path / "k.toml"), "--db",
                             str(tmp_path / "k.db")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    theirs = None
    try:
        with Linker(links) as linker:
            deadline = time.monotonic() + 120
            while not any(lab.comm(p) == "scp" for p in lab.pids("client")):  # the copy is under way
                assert proc.poll() is None and time.monotonic() < deadline, "no scp started"
                time.sleep(0.05)
            time.sleep(0.3)
            proc.kill()  # ip netns exec execs python: this is vpnbench itself
            proc.wait(10)
        theirs = next(Path(d) for r in list(linker.records.values()) for d in r["dirs"] if d.startswith("/dev/shm/"))
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", "--", str(theirs)], check=True)
        attacker = swapping(theirs, victim, 3.0)
        try:
            cleanup = in_lab(lab, "cleanup", timeout=120)
        finally:
            os.kill(attacker, 9)
            os.waitpid(attacker, 0)
        assert cleanup.returncode == 0, cleanup.stderr
        assert_keys_overwritten(linker)
        assert victim.read_text() == "root's\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
        assert theirs.is_dir() and list(theirs.glob("*/original.bin")), "their directory was not left as it was"
        lines = left_lines(cleanup.stderr, theirs)
        assert lines and all(f"uid {NOBODY}" in line for line in lines), cleanup.stderr
        assert leftovers() == [f"tmpfs dir {theirs}"]
        assert lab.strays() == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if theirs is not None:
            shutil.rmtree(theirs, ignore_errors=True)
