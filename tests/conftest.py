import fcntl
import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forked_cli
from vpnbench.hosts.resources import RUN_ID_PREFIX_ENV, run_id_prefix

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
VPNBENCH = [sys.executable, "-m", "vpnbench"]
# The short traffic most technique tests measure through a tunnel: 1 s of TCP, 5 pings.
TCP_AND_PING = """[[measurement]]
kind = "tcp"
duration = "1s"
[[measurement]]
kind = "ping"
count = 5
interval = "0.05s"
"""
DAEMONS = re.compile(r"^(wireguard-go|iperf3|tcpdump|vpnbench-linkem|charon|pluto|xl2tpd|pppd|openvpn|wpa_supplicant|sshd|nginx|vsftpd|irtt|ffmpeg|curl|scp|sftp|tailscaled|headscale|nebula|rosenpass|tincd|boringtun-cli|yggdrasil|vpncloud|edge|supernode|easytier-core|tquic_server|tquic_client|innernet|innernet-server|netbird|netbird-server)$")


TEST_LOCK = Path("/run/vpnbench-tests.lock")
LOCK_HELD_ENV = "VPNBENCH_TESTS_LOCK_HELD"  # set by an xdist controller that holds TEST_LOCK
# Set by make test (scripts/test-suite.sh) for a session it runs beside the one that holds
# TEST_LOCK, at nice 19: its runs' ids start with 8-f, and it does not wait for the lock.
BESIDE_ENV = "VPNBENCH_TESTS_BESIDE"

# What a technique's real-cell test measures (appended to its campaign): a 1 s TCP stream, 1 s of
# 1200 B UDP at a 20 Mbit/s ceiling, five pings.
TCP_UDP_PING = """[[measurement]]
kind = "tcp"
duration = "1s"
[[measurement]]
kind = "udp"
rate = "20M"
duration = "1s"
length = 1200
[[measurement]]
kind = "ping"
count = 5
interval = "0.05s"
"""


