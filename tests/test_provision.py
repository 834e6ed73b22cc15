"""`vpnbench provision`: what a campaign needs, derived from what its parts declare; bad input
refused in one line; and, for real, the playbook against the ssh lab's hosts (sshlab.py)."""

import contextlib
import os
import shutil
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, VPNBENCH, run_cli
from sshlab import MGMT, SshLab
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.tools import known_packages
from vpnbench.provision import campaign_needs
from vpnbench.techniques import TECHNIQUES

# A package no part of vpnbench declares and this machine does not have: the test installs it
# on the lab's hosts (namespaces sharing this machine's files) and purges it at the end.
MISSING = "hello"
ENDS = ("client", "server")  # the lab's router too would only take longer
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


def inventory(lab: SshLab, gen_dir: Path, extra: str, known_hosts: Path | None = None) -> str:
    """The lab as Ansible sees it: the same hosts, keys and known_hosts as its testbed TOML."""
    hosts = "".join(f"    {role}:\n      ansible_host: {MGMT[role]}\n" for role in ENDS)
    return (f"lab:\n  hosts:\n{hosts}  vars:\n    ansible_user: root\n"
            f"    ansible_ssh_private_key_file: {lab.identity}\n"
            f"    ansible_ssh_common_args: -F /dev/null -o UserKnownHostsFile={known_hosts or lab.known_hosts}"
            " -o GlobalKnownHostsFile=/dev/null\n"
            "    ansible_ssh_args: -o ControlMaster=auto -o ControlPersist=1s\n"  # gone before the strays check
            "    ansible_python_interpreter: /usr/bin/python3\n"
            f"    vpnbench_extra_packages: [{extra}]\n"
            f"    vpnbench_gen_dir: {gen_dir}\n")  # not /usr/local/bin: the lab shares this machine's files


