"""`vpnbench compare A.db[:RUN] B.db[:RUN] ...`: the same techniques and measurements side by
side across runs or machines, host facts on top, so that "IPsec costs 91 % on the Pi and 4 %
here" is one line: each run's mean, its ratio to the first run, and each run's own cost
against its baseline (stats.relative_cost, as the report shows it)."""

import dataclasses
import functools
import math
from importlib import resources as package_files
from pathlib import Path

import jinja2
import pandas as pd
from rich.table import Table

from vpnbench.answers.analysis import metric_frame
from vpnbench.answers.stats import relative_cost
from vpnbench.answers.verdicts import baseline_label
from vpnbench.foundation.daemon_version import DaemonVersion, ran_version, version_change
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.terminal_text import plain
from vpnbench.run.hostfacts import summary_line
from vpnbench.store.database import Store, is_url, missing_file
from vpnbench.store.records import Cell, Run
from vpnbench.views.report.figures import headline
from vpnbench.views.report.judgement import cost_rows, ratio_text

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclasses.dataclass
class Source:
    """One run to compare, read whole from its results file."""

    name: str  # A, B, ...
    db: Path | str  # an SQLite file, or a server's URL without its password
    run: Run
    cells: list[Cell]
    hosts: list[tuple[str, str]]  # (role, one-line facts)

    @property
    def testbed(self) -> str:
        """The testbed's name (a lab worker's, or [testbed] name), else its kind."""
        found = self.run.environment.get("testbed", {})
        return found.get("name") or found.get("kind", "")

    @functools.cached_property
    def versions(self) -> dict[str, DaemonVersion]:
        """Technique label -> the daemon version its bring-ups ran (the last one that says)."""
        found = {}
        for cell in self.cells:
            ran = ran_version(cell.negotiated)
            if ran is not None:
                found[cell.technique] = ran
        return found

    @property
    def title(self) -> str:
        where = f"{self.db}#" if isinstance(self.db, str) else f"{self.db.name}:"
        return f"{self.name}: {where}{self.run.run_id} ({self.run.campaign}, testbed {self.testbed})"


@dataclasses.dataclass
class Row:
    measurement_label: str
    technique: str
    impairment: str
    metric: str
    means: list[str]  # per source, "–" where absent
    vs_first: list[str]  # per source: its mean / the first source's
    costs: list[str]  # per source: against that run's baseline ("0.41 ×", "+0.6 ms")
    sentence: str
    versions: list[str] = dataclasses.field(default_factory=list)  # per source: the daemon that ran, "–" where none
    version_change: str = ""  # "version changed: A → B" where the runs ran the technique at other versions


def split_source(text: str) -> tuple[Path | str, str | None]:
    """FILE or FILE:RUN (a file whose own name holds ':' is taken whole when it exists); URL or
    URL#RUN for a database server (a URL holds ':' of its own)."""
    if is_url(text):
        url, _, run_id = text.partition("#")
        return url, run_id or None
    if Path(text).is_file() or ":" not in text:
        return Path(text), None
    path, run_id = text.rsplit(":", 1)
    return Path(path), run_id or None


def load_sources(texts: list[str]) -> list[Source]:
    if len(texts) < 2:
        raise UserError("compare: give at least two results files (FILE.db or FILE.db:RUN)")
    if len(texts) > len(LETTERS):
        raise UserError(f"compare: at most {len(LETTERS)} runs at once")
    sources = []
    for letter, text in zip(LETTERS, texts):
        path, run_id = split_source(text)
        if missing_file(path):
            raise UserError(f"compare: database {str(path)!r} does not exist")
        store = Store(path, read_only=True)
        try:
            run_id = run_id or store.latest_run()
            run = store.run(run_id) if run_id else None
            if run is None:
                known = ", ".join(r.run_id for r in store.runs()) or "none"
                raise UserError(f"compare: no run {run_id!r} in {store.name!r}; runs there: {known}")
            hosts = [(f.host, summary_line(f.facts)) for f in store.host_facts(run.run_id)]
            sources.append(Source(letter, store.name if store.path is None else path, run, store.cells(run.run_id),
                                  hosts))
        finally:
            store.close()
    return sources


def compare_rows(sources: list[Source]) -> list[Row]:
    """A row per measurement, technique, impairment and headline metric found in two runs or more."""
    means, costs = [], []
    for source in sources:
        frame = _headline_frame(source.cells)
        means.append(frame.groupby(["measurement_label", "technique", "impairment", "metric"], sort=False)["value"]
                     .mean().to_dict())
        baseline = baseline_label(source.cells)
        costs.append({(c["technique"], c["impairment"], c["metric"], label): c
                      for label, part in frame.groupby("measurement_label", sort=False)
                      for c in (cost_rows(relative_cost(part, baseline)) if baseline else [])})
    keys = list(dict.fromkeys(key for per_source in means for key in per_source))
    rows = []
    for key in keys:
        values = [m.get(key) for m in means]
        if sum(v is not None for v in values) < 2:
            continue
        label, technique, impairment, metric = key
        cost = [c.get((technique, impairment, metric, label)) for c in costs]
        ran = [source.versions.get(technique) if value is not None else None
               for source, value in zip(sources, values)]
        rows.append(Row(label, technique, impairment, metric, [_mean_text(metric, v) for v in values],
                        [ratio_text(v / values[0]) if v is not None and values[0] else "–" for v in values],
                        [c["headline"] if c else "–" for c in cost],
                        _sentence(sources, technique, impairment, f"{label} {metric}", cost)
                        if not metric.endswith("_cpu_pct") else "",
                        [r.label if r else "–" for r in ran], versions_changed(ran)))
    return rows


