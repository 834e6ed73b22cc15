"""Trends: every run of one campaign over time, with the points where a result changed.

A team re-runs the same campaign after each kernel, firmware or daemon upgrade. For each
testbed, technique, impairment, measurement and headline metric this lines the runs up in
time and splits them into groups of one mean each with jumpavg, FD.io CSIT's trending
library: the split of least description length (a new group costs bits, so noise alone does
not open one). Each group boundary is a change point, a regression or a progression by the
metric's direction, reported with the host facts and tool versions that changed at that run.

The search is pure (`segments`); reading the archive (`load_history`) and drawing
(`render_html`) are apart from it.
"""

import dataclasses
import datetime
import math
from collections import defaultdict

from vpnbench.errors import UserError
from vpnbench.figure_scale import apply_scale_rule
from vpnbench.records import Cell, HostFacts, Run
from vpnbench.stats import headline_kind

# Host facts that describe the machine and its software, compared between runs. Interface
# names, qdisc handles and firewall sizes change with every run and say nothing of an upgrade.
STABLE_FACTS = ("cpu_model", "cpu_count", "kernel", "os", "governor", "turbo", "smt", "irqbalance",
                "versions", "mitigations", "crypto_drivers", "cpu_crypto_flags", "congestion_control")
RUN_FACTS = ("vpnbench", "kernel", "machine")


@dataclasses.dataclass(frozen=True)
class SeriesKey:
    """One line of a trend: what is compared across runs."""

    testbed: str
    technique: str
    impairment: str
    measurement: str  # the measurement's label
    metric: str

    @property
    def title(self) -> str:
        return f"{self.testbed} · {self.measurement} · {self.impairment} · {self.metric}"


@dataclasses.dataclass
class RunPoint:
    """One run's samples of one series (its repetitions), in time order."""

    run_id: str
    started_at: str
    values: list[float]

    @property
    def mean(self) -> float:
        return math.fsum(self.values) / len(self.values)


@dataclasses.dataclass(frozen=True)
class Segment:
    """Runs first..last (indexes into the series) that share one mean."""

    first: int
    last: int
    mean: float
    stdev: float


@dataclasses.dataclass
class ChangePoint:
    """Where a series moved to a new mean: at the run `run_id`, from `before` to `after`."""

    key: SeriesKey
    run_id: str
    started_at: str
    before: float
    after: float
    kind: str  # "regression" or "progression"
    changed: list[str]  # the facts that differ from the run before: "server versions.openvpn: 2.6.3 -> 2.6.9"

    @property
    def relative(self) -> float:
        return self.after / self.before - 1 if self.before else math.inf


@dataclasses.dataclass
class Trend:
    key: SeriesKey
    points: list[RunPoint]
    segments: list[Segment]
    changes: list[ChangePoint]


@dataclasses.dataclass
class History:
    """What the archive holds of one campaign: its runs in time order, their cells and facts."""

    campaign: str
    runs: list[Run]
    cells: dict[str, list[Cell]]  # run id -> its cells
    facts: dict[str, dict[str, str]]  # run id -> flattened stable facts of every host


def segments(runs: list[list[float]]) -> list[Segment]:
    """The runs (each a list of samples) split into groups of one mean, by jumpavg's minimum
    description length. One segment means no change."""
    from jumpavg import classify  # deferred: only `trend` needs it

    if not runs:
        return []
    groups = classify([list(values) for values in runs])
    found, first = [], 0
    for group in groups:
        last = first + len(group.run_list) - 1
        found.append(Segment(first, last, group.stats.avg, group.stats.stdev))
        first = last + 1
    return found


def higher_is_better(metric: str) -> bool:
    """Rates, MOS and MTU are better higher; latencies, times and shares (CPU, loss) lower."""
    return headline_kind(metric) == "ratio"


def change_kind(before: float, after: float, metric: str) -> str:
    return "progression" if (after > before) == higher_is_better(metric) else "regression"


