"""The HTML report of one run: what ran, what was proven on the wire, the methodology warnings,
then per measurement a table, what each technique costs against the baseline, whether the
differences are real, and the figures the studies drew. One self-contained file (figures are
inline SVG), so it can be mailed or archived beside the database; `figures` also writes each
figure as SVG and PNG for papers."""

import json
import math
import statistics
from importlib import resources as package_files
from pathlib import Path

import jinja2
import pandas as pd

from vpnbench.analysis import metric_frame, summarize
from vpnbench.errors import UserError
from vpnbench.hostfacts import summary_line
from vpnbench.measure import MEASUREMENTS
from vpnbench.methodology import methodology_warnings
from vpnbench.quality import monitor_frame, qualities
from vpnbench.records import Cell, HostFacts, Run
from vpnbench.report.figures import (Canvas, Drawing, NoData, figures_for, headline, impairment_entries,
                                     measurement_scaling, scaling_groups)
from vpnbench.report.judgement import cost_rows, significance_rows
from vpnbench.store import Store
from vpnbench.tables import bringup_times, bringups_of, digits_for, format_mean_sd, mean_sd
from vpnbench.techniques import is_reference

# Methodology findings about what a run leaves out (one direction only; a UDP rate every technique
# carried) rather than numbers that may describe something else: told as notes, not warnings.
NOTES = ("one_direction", "offered_rate_reached")
HOST_METRICS = [("client_cpu_pct", "client CPU %", 1.0), ("server_cpu_pct", "server CPU %", 1.0)]
# Shown where a cell moved bytes (throughput measurements): CPU-seconds per GiB, per host.
EFFICIENCY_METRICS = [("client_cpu_s_per_gib", "client CPU-s/GiB", 1.0), ("server_cpu_s_per_gib", "server CPU-s/GiB", 1.0)]


def write_report(db: Path, out: Path, run_id: str | None = None, figures: Path | None = None,
                 timeseries: bool = False) -> str:
    """Render the report of run_id (default: the newest run in db) to out; returns the run id."""
    if not db.is_file():
        raise UserError(f"report: database {str(db)!r} does not exist")
    if not out.parent.is_dir():
        raise UserError(f"-o: directory {str(out.parent)!r} does not exist")
    if figures is not None and not figures.parent.is_dir():
        raise UserError(f"--figures: directory {str(figures.parent)!r} does not exist")
    store = Store(db)
    try:
        run_id = run_id or store.latest_run()
        if run_id is None:
            raise UserError(f"report: {str(db)!r} holds no run")
        run = store.run(run_id)
        if run is None:
            raise UserError(f"--run: no run {run_id!r} in {str(db)!r}")
        if figures is not None:
            figures.mkdir(exist_ok=True)
        html = render(run, store.cells(run_id), store.host_facts(run_id), data=store, figures=figures,
                      timeseries=timeseries)
    finally:
        store.close()
    out.write_text(html)
    return run_id


def render(run: Run, cells: list[Cell], host_facts: list[HostFacts] = (), data=None, figures: Path | None = None,
           timeseries: bool = False) -> str:
    """The report's HTML. `data` answers trials / series / events (the Store; none without it)."""
    return render_with_figures(run, cells, host_facts, data, figures, timeseries)[0]


def render_with_figures(run: Run, cells: list[Cell], host_facts=(), data=None, figures: Path | None = None,
                        timeseries: bool = False) -> tuple[str, list]:
    """The HTML and every Figure drawn (their `meta` says what each shows)."""
    frame = metric_frame(cells)
    summary = summarize(frame)
    exports = [c.export() for c in cells]
    canvas = Canvas(figures)
    baseline = baseline_of(cells)
    judged = _qualities(frame, exports)
    entries = impairment_entries(run.spec, list(dict.fromkeys(c.impairment for c in cells)))
    measurements = [_measurement_section(number, label, summary, frame, cells, judged, baseline, entries,
                                         data or NoData(), canvas, timeseries)
                    for number, label in enumerate(dict.fromkeys(c.measurement_label for c in cells), start=1)]
    scaling = _scaling_figures(canvas, summary, cells, entries)
    found = methodology_warnings(exports)
    template = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(
        package_files.files("vpnbench.report").joinpath("report.html.j2").read_text())
    html = template.render(run=run, environment=_environment_rows(run.environment),
                           hosts=_host_rows(host_facts, cells), baseline=baseline,
                           warnings=[w for w in found if w.code not in NOTES],
                           notes=[w for w in found if w.code in NOTES], scaling=scaling,
                           techniques=_technique_rows(cells), measurements=measurements,
                           failed=[c for c in cells if c.status in ("failed", "running")],
                           failed_bringups=[b for b in bringups_of(cells) if b.error and b.backend != "none"],
                           unavailable=[b for b in bringups_of(cells) if b.backend == "none"],
                           n_ok=sum(c.ok for c in cells), n_cells=len(cells))
    drawn = [f for m in measurements for f in m["figures"]] + scaling
    return html, drawn


