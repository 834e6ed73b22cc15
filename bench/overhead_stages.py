"""bench/overhead_stages: where the harness overhead of bench/overhead.py's campaign goes, stage by
stage, with the CPU halved (a busy loop pinned to each core, as on a host half as fast), for two
source trees side by side: BEFORE (e.g. an unpacked `git archive <commit> src`) and this tree.

Each run is `vpnbench run` of the overhead campaign under bench/stages.py, which times every stage
in the process; the interpreter's start and exit are the wall time around it. Routed and direct,
before and after alternate (RUNS each), so the other sessions' load drifts over both alike. The
overhead is the wall time less the cells' 30 s of traffic, as in bench/overhead.py.

Run as root: BENCH_BEFORE=/tmp/before/src flock /run/vpnbench-tests.lock .venv/bin/python bench/overhead_stages.py
(BENCH_RUNS runs of each; BENCH_HALVE=0 leaves the CPU whole; results go to bench/RESULTS.md under
BENCH_SECTION, "overhead stages" unless set)
"""

import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import machine, publish, require_root  # noqa: E402
from overhead import CAMPAIGN, CELLS, SECONDS, overhead_pct  # noqa: E402

HERE = Path(__file__).resolve().parent
AFTER = HERE.parent / "src"
RUNS = int(os.environ.get("BENCH_RUNS", "2"))
HALVE = os.environ.get("BENCH_HALVE", "1") != "0"
INTERPRETER = "Python start and exit (interpreter)"
TRAFFIC = "cell: iperf3 client run (3 s traffic + connect, results)"


@contextmanager
def cpu_halved(enabled: bool):
    """A busy loop pinned to each core for as long as the block runs (the scheduler then gives a
    run about half of each core); the loops are stopped by their own pids on the way out."""
    loops = [subprocess.Popen(["taskset", "-c", str(core), "sh", "-c", "while :; do :; done"])
             for core in range(os.cpu_count() or 1)] if enabled else []
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def staged_run(source: Path, router: bool) -> tuple[float, dict[str, float], dict[str, int]]:
    """(wall seconds, {stage: seconds}, {stage: processes spawned}) of one CLI run of the
    overhead campaign from `source`."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "c.toml").write_text(CAMPAIGN.replace("ROUTER", str(router).lower()))
        out = Path(tmp, "stages.json")
        argv = [sys.executable, str(HERE / "stages.py"), str(out), "run", f"{tmp}/c.toml", "--db", f"{tmp}/c.db"]
        started = time.monotonic()
        result = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(source)))
        wall = time.monotonic() - started
        if result.returncode != 0:
            raise SystemExit(f"campaign failed:\n{result.stdout}\n{result.stderr}")
        found = json.loads(out.read_text())
    stages = found["stages"]
    stages[INTERPRETER] = wall - found["seconds"]
    stages[TRAFFIC] -= CELLS * SECONDS  # the traffic itself is not overhead
    return wall, stages, found["spawns"]


def main() -> None:
    require_root("overhead_stages.py")
    before = Path(os.environ["BENCH_BEFORE"])
    trees = {"before": before, "after": AFTER}
    # Both trees start from bytecode, as an installed vpnbench does (`make bytecode`): an unpacked
    # `git archive` has none, and with PYTHONDONTWRITEBYTECODE set (as here) every run of it compiled
    # its ~300 modules again, 0.3 s a run (stop 70's first table took that for the change's gain).
    for tree in trees.values():
        compileall.compile_dir(tree, quiet=1)
    walls: dict[tuple[str, bool], list[float]] = {}
    stages: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    spawns: dict[str, list[dict[str, int]]] = {"before": [], "after": []}
    with cpu_halved(HALVE):
        for run in range(RUNS):
            for router in (True, False):
                for tree in (("before", "after") if run % 2 == 0 else ("after", "before")):
                    wall, spent, spawned = staged_run(trees[tree], router)
                    walls.setdefault((tree, router), []).append(wall)
                    stages[tree].append(spent)
                    spawns[tree].append(spawned)
                    print(f"{tree} router={router}: {wall:.2f} s ({overhead_pct(wall):.1f} %)", flush=True)
    rows = []
    for tree, router in walls:
        runs = walls[tree, router]
        rows.append(f"| {tree} | {'routed' if router else 'direct'} | {statistics.median(runs):.1f} s | "
                    f"**{overhead_pct(statistics.median(runs)):.1f} %** "
                    f"(runs: {', '.join(f'{overhead_pct(w):.1f}' for w in runs)} %) |")
    names = sorted({name for spent in stages["before"] + stages["after"] for name in spent},
                   key=lambda name: -statistics.mean(s.get(name, 0.0) for s in stages["before"]))
    names += sorted({name for spent in spawns["before"] + spawns["after"] for name in spent} - set(names))

    def mean(runs: list[dict], name: str) -> float:
        return statistics.mean(run.get(name, 0) for run in runs)
    stage_rows = [f"| {name} | {mean(stages['before'], name):.2f} | {mean(stages['after'], name):.2f} | "
                  f"{mean(spawns['before'], name):.1f} | {mean(spawns['after'], name):.1f} |" for name in names]
    total = {tree: statistics.mean(sum(s.values()) for s in stages[tree]) for tree in stages}
    spawned = {tree: statistics.mean(sum(s.values()) for s in spawns[tree]) for tree in spawns}
    body = f"""
{machine('overhead_stages.py')}, {'with the CPU halved (a busy loop pinned to each core)' if HALVE else 'CPU whole'};
before = `{before}`, after = this tree; {RUNS} runs of each, alternating.

| code | link | wall (median) | harness overhead (target ≤ 5 %) |
| --- | --- | --- | --- |
{chr(10).join(rows)}

Where the seconds beyond the 30 s of traffic go (mean of the routed and direct runs, each
stage's own time, and the processes it spawned; bench/stages.py):

| stage | before s | after s | before spawns | after spawns |
| --- | --- | --- | --- | --- |
{chr(10).join(stage_rows)}
| **all** | **{total['before']:.2f}** | **{total['after']:.2f}** | **{spawned['before']:.1f}** | **{spawned['after']:.1f}** |
"""
    publish(os.environ.get("BENCH_SECTION", "overhead stages"), body)


if __name__ == "__main__":
    main()