def flatten(prefix: str, value, into: dict[str, str]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            flatten(f"{prefix}.{key}" if prefix else str(key), inner, into)
    elif value is not None:
        into[prefix] = str(value)


def run_facts(run: Run, host_facts: list[HostFacts]) -> dict[str, str]:
    """The run's stable facts, flattened: 'vpnbench', 'server versions.wireguard_go', ..."""
    facts: dict[str, str] = {}
    for name in RUN_FACTS:
        flatten(name, run.environment.get(name), facts)
    for host in host_facts:
        for name in STABLE_FACTS:
            flatten(f"{host.host} {name}", host.facts.get(name), facts)
    return facts


def changed_facts(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return [f"{name}: {before.get(name, 'absent')} -> {after.get(name, 'absent')}"
            for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]


def testbed_name(run: Run) -> str:
    """A worker's testbed names itself; a single machine's runs are its host name and testbed kind."""
    testbed = run.environment.get("testbed") or {}
    return testbed.get("name") or f"{run.environment.get('hostname', '?')}/{testbed.get('kind', 'local')}"


def headline_metrics(kind: str, metrics: dict) -> tuple[str, ...]:
    """What a measurement kind is judged by (its declared headline), else its first rate or time."""
    from vpnbench.measure import MEASUREMENTS

    declared = MEASUREMENTS[kind].headline if kind in MEASUREMENTS else None
    if declared:
        return declared.metrics
    return tuple(sorted(m for m in metrics if m.endswith(("_bps", "_ms")))[:1])


def series_of(history: History) -> dict[SeriesKey, list[RunPoint]]:
    series: dict[SeriesKey, dict[str, list[float]]] = defaultdict(dict)
    for run in history.runs:
        testbed = testbed_name(run)
        for cell in history.cells.get(run.run_id, []):
            if not cell.ok:
                continue
            for metric in headline_metrics(cell.measurement, cell.metrics):
                value = cell.metrics.get(metric)
                if isinstance(value, (int, float)) and math.isfinite(value):
                    key = SeriesKey(testbed, cell.technique, cell.impairment, cell.measurement_label, metric)
                    series[key].setdefault(run.run_id, []).append(float(value))
    started = {run.run_id: run.started_at for run in history.runs}
    return {key: [RunPoint(run_id, started[run_id], values) for run_id, values in by_run.items()]
            for key, by_run in series.items()}


def trends(history: History) -> list[Trend]:
    """Every series of the campaign with its segments and change points."""
    found = []
    for key, points in sorted(series_of(history).items(), key=lambda item: dataclasses.astuple(item[0])):
        parts = segments([point.values for point in points])
        changes = [ChangePoint(key, points[seg.first].run_id, points[seg.first].started_at, prev.mean, seg.mean,
                               change_kind(prev.mean, seg.mean, key.metric),
                               changed_facts(history.facts.get(points[prev.last].run_id, {}),
                                             history.facts.get(points[seg.first].run_id, {})))
                   for prev, seg in zip(parts, parts[1:])]
        found.append(Trend(key, points, parts, changes))
    return found


def load_history(store, campaign: str) -> History:
    """The campaign's runs, oldest first, with their cells and facts."""
    runs = sorted((run for run in store.runs() if run.campaign == campaign), key=lambda run: run.started_at)
    if not runs:
        names = sorted({run.campaign for run in store.runs()})
        raise UserError(f"--campaign: no run of {campaign!r} in this database; it holds: "
                        + (", ".join(names) or "no runs"))
    return History(campaign, runs, {run.run_id: store.cells(run.run_id) for run in runs},
                   {run.run_id: run_facts(run, store.host_facts(run.run_id)) for run in runs})


def fmt_value(metric: str, value: float) -> str:
    if metric.endswith("_bps"):
        return f"{value / 1e6:.4g} Mbit/s"
    return f"{value:.4g}"


def summary_rows(found: list[Trend]) -> list[list[str]]:
    """One row per series: runs, the latest mean, and its change points."""
    rows = []
    for trend in found:
        changes = "; ".join(f"{c.kind} at {c.started_at[:16]} ({c.relative:+.1%})"
                            + (f": {', '.join(c.changed[:3])}" if c.changed else "") for c in trend.changes)
        rows.append([trend.key.testbed, trend.key.technique, trend.key.measurement, trend.key.impairment,
                     trend.key.metric, str(len(trend.points)), fmt_value(trend.key.metric, trend.points[-1].mean),
                     changes or "none"])
    return rows


def _when(iso: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(iso)


def trend_figure(title: str, group: list[Trend]):
    """One metric's runs over time, a line per technique, each segment's mean drawn flat and
    each change point marked (red regression, green progression); the y axis by the scale rule
    of every figure (a 0.8 Gbit/s tunnel beside a 30 Gbit/s baseline is not drawn flat on the axis)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.2))
    scale = 1e-6 if group[0].key.metric.endswith("_bps") else 1.0
    for trend in group:
        times = [_when(point.started_at) for point in trend.points]
        line, = ax.plot(times, [point.mean * scale for point in trend.points], marker=".", linewidth=0.8,
                        label=trend.key.technique)
        for seg in trend.segments:
            ax.hlines(seg.mean * scale, times[seg.first], times[seg.last], colors=line.get_color(), linewidth=2.5,
                      alpha=0.5)
        for change in trend.changes:
            ax.axvline(_when(change.started_at), color="tab:red" if change.kind == "regression" else "tab:green",
                       linestyle="--", linewidth=1)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(group[0].key.metric.removesuffix("_bps") + (" (Mbit/s)" if scale != 1.0 else ""))
    apply_scale_rule(ax, [point.mean for trend in group for point in trend.points])
    ax.legend(fontsize=7, loc="best")
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def figure_svg(title: str, group: list[Trend]) -> str:
    import io

    from matplotlib import pyplot as plt

    fig = trend_figure(title, group)
    out = io.StringIO()
    fig.savefig(out, format="svg")
    plt.close(fig)
    return out.getvalue()[out.getvalue().index("<svg"):]


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ campaign }}: trend</title>
<style>body{font-family:sans-serif;max-width:72rem;margin:1rem auto;padding:0 1rem}
table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #ccc;padding:.2rem .4rem;text-align:left}
.regression{color:#b00}.progression{color:#070}svg{max-width:100%;height:auto}</style></head>
<body><h1>{{ campaign }}: {{ runs }} runs, {{ first }} to {{ last }}</h1>
<h2>Change points</h2>
{% if changes %}<table><tr><th>run</th><th>testbed</th><th>technique</th><th>measurement</th><th>impairment</th>
<th>metric</th><th>change</th><th>what changed at that run</th></tr>
{% for c in changes %}<tr class="{{ c.kind }}"><td>{{ c.started_at[:16] }} ({{ c.run_id }})</td><td>{{ c.key.testbed }}</td>
<td>{{ c.key.technique }}</td><td>{{ c.key.measurement }}</td><td>{{ c.key.impairment }}</td><td>{{ c.key.metric }}</td>
<td>{{ c.kind }} {{ "%+.1f"|format(c.relative * 100) }} %</td><td>{{ c.changed|join("; ") or "no recorded fact" }}</td></tr>
{% endfor %}</table>{% else %}<p>No change point: every series is one group.</p>{% endif %}
<h2>Figures</h2>{% for title, svg in figures %}<section><h3>{{ title }}</h3>{{ svg|safe }}</section>{% endfor %}
</body></html>"""


def render_html(history: History, found: list[Trend]) -> str:
    import jinja2

    by_figure: dict[tuple, list[Trend]] = defaultdict(list)
    for trend in found:
        key = trend.key
        by_figure[(key.testbed, key.measurement, key.impairment, key.metric)].append(trend)
    figures = [(" · ".join(key), figure_svg(" · ".join(key), group)) for key, group in by_figure.items()]
    changes = sorted((change for trend in found for change in trend.changes), key=lambda c: c.started_at)
    return jinja2.Environment(autoescape=True).from_string(PAGE).render(
        campaign=history.campaign, runs=len(history.runs), first=history.runs[0].started_at[:10],
        last=history.runs[-1].started_at[:10], changes=changes, figures=figures)