def assert_no_strays(lab: SshLab, within: float = 2.0) -> None:
    """Nothing left on the lab's machines within `within` s: Ansible's ssh masters persist 1 s
    after their last use. Polled, not slept: the answer is the same, the rest of the 2 s is not waited."""
    deadline = time.monotonic() + within
    while (strays := lab.strays()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert strays == []


@pytest.mark.exclusive  # alone: apt installs and purges a package
@pytest.mark.netns
def test_provision_check_lists_the_missing_package_the_run_installs_it_and_a_second_run_changes_nothing(
        tmp_path, lab, missing_package):
    gen_dir = tmp_path / "bin"
    (tmp_path / "lab.yml").write_text(inventory(lab, gen_dir, missing_package))
    (tmp_path / "c.toml").write_text(CAMPAIGN)

    def provision(*flags):
        # forks 1: the three hosts share one dpkg database, so they take turns (a real lab need not).
        # 300 s: Ansible's three hosts in turn are CPU-bound Python; with a busy loop per core the
        # three calls took 197 s together (stop 67), and one alone passed 120 s (stop 68)
        return subprocess.run([*lab.exec_argv(), *VPNBENCH, "provision", str(tmp_path / "lab.yml"), "--campaign",
                               str(tmp_path / "c.toml"), "--forks", "1", *flags],
                              capture_output=True, text=True, timeout=300)

    check = provision("--check")
    assert check.returncode == 0, check.stdout + check.stderr
    for role in ENDS:
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
    assert_no_strays(lab)


PING_ONLY = '[campaign]\nname = "ping"\n[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "ping"\n'


def lab_key(lab: SshLab, role: str) -> str:
    """The role's known_hosts line: address, key type, key (without the comment)."""
    line = next(line for line in lab.known_hosts.read_text().splitlines() if line.startswith(f"{MGMT[role]} "))
    return " ".join(line.split()[:3])


@pytest.mark.netns
def test_an_unknown_host_key_is_refused_unless_trusted_and_a_changed_one_always(tmp_path, lab):
    """ansible-runner turns Ansible's host key checking off: provision --check used to reach a
    host plain ssh refuses and write its key into known_hosts, which later runs then trusted."""
    known_hosts = tmp_path / "known_hosts"  # client: unknown; server: another key than its own
    known_hosts.write_text(f"{MGMT['server']} ssh-ed25519 {lab_key(lab, 'client').split()[2]}\n")
    before = known_hosts.read_text()
    # an inventory asking ssh not to check comes after provision's own policy: ssh takes the first
    weakened = inventory(lab, tmp_path / "bin", "", known_hosts).replace(
        "ControlPersist=1s", "ControlPersist=1s -o StrictHostKeyChecking=no")
    assert "StrictHostKeyChecking=no" in weakened
    (tmp_path / "lab.yml").write_text(weakened)
    (tmp_path / "c.toml").write_text(PING_ONLY)

    def provision(*flags):
        return subprocess.run([*lab.exec_argv(), *VPNBENCH, "provision", str(tmp_path / "lab.yml"), "--campaign",
                               str(tmp_path / "c.toml"), "--check", *flags], capture_output=True, text=True, timeout=120)

    refused = provision()
    assert refused.returncode == 1, refused.stdout + refused.stderr
    for role in ENDS:
        lines = [line for line in refused.stderr.splitlines() if line.startswith(f"host {role}: ")]
        assert lines == [f"host {role}: unreachable: its host key is not in known_hosts (or has changed): refused; "
                         "add the host's key to known_hosts, or give --trust-new-host-keys to accept a new host's "
                         "key on first contact"], refused.stderr
    assert known_hosts.read_text() == before  # nothing learnt

    trusted = provision("--trust-new-host-keys")
    assert trusted.returncode == 1, trusted.stdout + trusted.stderr
    assert "host client: " not in trusted.stderr and "host server: unreachable: its host key" in trusted.stderr
    assert known_hosts.read_text() == before + lab_key(lab, "client") + "\n"  # first contact: learnt
    assert_no_strays(lab)


FIXED_BUILD_DIR = Path("/var/tmp/vpnbench-gen-src")  # where provision used to build
BUILD_PARENT = Path("/var/cache/vpnbench/work")  # where it builds: root's alone, every parent too
PLANTED_CARGO = Path("/var/tmp/.cargo")  # above where it used to build: cargo read it from there


@pytest.fixture
def planted_build_dir(tmp_path):
    """FIXED_BUILD_DIR made first by another user (nobody), with a build.rs that cargo would run
    as root: it writes a marker."""
    if FIXED_BUILD_DIR.exists():
        pytest.skip(f"{FIXED_BUILD_DIR} exists: not this test's to plant or remove")
    marker = tmp_path / "build-rs-ran"
    FIXED_BUILD_DIR.mkdir(mode=0o777)
    (FIXED_BUILD_DIR / "build.rs").write_text(f'fn main() {{ std::fs::write("{marker}", "root ran me").unwrap(); }}\n')
    for path in (FIXED_BUILD_DIR, FIXED_BUILD_DIR / "build.rs"):
        os.chown(path, 65534, 65534)
    try:
        yield marker
    finally:
        shutil.rmtree(FIXED_BUILD_DIR)


@pytest.fixture
def planted_cargo_config(tmp_path):
    """/var/tmp/.cargo/config.toml made by nobody, naming a rustc-wrapper of nobody's that leaves a
    marker when root runs it (and runs rustc, so a build that follows it still succeeds)."""
    if PLANTED_CARGO.exists():
        pytest.skip(f"{PLANTED_CARGO} exists: not this test's to plant or remove")
    marker = tmp_path / "wrapper-ran"
    wrapper = PLANTED_CARGO / "wrapper"
    script = (f"mkdir -m 755 {PLANTED_CARGO} && printf '#!/bin/sh\\ntouch {marker}\\nexec \"$@\"\\n' > {wrapper} "
              f"&& chmod 755 {wrapper} && printf '[build]\\nrustc-wrapper = \"{wrapper}\"\\n' > {PLANTED_CARGO}/config.toml")
    subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", script], check=True)
    try:
        yield marker
    finally:
        shutil.rmtree(PLANTED_CARGO)


class BuildDirWatch:
    """Every vpnbench-gen-* directory that appears in /var/tmp (but the planted one) or in
    BUILD_PARENT while provision runs, with its owner and mode as first seen."""

    def __init__(self):
        self.seen: dict[str, tuple[int, bool, int]] = {}  # name -> owner, a directory, permissions
        self.before = set(self.listing())
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)

    def watch(self):
        while not self.stop.wait(0.02):
            for name in set(self.listing()) - self.before - set(self.seen):
                if Path(name).name.startswith("vpnbench-gen-") and name != str(FIXED_BUILD_DIR):
                    with contextlib.suppress(FileNotFoundError):
                        st = os.lstat(name)
                        self.seen[name] = (st.st_uid, stat.S_ISDIR(st.st_mode), stat.S_IMODE(st.st_mode))

    @staticmethod
    def listing() -> list[str]:
        return [str(parent / name) for parent in (Path("/var/tmp"), BUILD_PARENT) if parent.is_dir()
                for name in os.listdir(parent)]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def checkout_without_gen(into: Path) -> Path:
    """vpnbench's source and gen's, no gen built: each host builds its own with its cargo."""
    ignore = shutil.ignore_patterns("__pycache__", "target")
    shutil.copytree(REPO / "src", into / "src", ignore=ignore)
    (into / ".cargo").mkdir()
    for name in ("gen/Cargo.toml", "gen/Cargo.lock", "gen/src", ".cargo/config.toml", "vendor"):
        copy = shutil.copytree if (REPO / name).is_dir() else shutil.copy
        copy(REPO / name, into / name)
    return into / "src"


