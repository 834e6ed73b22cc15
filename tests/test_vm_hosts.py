"""kind = "vm" for real: QEMU VMs booting the distribution kernel (TCG here), reached over ssh.

These boot VMs themselves, so they run on the host (marker vmtestbed; `make test-kernel`
runs them), never inside the kernel VM. Each test boots its own testbed: two guests (the
router, if any, is a namespace of this machine), 1-3 min under TCG.
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import VPNBENCH, leftovers, run_cli
from vpnbench.hosts.resources import run_id_prefix

pytestmark = [pytest.mark.netns, pytest.mark.vmtestbed]

TESTBED = '[testbed]\nkind = "vm"\nrouter = {router}\n[testbed.vm]\nmemory_mb = 768\n'
KERNEL_CAMPAIGN = """
[campaign]
name = "vmkernel"

[[technique]]
kind = "baseline"

[[technique]]
kind = "wireguard"
backend = "kernel"

[[impairment]]
netem = "delay 20ms"

[[measurement]]
kind = "ping"
count = 5
interval = "0.2s"
"""


def needs_qemu():
    from vpnbench.hosts.kernelvm import VmError, find_kernel
    if not Path("/usr/bin/qemu-system-x86_64").exists():
        pytest.skip("qemu-system-x86_64 not installed (scripts/install-deps.sh kernel)")
    try:
        find_kernel()
    except VmError as exc:
        pytest.skip(str(exc))


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def export(db, out):
    assert run_cli("export", str(db), "--format", "json", "-o", str(out)).returncode == 0
    return json.loads(out.read_text())


def test_doctor_testbed_reports_the_kernel_data_paths_in_the_vms(tmp_path, clean_machine):
    needs_qemu()
    path = write(tmp_path, "tb.toml", TESTBED.format(router="false"))
    proc = run_cli("doctor", "--testbed", str(path), "--json", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["facts"]["accel"].startswith(("KVM", "TCG"))
    facts = report["facts"]
    assert facts["accel_reason"], facts  # why KVM or TCG: proven by a probe boot, or asked for
    assert facts["setup_timeout_scale"] == (1.0 if facts["accel"] == "KVM" else 4.0), facts
    assert set(report["hosts"]) == {"client", "server"}
    for row in report["hosts"].values():
        for capability in ("kernel wireguard", "kernel macsec", "netem", "kernel esp (xfrm)", "tun"):
            assert row[capability], (capability, row)
        assert row["kernel"] != os.uname().release  # the distribution kernel, not this machine's
    assert leftovers() == []


def test_kernel_wireguard_with_delay_in_the_vm_testbed(tmp_path, clean_machine):
    needs_qemu()
    campaign = TESTBED.format(router="true") + KERNEL_CAMPAIGN
    db = tmp_path / "vm.db"
    proc = run_cli("run", str(write(tmp_path, "vm.toml", campaign)), "--db", str(db), timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cells = export(db, tmp_path / "vm.json")
    assert len(cells) == 2  # ping only: every command in a TCG guest costs, keep it short
    from vpnbench.hosts.resources import RunResources
    from vpnbench.testbeds.probe import has_qdisc

    resources = RunResources()
    try:  # netem acts in the router where this machine's kernel has it, else on the guests' egress
        placement = "router" if has_qdisc(resources, "netem") else "endpoints"
    finally:
        resources.close()
    for cell in cells:
        assert cell["status"] == "ok", cell["error"]
        assert cell["impairment"] != "none" and cell["impairment_params"]["backend"] == "netem"
        assert cell["impairment_params"]["placement"] == placement, cell["impairment_params"]
        assert set(cell["hosts"]) == {"client", "router", "server"}
    wg = [c for c in cells if c["technique"].startswith("wireguard")]
    assert all(c["technique_params"]["backend"] == "kernel" and c["wire_check"] == "encrypted" for c in wg)
    for cell in cells:
        assert cell["metrics"]["rtt_min_ms"] >= 40.0, cell["metrics"]  # 20 ms each way
    from vpnbench.store.database import Store
    store = Store(db)
    env = store.run(store.latest_run("vmkernel")).environment["testbed"]
    store.close()
    assert env["kind"] == "vm" and env["accel"].startswith(("KVM", "TCG"))
    assert env["vms"] == 2 and env["router"] == "a namespace of this machine"  # two guests, not three
    assert leftovers() == []


def _vm_pid(role_port: int) -> int | None:
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"qemu-system" in cmdline and f"hostfwd=tcp:127.0.0.1:{role_port}-".encode() in cmdline \
                    and b"/run/vpnbench/" in cmdline:
                return int(proc.name)
    return None


def _start_and_wait_for_traffic(tmp_path, name, timeout=600):
    campaign = TESTBED.format(router="false") + """
