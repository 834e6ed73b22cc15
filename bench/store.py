"""bench/store: what the results store costs, measured side by side in one run.

(a) Writing a cell: start_cell + finish_cell (raw output of ~20 KB) + its end-of-cell series,
    per cell, in ms.
(b) Series: the cost of 1 000 points through SeriesWriter (flushed every 5 s as in a run) and
    the bytes each point takes in the file.
(c) A 20-hour soak at 10 samples/s, extrapolated from (b) with the point count a real monitor
    sample of this machine's client—router—server testbed produces. Target: < 1 % of one core,
    < 200 MB of results file.
(d) Throughput on SQLite and on PostgreSQL side by side (--db postgresql://…): cells and series
    points written per second of wall time, into a file and into a local server (Debian's
    postgresql, started here in a temporary directory with its default durability, Unix socket).

.venv/bin/python bench/store.py   (results go to bench/RESULTS.md; as root, the server runs as
the postgres user)
"""

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
import pg  # noqa: E402 - tests/pg.py: the tests' own PostgreSQL
from common import machine, publish  # noqa: E402
from vpnbench.store.database import FLUSH_SECONDS, SeriesWriter, Store  # noqa: E402
from vpnbench.store.records import Bringup, Cell, Run, SeriesPoint  # noqa: E402
from vpnbench.store.series_codec import sample_points  # noqa: E402

CELLS = 300
SOAK_HOURS = 20
RATE_HZ = 10
SECONDS_SIMULATED = 1800  # half an hour of samples, written for real, then extrapolated


RANDOM = random.Random(1)


def busy() -> float:
    """A CPU share as the monitor reports it: noisy, two decimals (so it does not compress away)."""
    return round(RANDOM.uniform(0, 100), 2)


def monitor_sample(t: float, host: str) -> dict:
    """A sample shaped like the monitor's on a pinned local host with 3 processes, with noisy values."""
    return {"t": t, "host": host, "cores": [0], "cpu_pct": RANDOM.uniform(0, 100), "cpu_per_core_pct": [busy()],
            "cpu_steal_pct": RANDOM.choice((0.0, 0.0, 0.0, RANDOM.uniform(0, 2))), "cpu_softirq_pct": RANDOM.uniform(0, 30),
            "cpu_system_pct": RANDOM.uniform(0, 50), "mem_used_bytes": 3.2e9 + RANDOM.randrange(0, 1 << 24, 4096),
            "proc_rss_bytes": 4.1e7 + RANDOM.randrange(0, 1 << 20, 4096),
            "procs_cpu_pct": {"iperf3": busy(), "wireguard-go": busy(), "charon": busy()}}


def new_cell(number: int, bringup: Bringup) -> Cell:
    return Cell("r", "bench", f"k{number}", "wireguard", {"kind": "wireguard"}, "none", {}, "tcp", "tcp",
                {"kind": "tcp"}, 1, "t0", bringup_id=bringup.id, hosts={"client": {"cpu_pct": 1.0}})


def cell_cost(store: Store, bringup: Bringup) -> float:
    raw = {"iperf3_client": "x" * 15000, "iperf3_server": "y" * 5000}
    started = time.process_time()
    for number in range(CELLS):
        cell = new_cell(number, bringup)
        store.start_cell(cell)
        cell.status, cell.metrics, cell.finished_at = "ok", {"throughput_bps": 1e9, "retransmits": 3.0}, "t1"
        store.finish_cell(cell, raw)
    return (time.process_time() - started) / CELLS


def soak_cost(store: Store, bringup: Bringup, path: Path) -> tuple[float, float, int]:
    """CPU seconds and file bytes per point over SECONDS_SIMULATED of 10 Hz samples, and points per sample."""
    cell = new_cell(CELLS + 1, bringup)
    store.start_cell(cell)
    writer = SeriesWriter(store, cell.id)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the cells' raw output out of the WAL first
    size_before = path.stat().st_size + _wal(path)
    points_per_sample = sum(len(sample_points(monitor_sample(0.0, h))) for h in ("client", "server", "router"))
    cpu = 0.0
    batch = int(RATE_HZ * writer.flush_seconds)
    samples = SECONDS_SIMULATED * RATE_HZ
    for first in range(0, samples, batch):
        points = [p for i in range(first, min(first + batch, samples))
                  for h in ("client", "server", "router") for p in sample_points(monitor_sample(i / RATE_HZ, h))]
        started = time.process_time()
        writer._last_flush = 0.0  # due now: one flush per 5 s of samples, as in a run
        writer.add(points)
        cpu += time.process_time() - started
    writer.close()
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    total = samples * points_per_sample
    return cpu / total, (path.stat().st_size + _wal(path) - size_before) / total, points_per_sample


def conversion_cost(points_per_sample: int) -> float:
    """CPU seconds to turn one monitor sample of the three hosts into series points (done in the sampler)."""
    started = time.process_time()
    for i in range(20000):
        for host in ("client", "server", "router"):
            sample_points(monitor_sample(i / RATE_HZ, host))
    return (time.process_time() - started) / 20000


