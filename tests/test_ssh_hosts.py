"""kind = "ssh" for real: sshd in three namespaces (client, router, server), a generated key
and known_hosts, vpnbench on the control network. See sshlab.py."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from bounds import assert_tcp_measured
from conftest import TCP_AND_PING, VPNBENCH, leftovers, run_cli
from sshlab import SshLab
from vpnbench.techniques.ipsec.strongswan import PLUGIN_DIR, plugin_path

# Beside another machine test (make test, two at a time): the labs share /run/sshd (sshlab.py).
pytestmark = pytest.mark.netns

CELLS = """
[[technique]]
kind = "baseline"

[[technique]]
kind = "wireguard"

[[measurement]]
kind = "tcp"
duration = "1s"

[[measurement]]
kind = "udp"
rate = "20M"
length = 1200
duration = "1s"

[[measurement]]
kind = "ping"
count = 10
interval = "0.05s"
"""


@pytest.fixture
def lab(tmp_path, clean_machine):
    lab = SshLab(tmp_path / "lab")
    try:
        yield lab.up()
        assert lab.strays() == [], "a run left processes on the lab's machines"
    finally:
        lab.down()


def test_a_backend_is_resolved_on_the_host_it_runs_on_not_on_the_controller(tmp_path, clean_machine):
    """The client machine has no strongSwan plugins (an empty directory over them in its sshd's
    mount namespace); the server and this machine, the controller, have them: the userspace
    backend is refused before anything is touched, naming the client."""
    if not Path(plugin_path("kernel-libipsec")).exists():
        pytest.skip("this machine has no kernel-libipsec plugin: the controller must have it to show the point")
    lab = SshLab(tmp_path / "lab", hidden={"client": [str(PLUGIN_DIR)]})
    try:
        lab.up()
        campaign = ("[campaign]\nname = \"plugins\"\n" + lab.testbed_toml()
                    + "[[technique]]\nkind = \"ipsec\"\nbackend = \"userspace\"\n"
                    + "[[measurement]]\nkind = \"ping\"\ncount = 1\n")
        proc = in_lab(lab, "run", str(write(tmp_path, "p.toml", campaign)), "--db", str(tmp_path / "p.db"))
        assert lab.strays() == []
    finally:
        lab.down()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "vpnbench: error: technique[1].backend: backend 'userspace' is not available: client: strongSwan's "
        "kernel-libipsec plugin is not installed (apt-get install libcharon-extra-plugins); run the others with "
        "--skip-unavailable, or use [testbed] kind = \"vm\" (QEMU VMs with a full distribution kernel) for the "
        "kernel backends"), proc.stderr
    assert not (tmp_path / "p.db").exists()


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def in_lab(lab, *args, timeout=240):
    """vpnbench as a user on the control network runs it."""
    return subprocess.run([*lab.exec_argv(), *VPNBENCH, *args], capture_output=True, text=True, timeout=timeout)


def export(db, out):
    assert run_cli("export", str(db), "--format", "json", "-o", str(out)).returncode == 0
    return json.loads(out.read_text())


def shape(cells: list[dict]) -> dict:
    """What a consumer of the export relies on: keys of a cell, of its metrics and of each host."""
    by = {}
    for cell in cells:
        key = (cell["technique"].split()[0], cell["measurement"])
        by[key] = (sorted(cell), sorted(cell["metrics"]), {r: sorted(h) for r, h in cell["hosts"].items()},
                   cell["status"], cell["wire_check"])
    return by


def test_smoke_campaign_on_ssh_hosts_has_the_local_shape(tmp_path, lab):
    campaign = "[campaign]\nname = \"smoke\"\n" + lab.testbed_toml() + CELLS
    started = time.monotonic()
    proc = in_lab(lab, "run", str(write(tmp_path, "ssh.toml", campaign)), "--db", str(tmp_path / "ssh.db"))
    ssh_seconds = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    remote = export(tmp_path / "ssh.db", tmp_path / "ssh.json")
    local_toml = "[campaign]\nname = \"smoke\"\n[testbed]\nkind = \"local\"\n" + CELLS
    proc = run_cli("run", str(write(tmp_path, "local.toml", local_toml)), "--db", str(tmp_path / "local.db"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    local = export(tmp_path / "local.db", tmp_path / "local.json")
    assert len(remote) == len(local) == 6
    assert shape(remote) == shape(local)
    for cell in remote:
        assert cell["status"] == "ok", cell["error"]
        assert set(cell["hosts"]) == {"client", "router", "server"}
        assert cell["hosts"]["client"]["samples"] >= 1  # sampled on the host, over ssh
    wg_tcp = next(c for c in remote if c["technique"].startswith("wireguard") and c["measurement"] == "tcp")
    assert wg_tcp["wire_check"] == "encrypted"
    assert_tcp_measured(wg_tcp)
    assert "iperf3" in json.dumps(wg_tcp["hosts"]["server"]["procs_cpu_pct"])  # remote process CPU
    from vpnbench.store.database import Store
    store = Store(tmp_path / "ssh.db")
    assert store.run(store.latest_run("smoke")).environment["testbed"]["kind"] == "ssh"
    store.close()
    print(f"ssh smoke run: {ssh_seconds:.1f} s")


def test_ipsec_on_ssh_hosts_resolves_its_backend_on_the_hosts_and_proves_encryption(tmp_path, lab):
    """The backend is chosen from what the remote kernels accept (their throwaway namespaces);
    charon runs on each host in its own mount namespace, over ssh."""
    campaign = lab.testbed_toml() + "[[technique]]\nkind = \"ipsec\"\n" + TCP_AND_PING
    proc = in_lab(lab, "run", str(write(tmp_path, "ipsec.toml", campaign)), "--db", str(tmp_path / "i.db"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cells = export(tmp_path / "i.db", tmp_path / "i.json")
    assert len(cells) == 2
    for cell in cells:
        assert cell["status"] == "ok", cell["error"]
        assert cell["wire_check"] == "encrypted"
        assert cell["negotiated"]["child"]["protocol"] == "ESP"
    assert leftovers() == []


def test_gen_runs_on_ssh_hosts_from_a_copy_in_the_run_directory(tmp_path, lab):
    """The lab's hosts have no vpnbench-gen on PATH: the run writes this checkout's binary into
    its directory on each host, runs it there over ssh, and removes it with the directory."""
    campaign = lab.testbed_toml() + """