def versions_changed(ran: list[DaemonVersion | None]) -> str:
    """'version changed: A → B' over the runs that name a version, each change once in run order."""
    named = [r for r in ran if r is not None]
    steps = [version_change(a, b) for a, b in zip(named, named[1:])]
    steps = [step for step in steps if step]
    return "version changed: " + ", then ".join(steps) if steps else ""


def version_lines(rows: list[Row]) -> list[str]:
    """'wireguard-go: version changed: A → B', once per technique whose runs ran other versions."""
    return list(dict.fromkeys(f"{row.technique}: {row.version_change}" for row in rows if row.version_change))


def any_version(rows: list[Row]) -> bool:
    """Whether a version column is worth its width: some technique compared ran a built daemon."""
    return any(v != "–" for row in rows for v in row.versions)


def _headline_frame(cells: list[Cell]) -> pd.DataFrame:
    frame = metric_frame(cells)
    keep = set()
    for kind in set(frame["measurement"]):
        pick = headline(kind, set(frame.loc[frame["measurement"] == kind, "metric"]))
        keep.update(pick.metrics if pick else ())
    return frame[frame["metric"].isin(keep | {"client_cpu_pct", "server_cpu_pct"})]


def _sentence(sources: list[Source], technique: str, impairment: str, metric: str, cost: list) -> str:
    """'ipsec costs 91 % on A and 4 % on B' for a rate (1 − ratio), else the differences."""
    parts = []
    for source, c in zip(sources, cost):
        if c is None:
            continue
        if c["kind"] == "ratio" and _finite(c["ratio"]):
            share = (1 - c["ratio"]) * 100
            parts.append(f"{share:.0f} % on {source.name}" if share >= 0 else f"{-share:.0f} % more on {source.name}")
        else:
            parts.append(f"{c['headline']} on {source.name}")
    if len(parts) < 2:
        return ""
    verb = "costs" if cost[0] is None or cost[0]["kind"] == "ratio" else "adds"
    where = "" if impairment == "none" else f" under {impairment}"
    return f"{technique} {verb} {', '.join(parts[:-1])} and {parts[-1]} ({metric}{where})"


def _mean_text(metric: str, value: float | None) -> str:
    if value is None or not _finite(value):
        return "–"
    if metric.endswith("_bps"):
        return f"{value * 1e-6:.1f} Mbit/s"
    unit = "ms" if metric.endswith("_ms") else "%" if metric.endswith("_pct") else ""
    return f"{value:.{2 if abs(value) < 10 else 1}f} {unit}".rstrip()


def _finite(value) -> bool:
    return value is not None and not pd.isna(value) and math.isfinite(value)


def render_compare(sources: list[Source], rows: list[Row], warnings: list[str] = ()) -> str:
    template = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(
        package_files.files("vpnbench.views.report").joinpath("compare.html.j2").read_text())
    return template.render(sources=sources, rows=rows, warnings=list(warnings), versioned=any_version(rows),
                           version_lines=version_lines(rows))


def write_compare(texts: list[str], out: Path | None, warnings: list[str] = ()) -> tuple[list[Source], list[Row]]:
    """Read every run, compare, write the HTML (when out is given); returns what was compared.
    warnings: shown above the runs (a lab job's testbeds whose host facts differ)."""
    if out is not None and not out.parent.is_dir():
        raise UserError(f"-o: directory {str(out.parent)!r} does not exist")
    sources = load_sources(texts)
    rows = compare_rows(sources)
    if out is not None:
        out.write_text(render_compare(sources, rows, warnings))
    return sources, rows


def terminal_table(sources: list[Source], rows: list[Row]):
    """The same comparison as a rich table (one column group per run)."""
    table = Table(title="vpnbench compare", show_lines=False)
    for column in ("measurement", "technique", "impairment", "metric"):
        table.add_column(column)
    for source in sources:
        table.add_column(f"{source.name} mean", justify="right")
    for source in sources[1:]:
        table.add_column(f"{source.name}/{sources[0].name}", justify="right")
    for source in sources:
        table.add_column(f"{source.name} vs baseline", justify="right")
    versioned = any_version(rows)
    for source in sources if versioned else ():
        table.add_column(f"{source.name} version", overflow="fold")  # read whole, never cut
    for row in rows:
        table.add_row(*map(plain, (row.measurement_label, row.technique, row.impairment, row.metric, *row.means,
                                   *row.vs_first[1:], *row.costs, *(row.versions if versioned else ()))))
    return table
