"""bench/hostfacts: what a run's host facts cost, the version commands of every registered
technique against those of the run's own, side by side in one run.

Each round runs the machine-wide part of the facts script (run/hostfacts.script) once with every
technique's version commands (as before stop 60) and once with the overhead campaign's
(baseline + WireGuard), alternating, on this machine as it is (no namespace: the version
commands read the binaries, not the network). Wall seconds and the CPU of the script's
processes (their rusage) per run; the medians side by side.

Run as root: flock /run/vpnbench-tests.lock .venv/bin/python bench/hostfacts.py
(BENCH_ROUNDS rounds, 11 unless set; results go to bench/RESULTS.md)
"""

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import machine, publish, require_root  # noqa: E402
from vpnbench.run.hostfacts import TOOL_VERSIONS, script  # noqa: E402
from vpnbench.techniques import TECHNIQUES  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "11"))
OWN = ("baseline", "wireguard")  # bench/overhead.py's campaign


def timed(text: str) -> tuple[float, float]:
    """(wall s, CPU s of the script and its children) of one run of `text` under sh."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(["sh", "-c", text], capture_output=True, check=False, timeout=60)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    require_root("hostfacts.py")
    scripts = {"every technique's versions (before)": script(), "the run's own (after)": script(OWN)}
    commands = {name: len(TOOL_VERSIONS) + len({k for kind in (TECHNIQUES if name.endswith("(before)") else OWN)
                                                for k in TECHNIQUES[kind].versions}) for name in scripts}
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in scripts}
    for text in scripts.values():  # once each first: page cache warm for both
        timed(text)
    for _ in range(ROUNDS):
        for name, text in scripts.items():
            seen[name].append(timed(text))
    rows = []
    for name in scripts:
        walls, cpus = [w for w, _ in seen[name]], [c for _, c in seen[name]]
        rows.append(f"| {name} | {commands[name]} | {statistics.median(walls):.3f} ({min(walls):.3f}–{max(walls):.3f}) "
                    f"| {statistics.median(cpus):.3f} |")
    first, second = (statistics.median(w for w, _ in seen[name]) for name in scripts)
    body = (f"{machine('hostfacts.py')}; {ROUNDS} alternating rounds, the machine-wide part of a run's host facts "
            "(run once per machine a run; each namespace adds only its network part).\n\n"
            "| version commands of | commands | wall s, median (min–max) | CPU s of its processes, median |\n"
            "| --- | ---: | --- | ---: |\n" + "\n".join(rows) + f"\n\nafter ÷ before, wall: **{second / first:.2f}**\n")
    publish("host facts: the run's own versions", body)


if __name__ == "__main__":
    main()