[[technique]]
kind = "baseline"

[[measurement]]
kind = "udp"
tool = "gen"
rate = "20M"
length = 1200
duration = "3s"
"""
    proc = in_lab(lab, "run", str(write(tmp_path, "gen.toml", campaign)), "--db", str(tmp_path / "g.db"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (cell,) = export(tmp_path / "g.db", tmp_path / "g.json")
    assert cell["status"] == "ok", cell["error"]
    m = cell["metrics"]  # at most the paced 20 Mbit/s of 1200-byte datagrams for 3 s (6250); some arrived
    assert 0 < m["received_packets"] <= m["sent_packets"] <= 1.05 * 20e6 * 3 / (1200 * 8), m
    # The copy ran, not this checkout's binary (the lab's hosts share this filesystem, so either
    # would work): the server's process name is its copy's file name, cut to the kernel's 15
    # characters. (The client's run is one ssh command, which the remote sampler does not list.)
    assert "vpnbench-gen-se" in json.dumps(cell["hosts"]["server"]["procs_cpu_pct"])
    assert leftovers() == []


def test_doctor_testbed_prints_a_host_by_capability_table(tmp_path, lab):
    path = write(tmp_path, "tb.toml", lab.testbed_toml())
    proc = in_lab(lab, "doctor", "--testbed", str(path), "--json", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert set(report["hosts"]) == {"client", "router", "server"}
    for row in report["hosts"].values():
        assert row["tool ip"] and row["tool iperf3"] and row["tool tcpdump"]
        # the hosts run this machine's kernel: the answers must match it
        assert row["kernel"] == os.uname().release
    table = in_lab(lab, "doctor", "--testbed", str(path), timeout=120)
    assert table.returncode == 0 and "kernel wireguard" in table.stdout and "router" in table.stdout


def test_unknown_host_key_fails_before_any_cell(tmp_path, lab):
    lab.known_hosts.write_text(lab.known_hosts.read_text().replace(lab_line(lab, "server"), ""))
    campaign = lab.testbed_toml() + CELLS
    proc = in_lab(lab, "run", str(write(tmp_path, "c.toml", campaign)), "--db", str(tmp_path / "c.db"), timeout=60)
    assert proc.returncode == 1
    assert "Host key verification failed" in proc.stderr and "10.203.0.4" in proc.stderr
    assert leftovers() == []


def lab_line(lab, role: str) -> str:
    return next(line for line in lab.known_hosts.read_text().splitlines() if line.startswith(
        {"client": "10.203.0.2", "router": "10.203.0.3", "server": "10.203.0.4"}[role]))


def test_sshd_killed_mid_run_fails_cells_with_a_reason_and_ends_cleanly(tmp_path, lab):
    campaign = lab.testbed_toml() + CELLS.replace('duration = "1s"', 'duration = "3s"')
    db = tmp_path / "k.db"
    proc = subprocess.Popen([*lab.exec_argv(), *VPNBENCH, "run", str(write(tmp_path, "k.toml", campaign)),
                             "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(lab.comm(p) == "iperf3" for p in lab.pids("server")):  # a cell is in flight
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    lab.kill_sshd("server")
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, out + err
    cells = export(db, tmp_path / "k.json")
    failed = [c for c in cells if c["status"] == "failed"]
    print([(c["technique"], c["measurement"], c["error"]) for c in cells])
    assert failed and all(c["error"] for c in failed)
    assert any("ssh" in c["error"] or "10.203.0.4" in c["error"] or "255" in c["error"] for c in failed), \
        [c["error"] for c in failed]
    # a host that does not answer is not a host without iperf3 (that was said once)
    assert not any("not found" in c["error"] for c in failed), [c["error"] for c in failed]
    assert leftovers() == []
    # what was started on the server before its sshd died is still there (no way in); it is
    # the lab's to remove — everything on the reachable hosts is gone
    for role in ("client", "router"):
        assert [p for p in lab.pids(role) if lab.comm(p) not in ("sshd", "")] == []
    for pid in lab.pids("server"):
        if lab.comm(pid) != "sshd":
            os.kill(pid, signal.SIGKILL)


def lab_sysctl(lab, role: str, key: str) -> str:
    out = subprocess.run(["ip", "netns", "exec", lab.ns[role], "sysctl", "-n", key], capture_output=True, text=True)
    return " ".join(out.stdout.split())


def test_kill9_mid_run_then_cleanup_reconnects_and_removes_remote_leftovers(tmp_path, lab):
    # a setting the run changes on every host: cleanup must put the host's own value back
    before = lab_sysctl(lab, "server", "net.ipv4.tcp_rmem")
    changed = "4096 65536 " + str(int(before.split()[2]) + 4096)
    testbed = lab.testbed_toml().replace("[testbed.ssh]", f"sysctls = {{ \"net.ipv4.tcp_rmem\" = \"{changed}\" }}\n[testbed.ssh]")
    campaign = testbed + CELLS.replace('duration = "1s"', 'duration = "5s"')
    proc = subprocess.Popen([*lab.exec_argv(), *VPNBENCH, "run", str(write(tmp_path, "x.toml", campaign)),
                             "--db", str(tmp_path / "x.db")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    # killed mid-flow: iperf3 on both ends
    while not all(any(lab.comm(p) == "iperf3" for p in lab.pids(role)) for role in ("client", "server")):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)  # ip netns exec execs python: this is vpnbench itself
    proc.wait(10)
    time.sleep(0.5)
    # left on the host: the sysctl, always. Not always the server's iperf3: the ssh sessions die
    # with vpnbench, and the one-shot server may end with its client (gone 0.5 s after the kill,
    # twice, once in a full run). test_ssh_security shows cleanup killing a daemon it left.
    assert lab_sysctl(lab, "server", "net.ipv4.tcp_rmem") == changed
    cleanup = in_lab(lab, "cleanup", timeout=120)
    assert cleanup.returncode == 0, cleanup.stderr
    # what must hold is that nothing is left (strays below)
    assert "remote sysctl net.ipv4.tcp_rmem" in cleanup.stdout
    assert all(lab_sysctl(lab, role, "net.ipv4.tcp_rmem") == before for role in ("client", "router", "server"))
    assert lab.strays() == []
    assert leftovers() == []


def test_bad_inventory_is_one_line_exit_2(tmp_path):
    text = "[testbed]\nkind = \"ssh\"\nrouter = false\n[testbed.hosts.client]\nhost = \"-oProxyCommand=x\"\n" \
           "iface = \"c0\"\nipv4 = \"10.0.0.1\"\n" + CELLS
    proc = run_cli("run", str(write(tmp_path, "bad.toml", text)), "--db", str(tmp_path / "b.db"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "testbed.hosts.client.host" in proc.stderr
