"""A technique's bring-up undone exactly: each step of up() registers its undo as it succeeds
(techniques/base.py's Cleanup, kselftests' `defer`), and down() runs those, newest first, each
once, however far up() got. Unit tests: a host double records every command."""

import ast
import re
from pathlib import Path

import pytest

import vpnbench
from runner_doubles import FakeClock, FakeHost, FakeNetwork
from vpnbench.foundation.errors import HostError
from vpnbench.foundation.safe_files import wipe_command
from vpnbench.hosts.base import CommandFailed, CommandResult, Host
from vpnbench.hosts.reach import wait_reachable
from vpnbench.hosts.resources import RunResources
from vpnbench.techniques.base import Cleanup, TechniqueContext
from vpnbench.techniques.wireguard import WireGuard, WireGuardParams

UNDERLAY = {"client": {"ipv4": "10.0.0.1", "ipv6": "fd00::1"}, "server": {"ipv4": "10.0.0.2", "ipv6": "fd00::2"}}


class FailingHost(FakeHost):
    """A host double that writes every command into `journal` (shared by the hosts: one order);
    a command starting with `fails` exits 2, every other one succeeds."""

    def __init__(self, role: str, journal: list, fails: tuple[str, ...] | None = None):
        super().__init__(role, FakeNetwork(FakeClock()), commands=("wg", "ip", "sh"))
        self.journal, self.fails = journal, fails

    def run(self, argv, timeout=30.0, check=True, input=None):
        self.journal.append((self.role, list(argv)))
        if self.fails and tuple(argv[:len(self.fails)]) == self.fails:
            result = CommandResult(list(argv), 2, "", "RTNETLINK answers: Operation not supported")
            if check:
                raise CommandFailed(result)
            return result
        return super().run(argv, timeout, check, input)


def test_cleanup_runs_each_undo_once_newest_first_and_all_of_them_when_one_fails():
    ran = []
    cleanup = Cleanup()

    def broken():
        ran.append("broken")
        raise HostError("ssh: connection lost")

    cleanup.defer(ran.append, "first")
    cleanup.defer(broken)
    cleanup.defer(ran.append, "third")
    with pytest.raises(HostError, match="connection lost"):
        cleanup.unwind()
    assert ran == ["third", "broken", "first"]
    cleanup.unwind()  # a second down(): nothing left to undo
    assert ran == ["third", "broken", "first"] and len(cleanup) == 0


@pytest.mark.parametrize("psk", [False, True])
def test_wireguard_up_failing_midway_is_undone_exactly(psk):
    """The client's interface cannot be made: down() deletes the server's interface (made) and
    wipes each key file on its host (written), in reverse order, once each; the client's
    interface, never made, is not deleted."""
    journal: list[tuple[str, list[str]]] = []
    with RunResources() as resources:
        client = FailingHost("client", journal, fails=("ip", "link", "add"))
        server = FailingHost("server", journal)
        ctx = TechniqueContext(client, server, UNDERLAY, resources, probe_kernel=None)
        wg = WireGuard(WireGuardParams(psk=psk), ctx)
        with pytest.raises(CommandFailed):
            wg.up("kernel")
        done = len(journal)
        assert ("client", ["ip", "link", "add", wg.ifaces["client"], "type", "wireguard"]) in journal
        wg.down()
        wg.down()  # safe twice: nothing runs again
        wiped = [("client", "wg-client.key"), ("server", "wg-server.key")]
        if psk:
            wiped += [("client", "wg.psk"), ("server", "wg.psk")]
        # newest first: the server's interface (made last), then each key file on its host
        assert journal[done:] == [("server", ["ip", "link", "del", wg.ifaces["server"]])] + [
            (role, wipe_command([str(resources.path(name))])) for role, name in reversed(wiped)]


CAPABILITY_CALLERS = ["testbeds/congestion.py", "measure/monitor.py", "foundation/safe_files.py", "techniques/external.py", "hosts/arch.py",
                      "measure/gen.py", "techniques/wireguard.py", "techniques/ipsec/__init__.py",
                      "techniques/macsec.py"]


def test_callers_ask_the_host_and_the_technique_not_getattr():
    """A capability is a method of Host (on_this_machine, netns_inode, set_sysctl, remember_dir),
    and a technique's progress is its Cleanup: no caller probes an attribute with getattr or
    branches on a `remote` flag."""
    src = Path(vpnbench.__file__).parent
    asked = {name: re.findall(r"getattr\((?:host|self)\b[^)]*\)|\bhost\.remote\b", (src / name).read_text())
             for name in CAPABILITY_CALLERS}
    assert {name: found for name, found in asked.items() if found} == {}
    assert not hasattr(Host, "remote")


REACHABILITY_WAITS = ["testbeds/base.py", "run/bringup.py", "measure/setup.py", "techniques/external.py"]


def ping_loops(source: str) -> list[int]:
    """Lines of loops whose body builds a ping command of its own."""
    return [loop.lineno for loop in ast.walk(ast.parse(source)) if isinstance(loop, (ast.While, ast.For))
            and any(isinstance(node, ast.List) and node.elts and isinstance(node.elts[0], ast.Constant)
                    and node.elts[0].value == "ping" for node in ast.walk(loop))]


def test_the_reachability_wait_is_one_function():
    """The underlay's readiness, a tunnel's first packet, the set-up time and an external
    technique's stall check wait through hosts/reach.py's wait_reachable; none loops on ping."""
    src = Path(vpnbench.__file__).parent
    for name in REACHABILITY_WAITS:
        source = (src / name).read_text()
        assert ping_loops(source) == [], name
        assert "wait_reachable(" in source, name
    assert ping_loops((src / "hosts/reach.py").read_text()) == []  # one ping process waits


def test_wait_reachable_returns_at_the_first_reply_or_none_at_the_deadline():
    network = FakeNetwork(FakeClock())
    host = FakeHost("client", network)
    network.script["10.99.0.2"] = [None, None, 0.5]  # two lost (1 s each in the double), then a reply
    assert wait_reachable(host, "10.99.0.2", timeout=5) is not None
    assert len(host.ran) == 1 and "-w" in host.ran[0]  # one process for the whole wait
    network.rtt["10.99.0.3"] = lambda: None
    started = network.clock.now
    assert wait_reachable(host, "10.99.0.3", timeout=3) is None
    assert network.clock.now - started == pytest.approx(3.0)  # gave up at the deadline