def baseline_of(cells: list[Cell]) -> str | None:
    """The technique the others are measured against: the first of kind baseline."""
    return next((c.technique for c in cells if is_reference(c.technique_params)), None)


def _environment_rows(environment: dict) -> list[tuple[str, str]]:
    return [(key, value if isinstance(value, str) else json.dumps(value)) for key, value in environment.items()]


def _host_rows(host_facts: list[HostFacts], cells: list[Cell]) -> list[dict]:
    """Each host's facts, and the CPU steal time the monitor saw on it during the cells."""
    rows = []
    for facts in host_facts:
        steal = [c.hosts[facts.host]["cpu_steal_pct"] for c in cells
                 if c.ok and (c.hosts.get(facts.host) or {}).get("cpu_steal_pct") is not None]
        rows.append({"host": facts.host, "summary": summary_line(facts.facts),
                     "steal": f"mean {statistics.fmean(steal):.2f} %, max {max(steal):.2f} %" if steal else "–",
                     "details": json.dumps(facts.facts, indent=1)})
    return rows


def _technique_rows(cells: list[Cell]) -> list[dict]:
    rows = []
    for technique in dict.fromkeys(c.technique for c in cells):
        mine = [c for c in cells if c.technique == technique]
        params = {k: v for k, v in mine[0].technique_params.items() if k not in ("kind", "backend", "backend_asked")}
        bringups = bringups_of(mine)
        rows.append({"technique": technique, "kind": mine[0].technique_params.get("kind", ""),
                     "params": ", ".join(f"{k}={v}" for k, v in params.items()),
                     "backend": bringups[-1].backend if bringups else "–",
                     "wire_check": mine[0].wire_check, "negotiated": json.dumps(mine[0].negotiated),
                     "setup": mean_sd(bringup_times(mine), 1), "bringups": len(bringups),
                     "ok": sum(c.ok for c in mine), "n": len(mine)})
    return rows


def _measurement_section(number: int, label: str, summary: pd.DataFrame, frame: pd.DataFrame, cells: list[Cell],
                         judged: dict, baseline: str | None, entries, data, canvas: Canvas,
                         timeseries: bool) -> dict:
    mine = [c for c in cells if c.measurement_label == label]
    kind = mine[0].measurement
    known = MEASUREMENTS[kind].columns if kind in MEASUREMENTS else []
    present = set(summary.loc[summary["measurement_label"] == label, "metric"])
    columns = [(c.metric, c.title, c.scale) for c in known] + HOST_METRICS
    columns += [column for column in EFFICIENCY_METRICS if column[0] in present]
    rows = []
    groups = {key: group.set_index("metric") for key, group in
              summary[summary["measurement_label"] == label].groupby(["technique", "impairment"], sort=False)}
    empty = summary.iloc[0:0].set_index("metric")
    for technique, impairment in dict.fromkeys((c.technique, c.impairment) for c in mine):
        group = groups.get((technique, impairment), empty)
        verdict = judged.get((label, technique, impairment))
        short = set(verdict.insufficient) if verdict else set()
        values = [_value_cell(group, metric, scale, metric in short) for metric, _, scale in columns]
        rows.append({"technique": technique, "impairment": impairment, "values": values,
                     "ok": sum(c.ok for c in mine if c.technique == technique and c.impairment == impairment),
                     "n": sum(1 for c in mine if c.technique == technique and c.impairment == impairment),
                     "quality": verdict.verdict if verdict else "–",
                     "reasons": list(verdict.reasons) if verdict else []})
    pick = headline(kind, present)
    metrics = [*(pick.metrics if pick else ()), "client_cpu_pct", "server_cpu_pct",
               *(metric for metric, _, _ in EFFICIENCY_METRICS if metric in present)]
    part = frame[(frame["measurement_label"] == label) & frame["metric"].isin(metrics)]
    short = {(t, i, m) for (lab, t, i), q in judged.items() if lab == label for m in q.insufficient}
    shown = summary[summary["measurement_label"] == label]
    shown = shown[[key not in short for key in zip(shown["technique"], shown["impairment"], shown["metric"])]]
    costs = _without_basis(cost_rows(part, baseline) if baseline else [], short, baseline)
    comparisons = _without_basis(significance_rows(part, baseline), short, baseline)
    drawing = Drawing(label, kind, shown, mine, entries, data, canvas, timeseries)
    return {"number": number, "label": label, "kind": kind, "columns": [title for _, title, _ in columns],
            "impaired": len({c.impairment for c in mine}) > 1 or mine[0].impairment != "none",
            "rows": rows, "processes": _process_rows(mine), "baseline": baseline,
            "costs": costs, "comparisons": comparisons,
            "glance": _glance(costs, comparisons, pick.metrics[0] if pick else None, baseline),
            "repeated": _repeated(part),
            "figures": figures_for(drawing)}


