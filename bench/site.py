"""How long `vpnbench site` takes over a lab's archive of 10 000 runs (issue 43 item 4: <= 60 s).

The archive is generated in SQLite, in the real Store's schema, with hand-made records in the
manner of tests/report_records.py (no daemon's behaviour is claimed): two campaigns, `nightly` on
three testbeds and `release` on two, their runs interleaved in time; four techniques (baseline,
ipsec without a built daemon, wireguard-go and OpenVPN naming their builds, each upgraded twice
over the history), tcp and ping, two repetitions: 16 cells and 4 bring-ups a run, 160 000 cells.
Rows go in with one multi-row insert per run (the Store writes one row per call: minutes here).

Times the whole command (`python -m vpnbench site`, start-up and imports included, in its own
process; wall and CPU) with the default 20 full reports and with none, and one full report
alone, the reason run pages are light.

    PYTHONPATH=src .venv/bin/python bench/site.py [--runs N]
"""

import argparse
import datetime
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import publish  # noqa: E402
from vpnbench.store.database import Store, T  # noqa: E402
from vpnbench.store.records import Bringup, Cell, HostFacts, Run  # noqa: E402

CAMPAIGNS = {"nightly": ("lab-amd64", "lab-arm64", "lab-vm"), "release": ("lab-amd64", "lab-arm64")}
TECHNIQUES = {"baseline": 9.0e9, "ipsec": 1.5e9, "wireguard": 1.2e9, "openvpn": 4.0e8}
VERSIONS = {"wireguard": ("wireguard-go", ("0.0.20220316", "0.0.20230223", "0.0.20250522")),
            "openvpn": ("openvpn", ("2.6.3", "2.6.9", "2.6.14"))}
MEASUREMENTS = {"tcp": lambda rng, level: {"throughput_bps": rng.gauss(level, level * 0.03),
                                           "retransmits": rng.randrange(50)},
                "ping": lambda rng, level: {"rtt_avg_ms": rng.gauss(0.05 + 1e8 / level, 0.005),
                                            "rtt_p99_ms": 0.2, "loss_pct": 0.0}}
REPETITIONS = 2


def negotiated(technique: str, era: int) -> dict:
    if technique not in VERSIONS:
        return {}
    implementation, versions = VERSIONS[technique]
    version = versions[era]
    return {"implementation": implementation, "version": version,
            "build": {"source": "debian", "package": implementation, "version": f"{version}-1", "architecture": "amd64"}}


def write_archive(path: Path, runs: int) -> None:
    rng = random.Random(43)
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    places = [(campaign, testbed) for campaign, testbeds in CAMPAIGNS.items() for testbed in testbeds]
    store = Store(path)
    bringup_id = 0
    with store._tx() as conn:
        for index in range(runs):
            campaign, testbed = places[index % len(places)]
            run_id = f"{campaign}-{testbed}-{index:05d}"
            started = (start + datetime.timedelta(hours=2 * index)).isoformat()
            era = min(3 * index // runs, 2)  # each built daemon upgraded at a third and two thirds
            store.start_run(Run(run_id, campaign, {}, {"vpnbench": "0.2.0", "hostname": "lab",
                                                       "testbed": {"kind": "ssh", "name": testbed}},
                                started, started, "finished"))
            for role in ("client", "server"):
                store.save_host_facts(HostFacts(run_id, role, {"kernel": "6.1.0", "cpu_count": 8}))
            bringups, cells = [], []
            for technique, level in TECHNIQUES.items():
                bringup_id += 1
                bringups.append(store._encode(Bringup(run_id, technique, technique, "userspace", started,
                                                      negotiated=negotiated(technique, era), id=bringup_id)))
                level *= 0.85 if technique == "openvpn" and era == 2 else 1.0  # a regression in the last build
                for kind, metrics in MEASUREMENTS.items():
                    for repetition in range(1, REPETITIONS + 1):
                        row = store._encode(Cell(run_id, campaign, f"{technique}/none/{kind}/{repetition}", technique,
                                                 {"kind": technique}, "none", {}, kind, kind, {"kind": kind},
                                                 repetition, started, status="ok", metrics=metrics(rng, level),
                                                 finished_at=started, bringup_id=bringup_id))
                        del row["id"]
                        cells.append(row)
            conn.execute(T["bringups"].insert(), bringups)
            conn.execute(T["cells"].insert(), cells)
    store.close()


def timed(*argv: str) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -m vpnbench ARGV` in its own process (its children too)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "vpnbench", *argv], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic() - started, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "lab.db"
        began = time.monotonic()
        write_archive(db, runs)
        generated = time.monotonic() - began
        rows = []
        for reports in (20, 0):
            out = Path(tmp) / f"site-{reports}"
            wall, cpu = timed("site", "--db", str(db), "-o", str(out), "--reports", str(reports))
            files = [p for p in out.rglob("*") if p.is_file()]
            rows.append((reports, wall, cpu, len(files), sum(p.stat().st_size for p in files)))
        one_wall, one_cpu = timed("report", str(db), "-o", str(Path(tmp) / "one.html"))
    lines = [f"{platform.node()}, {os.cpu_count()} CPUs shared with a test suite running beside it (wall time is "
             f"noisy; CPU is the command's own and its children's). `python bench/site.py`: an archive of {runs} runs "
             f"(two campaigns, five testbed places, 16 cells a run: {runs * 16} cells; generated in {generated:.0f} s), "
             "then `vpnbench site` (the CLI, imports included) over it. Target: <= 60 s.", "",
             "| full reports | wall s | CPU s | files | MB |", "|---|---|---|---|---|"]
    lines += [f"| {reports} | {wall:.1f} | {cpu:.1f} | {files} | {size / 1e6:.0f} |"
              for reports, wall, cpu, files, size in rows]
    lines += ["", f"One `vpnbench report` of one run of 16 cells: {one_wall:.1f} s wall, {one_cpu:.1f} s CPU, "
              "most of it the interpreter's start and imports; in the site each full report costs "
              f"~{(rows[0][2] - rows[1][2]) / 20:.2f} s CPU (the difference above / 20). A full report for each of "
              f"{runs} runs would be some {(rows[0][2] - rows[1][2]) / 20 * runs / 60:.0f} min: every run gets a light "
              "page of its cells instead, and the newest N (`--reports N`, default 20) their full report."]
    publish("site: a 10 000-run archive as a static site (issue 43, item 4)", "\n".join(lines))


if __name__ == "__main__":
    main()
