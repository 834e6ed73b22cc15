"""How long `vpnbench trend` takes over a long history: 100 and 1 000 runs of a campaign with two
techniques and three headline series, three repetitions each, written through the real Store;
one step change injected at 70 % of the history. Times the whole command (load, jumpavg,
terminal table, HTML page with figures) and the change-point search alone.

    .venv/bin/python bench/trend.py
"""

import datetime
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, publish  # noqa: E402

from vpnbench import trend  # noqa: E402
from vpnbench.records import Cell, HostFacts, Run  # noqa: E402
from vpnbench.store import Store  # noqa: E402

MEASUREMENTS = {"tcp": ("throughput_bps", 1.0e9), "ping": ("rtt_avg_ms", 0.2), "udp": ("throughput_bps", 5.0e8)}


def write_history(path: Path, runs: int) -> None:
    rng = random.Random(7)
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    store = Store(path)
    for index in range(runs):
        run_id = f"r{index:05d}"
        started = (start + datetime.timedelta(hours=12 * index)).isoformat()
        store.start_run(Run(run_id, "nightly", {}, {"vpnbench": "0.2.0", "hostname": "lab", "testbed": {"kind": "ssh"}},
                            started))
        version = "2.6.3" if index < runs * 0.7 else "2.6.9"
        for role in ("client", "server"):
            store.save_host_facts(HostFacts(run_id, role, {"kernel": "6.1.0", "versions": {"openvpn": version}}))
        for technique in ("baseline", "openvpn"):
            for kind, (metric, level) in MEASUREMENTS.items():
                if technique == "openvpn" and kind == "tcp" and index >= runs * 0.7:
                    level *= 0.9
                for repetition in range(3):
                    store.save_cell(Cell(run_id, "nightly", f"{technique}/{kind}/{repetition}", technique, {}, "ideal", {},
                                         kind, kind, {"kind": kind}, repetition, started, status="ok",
                                         metrics={metric: rng.gauss(level, level * 0.03)}, finished_at=started))
    store.close()


def timed_command(db: Path, out: Path) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "vpnbench", "trend", "--db", str(db), "--campaign", "nightly",
                    "-o", str(out)], check=True, capture_output=True)
    return time.monotonic() - started


def main() -> None:
    rows = ["| runs | series | change points | `vpnbench trend` with the page (s) | search alone (s) |",
            "| ---: | ---: | ---: | ---: | ---: |"]
    with tempfile.TemporaryDirectory() as tmp:
        for runs in (100, 1000):
            db = Path(tmp, f"h{runs}.db")
            write_history(db, runs)
            whole = timed_command(db, Path(tmp, "t.html"))
            store = Store(db)
            history = trend.load_history(store, "nightly")
            store.close()
            started = time.monotonic()
            found = trend.trends(history)
            search = time.monotonic() - started
            changes = sum(len(t.changes) for t in found)
            rows.append(f"| {runs} | {len(found)} | {changes} | {whole:.2f} | {search:.2f} |")
    publish("trend", f"{machine('trend.py')}.\n\n" + "\n".join(rows) + "\n\nOne step (−10 % OpenVPN TCP, with an "
            "OpenVPN version change) is injected at 70 % of each history; the expected count of change points is 1.")


if __name__ == "__main__":
    main()
