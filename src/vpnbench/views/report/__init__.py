"""The HTML report of one run: what ran, what was proven on the wire, the methodology warnings,
then per measurement a table, what each technique costs against the baseline, whether the
differences are real, and the figures the studies drew. One self-contained file (figures are
inline SVG), so it can be mailed or archived beside the database; `figures` also writes each
figure as SVG and PNG for papers."""

import collections
import datetime
import math
import re
import statistics
from importlib import resources as package_files
from pathlib import Path

import jinja2
import pandas as pd

from vpnbench.answers.builds import BuildsTable
from vpnbench.answers.ranking import failures, lossy_impairments
from vpnbench.answers.verdicts import Verdicts, verdicts
from vpnbench.foundation.daemon_version import last_ran_version
from vpnbench.foundation.errors import UserError
from vpnbench.impair.profiles import STUDIES
from vpnbench.measure import MEASUREMENTS
from vpnbench.run.hostfacts import summary_line
from vpnbench.store.database import Store, missing_file
from vpnbench.store.records import Cell, HostFacts, Run
from vpnbench.techniques import TECHNIQUES
from vpnbench.techniques.base import NEGOTIATED_WARNINGS, negotiated_warnings
from vpnbench.views.report.figures import (
    Canvas,
    Drawing,
    NoData,
    figures_for,
    headline,
    impairment_entries,
    measurement_scaling,
    scaling_groups,
)
from vpnbench.views.report.judgement import cost_rows, significance_rows
from vpnbench.views.tables import bringup_times, bringups_of, digits_for, format_summary, mean_sd

# Methodology findings about what a run leaves out (one direction only; a UDP rate every technique
# carried) rather than numbers that may describe something else: told as notes, not warnings.
NOTES = ("one_direction", "offered_rate_reached")
UNAVAILABLE_PREFIX = re.compile(r"^unavailable here: ")  # run/cell.record_unavailable's words
ISO_MOMENT = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d")
RANKED_NAMES = {"throughput_bps": "throughput", "rtt_avg_ms": "RTT (mean)", "client_cpu_s_per_gib": "client CPU-s/GiB",
                "setup_p50_s": "set-up time (median)", "setup_p95_s": "set-up time (p95)"}
HOST_METRICS = [("client_cpu_pct", "client CPU %", 1.0), ("server_cpu_pct", "server CPU %", 1.0)]
# Shown where a cell moved bytes (throughput measurements): CPU-seconds per GiB, per host.
EFFICIENCY_METRICS = [("client_cpu_s_per_gib", "client CPU-s/GiB", 1.0), ("server_cpu_s_per_gib", "server CPU-s/GiB", 1.0)]


def write_report(db: str | Path, out: Path, run_id: str | None = None, figures: Path | None = None,
                 timeseries: bool = False, answers: Verdicts | None = None) -> str:
    """Render the report of run_id (default: the newest run in db) to out; returns the run id.
    `answers`: the run's Verdicts when the caller has them already (`run --report`)."""
    if missing_file(db):
        raise UserError(f"report: database {str(db)!r} does not exist")
    if not out.parent.is_dir():
        raise UserError(f"-o: directory {str(out.parent)!r} does not exist")
    if figures is not None and not figures.parent.is_dir():
        raise UserError(f"--figures: directory {str(figures.parent)!r} does not exist")
    store = Store(db, read_only=True)
    try:
        run_id = run_id or store.latest_run()
        if run_id is None:
            raise UserError(f"report: {store.name!r} holds no run")
        run = store.run(run_id)
        if run is None:
            raise UserError(f"--run: no run {run_id!r} in {store.name!r}")
        if figures is not None:
            figures.mkdir(exist_ok=True)
        html = render(run, store.cells(run_id), store.host_facts(run_id), data=store, figures=figures,
                      timeseries=timeseries, answers=answers)
    finally:
        store.close()
    out.write_text(html)
    return run_id


