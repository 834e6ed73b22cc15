"""The testbed interface without building anything: every kind is a Testbed with a KernelProbe,
make_testbed builds each, the VM testbed's layout (two guests, the router a namespace) and the
import graph the house relies on (spec apart from the runtime, no circle through hosts/vm)."""

import subprocess
import sys
from pathlib import Path

import pytest

from vpnbench.foundation.errors import ImpairmentError
from vpnbench.hosts.base import CommandFailed, CommandResult, Host
from vpnbench.hosts.netns import NetnsHost
from vpnbench.hosts.ssh import SshHost, SshTarget
from vpnbench.impair.model import ImpairmentParams, expand_impairment
from vpnbench.techniques.openvpn import OpenVPN
from vpnbench.techniques.wireguard import WireGuard
from vpnbench.testbeds.base import Testbed
from vpnbench.testbeds.impair_backends import NetemBackend
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbeds.make import make_testbed
from vpnbench.testbeds.probe import KernelProbe, LocalKernelProbe, NoProbe, RemoteKernelProbe
from vpnbench.testbeds.spec import TestbedSpec
from vpnbench.testbeds.ssh import SshTestbed


class Resources:
    """RunResources' naming, without a run directory on the machine (nothing is built here)."""

    run_id = "t0t0t0"

    def __init__(self, tmp_path: Path):
        self.dir = tmp_path

    def netns_name(self, role: str) -> str:
        return f"vpbt-{self.run_id}-{role}"

    def path(self, name: str) -> Path:
        return self.dir / name


SSH = TestbedSpec(kind="ssh", router=False, hosts={
    "client": SshTarget(host="c", iface="eth1", ipv4="10.0.0.1"), "server": SshTarget(host="s", iface="eth1", ipv4="10.0.0.2")})


@pytest.mark.parametrize("spec, kind", [(TestbedSpec(), LocalTestbed), (SSH, SshTestbed),
                                        (TestbedSpec(kind="vm"), None)])
def test_make_testbed_builds_every_kind_behind_one_interface(tmp_path, spec, kind):
    from vpnbench.testbeds.vm import VmTestbed

    testbed = make_testbed(spec, Resources(tmp_path))
    assert isinstance(testbed, Testbed) and isinstance(testbed, kind or VmTestbed)
    assert isinstance(testbed.probe, KernelProbe)
    assert isinstance(testbed.facts, dict) and testbed.setup_timeout_scale == 1.0  # nothing booted yet
    for method in ("connect", "up", "down", "evidence"):
        assert callable(getattr(testbed, method))
    assert {"client", "server"} <= set(testbed.hosts)


def test_the_vm_testbed_boots_two_guests_and_routes_through_a_namespace(tmp_path):
    testbed = make_testbed(TestbedSpec(kind="vm", router=True), Resources(tmp_path))
    assert isinstance(testbed.client, SshHost) and isinstance(testbed.server, SshHost)
    assert isinstance(testbed.router, NetnsHost)  # this machine forwards: no third guest
    assert testbed.guests.roles == ["client", "server"] and testbed.facts["vms"] == 2
    assert testbed.underlay_map()["server"] == {"ipv4": "10.201.2.2", "ipv6": "fd00:201:2::2"}
    nic = testbed._nic("client", 0)
    assert nic.name == "c0" and nic.netdev.startswith("tap,") and "vnet_hdr=off" in nic.netdev
    setup = "\n".join(testbed._guest_setup("server"))
    assert "10.201.2.2/24 dev s0" in setup and "default via 10.201.2.1" in setup
    # the wire proof watches the router's side next to the client: a namespace here, tcpdump on this machine
    [point] = testbed.capture_points()
    assert point.host is testbed.router and point.iface == "r0"
    direct = make_testbed(TestbedSpec(kind="vm", router=False), Resources(tmp_path / "d"))
    assert direct.router is None and direct._nic("server", 1).netdev.startswith("socket,udp=127.0.0.1:10000,")


def test_every_probe_is_a_kernel_probe_and_answers_for_commands():
    assert all(issubclass(cls, KernelProbe) for cls in (LocalKernelProbe, RemoteKernelProbe, NoProbe))
    assert NoProbe().has_command("sh") and not NoProbe().has_command("no-such-command-vpnbench")


class ToolHost(Host):
    """A host with a fixed set of commands: what a probe must ask, not this machine's PATH."""

    def __init__(self, role, commands):
        super().__init__(role, None)
        self.commands = set(commands)

    def run(self, argv, timeout=30.0, check=True, input=None):
        return CommandResult(argv, 0, "", "")

    def missing_commands(self, names):
        return [n for n in names if n not in self.commands]

    def has_command(self, name):
        return name in self.commands

    spawn = write_file = pids = None


