"""Hosts benchmark: time to boot the VM testbed and be ready, and per-cell control overhead
of the ssh testbed vs local (same campaign, side by side in one run of this script).

    flock /run/vpnbench-tests.lock .venv/bin/python bench/hosts.py [--skip-vm]

The ssh testbed is the test suite's lab (sshd in namespaces on this machine), so the
ratio is the cost of the control path (ssh, multiplexed), not of a network.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sshlab import SshLab  # noqa: E402
from vpnbench.hosts.resources import RunResources  # noqa: E402
from vpnbench.testbeds.make import make_testbed
from vpnbench.testbeds.spec import TestbedSpec  # noqa: E402

VPNBENCH = [sys.executable, "-m", "vpnbench"]
# Short cells, so the control path (bring-up, monitor, teardown) dominates the wall time.
CELLS = """
[campaign]
name = "overhead"
repetitions = {reps}
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[measurement]]
kind = "ping"
count = 5
interval = "0.05s"
[[measurement]]
kind = "tcp"
duration = "1s"
"""


def timed_run(argv_prefix: list[str], campaign: Path, db: Path) -> float:
    started = time.monotonic()
    proc = subprocess.run([*argv_prefix, *VPNBENCH, "run", str(campaign), "--db", str(db)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"run failed: {proc.stderr[-2000:]}")
    return time.monotonic() - started


def ssh_vs_local(tmp: Path, reps: int, rounds: int) -> None:
    lab = SshLab(tmp / "lab").up()
    try:
        local = tmp / "local.toml"
        local.write_text('[testbed]\nkind = "local"\n' + CELLS.format(reps=reps))
        remote = tmp / "ssh.toml"
        remote.write_text(lab.testbed_toml() + CELLS.format(reps=reps))
        cells = 2 * 2 * reps
        times = {"local": [], "ssh": []}
        for number in range(rounds):  # alternate, so drift hits both alike
            times["local"].append(timed_run([], local, tmp / f"l{number}.db"))
            times["ssh"].append(timed_run(lab.exec_argv(), remote, tmp / f"s{number}.db"))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"campaign: {cells} cells (baseline + wireguard-go; ping 5x0.05 s, tcp 1 s), {rounds} rounds, median wall:")
        for kind in ("local", "ssh"):
            print(f"  {kind:5}: {med[kind]:6.2f} s total, {med[kind] / cells:5.2f} s/cell  {[round(t, 2) for t in times[kind]]}")
        print(f"  ssh / local wall time: {med['ssh'] / med['local']:.2f}x; "
              f"control overhead {(med['ssh'] - med['local']) / cells:+.2f} s per cell")
    finally:
        lab.down()


def vm_boot(router: bool) -> None:
    resources = RunResources()
    testbed = make_testbed(TestbedSpec(kind="vm", router=router), resources)
    try:
        started = time.monotonic()
        testbed.connect()
        booted = time.monotonic()
        testbed.up()
        ready = time.monotonic()
        print(f"VM testbed ({testbed.facts['vms']} VMs, {testbed.facts['accel']}, {testbed.spec.vm.memory_mb} MB, "
              f"{testbed.spec.vm.vcpus} vCPU each): booted + ssh {booted - started:.1f} s, "
              f"ready (tools checked, underlay pinged) {ready - started:.1f} s")
    finally:
        stop = time.monotonic()
        testbed.down()
        resources.close()
        print(f"  shutdown and removal: {time.monotonic() - stop:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-vm", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vpnbench-bench-hosts-") as tmp:
        ssh_vs_local(Path(tmp), args.reps, args.rounds)
    if not args.skip_vm:
        vm_boot(router=True)


if __name__ == "__main__":
    main()