def render(run: Run, cells: list[Cell], host_facts: list[HostFacts] = (), data=None, figures: Path | None = None,
           timeseries: bool = False, answers: Verdicts | None = None) -> str:
    """The report's HTML. `data` answers trials / series / events (the Store; none without it)."""
    return render_with_figures(run, cells, host_facts, data, figures, timeseries, answers)[0]


def render_with_figures(run: Run, cells: list[Cell], host_facts=(), data=None, figures: Path | None = None,
                        timeseries: bool = False, answers: Verdicts | None = None) -> tuple[str, list]:
    """The HTML and every Figure drawn (their `meta` says what each shows). The costs, the
    significance and the methodology warnings are the run's answers (`verdicts`, as the terminal
    and the export give them), never recomputed here."""
    answers = answers or verdicts(cells)
    summary = answers.summary
    canvas = Canvas(figures)
    baseline = answers.baseline
    judged = answers.qualities
    entries = impairment_entries(run.spec, list(dict.fromkeys(c.impairment for c in cells)))
    measurements = [_measurement_section(number, label, summary, cells, judged, answers, entries,
                                         data or NoData(), canvas, timeseries)
                    for number, label in enumerate(dict.fromkeys(c.measurement_label for c in cells), start=1)]
    scaling = _scaling_figures(canvas, summary, cells, entries)
    found = answers.warnings
    techniques = _technique_rows(cells)
    environment = _Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                               lstrip_blocks=True)
    environment.filters["timestamp"] = timestamp
    template = environment.from_string(package_files.files("vpnbench.views.report").joinpath("report.html.j2").read_text())
    html = template.render(run=run, glance=_at_a_glance(run, cells, answers, measurements, summary), environment=_environment_rows(run.environment),
                           hosts=_host_rows(host_facts, cells), baseline=baseline,
                           warnings=[w for w in found if w.code not in NOTES],
                           notes=[w for w in found if w.code in NOTES], scaling=scaling,
                           techniques=techniques, versioned=any(t["version"] for t in techniques),
                           builds=[_builds_section(table) for table in answers.builds],
                           measurements=measurements,
                           failed=[c for c in cells if c.status in ("failed", "running")],
                           failed_bringups=[b for b in bringups_of(cells) if b.error and b.backend != "none"],
                           n_ok=sum(c.ok for c in cells), n_cells=sum(not _unavailable(c) for c in cells),
                           n_unavailable=sum(_unavailable(c) for c in cells))
    drawn = [f for m in measurements for f in m["figures"]] + scaling
    return html, drawn


def _at_a_glance(run: Run, cells: list[Cell], answers: Verdicts, measurements: list[dict],
                 summary: pd.DataFrame) -> dict:
    """What the report opens with: what the run cannot tell (a rehearsal, n < 3), what failed, what
    should be impossible, the rankings (answers.rankings) as one table per measurement and metric,
    and the names it uses spelt out (each impairment's netem spec, the studies S1-S5)."""
    fewest = int(summary["n"].min()) if not summary.empty else 0
    ranked = {r.metric for r in answers.rankings}
    rehearsal = run.campaign.endswith("-rehearsal")
    tables: dict[tuple[str, str], dict] = {}
    for ranking in answers.rankings:
        table = tables.setdefault((ranking.measurement_label, ranking.metric), {
            "label": ranking.measurement_label, "key": ranking.metric,
            "metric": RANKED_NAMES.get(ranking.metric, ranking.metric),
            "order": "highest first" if ranking.higher_is_better else "lowest first", "rows": []})
        low, high = ranking.n
        table["rows"].append({"impairment": ranking.impairment, "n": str(low) if low == high else f"{low}–{high}",
                              "collapsed": ranking.collapsed,
                              "groups": [{"techniques": [p.technique for p in group], "why": why,
                                          "means": ", ".join(f"{p.technique} {p.mean:.4g}" for p in group)}
                                         for group, why in zip(ranking.groups, ranking.why_tied)],
                              "beyond": [f"{technique} ({censored} of {n} beyond the timeout)" if censored < n
                                         else f"{technique} (never within the timeout)"
                                         for technique, censored, n in ranking.beyond_timeout]})
    specs = {}
    for cell in cells:
        params = cell.impairment_params or {}
        egress, ingress = params.get("egress") or "", params.get("ingress") or ""
        text = egress if egress == ingress else f"egress {egress or 'none'} / ingress {ingress or 'none'}"
        if text and text != cell.impairment:
            specs.setdefault(cell.impairment, text)
    named = " ".join([run.campaign, str(run.spec.get("campaign", {}).get("description") or ""),
                      *(c.impairment for c in cells)]).upper()
    return {"banner": rehearsal or fewest < 3, "rehearsal": rehearsal, "fewest": fewest,
            "failures": failures(cells),
            "impossible": [w for w in answers.warnings if w.code == "beats_bare_path"],
            "lossy": lossy_impairments(cells), "tables": list(tables.values()), "specs": specs,
            # each measurement's headline bars: every technique under every impairment, one figure
            "figures": list(filter(None, (_glance_figure(m["figures"], ranked) for m in measurements))),
            "studies": [text for key, text in STUDIES.items() if re.search(rf"\b{key}\b", named)]}