[[technique]]
kind = "baseline"
[[measurement]]
kind = "tcp"
duration = "8s"
[[measurement]]
kind = "ping"
count = 3
"""
    proc = subprocess.Popen([*VPNBENCH, "run", str(write(tmp_path, f"{name}.toml", campaign)),
                             "--db", str(tmp_path / f"{name}.db")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    # the first cell is in flight once the run has an iperf3 log of the server (our runs': make test
    # runs these beside the machine's other tests)
    while not list(Path("/run/vpnbench").glob(f"{run_id_prefix()}*/server-iperf3*.log")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.5)
    time.sleep(2)
    return proc


def test_a_vm_killed_mid_cell_fails_the_cell_with_a_reason_and_the_run_ends_cleanly(tmp_path, clean_machine):
    needs_qemu()
    proc = _start_and_wait_for_traffic(tmp_path, "kill")
    os.kill(_vm_pid(2202), signal.SIGKILL)  # the server VM
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    cells = export(tmp_path / "kill.db", tmp_path / "kill.json")
    failed = [c for c in cells if c["status"] == "failed"]
    assert failed and all(c["error"] for c in failed), cells
    assert leftovers() == []


def test_kill9_then_cleanup_removes_vms_namespace_and_keys(tmp_path, clean_machine):
    needs_qemu()
    proc = _start_and_wait_for_traffic(tmp_path, "k9")
    run_dirs = list(Path("/run/vpnbench").glob(f"{run_id_prefix()}*"))
    assert any((d / "vm" / "id_ed25519").exists() for d in run_dirs)
    proc.kill()
    proc.wait()
    assert leftovers() != []  # the namespace and the run directory with the keys are still there
    cleanup = run_cli("cleanup", timeout=120)
    assert cleanup.returncode == 0, cleanup.stderr
    assert leftovers() == []
    time.sleep(1)
    assert _vm_pid(2201) is None and _vm_pid(2202) is None  # no VM outlives its run


def test_kvm_asked_for_on_guests_that_never_boot_fails_at_the_watchdog_in_one_line(tmp_path, clean_machine):
    """As on nested cloud VMs: QEMU runs with accel=kvm, the guest never leaves the firmware."""
    from test_kernelvm import HANGING_KVM

    needs_qemu()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "qemu-system-x86_64").write_text(HANGING_KVM)
    (bindir / "qemu-system-x86_64").chmod(0o755)
    path = write(tmp_path, "tb.toml", TESTBED.format(router="false") + 'accel = "kvm"\n')
    started = time.monotonic()
    proc = run_cli("doctor", "--testbed", str(path), "--json", timeout=300,
                   env={**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "VPNBENCH_KVM_BOOT_WATCHDOG": "5"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert time.monotonic() - started < 300  # the KVM watchdog (named below: 5 s here), not boot_timeout (300 s)
    assert error.startswith("VM client did not boot within 5 s under KVM (the firmware ran"), error
    assert 'accel = "tcg"' in error and "\n" not in error and "\x1b" not in error, repr(error)
    assert leftovers() == []


UDP_RECEIVER = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 9999))
s.settimeout(20)
got = []
try:
    while True:
        got.append(s.recv(2048).decode())
        s.settimeout(3)
except socket.timeout:
    pass
print(" ".join(got))
"""
# good datagrams through the stack (checksummed as the guest and its NIC do it), then the
# same by hand with a wrong UDP checksum: a raw IPPROTO_UDP socket sends our header as is
UDP_SENDER = r"""
import socket, struct, sys, time
dst = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20):
    s.sendto(f"good{i}".encode(), (dst, 9999)); time.sleep(0.02)
raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
for i in range(20):
    payload = f"bad{i}".encode()
    raw.sendto(struct.pack("!HHHH", 40000, 9999, 8 + len(payload), 0x1234) + payload, (dst, 0)); time.sleep(0.02)
"""


def udp_csum_errors(host) -> int:
    lines = [line.split() for line in host.run(["cat", "/proc/net/snmp"]).stdout.splitlines() if line.startswith("Udp:")]
    return int(lines[1][lines[0].index("InCsumErrors")])


def test_udp_checksums_hold_across_the_router_vm(tmp_path, clean_machine):
    """The underlay between the VMs is a tap device per guest in a forwarding namespace. Checksum
    offload on such a link (a tap without vnet_hdr, or a socket netdev: no virtio-net header to carry
    "checksum pending") delivers UDP with wrong checksums, which the receiver drops silently:
    WireGuard then never hears a handshake.
    Every good datagram must arrive with its checksum intact; the wrong ones are the negative
    control (the server really checks, and counts what it drops)."""
    from vpnbench.hosts.resources import RunResources
    from vpnbench.testbeds.make import make_testbed
    from vpnbench.testbeds.spec import TestbedSpec, VmSettings

    needs_qemu()
    resources = RunResources()
    testbed = make_testbed(TestbedSpec(kind="vm", router=True, vm=VmSettings(memory_mb=768)), resources)
    try:
        testbed.connect()
        testbed.up()
        client, server = testbed.client, testbed.server
        # The guest's root home is its own, empty: bash run by sshd does not source this machine's
        # ~/.bashrc for every command (pyenv's init cost 3.4 s per command under TCG here).
        assert client.run(["sh", "-c", "ls -A ~; echo home=$HOME"]).stdout.split() == ["home=/root"]
        before = udp_csum_errors(server)
        receiver = server.spawn(["python3", "-c", UDP_RECEIVER], name="udprecv")
        time.sleep(2)
        client.run(["python3", "-c", UDP_SENDER, testbed.underlay_addr("server", "ipv4")], timeout=60)
        receiver.wait(40)
        got = receiver.output().split()
        errors = udp_csum_errors(server) - before
    finally:
        testbed.down()
        resources.close()
    assert sorted(got) == sorted(f"good{i}" for i in range(20)), got  # all good ones, no bad one
    assert errors == 20, errors
    assert leftovers() == []
