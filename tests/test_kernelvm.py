"""The kernel VM harness itself: boots the distribution kernel, runs a command, returns."""

import io
import os
import shutil
import subprocess

import pytest

from vpnbench.kernelvm import find_kernel, module_files, run_in_vm

pytestmark = pytest.mark.exclusive  # boots VMs / builds namespaces: one test session at a time


def vm_possible() -> str | None:
    if not shutil.which("qemu-system-x86_64"):
        return "qemu-system-x86 not installed (make test installs it)"
    try:
        find_kernel()
    except Exception as exc:  # noqa: BLE001 - the reason is what the skip prints
        return str(exc)
    return None


@pytest.mark.skipif(os.environ.get("VPNBENCH_IN_VM") == "1", reason="already inside the kernel VM")
def test_command_runs_in_the_distribution_kernel_and_results_come_back(tmp_path):
    reason = vm_possible()
    if reason:
        pytest.fail(reason)
    (tmp_path / "out").mkdir()
    log = io.StringIO()
    script = ("uname -r > kernel; ip link add wgt type wireguard && echo wireguard > features; "
              "tc qdisc add dev lo root netem delay 1ms && echo netem >> features; exit 3")
    # the guest sees the host's files through a copy-on-write overlay: only the share writes back
    rc = run_in_vm(["sh", "-c", script], memory_mb=512, timeout=300, cwd=str(tmp_path / "out"),
                   writable=[str(tmp_path / "out")], log=log)
    assert rc == 3, log.getvalue()[-2000:]
    assert (tmp_path / "out" / "kernel").read_text().strip() == find_kernel()
    assert (tmp_path / "out" / "features").read_text().split() == ["wireguard", "netem"]
    assert "vpnbench-vm: up" in log.getvalue()
    ps = subprocess.run(["pgrep", "-f", "qemu-system-x86_64"], capture_output=True, text=True).stdout
    assert ps.strip() == ""  # the VM is gone


def test_initramfs_modules_resolve_with_dependencies():
    reason = vm_possible()
    if reason:
        pytest.fail(reason)
    names = [path.name for path in module_files(find_kernel(), ("9p",))]
    assert names.index("9pnet.ko") < names.index("9p.ko")  # dependencies load first


@pytest.mark.skipif(os.environ.get("VPNBENCH_IN_VM") == "1", reason="already inside the kernel VM")
def test_vm_dies_with_a_killed_caller():
    import signal
    import sys
    import time

    reason = vm_possible()
    if reason:
        pytest.fail(reason)
    caller = subprocess.Popen([sys.executable, "-m", "vpnbench.kernelvm", "--memory", "256", "--", "sleep", "120"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not subprocess.run(["pgrep", "-P", str(caller.pid), "qemu-system"], capture_output=True).stdout:
        assert time.monotonic() < deadline, "the VM never started"
        time.sleep(0.2)
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    deadline = time.monotonic() + 10
    while subprocess.run(["pgrep", "-f", "qemu-system-x86_64"], capture_output=True).stdout:
        assert time.monotonic() < deadline, "the VM outlived its killed caller"
        time.sleep(0.2)


@pytest.mark.skipif(os.environ.get("VPNBENCH_IN_VM") == "1", reason="already inside the kernel VM")
def test_a_silent_hung_guest_hits_the_time_limit(tmp_path):
    import time

    from vpnbench.kernelvm import VmError

    reason = vm_possible()
    if reason:
        pytest.fail(reason)
    started = time.monotonic()
    with pytest.raises(VmError, match="time limit"):
        run_in_vm(["sleep", "600"], memory_mb=256, timeout=15, log=io.StringIO())
    assert time.monotonic() - started < 30
    assert subprocess.run(["pgrep", "-f", "qemu-system-x86_64"], capture_output=True).stdout == b""