def _wal(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


THROUGHPUT_CELLS = 200
THROUGHPUT_FLUSHES = 60  # of 5 s of 10 Hz monitor samples of three hosts each


def throughput(target, per_flush: list[list]) -> tuple[float, float]:
    """Cells per second (start + finish with 20 KB of raw output + a 60-point series of its own) and
    series points per second through SeriesWriter, both in wall time, into target."""
    store = Store(target)
    store.start_run(Run("r", "bench", {}, {}, "t0"))
    bringup = Bringup("r", "wireguard", "wireguard", "userspace", "t0")
    store.save_bringup(bringup)
    raw = {"iperf3_client": "x" * 15000, "iperf3_server": "y" * 5000}
    own = [SeriesPoint("throughput_bps", t / 1.0, 9.4e8 + t) for t in range(60)]
    started = time.perf_counter()
    for number in range(THROUGHPUT_CELLS):
        cell = new_cell(number, bringup)
        store.start_cell(cell)
        store.add_series(cell.id, own)
        cell.status, cell.metrics, cell.finished_at = "ok", {"throughput_bps": 1e9, "retransmits": 3.0}, "t1"
        store.finish_cell(cell, raw)
    cells_per_s = THROUGHPUT_CELLS / (time.perf_counter() - started)
    cell = new_cell(THROUGHPUT_CELLS + 1, bringup)
    store.start_cell(cell)
    writer = SeriesWriter(store, cell.id, flush_seconds=0.0)  # every add is a flush, as every 5 s in a run
    started = time.perf_counter()
    for points in per_flush:
        writer.add(points)
    points_per_s = writer.written / (time.perf_counter() - started)
    store.close()
    return cells_per_s, points_per_s


def postgres_vs_sqlite() -> str:
    bin_dir = pg.server_bin()
    if bin_dir is None:
        return "PostgreSQL is not installed here (make deps installs it): not measured."
    batch = int(RATE_HZ * FLUSH_SECONDS)
    per_flush = [[p for i in range(f * batch, (f + 1) * batch) for h in ("client", "server", "router")
                  for p in sample_points(monitor_sample(i / RATE_HZ, h))] for f in range(THROUGHPUT_FLUSHES)]
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = throughput(Path(tmp) / "t.db", per_flush)
    for server in pg.start(bin_dir, durable=True):
        postgres = throughput(server.create_database("bench"), per_flush)
    lines = [
        f"{machine('store.py')}, both in one run: wall time of the writing process, into an SQLite file",
        "(WAL, synchronous=NORMAL) and into a local PostgreSQL over its Unix socket (default durability:",
        "fsync and synchronous_commit on). A cell: start, a 60-point series, finish with 20 KB of raw output;",
        f"{THROUGHPUT_CELLS} cells. Series: {THROUGHPUT_FLUSHES} flushes of 5 s of 10 Hz monitor samples of three hosts.",
        "",
        "| store | cells/s | series points/s |",
        "| --- | --- | --- |",
        f"| SQLite | **{sqlite[0]:.0f}** | **{sqlite[1]:,.0f}** |",
        f"| PostgreSQL | **{postgres[0]:.0f}** | **{postgres[1]:,.0f}** |",
        f"| PostgreSQL / SQLite | {postgres[0] / sqlite[0]:.2f} | {postgres[1] / sqlite[1]:.2f} |",
        "",
        "A campaign's cells take seconds each and a run flushes its series every 5 s, so either",
        "store is far from being what limits a run.",
    ]
    return "\n".join(lines)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        store = Store(path)
        store.start_run(Run("r", "bench", {}, {}, "t0"))
        bringup = Bringup("r", "wireguard", "wireguard", "userspace", "t0")
        store.save_bringup(bringup)
        per_cell = cell_cost(store, bringup)
        cpu_per_point, bytes_per_point, per_sample = soak_cost(store, bringup, path)
        store.close()
    per_sample_conversion = conversion_cost(per_sample)
    soak_points = SOAK_HOURS * 3600 * RATE_HZ * per_sample
    soak_cpu_share = (cpu_per_point * per_sample + per_sample_conversion) * RATE_HZ * 100
    soak_mb = soak_points * bytes_per_point / 1e6
    lines = [
        f"{machine('store.py')},",
        "all numbers from one run (CPU time of the writing process).",
        "",
        "| what | measured | target |",
        "| --- | --- | --- |",
        f"| writing one cell (start + finish, 20 KB raw output) | **{per_cell * 1e3:.2f} ms** CPU | – |",
        f"| 1 000 series points through SeriesWriter (5 s flushes) | **{cpu_per_point * 1e6:.1f} ms** CPU, "
        f"**{bytes_per_point * 1000 / 1024:.1f} KiB** of file | – |",
        f"| one 10 Hz monitor sample of client, server, router → series points | {per_sample} points, "
        f"{per_sample_conversion * 1e6:.0f} µs CPU | – |",
        f"| a {SOAK_HOURS}-hour soak at {RATE_HZ} samples/s ({soak_points / 1e6:.0f} M points), extrapolated from "
        f"{SECONDS_SIMULATED // 60} min written for real | **{soak_cpu_share:.3f} %** of one core, "
        f"**{soak_mb:.0f} MB** of file | < 1 %, < 200 MB |",
        "",
        "Series are stored in chunks (one row per host, series and flush; times as float32 offsets",
        "from the chunk's start, values as float32, each deflated at level 1). The samples here have",
        "random values (CPU shares to two decimals, memory in pages), so the size is not flattered by",
        "values that compress away; a real soak's steadier series take less.",
    ]
    body = "\n".join(lines)
    publish("store", body)
    publish("store: PostgreSQL vs SQLite", postgres_vs_sqlite())


if __name__ == "__main__":
    main()