def _glance_figure(figures: list, ranked: set[str]):
    """A measurement's bars of the metric it is ranked by (else its first bars), or None."""
    bars = [f for f in figures if f.meta.get("type") == "bars"]
    return next((f for f in bars if f.meta.get("metric") in ranked), bars[0] if bars else None)


class _Environment(jinja2.Environment):
    """Reads `row.key` of a dict row as its item straight away: jinja tries the attribute first and
    pays an AttributeError each time, some 500 000 times in a report of 10 000 cells (a quarter
    of the template's time)."""

    def getattr(self, obj, attribute):
        if type(obj) is dict and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


def _environment_rows(environment: dict) -> list[tuple[str, list[str]]]:
    """Each fact as lines a person reads: a mapping as 'key: value' lines (nested ones flattened),
    a list joined by commas, a timestamp to the second."""
    return [(key, _readable(value)) for key, value in environment.items()]


def _readable(value, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        lines = [line for key, item in value.items() for line in _readable(item, f"{prefix}{key}: ")]
        return lines or [f"{prefix}–"]
    if isinstance(value, (list, tuple)):
        return [prefix + ", ".join(_readable(item)[0] for item in value)] if value else [f"{prefix}–"]
    if value is None or value == "":
        return [f"{prefix}–"]
    return [prefix + (timestamp(value) if isinstance(value, str) else str(value))]


def timestamp(value: str | None) -> str:
    """'2026-01-01 10:00:03 UTC' for an ISO timestamp (no fractions of a second); other text as it is."""
    if not value:
        return ""
    if not ISO_MOMENT.match(value):  # a version, a kernel release or a path is not a moment
        return value
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is None or moment.utcoffset() == datetime.timedelta(0):
        return moment.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if moment.tzinfo is not None else "")
    return moment.strftime("%Y-%m-%d %H:%M:%S %z")


def _host_rows(host_facts: list[HostFacts], cells: list[Cell]) -> list[dict]:
    """Each host's facts, and the CPU steal time the monitor saw on it during the cells."""
    rows = []
    for facts in host_facts:
        steal = [c.hosts[facts.host]["cpu_steal_pct"] for c in cells
                 if c.ok and (c.hosts.get(facts.host) or {}).get("cpu_steal_pct") is not None]
        rows.append({"host": facts.host, "summary": summary_line(facts.facts),
                     "steal": f"mean {statistics.fmean(steal):.2f} %, max {max(steal):.2f} %" if steal else "–",
                     "details": "\n".join(_readable(facts.facts))})
    return rows