def _glance(costs: list[dict], comparisons: list[dict], metric: str | None, baseline: str | None) -> dict | None:
    """The headline metric's cost as one impairment × technique matrix ('0.41 × *'), for runs
    with several impairments, where the long cost and significance tables are hard to read."""
    rows = [c for c in costs if c["metric"] == metric]
    techniques = list(dict.fromkeys(c["technique"] for c in rows))
    if len({c["impairment"] for c in rows}) < 2:
        return None
    verdicts = {(c["a"], c["impairment"]): c["verdict"] for c in comparisons
                if c["metric"] == metric and c["b"] == baseline}
    table: dict[str, dict[str, str]] = {}
    for c in rows:
        said = verdicts.get((c["technique"], c["impairment"]), "")
        mark = " *" if said.endswith(" higher") else " n.d." if said == "not distinguishable" else ""
        table.setdefault(c["impairment"], {})[c["technique"]] = c["headline"] + mark
    return {"metric": metric, "techniques": techniques,
            "rows": [{"impairment": i, "values": [by.get(t, "–") for t in techniques]} for i, by in table.items()]}


def _qualities(frame: pd.DataFrame, exports: list[dict]) -> dict:
    """quality.qualities over the metrics the report shows a verdict for (the others only cost time)."""
    if frame.empty:
        return {}
    both = pd.concat([frame, monitor_frame(exports)], ignore_index=True)
    return qualities(both[both["metric"].map(_shown)])


def _shown(metric: str, known=frozenset(c.metric for m in MEASUREMENTS.values() for c in m.columns)) -> bool:
    return metric in known or metric.startswith(("client_", "server_", "router_"))


def _without_basis(rows: list[dict], short: set, baseline: str | None) -> list[dict]:
    """Cost and significance rows resting on a CPU figure with too few monitor samples: said in
    words, never as a number."""
    out = []
    for row in rows:
        sides = [row.get("technique"), row.get("a"), row.get("b"), baseline if "technique" in row else None]
        if any((side, row["impairment"], row["metric"]) in short for side in sides if side):
            row = {**row, "headline": "insufficient basis", "interval": "", "method": "fewer than 3 monitor samples",
                   "p": "–", "p_holm": "–", "effect": "–", "verdict": "insufficient basis"}
        out.append(row)
    return out


def _repeated(part: pd.DataFrame) -> bool:
    """Whether any technique has 2 or more values of a metric somewhere: else no test can run."""
    if part.empty:
        return False
    return bool((part.groupby(["impairment", "metric", "technique"], sort=False).size() >= 2).any())


def _value_cell(group: pd.DataFrame, metric: str, scale: float, insufficient: bool) -> tuple[str, str]:
    if metric not in group.index:
        return "–", ""
    if insufficient:
        return "insufficient basis", "fewer than 3 monitor samples"
    row = group.loc[metric]
    ci = row["ci95"] * scale
    return (format_mean_sd(row["mean"] * scale, row["sd"] * scale),
            "" if math.isnan(ci) else f"95 % CI ± {ci:.{digits_for(ci)}f}")


def _scaling_figures(canvas: Canvas, summary: pd.DataFrame, cells: list[Cell], entries) -> list:
    """Measurement labels of one kind differing in one parameter (streams, length): lines across them."""
    by_kind: dict[str, dict[str, dict]] = {}
    for cell in cells:
        by_kind.setdefault(cell.measurement, {})[cell.measurement_label] = cell.measurement_params
    if not cells:
        return []
    return [figure for kind, params in by_kind.items() if len(params) > 1
            for where, group in scaling_groups(params)
            for figure in measurement_scaling(canvas, kind, summary, group, cells[0].impairment, entries,
                                              [c for c in cells if c.measurement == kind], where)]


def _process_rows(cells: list[Cell]) -> list[dict]:
    """CPU of each named process (the daemons and traffic tools) per technique and host, in % of one core."""
    values: dict[tuple[str, str, str], list[float]] = {}
    for cell in cells:
        if not cell.ok:
            continue
        for host, facts in cell.hosts.items():
            for process, pct in (facts.get("procs_cpu_pct") or {}).items():
                values.setdefault((cell.technique, host, process), []).append(pct)
    return [{"technique": t, "host": h, "process": p, "cpu": mean_sd(v, 1)} for (t, h, p), v in values.items()]