def test_techniques_ask_the_hosts_probe_for_their_tools():
    """wg on the client but not on the server: the kernel backend is unavailable there, whatever
    this machine (the controller) has installed."""
    hosts = [ToolHost("client", ["wg", "wireguard-go", "openvpn"]), ToolHost("server", ["openvpn"])]
    wireguard = {s.name: s for s in WireGuard.backends(RemoteKernelProbe(hosts))}
    assert not wireguard["kernel"].available and "wg" in wireguard["kernel"].reason
    assert {s.name: s.available for s in OpenVPN.backends(RemoteKernelProbe(hosts))}["userspace"]
    both = [ToolHost("client", ["wg", "wireguard-go"]), ToolHost("server", ["wg", "wireguard-go"])]
    assert {s.name: s.available for s in WireGuard.backends(RemoteKernelProbe(both))}["userspace"]



def test_a_host_that_does_not_answer_is_not_taken_for_one_without_the_file():
    """ssh's 255 is no answer to `test -e`: the run stops naming ssh's reason, never with
    "client: /usr/sbin/swanctl not found" for a machine that was not reached."""
    class Gone(ToolHost):
        def run(self, argv, timeout=30.0, check=True, input=None):
            return CommandResult(argv, 255, "", "ssh: connect to host c port 22: Connection refused")

    class Answers(ToolHost):
        def run(self, argv, timeout=30.0, check=True, input=None):
            return CommandResult(argv, 0 if argv[-1] == "/usr/sbin/swanctl" else 1, "", "")

    with pytest.raises(CommandFailed, match="Connection refused"):
        RemoteKernelProbe([Gone("client", [])]).host_lacking("/usr/sbin/swanctl")
    probe = RemoteKernelProbe([Answers("client", []), Answers("server", [])])
    assert probe.host_lacking("/usr/sbin/swanctl") is None and probe.host_lacking("/dev/net/tun") == "client"

def test_netem_goes_to_the_endpoints_when_the_router_kernel_has_none(tmp_path):
    """The VM testbed's router is a namespace of a machine without sch_netem: auto acts on the
    guests' egress, and asking for the router is refused with the allowed values."""
    from test_impair_run import RecordingHost

    bed = make_testbed(TestbedSpec(kind="vm", router=True), Resources(tmp_path))
    bed.hosts = {role: RecordingHost(role) for role in ("client", "server", "router")}
    bed.netem_on_router = False
    backend = NetemBackend(bed)
    [auto] = expand_impairment(ImpairmentParams(netem="delay 20ms"))
    backend.apply(auto)
    assert backend.placement_of(auto) == "endpoints" and bed.hosts["router"].commands == []
    assert bed.hosts["client"].commands == [["tc", "qdisc", "replace", "dev", "c0", "root", "netem", "delay", "20ms"]]
    assert bed.hosts["server"].commands == [["tc", "qdisc", "replace", "dev", "s0", "root", "netem", "delay", "20ms"]]
    [router] = expand_impairment(ImpairmentParams(netem="delay 20ms", placement="router"))
    with pytest.raises(ImpairmentError, match="allowed here: auto, endpoints"):
        backend.apply(router)


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(m for m in sys.modules if m.startswith('vpnbench')))"
    return set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())


TESTBED_RUNTIME = {f"vpnbench.testbeds.{name}" for name in ("base", "local", "ssh", "vm", "make")}


def test_the_spec_is_apart_from_the_runtime_and_hosts_vm_has_no_way_up():
    assert not TESTBED_RUNTIME & _modules_after("import vpnbench.testbeds.spec")
    assert not any(m.startswith("vpnbench.testbeds") for m in _modules_after("import vpnbench.hosts.vm"))
    assert "vpnbench.hosts.kernelvm" not in _modules_after("import vpnbench.hosts.ssh")  # die_with_parent lives apart


def test_evidence_waits_longer_on_a_slow_host():
    """A TCG guest's evidence commands get the deadline its set-up gets (5 s there timed out)."""
    from vpnbench.hosts import evidence

    class SlowHost(ToolHost):
        def run(self, argv, timeout=30.0, check=True, input=None):
            self.timeout = timeout
            return CommandResult(argv, 0, "up", "")

    host = SlowHost("client", [])
    host.slowdown = 4.0
    assert evidence.command(host, ["ip", "link"]) == "up" and host.timeout == 4 * evidence.TIMEOUT


def test_a_guest_that_failed_leaves_its_console_and_how_its_qemu_fared(tmp_path):
    """What a person needs after a failed bring-up on the VM testbed: which guest, its console's
    last lines (plain text), and whether its QEMU got CPU at all (a starved guest shows it)."""
    from vpnbench.hosts.vm import Guests

    guests = Guests(tmp_path, "vpbt-none", ["client", "server"], 768, 1, False, "tcg", 300)
    (tmp_path / "console-client.log").write_text("\x1b[2J\x1b[Hbooting\r\nvpnbench-vm: node ready\r\n")
    guests.qemu["client"] = subprocess.Popen(["sleep", "30"])
    try:
        assert guests.console_tail("client") == "booting\nvpnbench-vm: node ready"
        assert guests.state("client").startswith("QEMU running ") and "of CPU" in guests.state("client")
        assert guests.state("server") == "not started"
    finally:
        guests.stop()
    assert guests.qemu == {}