@pytest.mark.exclusive  # alone: fixed build paths under /var/tmp, and every new build directory watched
@pytest.mark.netns
def test_a_host_builds_gen_in_a_fresh_root_only_directory_never_in_one_another_user_made(
        tmp_path, clean_machine, planted_build_dir, planted_cargo_config):
    (tmp_path / "gen").mkdir()
    source = checkout_without_gen(tmp_path)
    lab = SshLab(tmp_path / "lab", home_from_machine=(".cargo", ".rustup"))  # the lab's hosts have cargo
    try:
        lab.up()
        gen_dir = tmp_path / "bin"
        (tmp_path / "lab.yml").write_text(inventory(lab, gen_dir, ""))
        (tmp_path / "c.toml").write_text(CAMPAIGN)
        env = {key: value for key, value in os.environ.items() if key != "VPNBENCH_GEN"} | {"PYTHONPATH": str(source)}
        with BuildDirWatch() as watch:
            run = subprocess.run([*lab.exec_argv(), *VPNBENCH, "provision", str(tmp_path / "lab.yml"), "--campaign",
                                  str(tmp_path / "c.toml"), "--hosts", "client"],
                                 capture_output=True, text=True, timeout=300, env=env)
        assert not planted_build_dir.exists(), "the planted build.rs ran"
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"host client: vpnbench-gen ({os.uname().machine}) built with the host's cargo and installed" in run.stdout
        assert os.access(gen_dir / "vpnbench-gen", os.X_OK)
        assert_no_strays(lab)
    finally:
        lab.down()
    assert sorted(os.listdir(FIXED_BUILD_DIR)) == ["build.rs"]  # and nothing was put beside it
    assert not planted_cargo_config.exists(), "root ran the rustc-wrapper planted in /var/tmp/.cargo"
    assert len(watch.seen) == 1 and list(watch.seen.values()) == [(0, True, 0o700)], watch.seen
    assert Path(next(iter(watch.seen))).parent == BUILD_PARENT
    assert not any(Path(name).exists() for name in watch.seen)  # removed after


LAB_INI = "[lab]\npi1 ansible_host=10.9.0.1 ansible_user=root ansible_port=2222\npi2 ansible_host=10.9.0.2\n"


def ssh_testbed(inventory: str, client: dict, server: dict) -> dict:
    return {"kind": "ssh", "router": False, "inventory": inventory,
            "hosts": {"client": {"iface": "eth1", "ipv4": "10.202.1.2", **client},
                      "server": {"iface": "eth1", "ipv4": "10.202.2.2", **server}}}


def test_an_ssh_testbed_names_its_hosts_from_the_inventory(tmp_path):
    (tmp_path / "lab.ini").write_text(LAB_INI)
    spec = campaign_from_dict({"campaign": {"name": "c"}, "technique": [{"kind": "baseline"}],
                               "measurement": [{"kind": "ping"}],
                               "testbed": ssh_testbed(str(tmp_path / "lab.ini"), {"name": "pi1"},
                                                      {"name": "pi2", "user": "bench"})}).testbed
    assert (spec.hosts["client"].host, spec.hosts["client"].user, spec.hosts["client"].port) == ("10.9.0.1", "root", 2222)
    assert (spec.hosts["server"].host, spec.hosts["server"].user) == ("10.9.0.2", "bench")  # the entry wins


@pytest.mark.parametrize("inventory,server,message", [
    ("lab.ini", {"name": "pi9"}, "testbed: hosts.server.name: 'pi9' is not in {dir}/lab.ini; hosts there: pi1, pi2"),
    ("none.ini", {"name": "pi2"}, "testbed: inventory: {dir}/none.ini: no such file"),
    ("", {"name": "pi2"}, "testbed: hosts.client.name: needs inventory"),
])
def test_a_wrong_inventory_or_host_name_is_one_line_and_exit_2(tmp_path, inventory, server, message):
    (tmp_path / "lab.ini").write_text(LAB_INI)
    text = ('[campaign]\nname = "c"\n[testbed]\nkind = "ssh"\nrouter = false\n'
            + (f'inventory = "{tmp_path}/{inventory}"\n' if inventory else "")
            + '[testbed.hosts.client]\nname = "pi1"\niface = "eth1"\nipv4 = "10.202.1.2"\n'
            + f'[testbed.hosts.server]\nname = "{server["name"]}"\niface = "eth1"\nipv4 = "10.202.2.2"\n'
            + '[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "ping"\n')
    (tmp_path / "c.toml").write_text(text)
    proc = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "r.db"), timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert proc.stderr.startswith("vpnbench: error: " + message.format(dir=tmp_path)), proc.stderr
    assert not (tmp_path / "r.db").exists()
