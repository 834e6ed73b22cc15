"""How long `vpnbench trend` takes over a lab's archive: 1 000 and 10 000 runs of a campaign with
four techniques under five impairments (20 headline series), three repetitions each, in the
real Store's schema; one step change injected at 70 % of the history, where OpenVPN's version
changes (its bring-ups and WireGuard's name their daemon's version, as a technique driving a
built daemon records it, so the versions are read and named too). Times the whole command
(load, change-point search, terminal table, HTML page with figures) and the search alone, wall
and CPU (the machine may be shared; CPU seconds are what scale), and the search of one series of
10 000 runs flat, with one step, and with a step every 500 runs (what pruning is worth). Checks
the search against jumpavg's own classify on two of the 1 000-run history's series (its groups
must be the same; classify takes 4 s a series there, too long for 10 000).

With --before REV, the same measurements of the code at git revision REV (its src/, exported
with git archive) side by side, in the same run.

    .venv/bin/python bench/trend.py [--before REV]
"""

import argparse
import datetime
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, publish  # noqa: E402
from vpnbench.answers import trend  # noqa: E402
from vpnbench.store.database import Store, T  # noqa: E402
from vpnbench.store.records import Bringup, Cell, HostFacts, Run  # noqa: E402

TECHNIQUES = {"baseline": 9.0e9, "wireguard": 1.2e9, "ipsec": 1.5e9, "openvpn": 4.0e8}
IMPAIRMENTS = ("ideal", "delay_10ms", "delay_50ms", "loss_1pct", "rate_1g")
REPETITIONS = 3
# The negotiated record of the techniques that name their daemon's build (daemon_version.py), by
# the run's OpenVPN version.
DAEMONS = {
    "wireguard": lambda _: {"cipher": "chacha20poly1305", "implementation": "wireguard-go", "version": "0.0.20220316",
                            "build": {"source": "debian", "package": "wireguard-go", "version": "0.0.20220316-1+b6",
                                      "architecture": "amd64"}},
    "openvpn": lambda version: {"cipher": "AES-256-GCM", "implementation": "openvpn", "version": version,
                                "build": {"source": "debian", "package": "openvpn", "version": f"{version}-1",
                                          "architecture": "amd64"}},
}


def write_history(path: Path, runs: int) -> None:
    """The cells go in with one multi-row insert per run (the Store writes one row per call,
    which would take minutes for 600 000 cells); the rows are the Store's own encoding."""
    rng = random.Random(7)
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    store = Store(path)
    with store._tx() as conn:
        for index in range(runs):
            run_id = f"r{index:05d}"
            started = (start + datetime.timedelta(hours=12 * index)).isoformat()
            store.start_run(Run(run_id, "nightly", {}, {"vpnbench": "0.2.0", "hostname": "lab",
                                                        "testbed": {"kind": "ssh"}}, started))
            version = "2.6.3" if index < runs * 0.7 else "2.6.9"
            for role in ("client", "server"):
                store.save_host_facts(HostFacts(run_id, role, {"kernel": "6.1.0", "versions": {"openvpn": version}}))
            bringups, rows = [], []
            for number, (technique, level) in enumerate(TECHNIQUES.items()):
                bringup_id = index * len(TECHNIQUES) + number + 1
                ran = DAEMONS[technique](version) if technique in DAEMONS else {}
                bringups.append(store._encode(Bringup(run_id, technique, technique, "userspace", started,
                                                      negotiated=ran, id=bringup_id)))
                for impairment in IMPAIRMENTS:
                    stepped = technique == "openvpn" and impairment == "ideal" and index >= runs * 0.7
                    mean = level * 0.9 if stepped else level
                    for repetition in range(REPETITIONS):
                        cell = Cell(run_id, "nightly", f"{technique}/{impairment}/tcp/{repetition}", technique, {},
                                    impairment, {}, "tcp", "tcp", {"kind": "tcp"}, repetition, started, status="ok",
                                    metrics={"throughput_bps": rng.gauss(mean, mean * 0.03)}, finished_at=started,
                                    bringup_id=bringup_id)
                        row = store._encode(cell)
                        del row["id"]
                        rows.append(row)
            conn.execute(T["bringups"].insert(), bringups)
            conn.execute(T["cells"].insert(), rows)
    store.close()


def cpu_seconds(*whose: int) -> float:
    """CPU time of this process and/or its finished children (a command and the search's pool)."""
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime for who in whose)


def timed_command(src: Path, db: Path, out: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the whole command, its pool's processes included."""
    started, cpu = time.monotonic(), cpu_seconds(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "vpnbench", "trend", "--db", str(db), "--campaign", "nightly",
                    "-o", str(out)], check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(src)})
    return time.monotonic() - started, cpu_seconds(resource.RUSAGE_CHILDREN) - cpu


# The search alone, in a process of its own running the code under src: (wall, CPU) seconds of
# trend.trends over the history (argv[1]) and its series and change points, or of trend.segments
# over one series (JSON on stdin).
SEARCH_ALONE = """
import json, resource, sys, time
from vpnbench.answers import trend
from vpnbench.store.database import Store
cpu = lambda: sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime
                  for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
if sys.argv[1] != "-":
    store = Store(sys.argv[1])
    history = trend.load_history(store, "nightly")
    store.close()
    search = lambda: trend.trends(history)
else:
    runs = json.load(sys.stdin)
    search = lambda: trend.segments(runs)
started, used = time.monotonic(), cpu()
found = search()
wall, used = time.monotonic() - started, cpu() - used
changes = sum(len(t.changes) for t in found) if sys.argv[1] != "-" else len(found) - 1
print(json.dumps([wall, used, len(found), changes]))
"""


