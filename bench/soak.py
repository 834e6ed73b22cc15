"""bench/soak: what a soak costs the machine beside its load: the harness's CPU (vpnbench's own
process: the soak's read loop, the monitor, the store; and the soak's sampling commands) and
the results file's growth, per hour.

Two real soaks through the baseline (local testbed, 10 Mbit/s UDP, drift sampled every 10 s,
monitor at its default interval), one SHORT_S and one LONG_S long, each in this process; the
difference between them is the marginal cost of LONG_S - SHORT_S seconds of soak (set-up and
tear-down cancel out), extrapolated to an hour and to S3's 20 hours.

Needs root (namespaces); takes the machine's test lock:
  sudo .venv/bin/python bench/soak.py     (results go to bench/RESULTS.md)
"""

import fcntl
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).parent))
from results_md import write_section  # noqa: E402

from vpnbench.campaign import campaign_from_dict  # noqa: E402
from vpnbench.run.runner import Runner  # noqa: E402
from vpnbench.store.database import Store  # noqa: E402

SHORT_S, LONG_S = 10, 70
LOCK = Path("/run/vpnbench-tests.lock")


def campaign(seconds: int):
    return campaign_from_dict({
        "campaign": {"name": f"soak-bench-{seconds}"},
        "testbed": {"kind": "local"},
        "technique": [{"kind": "baseline"}],
        "measurement": [{"kind": "soak", "rate": "10M", "duration": f"{seconds}s"}],
    })


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_soak(seconds: int, tmp: Path) -> dict[str, float]:
    """CPU of this process and of its finished children, wall time and file bytes of one soak run."""
    path = tmp / f"soak{seconds}.db"
    store = Store(path)
    cpu0, child0, wall0 = time.process_time(), children_cpu(), time.monotonic()
    outcome = Runner(campaign(seconds), store, console=Console(file=open(os.devnull, "w"))).run()
    cpu, child, wall = time.process_time() - cpu0, children_cpu() - child0, time.monotonic() - wall0
    assert outcome.ok == 1, outcome
    [cell] = store.cells()
    points = sum(len(store.series(cell.id, name)) for _, name in store.series_names(cell.id))
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return {"cpu": cpu, "children": child, "wall": wall, "bytes": path.stat().st_size, "points": points,
            "throughput": cell.metrics["throughput_mean_bps"]}


def main() -> None:
    with open(LOCK, "w") as lock, tempfile.TemporaryDirectory() as tmp:
        fcntl.flock(lock, fcntl.LOCK_EX)
        short = one_soak(SHORT_S, Path(tmp))
        long = one_soak(LONG_S, Path(tmp))
    span_h = (LONG_S - SHORT_S) / 3600
    per_h = {key: (long[key] - short[key]) / span_h for key in ("cpu", "children", "bytes", "points")}
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.node()} ({os.cpu_count()} CPUs, kernel {platform.release()}),",
        f"by `bench/soak.py`: two soaks through the baseline ({SHORT_S} s and {LONG_S} s, 10 Mbit/s UDP, drift every",
        "10 s, the monitor at its default interval); their difference is the marginal cost of a soak's seconds.",
        "",
        "| what | per hour of soak | 20-hour soak |",
        "| --- | --- | --- |",
        f"| vpnbench's own CPU (read loop, monitor, store) | **{per_h['cpu']:.0f} s** "
        f"({100 * per_h['cpu'] / 3600:.2f} % of one core) | {20 * per_h['cpu'] / 60:.0f} min |",
        f"| its children's CPU (iperf3 + ping load, sampling commands) | {per_h['children']:.0f} s "
        f"({100 * per_h['children'] / 3600:.2f} % of one core) | {20 * per_h['children'] / 60:.0f} min |",
        f"| results file | **{per_h['bytes'] / 1e6:.1f} MB** | {20 * per_h['bytes'] / 1e6:.0f} MB |",
        f"| series points stored | {per_h['points'] / 1e3:.0f} k | {20 * per_h['points'] / 1e6:.1f} M |",
        "",
        f"Runs: {SHORT_S} s soak {short['wall']:.1f} s wall, {short['cpu']:.2f} s CPU, {short['bytes'] / 1e3:.0f} kB; "
        f"{LONG_S} s soak {long['wall']:.1f} s wall, {long['cpu']:.2f} s CPU, {long['bytes'] / 1e3:.0f} kB; "
        f"mean throughput {long['throughput'] / 1e6:.2f} Mbit/s.",
    ]
    write_section("soak", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
