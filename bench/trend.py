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

First, and alone with --simulation-only (some 100 s): how often the change points told are
false and how often a step is found, main's test of jumpavg's boundaries (twice one run's noise)
against this code's (each step over its own standard error), over seeded synthetic histories:
flat ones (white noise, run-to-run noise jumpavg cannot see, drift) and steps of 1, 2 and 3
noise units between groups of 5, 15 and 30 runs.

    PYTHONPATH=src .venv/bin/python bench/trend.py [--before REV] [--simulation-only]
"""

import argparse
import datetime
import json
import math
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


# The simulation: false change points and detection, the levels' test on main against this code.
# Each run is REPETITIONS samples whose mean strays by one noise unit (NOISE of the level); the
# search (jumpavg's groups) is the same for both, only what they tell of its boundaries differs.
NOISE = 0.03
SIMULATED = 1000  # histories per case
GROUP_SIZES, STEP_UNITS = (5, 15, 30), (1, 2, 3)
SIMULATION_NOTE = (
    f"{SIMULATED} seeded histories a row (the same for every column), each run {REPETITIONS} samples whose mean strays by one "
    f"noise unit ({NOISE:.0%} of the level). Both codes judge the same groups, jumpavg's (`trend.segments`); "
    "main joins every boundary whose step is within twice one run's noise (from consecutive runs' differences) and "
    "calls the whole series \"too few runs\" where a group of under 3 runs stands out; this code tests each step "
    "against its own standard error, noise × √(1/m₁ + 1/m₂) widened by (1 + ρ)/(1 − ρ) for the runs' lag-1 "
    "autocorrelation ρ, by Student's t at 1 % over the history's boundaries, joining the weakest first, and sets short "
    "groups apart. A step counts as found when a change point is told within 2 runs of each step. "
    "With repetitions 0.1 % apart the runs stray 2 % from each other and jumpavg splits them into groups of like "
    "values; drift is AR(1). The first column is the ceiling: the levels' test only joins jumpavg's groups, never "
    "splits them (the staircases and the short groups are limited by jumpavg, which merges neighbouring steps of 2 "
    "noise units in most histories), and its flat rows are what both tests have to keep out.")


def main_levels():
    """shown_levels as it is on main (`git show main:src/vpnbench/answers/trend.py`), as a module."""
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    text = subprocess.run(["git", "-C", str(root), "show", "main:src/vpnbench/answers/trend.py"], check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "trend_on_main.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("trend_on_main", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.shown_levels


def simulated_runs(rng: random.Random, levels: list[float], drift: float = 0.0,
                   tight: bool = False) -> list[list[float]]:
    """A run per level given, its mean straying by NOISE of the level: as REPETITIONS samples of
    √REPETITIONS × that spread, or (tight) as one stray per run with repetitions 0.1 % apart; with
    drift, each run's stray is drift × the last one's plus fresh noise (AR(1), the same spread)."""
    runs, stray = [], 0.0
    for level in levels:
        if tight or drift:
            stray = drift * stray + rng.gauss(0, NOISE) * math.sqrt(1 - drift ** 2)
            runs.append([rng.gauss(level * (1 + stray), level * 0.001) for _ in range(REPETITIONS)])
        else:
            runs.append([rng.gauss(level, level * NOISE * math.sqrt(REPETITIONS)) for _ in range(REPETITIONS)])
    return runs


def told(shown_levels, runs: list[list[float]], groups) -> list[int]:
    """The runs at which a change point is told."""
    points = [trend.RunPoint(str(index), "", values) for index, values in enumerate(runs)]
    levels, _ = shown_levels(points, groups)
    return [level.first for level in levels[1:]]


def simulate(codes: dict) -> list[str]:
    """Rows of the table: per case, for each code, histories with a change point told at the step
    (within 2 runs) or, flat, with any change point, per 1 000."""
    cases = [(f"flat, {2 * size} runs", [1.0] * (2 * size), {}) for size in GROUP_SIZES]
    cases += [(f"flat, {count} runs, repetitions 0.1 % apart", [1.0] * count, {"tight": True}) for count in (20, 60)]
    cases += [
              ("flat, 60 runs, drift (lag-1 autocorrelation 0.5)", [1.0] * 60, {"drift": 0.5})]
    cases += [(f"step of {units} noise unit(s), {size} + {size} runs", [1.0] * size + [1 + units * NOISE] * size, {})
              for size in GROUP_SIZES for units in STEP_UNITS]
    cases += [("three steps of 2 noise units, 4 × 30 runs", [1 + 2 * NOISE * (index // 30) for index in range(120)], {}),
              ("three steps of +5 % at 3 % noise, 4 × 50 runs", [1.05 ** (index // 50) for index in range(200)], {})]
    rows = ["| history | " + " | ".join(f"{name}: per 1 000" for name in codes) + " |",
            "| --- |" + " ---: |" * len(codes)]
    for number, (name, levels, shape) in enumerate(cases):
        rng = random.Random(1000 + number)
        steps = [index for index in range(1, len(levels)) if levels[index] != levels[index - 1]]
        counts = dict.fromkeys(codes, 0)
        for _ in range(SIMULATED):
            runs = simulated_runs(rng, levels, **shape)
            groups = trend.segments(runs)
            for code, shown_levels in codes.items():
                at = told(shown_levels, runs, groups)
                if steps:  # every step told, each within 2 runs
                    counts[code] += all(any(abs(a - step) <= 2 for a in at) for step in steps)
                else:
                    counts[code] += bool(at)
        what = "with a change point" if not steps else "with every step found"
        rows.append(f"| {name}: {what} | " + " | ".join(str(counts[code]) for code in codes) + " |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REV", help="also measure the code at this git revision")
    parser.add_argument("--simulation-only", action="store_true", help="only the false alarms and detection")
    args = parser.parse_args()
    print("false alarms and detection, the levels' test on main and in this code:", flush=True)
    started = time.monotonic()
    table = simulate({"jumpavg's groups, every boundary told": lambda _, groups: (groups, ""),
                      "main": main_levels(), "this code": trend.shown_levels})
    publish("trend: false alarms and detection", f"{machine('trend.py')}, in {time.monotonic() - started:.0f} s.\n\n"
            + "\n".join(table) + "\n\n" + SIMULATION_NOTE)
    if args.simulation_only:
        return
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