def search_alone(src: Path, db: Path | None, runs: list[list[float]] | None = None) -> tuple[float, float, int, int]:
    """(wall, CPU) seconds of the search, and the series and change points (groups − 1 of one) it found."""
    found = subprocess.run([sys.executable, "-c", SEARCH_ALONE, str(db) if db else "-"], input=json.dumps(runs),
                           check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(src)})
    return tuple(json.loads(found.stdout))


def one_series(shape: str, runs: int = 10000) -> list[list[float]]:
    rng, level, found = random.Random(3), 1.0e9, []
    for index in range(runs):
        if (shape == "one step" and index == runs * 7 // 10) or (shape == "a step every 500" and index % 500 == 0):
            level *= 0.9 if index % 1000 else 1.1
        found.append([rng.gauss(level, level * 0.03) for _ in range(REPETITIONS)])
    return found


def source_at(revision: str, into: Path) -> Path:
    """The package's src/ at a git revision, exported."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(root), "archive", revision, "src"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def same_as_jumpavg(history: trend.History) -> bool:
    """The stepped series and a flat one (classify takes ~4 s a series of 1 000 runs)."""
    from jumpavg import classify

    for key, points in trend.series_of(history).items():
        if key.impairment != "ideal" or key.technique not in ("openvpn", "baseline"):
            continue
        runs = [point.values for point in points]
        sizes = [len(group.run_list) for group in classify(runs)]
        if sizes != [seg.last - seg.first + 1 for seg in trend.segments(runs)]:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REV", help="also measure the code at this git revision")
    args = parser.parse_args()
    rows = ["| runs | series | change points | code | `vpnbench trend` with the page: wall (s) | its CPU (s) "
            "| search alone: wall (s) | its CPU (s) |", "| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    checked, version_named = "not checked", "not checked"
    with tempfile.TemporaryDirectory() as tmp:
        sources = {"this": Path(__file__).resolve().parent.parent / "src"}
        if args.before:
            sources = {f"before ({args.before})": source_at(args.before, Path(tmp)), **sources}
        for runs in (1000, 10000):
            db = Path(tmp, f"h{runs}.db")
            write_history(db, runs)
            for name, src in sources.items():
                whole, whole_cpu = timed_command(src, db, Path(tmp, "t.html"))
                search, search_cpu, series, changes = search_alone(src, db)
                rows.append(f"| {runs} | {series} | {changes} | {name} | {whole:.2f} | {whole_cpu:.2f} "
                            f"| {search:.2f} | {search_cpu:.2f} |")
            if runs == 1000:
                store = Store(db)
                history = trend.load_history(store, "nightly")
                store.close()
                checked = "the same" if same_as_jumpavg(history) else "**different**"
                named = [c.version_change for t in trend.trends(history) for c in t.changes]
                version_named = "names" if named == ["openvpn 2.6.3 (debian) → 2.6.9 (debian)"] else "**does not name**"
        single = ["| one series of 10 000 runs | " + " | ".join(f"{name}: search CPU (s)" for name in sources) + " |",
                  "| --- |" + " ---: |" * len(sources)]
        for shape in ("flat", "one step", "a step every 500"):
            runs = one_series(shape)
            single.append(f"| {shape} | " + " | ".join(f"{search_alone(src, None, runs)[1]:.2f}"
                                                         for src in sources.values()) + " |")
    publish("trend", f"{machine('trend.py' + (f' --before {args.before}' if args.before else ''))}.\n\n"
            + "\n".join(rows) + "\n\n" + "\n".join(single) + "\n\nOne step (−10 % OpenVPN TCP without "
            "impairment, with an OpenVPN version change) is injected at 70 % of each history; the expected count "
            f"of change points is 1, and this code's change point {version_named} OpenVPN's version change "
            "(its bring-ups and WireGuard's name their daemon's version). The groups of the 1 000-run history's "
            f"stepped series and a flat one are {checked} "
            "as jumpavg's `classify` finds. \"Search alone\" is `trend.trends` over the loaded history: lining the "
            "cells up into series, the search, the levels. CPU counts every process of the command or search (one "
            "per core for long histories). Before jumpavg's `classify` was replaced (2026-11-24): 23.7 s for 1 000 runs of 6 "
            "series, 23.3 s of it the search. Evaluating every candidate start at every run is quadratic; "
            "the search now leaves out the candidates a proven bound shows cannot be the best: for a window of "
            "up to 64 runs (all but a few dozen sit out in a stationary stretch) or for good (PELT's rule, which "
            "alone drops only the candidates before a change). Outside the search (profiled 2026-11-26 at 10 000 "
            "runs, CPU): imports 0.5 s, reading the cells 2.3 s (Store.cell_metrics, through the driver's own "
            "cursor), lining them up into series 1.0 s, the page 1.9 s (each line drawn through 1 000 buckets' "
            "extremes, the legend beside the plot).")


if __name__ == "__main__":
    main()
