"""The HTML report of one run: what ran, what was proven on the wire, a table and figures
per measurement, and every failed cell with its reason. One self-contained file (figures
are inline SVG), so it can be mailed or archived beside the database."""

import json
import math
import statistics
from importlib import resources as package_files
from pathlib import Path

import jinja2

from vpnbench.analysis import metric_frame, summarize
from vpnbench.errors import UserError
from vpnbench.hostfacts import summary_line
from vpnbench.measure import MEASUREMENTS
from vpnbench.records import Cell, HostFacts, Run
from vpnbench.report.figures import figures_for
from vpnbench.store import Store
from vpnbench.tables import bringup_times, bringups_of, digits_for, format_mean_sd, mean_sd

HOST_METRICS = [("client_cpu_pct", "client CPU %", 1.0), ("server_cpu_pct", "server CPU %", 1.0)]


def write_report(db: Path, out: Path, run_id: str | None = None) -> str:
    """Render the report of run_id (default: the newest run in db) to out; returns the run id."""
    if not db.is_file():
        raise UserError(f"report: database {str(db)!r} does not exist")
    if not out.parent.is_dir():
        raise UserError(f"-o: directory {str(out.parent)!r} does not exist")
    store = Store(db)
    try:
        run_id = run_id or store.latest_run()
        if run_id is None:
            raise UserError(f"report: {str(db)!r} holds no run")
        run = store.run(run_id)
        if run is None:
            raise UserError(f"--run: no run {run_id!r} in {str(db)!r}")
        html = render(run, store.cells(run_id), store.host_facts(run_id))
    finally:
        store.close()
    out.write_text(html)
    return run_id


def render(run: Run, cells: list[Cell], host_facts: list[HostFacts] = ()) -> str:
    summary = summarize(metric_frame(cells))
    template = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(
        package_files.files("vpnbench.report").joinpath("report.html.j2").read_text())
    return template.render(run=run, environment=_environment_rows(run.environment),
                           hosts=_host_rows(host_facts, cells),
                           techniques=_technique_rows(cells), measurements=_measurement_sections(summary, cells),
                           failed=[c for c in cells if c.status in ("failed", "running")],
                           failed_bringups=[b for b in bringups_of(cells) if b.error and b.backend != "none"],
                           unavailable=[b for b in bringups_of(cells) if b.backend == "none"],
                           n_ok=sum(c.ok for c in cells), n_cells=len(cells))


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


def _measurement_sections(summary, cells: list[Cell]) -> list[dict]:
    sections = []
    for label in dict.fromkeys(c.measurement_label for c in cells):
        mine = [c for c in cells if c.measurement_label == label]
        kind = mine[0].measurement
        columns = [(c.metric, c.title, c.scale) for c in MEASUREMENTS[kind].columns] + HOST_METRICS
        rows = []
        for technique, impairment in dict.fromkeys((c.technique, c.impairment) for c in mine):
            group = summary[(summary["measurement_label"] == label) & (summary["technique"] == technique)
                            & (summary["impairment"] == impairment)].set_index("metric")
            ok = sum(c.ok for c in mine if c.technique == technique and c.impairment == impairment)
            n = sum(1 for c in mine if c.technique == technique and c.impairment == impairment)
            values = []
            for metric, _, scale in columns:
                if metric in group.index:
                    row = group.loc[metric]
                    ci = row["ci95"] * scale
                    values.append((format_mean_sd(row["mean"] * scale, row["sd"] * scale),
                                   "" if math.isnan(ci) else f"95 % CI ± {ci:.{digits_for(ci)}f}"))
                else:
                    values.append(("–", ""))
            rows.append({"technique": technique, "impairment": impairment, "ok": ok, "n": n, "values": values})
        sections.append({"label": label, "kind": kind, "columns": [title for _, title, _ in columns],
                         "impaired": len({c.impairment for c in mine}) > 1 or mine[0].impairment != "none",
                         "rows": rows, "processes": _process_rows(mine),
                         "figures": figures_for(label, kind, summary, mine)})
    return sections


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