def _technique_rows(cells: list[Cell]) -> list[dict]:
    """A row per technique. What its ends negotiated reads as one line (the technique's `agreed`)
    with its warnings as a badge, the whole record behind a toggle; the daemon's implementation
    and version, where a built daemon ran (its build record in the toggle); a technique this machine
    cannot run says "unavailable here" and why, in no failure's colour: nothing failed."""
    rows = []
    for technique in dict.fromkeys(c.technique for c in cells):
        mine = [c for c in cells if c.technique == technique]
        params = {k: v for k, v in mine[0].technique_params.items() if k not in ("kind", "backend", "backend_asked")}
        bringups = bringups_of(mine)
        negotiated = mine[0].negotiated
        known = TECHNIQUES.get(mine[0].technique_params.get("kind"))
        ran = last_ran_version(b.negotiated for b in bringups)
        rows.append({"technique": technique, "kind": mine[0].technique_params.get("kind", ""),
                     "params": ", ".join(f"{k}={v}" for k, v in params.items()),
                     "backend": bringups[-1].backend if bringups else "–",
                     "version": ran.label if ran else "", "build": ran.details_text if ran else "",
                     "wire_check": mine[0].wire_check,
                     "agreed": known.agreed(negotiated) if known else "",
                     "negotiated_warnings": negotiated_warnings(negotiated),
                     "negotiated": "\n".join(_readable({k: v for k, v in negotiated.items()
                                                         if k not in NEGOTIATED_WARNINGS})) if negotiated else "",
                     "unavailable": _unavailable_reason(mine),
                     "setup": mean_sd(bringup_times(mine), 1), "bringups": len(bringups),
                     "ok": sum(c.ok for c in mine), "n": len(mine)})
    return rows


def _builds_section(table: BuildsTable) -> dict:
    """One kind's builds side by side, in words: per ranked question each build's mean, and beside
    every build but the first its ratio to the first with the tests' word on the two."""
    marks = {"separated": "", "not distinguishable": " n.d.", "not enough repetitions": " untested",
             "not tested": " untested"}  # ranking.rank's words: "not tested" where the run has no baseline
    rows = []
    for row in table.rows:
        values = []
        for build in row.means:
            mean = "–" if build.mean is None else _mean_text(row.metric, build.mean)
            ratio = "" if build.verdict in ("reference", "") or build.ratio is None else f"{build.ratio:.2f} ×{marks.get(build.verdict, '')}"
            values.append((mean, ratio))
        rows.append({"label": row.measurement_label, "impairment": row.impairment,
                     "metric": RANKED_NAMES.get(row.metric, row.metric),
                     "order": "higher is better" if row.higher_is_better else "lower is better", "values": values})
    return {"kind": table.kind, "builds": list(zip(table.techniques, table.ran)), "rows": rows}


def _mean_text(metric: str, mean: float) -> str:
    """A mean in four digits; a rate in Mbit/s or Gbit/s."""
    if metric.endswith("_bps"):
        return f"{mean / 1e9:.4g} Gbit/s" if mean >= 1e9 else f"{mean / 1e6:.4g} Mbit/s"
    return f"{mean:.4g}"


def _unavailable_reason(cells: list[Cell]) -> str | None:
    """Why this machine could not run these cells (no backend for their technique), or None when it could."""
    bringups = bringups_of(cells)
    if not bringups or any(b.backend != "none" for b in bringups):
        return None
    return UNAVAILABLE_PREFIX.sub("", bringups[-1].error or "no backend available")


def _unavailable(cell: Cell) -> bool:
    return cell.bringup is not None and cell.bringup.backend == "none"


