"""bench/repetitions: how many repetitions `repetitions = "auto"` needs on the demo campaign
against a fixed 5, and the 95 % confidence-interval widths each gives, side by side.

Both variants run in one go, alternating (fixed, auto, fixed, auto ... `--pairs`), so machine
noise falls on both. For each measurement and technique: the repetitions run, and the CI
half-width of the measurement's first metric relative to its mean (what `ci_target` bounds).

Needs root (namespaces):  .venv/bin/python bench/repetitions.py [--pairs 1]
Takes the machine-wide test lock, so it never runs beside the test suite.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import LOCK, machine, publish, require_root  # noqa: E402
from vpnbench.answers.analysis import metric_frame, summarize  # noqa: E402
from vpnbench.measure import MEASUREMENTS  # noqa: E402
from vpnbench.store.database import Store  # noqa: E402

DEMO = Path(__file__).parent.parent / "src/vpnbench/campaign/presets/demo.toml"
VARIANTS = {"fixed 5": "repetitions = 5",
            "auto": 'repetitions = "auto"\nmin_repetitions = 3\nmax_repetitions = 10\nci_target = 0.05'}


def run_variant(name: str, directory: Path, index: int) -> tuple[list, float]:
    text = DEMO.read_text().replace("repetitions = 3", VARIANTS[name])
    campaign, db = directory / f"{index}.toml", directory / f"{index}.db"
    campaign.write_text(text)
    started = time.monotonic()
    result = subprocess.run(["flock", LOCK, sys.executable, "-m", "vpnbench", "run", str(campaign), "--db", str(db)],
                            capture_output=True, text=True)
    seconds = time.monotonic() - started
    if result.returncode not in (0, 1):
        raise SystemExit(f"{name}: vpnbench exited {result.returncode}: {result.stderr[-2000:]}")
    store = Store(db)
    try:
        cells = store.cells(store.latest_run("demo"))
    finally:
        store.close()
    return cells, seconds


def widths(cells: list) -> dict[tuple[str, str], tuple[int, float]]:
    """(measurement label, technique) -> (repetitions, CI half-width / mean of the first metric)."""
    summary = summarize(metric_frame(cells))
    out = {}
    for label in dict.fromkeys(c.measurement_label for c in cells):
        kind = next(c.measurement for c in cells if c.measurement_label == label)
        metric = MEASUREMENTS[kind].columns[0].metric
        for row in summary[(summary["measurement_label"] == label) & (summary["metric"] == metric)].itertuples():
            out[(label, row.technique)] = (int(row.n), abs(row.ci95 / row.mean) if row.mean else float("nan"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1)
    args = parser.parse_args()
    require_root("repetitions.py")
    results: dict[str, list] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.pairs):
            for name in VARIANTS:
                cells, seconds = run_variant(name, Path(tmp), len(results[name]) * 10 + list(VARIANTS).index(name))
                results[name].append((widths(cells), seconds, len(cells)))
    lines = ["| measurement | technique | " + " | ".join(f"{n}: reps | {n}: CI ± % of mean" for n in VARIANTS) + " |",
             "| --- | --- | " + " | ".join("---: | ---:" for _ in VARIANTS) + " |"]
    for pair in range(args.pairs):
        keys = results["fixed 5"][pair][0].keys()
        for key in keys:
            row = []
            for name in VARIANTS:
                n, width = results[name][pair][0].get(key, (0, float("nan")))
                row += [str(n), f"{width * 100:.1f}"]
            lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(row) + " |")
    totals = [f"{name}: {sum(cells for _, _, cells in runs)} cells in {sum(s for _, s, _ in runs):.0f} s"
              for name, runs in results.items()]
    body = "\n".join(lines) + "\n\n" + "; ".join(totals) + (
        f".\n\n{args.pairs} pair(s), alternating. {machine('repetitions.py')}. The first metric of each "
        "measurement (tcp and udp throughput, ping avg); `ci_target` 5 %, min 3, max 10.")
    publish("repetitions: auto vs a fixed 5 on the demo", body)


if __name__ == "__main__":
    main()