def pytest_configure(config):
    """pytest-xdist's workers are handed COLUMNS=80: the CLI's tables, 160 wide where stdout is
    not a terminal, would wrap where a test reads a whole row. The suite's CLIs run at that width
    wherever it runs (a test that wants another width passes its own COLUMNS)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)
        # Each worker's runs start with a hex digit of its own, and its leftover checks look at
        # those only: machine tests side by side (make test, two at a time) cannot see
        # each other's namespaces as their own leftovers. A session beside the one that holds
        # the test lock takes 8-f, that one 0-7.
        base = 8 if os.environ.get(BESIDE_ENV) else 0
        os.environ[RUN_ID_PREFIX_ENV] = f"{base + int(worker.removeprefix('gw')) % 8:x}"
    elif os.environ.get(BESIDE_ENV):
        os.environ[RUN_ID_PREFIX_ENV] = "8"  # one session's tests, in this process
    elif getattr(config.option, "dist", "no") != "no" and config.getoption("--machine-tests") != "none":
        # The controller of machine tests side by side holds the test lock for its workers and
        # clears killed runs once, before any worker starts.
        take_the_test_lock(config)
        os.environ[LOCK_HELD_ENV] = str(os.getpid())


def pytest_addoption(parser):
    parser.addoption(
        "--machine-tests", choices=("all", "only", "none"), default="all",
        help="only: just the tests that need the machine to themselves (namespaces, VMs, timing, the "
             "clean-machine check), which run one session at a time; none: just the rest, which may "
             "run side by side (pytest -n, make test's host stage)")


def needs_the_machine(item) -> bool:
    """A test that takes the machine's test lock: it makes namespaces or VMs, times something, or
    checks that nothing of vpnbench is left on the machine."""
    return any(mark in item.keywords for mark in ("netns", "vm", "exclusive")) \
        or "clean_machine" in getattr(item, "fixturenames", ())


@pytest.hookimpl(trylast=True)  # after -m/-k have deselected: lock only for what really runs
def pytest_collection_modifyitems(config, items):
    """One session of namespace tests at a time per machine: the leftover checks look at every
    vpb-* namespace, and timing assertions need the cores. Unit-only sessions do not wait.
    Hand-run campaigns can share it: `flock /run/vpnbench-tests.lock vpnbench run ...`."""
    wanted = config.getoption("--machine-tests")
    if wanted != "all":
        kept, deselected = [], []
        for item in items:
            (kept if needs_the_machine(item) == (wanted == "only") else deselected).append(item)
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = kept
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason="needs root to create network namespaces")
        for item in items:
            if "netns" in item.keywords:
                item.add_marker(skip)
        return
    if config.option.collectonly or os.environ.get(LOCK_HELD_ENV) or os.environ.get(BESIDE_ENV) \
            or not any(needs_the_machine(item) for item in items):
        return  # a list of tests (make test-kernel's files for the guest) runs none of them
    take_the_test_lock(config)


def take_the_test_lock(config) -> None:
    config._vpnbench_lock = TEST_LOCK.open("a")
    try:
        fcntl.flock(config._vpnbench_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"\nwaiting for another test session ({TEST_LOCK})", file=sys.stderr)
        fcntl.flock(config._vpnbench_lock, fcntl.LOCK_EX)
    remove_killed_runs()


def remove_killed_runs() -> None:
    """A run killed before this session (a kill -9, a machine's tool restart) leaves its
    namespaces behind, and every test's clean-machine check would then fail for something
    no test did. `vpnbench cleanup` removes exactly those (runs whose owner process is gone,
    never a live one), as a user would; what it removed is printed, not hidden."""
    result = subprocess.run([*VPNBENCH, "cleanup"], capture_output=True, text=True, timeout=120)
    if "nothing left behind" not in result.stdout:
        print(f"\nbefore the tests, {result.stdout.strip()} {result.stderr.strip()}", file=sys.stderr)


def leftovers() -> list[str]:
    """Everything a vpnbench run of this test session could leave behind on this machine: every
    run's, or in a worker of machine tests side by side, its own runs' (their ids start with its
    VPNBENCH_RUN_ID_PREFIX)."""
    ours = run_id_prefix()
    found = []
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found += [f"netns {line.split()[0]}" for line in out.splitlines() if line.startswith(f"vpb-{ours}")]
    run_root = Path("/run/vpnbench")
    if run_root.is_dir():
        found += [f"run dir {p}" for p in run_root.iterdir() if p.name.startswith(ours)]
    found += [f"tmpfs dir {p}" for p in Path("/dev/shm").glob(f"vpnbench-{ours}*")]
    wg = Path("/var/run/wireguard")
    if wg.is_dir():
        found += [f"socket {p}" for p in wg.glob(f"vpb{ours}*.sock")]
        info = wg.lstat()  # a boringtun's chown left standing refuses every later WireGuard run
        if info.st_uid != 0 or info.st_mode & 0o022:
            found.append(f"socket directory {wg} owned by uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}")
    found += [f"process {pid} {name}" for pid, name in stray_daemons()]
    return found


def stray_daemons() -> list[tuple[int, str]]:
    """Daemons vpnbench starts that live in one of its namespaces, or in a namespace that
    lost its name (deleted while the process was still running). Other tests' own
    namespaces (vpbt-*) are theirs to check."""
    named = {}
    for netns in Path("/run/netns").glob("*") if Path("/run/netns").is_dir() else []:
        try:
            named[os.stat(netns).st_ino] = netns.name
        except OSError:
            pass
    root_ns = os.stat("/proc/self/ns/net").st_ino  # the tests run in the root namespace
    ours = run_id_prefix()
    stray, nameless = [], []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            name = (proc / "comm").read_text().strip()
            inode = os.stat(proc / "ns" / "net").st_ino
        except OSError:
            continue
        if not DAEMONS.match(name) or inode == root_ns:
            continue
        owner = named.get(inode, "")
        if owner.startswith(f"vpb-{ours}"):
            stray.append((int(proc.name), name))
        elif not owner:
            nameless.append((int(proc.name), name))
    if nameless and ours:  # maybe another worker's, between its namespace's delete and its daemon's exit
        time.sleep(1)
        nameless = [(pid, name) for pid, name in nameless if Path(f"/proc/{pid}").exists()]
    return stray + nameless


def our_runs() -> str:
    """Where this session's runs keep their files: /run/vpnbench/ and, in a worker of machine tests
    side by side, its run-id prefix (a path that starts with it is one of our runs')."""
    return f"/run/vpnbench/{run_id_prefix()}"


def run_daemons(*names: str) -> list[int]:
    """The processes of these names (comm) that this session's runs started: their command line
    names one of our runs' files, or they live in one of our runs' namespaces."""
    in_our_namespaces = {pid for pid, _ in stray_daemons()}
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "comm").read_text().strip() in names \
                    and (our_runs() in (proc / "cmdline").read_text() or int(proc.name) in in_our_namespaces):
                found.append(int(proc.name))
        except OSError:
            pass
    return found


@pytest.fixture
def clean_machine():
    """Asserts the test leaves nothing behind (and starts from nothing)."""
    before = leftovers()
    assert before == [], f"machine not clean before the test: {before}"
    yield
    after = leftovers()
    if after:
        subprocess.run([*VPNBENCH, "cleanup"], capture_output=True)
    assert after == [], f"left behind: {after}"


def run_cli(*args: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """`vpnbench ARGS` as a process of its own; forked from this one where that is the same
    (forked_cli: the interpreter's start is the suite's largest cost in the TCG guest)."""
    if forked_cli.usable(kwargs):
        return forked_cli.run([*VPNBENCH, *args], list(args), timeout, kwargs.get("cwd"))
    return subprocess.run([*VPNBENCH, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def assert_refused(tmp_path, text: str, line: str) -> None:
    """A bad campaign: exit 2, one line on stderr that says `line`, and no results file made."""
    (tmp_path / "c.toml").write_text(text)
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2
    assert line in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "c.db").exists()


def run_campaign(tmp_path, text: str, *flags: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """Run text as a campaign through the CLI, assert it succeeded, return the run and its exported
    cells. `timeout` only stops a hung run."""
    (tmp_path / "c.toml").write_text(text)
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"), *flags, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "c.json"))
    return result, json.loads((tmp_path / "c.json").read_text())


def captured_payload_sizes(testbed, ctx, send, proto: str, recognised) -> set[int]:
    """The payload lengths of the `proto` ("udp" or "tcp") packets that the testbed's first capture
    point saw while send() ran, of those recognised(payload) accepts: a technique's framing as the
    wire carried it, to hold against its MTU arithmetic."""
    from vpnbench.techniques.wirecheck import transport_payloads

    point = testbed.capture_points()[0]
    pcap = ctx.resources.path("framing.pcap")
    capture = point.host.spawn(["tcpdump", "-Z", "root", "--immediate-mode", *point.tcpdump_args(), "-n", "-U",
                                "-s", "0", "-w", str(pcap), proto], name="tcpdump")
    try:
        deadline = time.monotonic() + 5
        while "listening on" not in capture.output() and time.monotonic() < deadline:
            time.sleep(0.01)
        send()
        time.sleep(0.1)
    finally:
        capture.interrupt()
        capture.wait(3)
    data = point.host.read_file(pcap)
    point.host.remove_file(pcap)
    return {len(payload) for kind, payload in transport_payloads(data) if kind == proto and recognised(payload)}


def iperf3_client_running() -> bool:
    """An iperf3 client runs in a run's namespace: traffic flows. Not any iperf3: the host facts'
    `iperf3 --version` runs in the namespaces while the testbed is made, before any bring-up (a
    kill then found no technique file yet: seen with the CPU halved)."""
    for entry in leftovers():
        kind, pid, name = (entry.split() + ["", "", ""])[:3]
        if kind == "process" and name == "iperf3":
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"-c" in argv:
                return True
    return False


def killed_run(kind: str, testbed: dict | None = None, technique: dict | None = None, **tcp) -> str:
    """A campaign of one technique and a 30 s TCP flow, for kill9_mid_traffic_then_cleanup: the
    [testbed] keys given (a mesh's nodes and NATs), the technique's (a fetch interval), and the
    flow's extra keys (family)."""
    lines = ["[campaign]", 'name = "killed"']
    if testbed:
        lines += ["[testbed]", *(f"{key} = {json.dumps(value)}" for key, value in testbed.items())]
    lines += ["[[technique]]", f'kind = "{kind}"', *(f"{key} = {json.dumps(value)}" for key, value in (technique or {}).items()),
              "[[measurement]]", 'kind = "tcp"', 'duration = "30s"',
              *(f"{key} = {json.dumps(value)}" for key, value in tcp.items())]
    return "\n".join(lines) + "\n"


def assert_technique_field_refused(kind: str, entry: dict, expected: str) -> None:
    """A campaign of this technique with these fields is refused in one line starting with `expected`."""
    from vpnbench.campaign.spec import campaign_from_dict
    from vpnbench.foundation.errors import UserError

    with pytest.raises(UserError) as info:
        campaign_from_dict({"campaign": {"name": "bad"}, "technique": [{"kind": kind, **entry}],
                            "measurement": [{"kind": "ping"}]})
    message = str(info.value)
    assert message.startswith(expected) and "\n" not in message, message


class HostsWithoutBuilds:
    """A probe double: the server lacks every build vpnbench makes (anything under builds.PREFIX)."""

    def host_lacking(self, path: str) -> str | None:
        from vpnbench.hosts import builds

        return "server" if path.startswith(str(builds.PREFIX)) else None


def kill9_mid_traffic_then_cleanup(tmp_path, text: str, left_behind: str, while_up=None) -> None:
    """A run of text killed with -9 once its traffic flows leaves its keys (left_behind, a glob
    under /run/vpnbench) and maybe its daemons; `vpnbench cleanup` then leaves nothing.
    while_up() is asserted on the live run before the kill."""
    (tmp_path / "c.toml").write_text(text)
    said = tmp_path / "run.out"  # what the run printed: a run that ends before its traffic says why
    with said.open("wb") as out:
        run = subprocess.Popen([*VPNBENCH, "run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db")],
                               stdout=out, stderr=subprocess.STDOUT)
    try:
        # a cap on a run that never gets there, not a bound the test asserts: a bring-up that is
        # tried again (yggdrasil-mesh: up to 3 times, 20 s each) still starts its traffic
        deadline = time.monotonic() + 120
        while not iperf3_client_running():  # the tunnel is up, traffic flows
            assert time.monotonic() < deadline and run.poll() is None, \
                f"the run never started traffic (exit {run.poll()}): {said.read_text(errors='replace')[-3000:]}"
            time.sleep(0.2)
        assert while_up is None or while_up()
    finally:
        run.kill()
        run.wait()
    assert list(Path("/run/vpnbench").glob(run_id_prefix() + left_behind)), \
        f"no {left_behind} left by the killed run"
    result = run_cli("cleanup")
    assert result.returncode == 0, result.stdout + result.stderr
    assert leftovers() == []  # daemons, namespaces (their devices with them) and the run dir with its keys


@pytest.fixture
def testbed(clean_machine):
    """A real client — router — server testbed, removed afterwards."""
    from vpnbench.hosts.resources import RunResources
    from vpnbench.testbeds.local import LocalTestbed
    from vpnbench.testbeds.spec import TestbedSpec

    resources = RunResources()
    bed = LocalTestbed(TestbedSpec(), resources)
    try:
        bed.up()
        yield bed
    finally:
        bed.down()
        resources.close()


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server for the session (tests/pg.py)."""
    import pg  # noqa: PLC0415 - only sessions with a PostgreSQL test start one

    bin_dir = pg.server_bin()
    if bin_dir is None:
        pytest.fail("PostgreSQL's server is not installed: make deps installs Debian's postgresql")
    yield from pg.start(bin_dir)