def _measurement_section(number: int, label: str, summary: pd.DataFrame, cells: list[Cell], judged: dict,
                         answers: Verdicts, entries, data, canvas: Canvas, timeseries: bool) -> dict:
    mine = [c for c in cells if c.measurement_label == label]
    kind = mine[0].measurement
    known = MEASUREMENTS[kind].columns if kind in MEASUREMENTS else []
    present = set(summary.loc[summary["measurement_label"] == label, "metric"])
    # a column no cell of this label has is left out (Jain over tunnels where every cell had one)
    columns = [(c.metric, c.title, c.scale) for n, c in enumerate(known) if n == 0 or c.metric in present]
    columns += HOST_METRICS
    columns += [column for column in EFFICIENCY_METRICS if column[0] in present]
    counts = collections.Counter((c.technique, c.impairment) for c in mine)
    ok = collections.Counter((c.technique, c.impairment) for c in mine if c.ok)
    rows = []
    for technique, impairment in counts:
        verdict = judged.get((label, technique, impairment))
        short = set(verdict.insufficient) if verdict else set()
        values = [_value_cell(answers.stat(label, technique, impairment, metric), scale, metric in short)
                  for metric, _, scale in columns]
        rows.append({"technique": technique, "impairment": impairment, "values": values,
                     "ok": ok[technique, impairment], "n": counts[technique, impairment],
                     # one repetition has no spread to judge: no "ok" for it (steal still makes it untrusted)
                     "quality": "–" if not verdict or (verdict.verdict == "ok" and ok[technique, impairment] < 2)
                     else verdict.verdict,
                     "reasons": list(verdict.reasons) if verdict else []})
    pick = headline(kind, present)
    metrics = [*(pick.metrics if pick else ()), "client_cpu_pct", "server_cpu_pct",
               *(metric for metric, _, _ in EFFICIENCY_METRICS if metric in present)]
    baseline = answers.baseline
    short = {(t, i, m) for (lab, t, i), q in judged.items() if lab == label for m in q.insufficient}
    shown = summary[summary["measurement_label"] == label]
    shown = shown[[key not in short for key in zip(shown["technique"], shown["impairment"], shown["metric"])]]
    relative, compared = answers.relative_of(label), answers.comparisons_of(label)
    costs = _without_basis(cost_rows(relative[relative["metric"].isin(metrics)]), short, baseline)
    comparisons = _without_basis(significance_rows(compared[compared["metric"].isin(metrics)]), short, baseline)
    drawing = Drawing(label, kind, shown, mine, entries, data, canvas, timeseries)
    return {"number": number, "label": label, "kind": kind, "columns": [title for _, title, _ in columns],
            "impaired": len({c.impairment for c in mine}) > 1 or mine[0].impairment != "none",
            "rows": rows, "processes": _process_rows(mine), "baseline": baseline,
            "costs": costs, "comparisons": comparisons,
            "glance": _glance(costs, comparisons, pick.metrics[0] if pick else None, baseline),
            "repeated": _repeated(summary[(summary["measurement_label"] == label) & summary["metric"].isin(metrics)]),
            "captions": answers.captions.get(label, []),
            "figures": figures_for(drawing)}


def _glance(costs: list[dict], comparisons: list[dict], metric: str | None, baseline: str | None) -> dict | None:
    """The headline metric's cost as one impairment × technique matrix ('0.41 × *'), for runs
    with several impairments, where the long cost and significance tables are hard to read. The
    longer side runs down the page: an impairment per row under a sweep (S1: 36 × 6), a technique
    per row where techniques outnumber impairments (the mesh preset: 13 × 4 was wider than the page)."""
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
    impairments = list(table)
    if len(techniques) > len(impairments):
        return {"metric": metric, "corner": "technique", "columns": impairments,
                "rows": [{"label": t, "values": [table[i].get(t, "–") for i in impairments]} for t in techniques]}
    return {"metric": metric, "corner": "impairment", "columns": techniques,
            "rows": [{"label": i, "values": [by.get(t, "–") for t in techniques]} for i, by in table.items()]}


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


def _repeated(summary: pd.DataFrame) -> bool:
    """Whether any technique has 2 or more values of a metric somewhere: else no test can run."""
    return bool((summary["n"] >= 2).any())


def _value_cell(row, scale: float, insufficient: bool) -> tuple[str, str]:
    """'mean ± sd' and the 95 % CI of one summary row (none: '–')."""
    if row is None:
        return "–", ""
    if insufficient:
        return "insufficient basis", "< 3 samples"
    ci = row.ci95 * scale
    return (format_summary(row, scale),
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
