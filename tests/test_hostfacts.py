"""Host facts: namespaces of one machine read the machine-wide part once."""

import os
import subprocess

from vpnbench.hosts.base import CommandResult, Host
from vpnbench.run.hostfacts import NETWORK_SCRIPT, TOOL_VERSIONS, collect_host_facts, script, version_script
from vpnbench.techniques import TECHNIQUES


class ShellHost(Host):
    """Runs commands on this machine as they are (no namespace), and records them."""

    def __init__(self, role: str, machine: str | None):
        super().__init__(role, None)
        self.machine, self.commands = machine, []

    def run(self, argv, timeout=30.0, check=True, input=None):
        self.commands.append(list(argv))
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return CommandResult(list(argv), proc.returncode, proc.stdout, proc.stderr)

    def spawn(self, argv, name, env=None, interactive=False):
        raise NotImplementedError

    def write_file(self, path, data, mode=0o600):
        raise NotImplementedError

    def pids(self):
        return []

    def has_command(self, name):
        return True


def test_namespaces_of_one_machine_read_its_machine_wide_part_once():
    hosts = {"client": ShellHost("client", "here"), "server": ShellHost("server", "here"),
             "router": ShellHost("router", None)}
    facts = {f.host: f.facts for f in collect_host_facts("r1", hosts)}
    assert [h.commands[0][-1] for h in hosts.values()] == [script(), NETWORK_SCRIPT, script()]
    for role in hosts:  # the server's machine-wide facts come from the client's run
        assert facts[role]["kernel"] == os.uname().release
        assert facts[role]["cpu_count"] == os.cpu_count()
        assert facts[role]["interfaces"], role  # its own network part


def test_each_hosts_tcp_congestion_control_and_default_qdisc_are_recorded():
    # read from this machine as it is (in a namespace the script reads the namespace's own control)
    def sysctl(name):
        return open(f"/proc/sys/net/{name}").read().strip()

    hosts = {"client": ShellHost("client", "here"), "server": ShellHost("server", "here")}
    facts = {f.host: f.facts for f in collect_host_facts("r1", hosts)}
    for role in hosts:
        assert facts[role]["tcp_congestion_control"] == sysctl("ipv4/tcp_congestion_control")
        assert facts[role]["tcp_available_congestion_control"] == sysctl("ipv4/tcp_available_congestion_control").split()
        assert facts[role]["default_qdisc"] == sysctl("core/default_qdisc")
    from vpnbench.run.hostfacts import summary_line

    assert f"TCP {sysctl('ipv4/tcp_congestion_control')}, qdisc " in summary_line(facts["client"])


def asked(text: str) -> set[str]:
    return {line.split("### v_")[1].split("\\n")[0] for line in text.splitlines() if "### v_" in line}


def test_a_run_asks_the_versions_of_its_own_techniques_and_the_tools_only():
    every = asked(version_script())
    own = asked(version_script(["wireguard", "baseline", "wireguard"]))
    assert own == set(TOOL_VERSIONS) | set(TECHNIQUES["wireguard"].versions)
    assert set(TECHNIQUES["tailscale"].versions) <= every - own  # another technique's are not asked
    assert asked(script(["wireguard"])) == own
