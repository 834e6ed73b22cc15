"""Daemons' control sockets stay root's and daemons get none of the caller's secrets (issue 39, item 4).

boringtun chowns /var/run/wireguard to getlogin(): the login uid, which sudo keeps. Run as root
by an operator logged in as nobody (the login uid set as sudo's PAM session sets it), the
directory went to nobody, who could then swap the sockets and receive the private keys `wg set`
sends. A daemon also inherited the controller's whole environment (SUDO_*, VPNBENCH_DB,
PGPASSWORD)."""

import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import REPO, VPNBENCH
from runner_doubles import FakeClock, FakeHost, FakeNetwork
from vpnbench.foundation.errors import TechniqueError
from vpnbench.hosts.base import CommandResult
from vpnbench.hosts.netns import NetnsHost
from vpnbench.techniques.wireguard import SOCKET_DIR, check_socket_dir

SECRETS = {"SUDO_USER": "nobody", "SUDO_UID": "65534", "SUDO_COMMAND": "/usr/bin/vpnbench run",
           "VPNBENCH_DB": "postgresql://lab:hunter2@db/lab", "PGPASSWORD": "hunter2"}


@pytest.mark.netns
def test_a_spawned_daemon_gets_none_of_the_callers_secrets(tmp_path, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    netns = f"envtest-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        proc = NetnsHost("client", netns, tmp_path).spawn(["env"], name="env", env={"OURS": "1"})
        proc.wait(10)
        seen = dict(line.split("=", 1) for line in proc.output().splitlines() if "=" in line)
    finally:
        subprocess.run(["ip", "netns", "del", netns], check=True)
    assert not set(SECRETS) & set(seen), seen
    assert seen["OURS"] == "1" and seen["PATH"] == os.environ["PATH"]  # what it asked for, and programs found


BORINGTUN_CAMPAIGN = """
[campaign]
name = "boringtun-sockets"
[testbed]
router = false
[[technique]]
kind = "wireguard"
implementation = "boringtun"
[[measurement]]
kind = "ping"
count = 3
interval = "0.05s"
"""


@pytest.mark.exclusive  # alone: boringtun hands /var/run/wireguard to another user for a moment
@pytest.mark.netns
def test_boringtun_run_through_sudo_leaves_its_socket_directory_roots(tmp_path, clean_machine):
    (tmp_path / "c.toml").write_text(BORINGTUN_CAMPAIGN)
    as_if_sudo = ["sh", "-c", 'echo 65534 > /proc/self/loginuid && exec "$@"', "sh"]  # nobody's login, as sudo keeps it
    run = subprocess.run([*as_if_sudo, *VPNBENCH, "run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db")],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, **SECRETS, "PYTHONPATH": str(REPO / "src")})
    assert run.returncode == 0, run.stdout + run.stderr
    info = os.lstat(SOCKET_DIR)
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o700), (info.st_uid, oct(info.st_mode))


DIES_AFTER_ITS_CHOWN = """
import os
from vpnbench.foundation.errors import TechniqueError
from vpnbench.hosts.resources import RunResources
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.wireguard import SOCKET_DIR, WireGuard, WireGuardParams
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbeds.probe import LocalKernelProbe
from vpnbench.testbeds.spec import TestbedSpec

resources = RunResources()
bed = LocalTestbed(TestbedSpec(), resources)
bed.up()
try:
    os.makedirs(SOCKET_DIR, mode=0o700, exist_ok=True)
    blocker = f"{SOCKET_DIR}/{resources.iface_name('s')}.sock"
    os.mkdir(blocker)  # where the server's boringtun binds its socket: it fails there, after its chown
    ctx = TechniqueContext(bed.client, bed.server, bed.underlay_map(), resources, LocalKernelProbe(resources))
    technique = WireGuard(WireGuardParams(implementation="boringtun"), ctx)
    try:
        technique.up("userspace")
        print("came up")
    except TechniqueError as exc:
        print("refused:", exc)
    finally:
        technique.down()
        os.rmdir(blocker)
finally:
    bed.down()
    resources.close()
"""


@pytest.mark.exclusive  # alone: boringtun hands /var/run/wireguard to another user for a moment
@pytest.mark.netns
def test_a_boringtun_that_dies_after_its_chown_leaves_the_directory_roots(clean_machine):
    """boringtun chowns the directory, then cannot bind its socket and exits: the failed bring-up
    gives the directory back (it stayed nobody's once, in CI, and every later WireGuard run was
    refused until someone removed it)."""
    as_if_sudo = ["sh", "-c", 'echo 65534 > /proc/self/loginuid && exec "$@"', "sh"]
    run = subprocess.run([*as_if_sudo, sys.executable, "-c", DIES_AFTER_ITS_CHOWN], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("refused: boringtun did not start (exited with 1)"), run.stdout
    assert "ApiSocket" in run.stdout and "AddrInUse" in run.stdout, run.stdout  # it failed at the bind, after the chown
    info = os.lstat(SOCKET_DIR)
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o700), (info.st_uid, oct(info.st_mode))


class StatHost(FakeHost):
    """A host whose `stat` answers as given (owner, mode, type per path)."""

    def __init__(self, facts: dict[str, str]):
        super().__init__("client", FakeNetwork(FakeClock()))
        self.facts = facts

    def run(self, argv, timeout=30.0, check=True, input=None):
        if argv[0] == "stat":
            return CommandResult(argv, 0, "".join(self.facts[path] + "\n" for path in argv[4:]), "")
        return super().run(argv, timeout, check, input)


@pytest.mark.parametrize("facts, refused", [
    ({SOCKET_DIR: "0 700 directory", f"{SOCKET_DIR}/wg0.sock": "0 755 socket"}, None),
    ({SOCKET_DIR: "65534 755 directory", f"{SOCKET_DIR}/wg0.sock": "0 755 socket"}, SOCKET_DIR),
    ({SOCKET_DIR: "0 777 directory", f"{SOCKET_DIR}/wg0.sock": "0 755 socket"}, SOCKET_DIR),
    ({SOCKET_DIR: "0 700 directory", f"{SOCKET_DIR}/wg0.sock": "65534 755 socket"}, f"{SOCKET_DIR}/wg0.sock"),
    ({SOCKET_DIR: "0 700 symbolic link", f"{SOCKET_DIR}/wg0.sock": "0 755 socket"}, SOCKET_DIR),
])
def test_a_socket_or_its_directory_not_roots_alone_is_refused_naming_it(facts, refused):
    host = StatHost(facts)
    if refused is None:
        check_socket_dir(host, ["wg0"])
        return
    with pytest.raises(TechniqueError) as error:
        check_socket_dir(host, ["wg0"])
    assert str(error.value).startswith(f"{Path(refused)} on client is a ") and "\n" not in str(error.value)
