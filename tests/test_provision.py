"""`vpnbench provision`: what a campaign needs, derived from what its parts declare; bad input
refused in one line; and, for real, the playbook against the ssh lab's hosts (sshlab.py)."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import VPNBENCH, run_cli
from sshlab import MGMT, SshLab
from vpnbench.campaign import campaign_from_dict
from vpnbench.provision import campaign_needs
from vpnbench.techniques import TECHNIQUES
from vpnbench.tools import known_packages

# A package no part of vpnbench declares and this machine does not have: the test installs it
# on the lab's hosts (namespaces sharing this machine's files) and purges it at the end.
MISSING = "hello"
CAMPAIGN = """[campaign]
name = "provisioned"
[[technique]]
kind = "baseline"
[[measurement]]
kind = "udp"
tool = "gen"
rate = "10M"
length = 1200
duration = "1s"
[[measurement]]
kind = "ping"
count = 3
"""


def campaign(techniques, measurements, sysctls=None):
    return campaign_from_dict({"campaign": {"name": "c"}, "testbed": {"sysctls": sysctls or {}},
                               "technique": techniques, "measurement": measurements})


def test_the_packages_are_what_the_techniques_and_measurements_declare():
    needs = campaign_needs(campaign([{"kind": "wireguard"}], [{"kind": "tcp", "tool": "iperf2", "duration": "1s"}],
                                    {"net.core.rmem_max": 1000000}))
    assert set(TECHNIQUES["wireguard"].packages.values()) <= set(needs.packages)
    assert "iperf" in needs.packages and "iperf3" not in needs.packages  # the tool the parameters chose
    assert {"iproute2", "iputils-ping", "procps"} <= set(needs.packages)  # the testbed's own tools
    assert not needs.gen and needs.sysctls == {"net.core.rmem_max": "1000000"}
    assert campaign_needs(campaign([{"kind": "baseline"}], [{"kind": "udp", "tool": "gen", "rate": "1M",
                                                              "length": 100, "duration": "1s"}])).gen
    everything = campaign_needs(None)
    assert set(known_packages().values()) <= set(everything.packages) and everything.gen


@pytest.mark.parametrize("inventory,args,message", [
    (None, [], "INVENTORY: {path}: no such file"),
    ("[lab\nalpha ansible_host=x\n", [], "INVENTORY: {path}: Failed to parse inventory with 'ini' plugin"),
    ("", [], "INVENTORY: {path}: no hosts in it"),
    ("[lab]\nalpha ansible_connection=local\n", ["--hosts", "alpha,beta"],
     "--hosts: 'beta' is not in {path}; hosts there: alpha"),
    ("[lab]\nalpha ansible_connection=local\n", ["--gen", "aarch64=/bin/true"],
     "--gen: /bin/true is built for x86_64, not aarch64"),
    ("[lab]\nalpha ansible_connection=local\n", ["--forks", "0"], "--forks: 0 is not allowed"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, inventory, args, message):
    path = tmp_path / "lab.ini"
    if inventory is not None:
        path.write_text(inventory)
    if "--gen" in args and os.uname().machine != "x86_64":
        pytest.skip("the message names this machine's architecture")
    proc = run_cli("provision", str(path), "--campaign", "demo", *args, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vpnbench: error: " + message.format(path=path)), proc.stderr
    assert proc.stdout == ""


def installed(package: str) -> bool:
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True).stdout
    return status == "install ok installed"


@pytest.fixture
def lab(tmp_path, clean_machine):
    lab = SshLab(tmp_path / "lab")
    try:
        yield lab.up()
    finally:
        lab.down()


@pytest.fixture
def missing_package():
    """MISSING, not installed, its .deb fetched into apt's cache (the lab's namespaces reach no
    mirror); purged afterwards, and the .deb removed if this test fetched it."""
    if installed(MISSING):
        pytest.skip(f"{MISSING} is installed on this machine: the test needs a package that is not")
    archives = Path("/var/cache/apt/archives")
    before = set(archives.glob(f"{MISSING}_*.deb"))
    fetch = subprocess.run(["apt-get", "install", "-y", "-q", "--download-only", "--no-install-recommends", MISSING],
                           capture_output=True, text=True, timeout=300, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    assert fetch.returncode == 0, fetch.stderr
    try:
        yield MISSING
    finally:
        subprocess.run(["apt-get", "purge", "-y", "-q", MISSING], capture_output=True, timeout=300,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        for deb in set(archives.glob(f"{MISSING}_*.deb")) - before:
            deb.unlink()
        assert not installed(MISSING)


def inventory(lab: SshLab, gen_dir: Path, extra: str) -> str:
    """The lab as Ansible sees it: the same hosts, keys and known_hosts as its testbed TOML."""
    hosts = "".join(f"    {role}:\n      ansible_host: {address}\n" for role, address in MGMT.items())
    return (f"lab:\n  hosts:\n{hosts}  vars:\n    ansible_user: root\n"
            f"    ansible_ssh_private_key_file: {lab.identity}\n"
            f"    ansible_ssh_common_args: -F /dev/null -o UserKnownHostsFile={lab.known_hosts}"
            " -o GlobalKnownHostsFile=/dev/null\n"
            "    ansible_ssh_args: -o ControlMaster=no\n"  # no master left running in the lab
            "    ansible_python_interpreter: /usr/bin/python3\n"
            f"    vpnbench_extra_packages: [{extra}]\n"
            f"    vpnbench_gen_dir: {gen_dir}\n")  # not /usr/local/bin: the lab shares this machine's files


@pytest.mark.netns
def test_provision_check_lists_the_missing_package_the_run_installs_it_and_a_second_run_changes_nothing(
        tmp_path, lab, missing_package):
    gen_dir = tmp_path / "bin"
    (tmp_path / "lab.yml").write_text(inventory(lab, gen_dir, missing_package))
    (tmp_path / "c.toml").write_text(CAMPAIGN)

    def provision(*flags):
        # forks 1: the three hosts share one dpkg database, so they take turns (a real lab need not)
        return subprocess.run([*lab.exec_argv(), *VPNBENCH, "provision", str(tmp_path / "lab.yml"), "--campaign",
                               str(tmp_path / "c.toml"), "--forks", "1", *flags],
                              capture_output=True, text=True, timeout=120)

    check = provision("--check")
    assert check.returncode == 0, check.stdout + check.stderr
    for role in MGMT:
        assert f"host {role}: package {missing_package} would be installed" in check.stdout, check.stdout
    assert "changes would be made" in check.stdout
    assert not installed(missing_package) and not gen_dir.exists()  # --check changed nothing

    first = provision()
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"host client: package {missing_package} installed" in first.stdout, first.stdout
    assert "host client: vpnbench-gen (x86_64) installed" in first.stdout or os.uname().machine != "x86_64"
    assert installed(missing_package) and os.access(gen_dir / "vpnbench-gen", os.X_OK)

    second = provision()
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.strip().splitlines()[-1].endswith(": no change"), second.stdout
    assert lab.strays() == []
