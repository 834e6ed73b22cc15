"""The figures the studies drew, chosen by the shape of the data, as inline SVG.

- a sweep entry of the campaign ([[impairment]] with a range): a line per technique against
  the swept value on a numeric axis, with its 95 % CI band; never a line across two entries;
- named networks (entries that are not sweeps): grouped bars, a bar per technique;
- two swept fields in one entry: a heatmap per technique;
- a measurement or technique parameter swept across labels (streams, cores, MTU): lines;
- UDP sweeps: received vs offered, the knee marked; ping: RTT CDFs; long cells: per-second
  time series with the run's events marked; CPU per core and user/system/softirq bars.

Every figure comes back as a `Figure` with its caption, its SVG and `meta` (what was drawn:
the series, the x values), so tests can check the drawing without parsing SVG.
"""

import dataclasses
import io
import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: figures are rendered to SVG text
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

from vpnbench.answers.nat_matrix import nat_matrix, nat_types  # noqa: E402
from vpnbench.foundation.errors import VpnbenchError  # noqa: E402
from vpnbench.foundation.figure_scale import apply_scale_rule, wants_log  # noqa: E402
from vpnbench.measure import MEASUREMENTS  # noqa: E402
from vpnbench.measure.base import Headline, Measurement  # noqa: E402
from vpnbench.measure.gen import OWD_STATS  # noqa: E402

# Twenty distinct series colours, tab10's ten first (every figure of ten series or fewer as before),
# then their light twins: the default ten repeated from the eleventh series, and the mesh preset's
# thirteen techniques drew n2n in the baseline's blue, IPsec in Debian wireguard-go's orange.
SERIES_COLOURS = [matplotlib.colormaps["tab20"](i) for i in (*range(0, 20, 2), *range(1, 20, 2))]
plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                     "axes.spines.right": False, "figure.dpi": 96, "svg.hashsalt": "vpnbench",
                     "axes.prop_cycle": matplotlib.cycler(color=SERIES_COLOURS)})

# How a swept impairment field is drawn on the x axis: (axis title, scale).
SWEEP_AXES = {"delay_us": ("delay (ms)", 1e-3), "jitter_us": ("jitter (ms)", 1e-3), "loss_pct": ("loss (%)", 1),
              "duplicate_pct": ("duplication (%)", 1), "reorder_pct": ("reordering (%)", 1),
              "corrupt_pct": ("corruption (%)", 1), "rate_bps": ("rate (Mbit/s)", 1e-6)}
LONG_CELL_S = 20.0  # cells at least this long get a time series figure
MAX_TIMESERIES = 12  # per measurement, unless every cell's was asked for
MAX_CDFS = 4  # RTT CDF figures per measurement (one per impairment)
MAX_HEATMAPS = 8
# Per-second series drawn in a time series figure: (name, axis, scale).
TIME_SERIES = (("throughput_bps", "Mbit/s", 1e-6), ("cpu_pct", "CPU %", 1.0), ("proc_rss_bytes", "RSS (MiB)", 2 ** -20))


@dataclasses.dataclass
class Figure:
    caption: str
    svg: str
    meta: dict
    name: str = ""  # file name stem when figures are written to a directory


@dataclasses.dataclass
class Entry:
    """One [[impairment]] entry of the campaign: the impairment labels it expanded to."""

    number: int
    title: str
    labels: list[str]

    @property
    def swept(self) -> bool:
        return len(self.labels) > 1


class Canvas:
    """Turns matplotlib figures into SVG text (and, for papers, SVG and PNG files in a directory)."""

    def __init__(self, directory: Path | None = None):
        self.directory = directory
        self.names: set[str] = set()

    def finish(self, fig, caption: str, meta: dict) -> Figure:
        buffer = io.StringIO()
        # No time stamp in the SVG: the same data draws the same figure.
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
        name = self._name(caption)
        if self.directory is not None:
            (self.directory / f"{name}.svg").write_text(buffer.getvalue())
            fig.savefig(self.directory / f"{name}.png", format="png", dpi=150, bbox_inches="tight")
        plt.close(fig)
        text = buffer.getvalue()
        return Figure(caption, text[text.index("<svg"):], meta, name)  # no XML prolog: inlined in HTML

    def _name(self, caption: str) -> str:
        stem = re.sub(r"[^a-z0-9]+", "-", caption.lower()).strip("-")[:80] or "figure"
        name, n = stem, 2
        while name in self.names:
            name, n = f"{stem}-{n}", n + 1
        self.names.add(name)
        return name


class NoData:
    """Stands in for the store where a report is rendered from records alone: no trials, series, events."""

    def trials(self, cell_id):
        return []

    def series(self, cell_id, name=None):
        return []

    def events(self, run_id, cell_id=None):
        return []

    def raw_outputs(self, cell_id):
        return {}


def headline(kind: str, metrics: set[str]) -> Headline | None:
    """What the kind declares it is judged by; for a kind that declares nothing, its first
    rate or time metric."""
    declared = MEASUREMENTS[kind].headline if kind in MEASUREMENTS else None
    if declared:
        return declared
    for metric in sorted(metrics):
        if metric.endswith("_bps"):
            return Headline((metric,), metric.removesuffix("_bps") + " (Mbit/s)", 1e-6, True)
        if metric.endswith("_ms"):
            return Headline((metric,), metric.removesuffix("_ms") + " (ms)", 1.0, False)
    return None


def metric_name(pick: Headline, metric: str) -> str:
    return dict(zip(pick.metrics, pick.names)).get(metric, metric)


# --- which impairments belong together --------------------------------------------------

def impairment_entries(spec: dict, labels: list[str]) -> list[Entry]:
    """The campaign's [[impairment]] entries expanded again, so a sweep's points are known as
    one; labels no entry claims (the default 'none', a changed preset) are one entry each."""
    from vpnbench.impair.model import ImpairmentParams, expand_impairment

    entries, claimed = [], set()
    for number, raw in enumerate(spec.get("impairment") or [], start=1):
        try:
            expanded = [i.label for i in expand_impairment(ImpairmentParams(**raw))]
        except (ValueError, TypeError, VpnbenchError):
            continue  # an entry this version cannot read (pydantic's errors are ValueErrors): its cells stand alone
        mine = [label for label in expanded if label in labels and label not in claimed]
        if mine:
            title = raw.get("label") or raw.get("profile") or raw.get("netem") or " / ".join(
                f"{k} {raw[k]}" for k in ("egress", "ingress") if raw.get(k)) or f"impairment {number}"
            entries.append(Entry(number, str(title), mine))
            claimed.update(mine)
    for label in labels:
        if label not in claimed:
            entries.append(Entry(len(entries) + 1, label, [label]))
    return entries


def varying_fields(cells: list) -> dict[str, dict[str, float]]:
    """{field: {impairment label: value}} for the netem fields that differ between the cells'
    impairments (an asymmetric sweep varies one direction: the larger of the two is taken)."""
    specs = {}
    for cell in cells:
        params = cell.impairment_params
        specs[cell.impairment] = {(d, f): v for d in ("egress_spec", "ingress_spec")
                                  for f, v in (params.get(d) or {}).items()}
    keys = {key for spec in specs.values() for key in spec}
    fields = {f for (d, f) in keys if len({_hashable(spec.get((d, f))) for spec in specs.values()}) > 1}
    out = {}
    for field in sorted(fields):
        if field not in SWEEP_AXES:
            return {}  # something non-numeric varies too: not an axis
        scale = SWEEP_AXES[field][1]
        out[field] = {label: max(spec.get(("egress_spec", field)) or 0, spec.get(("ingress_spec", field)) or 0) * scale
                      for label, spec in specs.items()}
    return out


def sweep_axis(cells: list) -> tuple[str, dict[str, float]] | None:
    """When the impairments of these cells differ in exactly one numeric field: its axis title
    and the value per impairment label; otherwise None."""
    fields = varying_fields(cells)
    if len(fields) != 1:
        return None
    field, values = next(iter(fields.items()))
    return SWEEP_AXES[field][0], values


def scaling_axis(params_by_name: dict[str, dict]) -> tuple[str, dict[str, float]] | None:
    """When the parameter sets differ in exactly one numeric parameter (streams, cores, mtu):
    its name and the value per name; None otherwise or with fewer than 2 names."""
    if len(params_by_name) < 2:
        return None
    keys = {k for params in params_by_name.values() for k in params}
    varying = [k for k in sorted(keys) if len({_hashable(p.get(k)) for p in params_by_name.values()}) > 1]
    if len(varying) != 1:
        return None
    values = {name: p.get(varying[0]) for name, p in params_by_name.items()}
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()):
        return None
    return varying[0], {name: float(v) for name, v in values.items()}


def scaling_groups(params_by_name: dict[str, dict]) -> list[tuple[str, dict[str, dict]]]:
    """The names split so that in each group one numeric parameter varies: all of them when only
    one does; with several swept axes (S3's cores x MTU x streams), one group per axis and values
    of the others, named by those values ("streams=4 mtu=1500")."""
    if scaling_axis(params_by_name) is not None:
        return [("", params_by_name)]
    keys = sorted({k for params in params_by_name.values() for k in params})
    varying = [k for k in keys if len({_hashable(p.get(k)) for p in params_by_name.values()}) > 1]
    numeric = [k for k in varying if all(isinstance(p.get(k), (int, float)) and not isinstance(p.get(k), bool)
                                         for p in params_by_name.values())]
    groups = []
    for axis in numeric:
        others = [k for k in varying if k != axis]
        split: dict[tuple, dict[str, dict]] = {}
        for name, params in params_by_name.items():
            split.setdefault(tuple(_hashable(params.get(k)) for k in others), {})[name] = params
        groups += [(" ".join(f"{k}={v}" for k, v in zip(others, fixed)), group)
                   for fixed, group in split.items() if len(group) > 1]
    return groups


def _hashable(value):
    return repr(value) if isinstance(value, (list, dict)) else value


# --- drawings ----------------------------------------------------------------------------

def lines_with_bands(canvas: Canvas, rows: pd.DataFrame, xs: dict[str, float], line_of: str, x_of: str,
                     xlabel: str, ylabel: str, scale: float, log: bool, title: str, caption: str,
                     meta: dict) -> Figure:
    """A line per `line_of` value through the summary rows at x = xs[row[x_of]], with the 95 % CI
    (Student's t, analysis.summarize's ci95) as a band."""
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    drawn, bands = {}, []
    for name, group in rows.groupby(line_of, sort=False):
        group = group[group[x_of].isin(xs)].assign(x=lambda g: g[x_of].map(xs)).sort_values("x")
        group = group.dropna(subset=["mean"])
        if group.empty:
            continue
        mean, ci = group["mean"] * scale, group["ci95"].fillna(0) * scale
        (line,) = ax.plot(group["x"], mean, marker="o", ms=3, label=name)
        if (ci > 0).any():
            ax.fill_between(group["x"], mean - ci, mean + ci, alpha=0.2, color=line.get_color(), lw=0)
            bands.append(name)
        drawn[name] = list(zip(group["x"].tolist(), mean.tolist()))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    logarithmic = apply_scale_rule(ax, rows["mean"].tolist(), allowed=log)
    ax.set_title(title, loc="left")
    legend_beside(ax)
    return canvas.finish(fig, caption, {**meta, "type": "lines", "lines": drawn, "bands": bands, "log": logarithmic})


FIGURE_MAX_WIDTH_IN = 10.0  # with the legend beside it, about 1 000 px: within the report's 72em column at 1400 px


def legend_beside(ax, entries: int | None = None, fontsize: int = 8) -> None:
    """The legend right of the axes, outside them (bbox_inches="tight" keeps it in the SVG): it
    never covers a bar or a line, and ten techniques stay one readable column."""
    handles, labels = ax.get_legend_handles_labels()
    if not labels:
        return
    count = entries or len(labels)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=fontsize,
              ncol=1 if count <= 14 else 2, borderaxespad=0.0)


def grouped_bars(canvas: Canvas, rows: pd.DataFrame, groups: list[str], ylabel: str, scale: float, title: str,
                 caption: str, meta: dict, log: bool = False) -> Figure:
    """A group per impairment (or one group), a bar per technique, error bars = 95 % CI. With `log`
    allowed, the scale rule (figure_scale) may make the y axis log, counting each error bar's top:
    on a linear axis a tunnel at 1/30 of a 12 Gbit/s baseline is a bar too low to see. Each technique's
    bars carry the ids `bar-<technique>-<group>` (numbers) in the SVG, so a browser can measure them."""
    techniques = list(dict.fromkeys(rows["technique"]))
    # one group: each bar carries its technique's name below it, about half an inch at 8 pt slanted
    per_bar = 0.22 if len(groups) > 1 else 0.5
    fig, ax = plt.subplots(figsize=(min(FIGURE_MAX_WIDTH_IN - (2.0 if len(groups) > 1 else 0.0),
                                        max(4.0, per_bar * len(techniques) * len(groups) + 1.5)), 3.0))
    width = 0.8 / max(1, len(techniques))
    ax.set_ylabel(ylabel)
    logarithmic = apply_scale_rule(ax, rows["mean"].tolist(), (rows["mean"] + rows["ci95"].fillna(0)).tolist(),
                                   allowed=log)
    missing: list[tuple[str, str]] = []  # (technique, group) with no value
    means: dict[str, list[float]] = {}
    for i, technique in enumerate(techniques):
        mine = rows[rows["technique"] == technique].set_index("impairment").reindex(groups)
        means[technique] = (mine["mean"] * scale).tolist()
        positions = [g + (i - (len(techniques) - 1) / 2) * width for g in range(len(groups))]
        ci = mine["ci95"].fillna(0) * scale
        # On a log axis an error bar reaching 0 or below has no place: it is clipped at the bar's half.
        low = np.minimum(ci, mine["mean"] * scale / 2) if logarithmic else ci
        # n = 1 has no interval: no error bar rather than a cap at the bar's top
        errors = [low, ci] if bool((ci > 0).any()) else None
        bars = ax.bar(positions, mine["mean"] * scale, width, yerr=errors, capsize=2, label=technique)
        for k, patch in enumerate(bars.patches):
            patch.set_gid(f"bar-{i}-{k}")
        for k, (position, mean) in enumerate(zip(positions, mine["mean"])):
            if not pd.isna(mean):
                continue
            # An empty slot would read as 0 (or as a bar too small to see): say there is no value. A
            # censored percentile has none (a set-up not up within its timeout), nor a failed cell.
            missing.append((technique, groups[k]))
            if len(groups) == 1:
                ax.annotate("no value", (position, 0), xycoords=("data", "axes fraction"), xytext=(0, 3),
                            textcoords="offset points", rotation=90, ha="center", va="bottom", fontsize=7,
                            color="#666666")
            else:  # a bar's width is too narrow for words: a cross in its colour at the axis
                ax.plot([position], [0.03], linestyle="none", marker="x", markersize=5, color=bars.patches[k].get_facecolor(),
                        transform=ax.get_xaxis_transform(), gid=f"no-value-{i}-{k}")
    if len(groups) > 1:
        ax.set_xticks(range(len(groups)), groups, rotation=15 if len(groups) > 3 else 0, fontsize=8)
        legend_beside(ax)
    else:
        slanted = len(techniques) > 4
        ax.set_xticks([(i - (len(techniques) - 1) / 2) * width for i in range(len(techniques))], techniques,
                      rotation=30 if slanted else 0, ha="right" if slanted else "center", fontsize=8)
    ax.set_title(title, loc="left")
    figure = canvas.finish(fig, caption, {**meta, "type": "bars", "groups": groups, "bars": techniques,
                                          "log": logarithmic, "no_value": missing, "means": means})
    if missing and len(groups) > 1:  # after finish(): the figure's name stays its caption's
        figure.caption += "; ×: no value there (failed, or a percentile beyond its timeout: the table says which)"
    return figure


def heatmap(canvas: Canvas, points: dict[tuple[float, float], float], xlabel: str, ylabel: str, zlabel: str,
            title: str, caption: str, meta: dict) -> Figure:
    """Values over two swept axes: {(x, y): value}, a cell per pair, the value as colour."""
    xv, yv = sorted({x for x, _ in points}), sorted({y for _, y in points})
    grid = np.full((len(yv), len(xv)), np.nan)
    for (x, y), value in points.items():
        grid[yv.index(y), xv.index(x)] = value
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    # the colour is this figure's value axis: the scale rule applies to it as to a y axis
    logarithmic = wants_log(list(points.values()))
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis", norm=LogNorm() if logarithmic else None)
    ax.set_xticks(range(len(xv)), [f"{v:g}" for v in xv], fontsize=7)
    ax.set_yticks(range(len(yv)), [f"{v:g}" for v in yv], fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.colorbar(image, ax=ax, label=zlabel + (" (log scale)" if logarithmic else ""))
    ax.set_title(title, loc="left")
    return canvas.finish(fig, caption, {**meta, "type": "heatmap", "x": xv, "y": yv, "log": logarithmic})


def received_vs_offered(canvas: Canvas, curves: dict[str, list[tuple[float, float]]], knees: dict[str, float],
                        title: str, caption: str, meta: dict) -> Figure:
    """Received rate against the offered rate, a line per technique, the knee (the highest
    offered rate still delivered) marked; the diagonal is 'everything offered arrives'."""
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    top = max((x for points in curves.values() for x, _ in points), default=1.0) * 1e-6
    ax.plot([0, top], [0, top], ls=":", color="#999", lw=1, label="offered")
    for technique, points in curves.items():
        points = sorted(points)
        (line,) = ax.plot([x * 1e-6 for x, _ in points], [y * 1e-6 for _, y in points], marker="o", ms=3,
                          label=technique)
        if technique in knees:
            knee = knees[technique] * 1e-6
            ax.axvline(knee, ls="--", lw=1, color=line.get_color())
            ax.annotate(f"knee {knee:.0f}", (knee, 0), xytext=(2, 4), textcoords="offset points", fontsize=7,
                        color=line.get_color(), rotation=90)
    ax.set_xlabel("offered (Mbit/s)")
    ax.set_ylabel("received (Mbit/s)")
    apply_scale_rule(ax, [y for points in curves.values() for _, y in points])
    ax.set_title(title, loc="left")
    legend_beside(ax)
    return canvas.finish(fig, caption, {**meta, "type": "received_vs_offered", "lines": list(curves),
                                        "knees": knees})


def cdf(canvas: Canvas, samples: dict[str, list[float]], xlabel: str, title: str, caption: str,
        meta: dict) -> Figure:
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    for technique, values in samples.items():
        data = np.sort(np.asarray(values, dtype=float))
        ax.step(data, np.arange(1, len(data) + 1) / len(data), where="post", label=technique)
    ax.set_xlabel(xlabel)
    apply_scale_rule(ax, [float(np.median(values)) for values in samples.values() if len(values)], axis="x")
    ax.set_ylabel("share of packets")
    ax.set_ylim(0, 1.02)
    ax.set_title(title, loc="left")
    legend_beside(ax)
    return canvas.finish(fig, caption, {**meta, "type": "cdf", "lines": list(samples)})


def time_series(canvas: Canvas, series: dict[str, dict[str, list[tuple[float, float]]]], events: list,
                title: str, caption: str, meta: dict) -> Figure:
    """One panel per quantity (throughput, CPU per host, RSS), per-second points, events as
    vertical lines named by kind."""
    panels = [(name, axis, scale) for name, axis, scale in TIME_SERIES if series.get(name)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(6.0, 1.6 * len(panels) + 0.6), sharex=True, squeeze=False)
    for ax, (name, axis, scale) in zip(axes[:, 0], panels):
        for host, points in series[name].items():
            ax.plot([t for t, _ in points], [v * scale for _, v in points], lw=1, label=host or name)
        for event in events:
            if event.t is not None:
                ax.axvline(event.t, color="#b3261e", lw=0.8, ls="--")
        ax.set_ylabel(axis)
        apply_scale_rule(ax, [_mean([v for _, v in points]) for points in series[name].values()])
        if len(series[name]) > 1:
            ax.legend(frameon=False, fontsize=6)
    for event in events:
        if event.t is not None:
            axes[0, 0].annotate(event.kind, (event.t, 1), xycoords=("data", "axes fraction"), fontsize=6,
                                color="#b3261e", rotation=90, va="top")
    axes[-1, 0].set_xlabel("seconds")
    axes[0, 0].set_title(title, loc="left")
    return canvas.finish(fig, caption, {**meta, "type": "timeseries", "panels": [p[0] for p in panels],
                                        "events": [e.kind for e in events]})


def host_facts(cells: list) -> dict[tuple[str, str], list[dict]]:
    """(technique, host) -> the monitor's summary of that host in every successful cell."""
    data: dict[tuple[str, str], list[dict]] = {}
    for cell in cells:
        if cell.ok:
            for host in ("client", "server"):
                if cell.hosts.get(host):
                    data.setdefault((cell.technique, host), []).append(cell.hosts[host])
    return data


def cpu_per_core(canvas: Canvas, cells: list, title: str, caption: str) -> Figure | None:
    """Mean busy share of every core a host owns (its pinned cores, or all), per technique."""
    data = {key: rows for key, rows in host_facts(cells).items() if rows[0].get("cpu_per_core_pct")}
    if not data:
        return None
    by_core: dict[tuple[str, str], dict[int, list[float]]] = {}
    for key, rows in data.items():
        for facts in rows:
            cores = facts.get("cores") or list(range(len(facts["cpu_per_core_pct"])))
            for core, busy in zip(cores, facts["cpu_per_core_pct"]):
                by_core.setdefault(key, {}).setdefault(core, []).append(busy)
    all_cores = sorted({core for cores in by_core.values() for core in cores})
    keys = list(by_core)
    fig, ax = plt.subplots(figsize=(min(FIGURE_MAX_WIDTH_IN - 2.0, max(4.0, 0.9 * len(keys) + 1.5)), 3.0))
    width = 0.8 / len(all_cores)
    for i, core in enumerate(all_cores):
        positions = [k + (i - (len(all_cores) - 1) / 2) * width for k in range(len(keys))]
        ax.bar(positions, [_mean(by_core[key].get(core, [])) for key in keys], width, label=f"CPU {core}")
    ax.set_xticks(range(len(keys)), [f"{t}\n{h}" for t, h in keys], fontsize=7)
    ax.set_ylabel("busy (%)")
    busy = [_mean(cores.get(core, [])) for cores in by_core.values() for core in all_cores]
    if apply_scale_rule(ax, busy):
        ax.set_ylim(top=100)
    else:
        ax.set_ylim(0, 100)
    ax.set_title(title, loc="left")
    legend_beside(ax)
    return canvas.finish(fig, caption, {"type": "cpu_per_core"})


def cpu_kinds(canvas: Canvas, cells: list, title: str, caption: str) -> Figure | None:
    """User, system and softirq time stacked per technique and host: the kernel's share of the
    work (in-kernel data paths show no process of their own)."""
    kinds = (("cpu_user_pct", "user"), ("cpu_system_pct", "system"), ("cpu_softirq_pct", "softirq"))
    data = {key: rows for key, rows in host_facts(cells).items() if "cpu_system_pct" in rows[0]}
    if not data:
        return None
    keys = list(data)
    fig, ax = plt.subplots(figsize=(min(FIGURE_MAX_WIDTH_IN - 2.0, max(4.0, 0.9 * len(keys) + 1.5)), 3.0))
    bottom = [0.0] * len(keys)
    for field, name in kinds:
        heights = [_mean([facts.get(field) or 0 for facts in data[key]]) for key in keys]
        ax.bar(range(len(keys)), heights, 0.6, bottom=bottom, label=name)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(range(len(keys)), [f"{t}\n{h}" for t, h in keys], fontsize=7)
    ax.set_ylabel("CPU (% of the host's cores)")
    apply_scale_rule(ax, bottom)  # the stacks' totals
    ax.set_title(title, loc="left")
    legend_beside(ax)
    return canvas.finish(fig, caption, {"type": "cpu_kinds"})


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


# --- what to draw for one measurement ------------------------------------------------------

@dataclasses.dataclass
class Drawing:
    """Everything the figures of one measurement label are drawn from."""

    label: str
    kind: str
    summary: pd.DataFrame  # analysis.summarize rows of this label
    cells: list  # records.Cell of this label
    entries: list[Entry]
    data: object  # trials / series / events: the Store, or NoData
    canvas: Canvas
    timeseries: bool = False  # every cell's time series, not only long cells'


def figures_for(d: Drawing) -> list[Figure]:
    """The figures its kind declares (Measurement.figures), in that order; a kind this version does
    not know (a results file from elsewhere) gets the figures every kind has."""
    declared = MEASUREMENTS[d.kind].figures if d.kind in MEASUREMENTS else Measurement.figures
    return [figure for name in declared for figure in FIGURES[name](d)]


def headline_figures(d: Drawing) -> list[Figure]:
    """Per sweep entry lines, named networks as bars, a technique parameter's scaling."""
    pick = headline(d.kind, set(d.summary["metric"]))
    return impairment_figures(d, pick) if pick else []


def single_impairment(draw):
    """A figure of one impairment's cells only: with several, the bars would mix them."""
    return lambda d: draw(d) if len({c.impairment for c in d.cells}) == 1 else []


def cpu_figure(draw, caption: str):
    def figures(d: Drawing) -> list[Figure]:
        figure = draw(d.canvas, d.cells, f"{d.label}: {caption.split(',')[0]}", f"{d.label}: {caption}")
        return [figure] if figure else []
    return single_impairment(figures)


def host_cpu_bars(d: Drawing) -> list[Figure]:
    """Client and server CPU per technique: a group per host, a bar per technique (95 % CI)."""
    rows = d.summary[d.summary["metric"].isin(["client_cpu_pct", "server_cpu_pct"])]
    if rows.empty:
        return []
    rows = rows.assign(impairment=rows["metric"].str.removesuffix("_cpu_pct"))
    groups = list(dict.fromkeys(rows["impairment"]))
    return [grouped_bars(d.canvas, rows, groups, "CPU (% of the host's cores)", 1.0, f"{d.label}: CPU",
                         f"{d.label}: CPU of client and server per technique (mean, error bars: 95 % CI)",
                         {"metric": "cpu_pct"})]


def impairment_figures(d: Drawing, pick: Headline) -> list[Figure]:
    figures, named = [], []
    for entry in d.entries:
        cells = [c for c in d.cells if c.impairment in entry.labels]
        if not cells:
            continue
        fields = varying_fields(cells) if entry.swept else {}
        if len(fields) == 1:
            figures += _sweep_lines(d, pick, entry, cells)
        else:
            named += entry.labels  # a named network, or a sweep with no numeric axis: bars
    if named:
        rows = d.summary[d.summary["impairment"].isin(named)]
        groups = [label for label in named if label in set(rows["impairment"])]
        for metric in pick.metrics:
            what = metric_name(pick, metric)
            caption = (f"{d.label}: {what} per technique" + (" and network" if len(groups) > 1 else "")
                       + " (mean, error bars: 95 % CI)")
            figures.append(grouped_bars(d.canvas, rows[rows["metric"] == metric], groups, pick.axis, pick.scale,
                                        f"{d.label}: {what}", caption, {"metric": metric}, log=pick.log))
    return figures + scaling_figures(d, pick)


def _sweep_lines(d: Drawing, pick: Headline, entry: Entry, cells: list) -> list[Figure]:
    axis, xs = sweep_axis(cells)
    rows = d.summary[d.summary["impairment"].isin(entry.labels)]
    return [lines_with_bands(d.canvas, rows[rows["metric"] == metric], xs, "technique", "impairment", axis,
                             pick.axis, pick.scale, pick.log, f"{d.label}: {entry.title}",
                             f"{d.label}: {metric_name(pick, metric)} against {axis} "
                             f"(impairment entry {entry.number}, band: 95 % CI)",
                             {"metric": metric, "entry": entry.number})
            for metric in pick.metrics]


def scaling_figures(d: Drawing, pick: Headline) -> list[Figure]:
    """A technique parameter swept across techniques of one kind (cores, MTU, tunnels): a line per kind."""
    figures = []
    by_kind: dict[str, dict[str, dict]] = {}
    for cell in d.cells:
        # tunnels = 1 is left out of stored settings (TechniqueParams.settings): put back, it is the sweep's first point
        params = {"tunnels": 1, **{k: v for k, v in cell.technique_params.items()
                                    if k not in ("backend", "backend_asked", "label")}}
        by_kind.setdefault(params.get("kind", ""), {})[cell.technique] = params
    impairment = d.cells[0].impairment
    for kind, params in by_kind.items():
        axis = scaling_axis(params)
        if axis is None or len(axis[1]) < 3:
            continue
        rows = d.summary[(d.summary["impairment"] == impairment) & d.summary["technique"].isin(axis[1])]
        for metric in pick.metrics:
            mine = rows[rows["metric"] == metric].assign(line=kind)
            figures.append(lines_with_bands(d.canvas, mine, axis[1], "line", "technique", axis[0], pick.axis,
                                            pick.scale, pick.log, f"{d.label}: {kind} by {axis[0]}",
                                            f"{d.label}: {metric_name(pick, metric)} of {kind} against its "
                                            f"{axis[0]} ({impairment}, band: 95 % CI)", {"metric": metric}))
    return figures


def measurement_scaling(canvas: Canvas, kind: str, summary: pd.DataFrame, params_by_label: dict[str, dict],
                        impairment: str, entries: list[Entry] | None = None, cells: list | None = None,
                        where: str = "") -> list[Figure]:
    """Measurement labels of one kind that differ in one numeric parameter (streams, length):
    the headline against it, a line per technique."""
    axis = scaling_axis(params_by_label)
    pick = headline(kind, set(summary["metric"]))
    if axis is None or pick is None or len(axis[1]) < 2:
        return []
    rows = summary[(summary["impairment"] == impairment) & summary["measurement_label"].isin(axis[1])]
    figures = sweep_heatmaps(canvas, kind, summary, axis, pick, entries or [], cells or [])
    return figures + [lines_with_bands(canvas, rows[rows["metric"] == metric], axis[1], "technique", "measurement_label",
                             axis[0], pick.axis, pick.scale, pick.log, f"{kind} by {axis[0]}" + (f", {where}" if where else ""),
                             f"{kind}: {metric_name(pick, metric)} against {axis[0]} ({impairment}"
                             + (f", {where}" if where else "") + ", band: 95 % CI)",
                             {"metric": metric, "axis": axis[0]})
            for metric in pick.metrics]


def sweep_heatmaps(canvas: Canvas, kind: str, summary: pd.DataFrame, axis: tuple[str, dict[str, float]],
                   pick: Headline, entries: list[Entry], cells: list) -> list[Figure]:
    """Two swept axes: a measurement parameter across labels × an impairment sweep entry: a
    heatmap per technique of the headline (the last metric: the received rate of a UDP pair)."""
    figures = []
    metric = pick.metrics[-1]
    for entry in (e for e in entries if e.swept):
        sweep = sweep_axis([c for c in cells if c.impairment in entry.labels])
        if sweep is None:
            continue
        rows = summary[summary["impairment"].isin(entry.labels) & summary["measurement_label"].isin(axis[1])
                       & (summary["metric"] == metric)]
        for technique in list(dict.fromkeys(rows["technique"]))[:MAX_HEATMAPS]:
            mine = rows[rows["technique"] == technique]
            points = {(sweep[1][r.impairment], axis[1][r.measurement_label]): r.mean * pick.scale
                      for r in mine.itertuples()}
            figures.append(heatmap(canvas, points, sweep[0], axis[0], metric_name(pick, metric),
                                   f"{kind}: {technique}", f"{kind}: {technique}, {metric_name(pick, metric)} over "
                                   f"{sweep[0]} (impairment entry {entry.number}) and {axis[0]}",
                                   {"entry": entry.number, "technique": technique}))
    return figures


def udp_sweep_figures(d: Drawing) -> list[Figure]:
    figures = []
    for impairment in list(dict.fromkeys(c.impairment for c in d.cells))[:MAX_CDFS]:
        curves: dict[str, list[tuple[float, float]]] = {}
        knees: dict[str, float] = {}
        for cell in d.cells:
            if cell.ok and cell.impairment == impairment and cell.id is not None:
                curves.setdefault(cell.technique, []).extend(
                    p for p in (received_point(t) for t in d.data.trials(cell.id)) if p)
                if isinstance(cell.metrics.get("knee_bps"), (int, float)):
                    knees.setdefault(cell.technique, float(cell.metrics["knee_bps"]))
        curves = {t: points for t, points in curves.items() if points}
        if curves:
            figures.append(received_vs_offered(d.canvas, curves, knees, f"{d.label}: {impairment}",
                                               f"{d.label}: received vs offered under {impairment}, the knee dashed",
                                               {"impairment": impairment}))
    return figures


def received_point(trial) -> tuple[float, float] | None:
    """(offered, received) bit/s of one trial: its own received rate, else offered × (1 − loss)."""
    if trial.offered_bps is None:
        return None
    data = trial.data or {}
    for key in ("receiver_bps", "received_bps", "throughput_bps", "received"):  # receiver_bps: measure/udp_sweep
        if isinstance(data.get(key), (int, float)):
            return trial.offered_bps, float(data[key])
    if trial.loss_ratio is not None:
        return trial.offered_bps, trial.offered_bps * (1 - trial.loss_ratio)
    if trial.sent_packets and trial.received_packets is not None:
        return trial.offered_bps, trial.offered_bps * trial.received_packets / trial.sent_packets
    return None


def rtt_cdfs(d: Drawing) -> list[Figure]:
    """The distribution of every packet's RTT (or one-way delay), a line per technique, for the
    first impairments of the measurement."""
    figures = []
    for name, xlabel in (("rtt_ms", "RTT (ms)"), ("owd_ms", "one-way delay (ms)")):
        for impairment in list(dict.fromkeys(c.impairment for c in d.cells))[:MAX_CDFS]:
            samples: dict[str, list[float]] = {}
            for cell in d.cells:
                if cell.ok and cell.impairment == impairment and cell.id is not None:
                    values = [p.value for p in d.data.series(cell.id, name)]
                    if values:
                        samples.setdefault(cell.technique, []).extend(values)
            if samples:
                figures.append(cdf(d.canvas, samples, xlabel, f"{d.label}: {impairment}",
                                   f"{d.label}: {xlabel.split(' (')[0]} distribution under {impairment} "
                                   "(every packet of every repetition)", {"impairment": impairment, "series": name}))
    return figures


def setup_ecdfs(d: Drawing) -> list[Figure]:
    """Per technique, the set-up time's empirical distribution under each impairment (every cycle
    of every repetition): a cycle not up within the cell's timeout is counted but never reached,
    so the curve stops below 1 at the share that came up; the timeout is marked."""
    figures = []
    for technique in dict.fromkeys(c.technique for c in d.cells):
        samples: dict[str, list[float | None]] = {}
        timeouts: set[float] = set()
        for cell in d.cells:
            if cell.ok and cell.technique == technique and cell.id is not None:
                samples.setdefault(cell.impairment, []).extend(
                    None if (t.data or {}).get("censored") else t.duration_s for t in d.data.trials(cell.id))
                timeouts.add(float((cell.measurement_params or {}).get("timeout", 0)))
        samples = {impairment: values for impairment, values in samples.items() if values}
        if samples:
            figures.append(censored_ecdf(d.canvas, samples, sorted(timeouts), f"{d.label}: {technique}",
                                         f"{d.label}: {technique}'s set-up time distribution per impairment "
                                         "(every cycle; a curve stops below 1 where cycles were not up within "
                                         "the timeout, dashed)", {"technique": technique}))
    return figures


def censored_ecdf(canvas: Canvas, samples: dict[str, list[float | None]], timeouts: list[float], title: str,
                  caption: str, meta: dict, what: str = "set-up time", of: str = "set-ups",
                  not_reached: str = "not up", figure_type: str = "setup_ecdf") -> Figure:
    """A step line per group (impairment, or N) over all its samples (seconds), None (censored:
    never reached within the timeout) counted in the share only."""
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    censored = {}
    end = max(timeouts, default=0.0) * 1e3  # each line runs on to the timeout: it stays where it got to
    for impairment, values in samples.items():
        done = np.sort(np.asarray([v for v in values if v is not None], dtype=float)) * 1e3
        censored[impairment] = len(values) - len(done)
        note = f" ({censored[impairment]} of {len(values)} {not_reached})" if censored[impairment] else ""
        shares = np.arange(1, len(done) + 1) / len(values)
        if len(done):  # the rise at the first, and the level held on to the timeout
            done, shares = np.concatenate((done[:1], done)), np.concatenate(([0.0], shares))
            if end > done[-1]:
                done, shares = np.append(done, end), np.append(shares, shares[-1])
        ax.step(done, shares, where="post", label=f"{impairment}{note}")  # none came up: a legend entry only
    for timeout in timeouts:
        if timeout > 0:
            ax.axvline(timeout * 1e3, linestyle="--", linewidth=0.8, color="grey")
    ax.set_xlabel(f"{what} (ms)")
    # log where the times span more than the rule's spread (a bare ping's ms beside retries' tens
    # of seconds); the timeout's line counts as the top it stretches the axis to
    apply_scale_rule(ax, [v * 1e3 for values in samples.values() for v in values if v is not None],
                     [t * 1e3 for t in timeouts if t > 0], axis="x")
    ax.set_ylabel(f"share of {of}")
    ax.set_ylim(0, 1.02)
    ax.set_title(title, loc="left")
    legend_beside(ax)
    return canvas.finish(fig, caption, {**meta, "type": figure_type, "lines": list(samples),
                                        "censored": censored, "timeouts_s": timeouts})


def convergence_ecdfs(d: Drawing) -> list[Figure]:
    """Per technique, the pairs' first replies from the daemons' start (every pair of every cycle),
    a line per number of nodes (mesh-scale's N) or per impairment: a pair that never answered
    within the deadline is counted but never reached, so the curve stops below 1."""
    figures = []
    for technique in dict.fromkeys(c.technique for c in d.cells):
        samples: dict[str, list[float | None]] = {}
        deadlines: set[float] = set()
        for cell in d.cells:
            if cell.ok and cell.technique == technique and cell.id is not None:
                for trial in d.data.trials(cell.id):
                    cycle = trial.data or {}
                    line = f"N = {len(cycle.get('nat') or {}) or 2}, {cell.impairment}"
                    replies = cycle.get("first_reply_s", {})
                    samples.setdefault(line, []).extend(replies.get(pair) for pair in cycle.get("pairs", ()))
                deadlines.add(float(cell.metrics.get("deadline_s", 0)))
        samples = {line: values for line, values in samples.items() if values}
        if samples:
            figures.append(censored_ecdf(d.canvas, samples, sorted(deadlines), f"{d.label}: {technique}",
                                         f"{d.label}: {technique}: when each pair of nodes first answered, from the "
                                         "daemons' start (every pair of every cycle; a curve stops below 1 where pairs "
                                         "never answered within the deadline, dashed)", {"technique": technique},
                                         what="first reply", of="pairs", not_reached="never answered",
                                         figure_type="convergence_ecdf"))
    return figures


PATH_COLOURS = {"direct": "#4c9a2a", "relay": "#e0b000", "unseen": "#9e9e9e", "unprobed": "#e4e4e4",
                "never": "#c0392b"}


def nat_matrices(d: Drawing) -> list[Figure]:
    """Per technique, the NAT matrix (answers/nat_matrix.py) of its convergence cycles: a square per
    pair of NAT types, coloured by what its pairs of nodes ended up as, with the median first reply."""
    figures = []
    for technique in dict.fromkeys(c.technique for c in d.cells):
        cycles = [trial.data or {} for cell in d.cells if cell.ok and cell.technique == technique and cell.id is not None
                  for trial in d.data.trials(cell.id)]
        matrix = nat_matrix(cycles)
        if not matrix:
            continue
        figures.append(nat_matrix_figure(
            d.canvas, matrix, f"{d.label}: {technique}",
            f"{d.label}: {technique}'s NAT matrix: what pairs of nodes behind each pair of NAT types ended up as "
            "(direct, through a relay, never answering), as the underlay saw it, and their median first reply "
            "from the daemons' start; \"unprobed\": the technique's up() returned after the deadline, so its pairs "
            "were never asked", {"technique": technique}))
    return figures


def nat_matrix_figure(canvas: Canvas, matrix: dict, title: str, caption: str, meta: dict) -> Figure:
    """A square per pair of NAT types, both ways round, in its outcome's colour, with the median first
    reply written in it: a categorical figure, no value axis (the times are labels, not a scale)."""
    types = nat_types(matrix)
    fig, ax = plt.subplots(figsize=(1.2 * len(types) + 2.6, 1.0 * len(types) + 1.6))
    for (a, b), cell in matrix.items():
        for row, col in {(types.index(a), types.index(b)), (types.index(b), types.index(a))}:
            ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, color=PATH_COLOURS[cell.outcome]))
            p50, agreeing = cell.first_reply_p50_s, cell.counts.get(cell.outcome)
            mixed = "" if agreeing == cell.pairs else f"\n{agreeing}/{cell.pairs}"
            ax.text(col, row, f"{cell.outcome}\n{p50:.2f} s{mixed}" if p50 is not None else f"{cell.outcome}{mixed}",
                    ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(types)), types, rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(len(types)), types, fontsize=7)
    ax.set_xlim(-0.5, len(types) - 0.5)
    ax.set_ylim(len(types) - 0.5, -0.5)
    ax.set_title(title, loc="left")
    outcomes = {f"{a} × {b}": {"outcome": cell.outcome, "counts": cell.counts, "first_reply_p50_s": cell.first_reply_p50_s}
                for (a, b), cell in matrix.items()}
    return canvas.finish(fig, caption, {**meta, "type": "nat_matrix", "cells": outcomes})


@dataclasses.dataclass
class ChurnRow:
    """One churn cell as its timeline draws it (measure/churn.py's stored detail), seconds from t0."""

    label: str
    leave_s: float
    join_s: float
    reached_s: list[float | None]  # each staying node's first reply from the newcomer
    silences: list[tuple[float, float | None]]  # each interrupted pair: (silent from, served again or None)
    pairs_before: int  # the staying pairs that had answered before t0
    end_s: float  # where a silence never served again is drawn to: the cell's deadline


def churn_rows(d: Drawing, technique: str) -> list[ChurnRow]:
    """The technique's churn cells, each from its stored detail (the `churn` output)."""
    rows = []
    for cell in d.cells:
        if not (cell.ok and cell.technique == technique and cell.id is not None):
            continue
        raw = d.data.raw_outputs(cell.id).get("churn")
        if not raw:
            continue
        detail, m = json.loads(raw), cell.metrics
        role = (detail.get("leave") or {}).get("role")
        rows.append(ChurnRow(
            f"{cell.impairment} #{cell.repetition}: {detail['leaving']} leaves{f' ({role})' if role else ''}, "
            f"{detail['joining']} joins", float(m.get("leave_s", 0.0)), float(m.get("join_s", 0.0)),
            list(detail.get("reached_s", {}).values()),
            [(s["silent_from_s"], s["served_again_s"]) for s in detail.get("interrupted", {}).values()],
            int(m.get("pairs_before", 0)), float(m.get("deadline_s", 0.0))))
    return rows


def churn_timelines(d: Drawing) -> list[Figure]:
    """Per technique, its churn cells' course from t0, a row each (churn_timeline)."""
    figures = []
    for technique in dict.fromkeys(c.technique for c in d.cells):
        if rows := churn_rows(d, technique):
            figures.append(churn_timeline(
                d.canvas, rows, f"{d.label}: {technique}",
                f"{d.label}: {technique}'s churn, a row per cell, from the moment one node left and another "
                "joined: the leave's and the join's own time (grey and blue bars), when each staying node first "
                "had a reply from the newcomer (dots; the last, a bar), and every staying pair the leave silenced "
                "(red, a lane a pair: from its last reply before the silence to the reply that ended it, to the "
                "deadline where none did)", {"technique": technique}))
    return figures


def churn_timeline(canvas: Canvas, rows: list[ChurnRow], title: str, caption: str, meta: dict) -> Figure:
    """Seconds from t0 across; a row per churn cell with its leave, join, newcomer and silences."""
    fig, ax = plt.subplots(figsize=(7.5, 0.75 * len(rows) + 1.2))
    for y, row in enumerate(rows):
        ax.barh(y - 0.3, row.leave_s, height=0.12, left=0, color="#9e9e9e")
        ax.barh(y - 0.16, row.join_s, height=0.12, left=0, color="#1f77b4")
        reached = [s for s in row.reached_s if s is not None]
        ax.plot(reached, [y - 0.02] * len(reached), "o", markersize=3, color="#1f77b4")
        if reached and len(reached) == len(row.reached_s):
            ax.plot([max(reached)] * 2, [y - 0.1, y + 0.06], color="#1f77b4", linewidth=1.5)
        lane = 0.3 / max(len(row.silences), 1)  # the silences share the row's lower half
        silences = sorted(row.silences, key=lambda span: (span[0], math.inf if span[1] is None else span[1]))
        for i, (start, ended) in enumerate(silences):
            ax.plot([start, row.end_s if ended is None else ended], [y + 0.1 + lane * i] * 2,
                    color="#c0392b", linewidth=max(0.6, min(3.0, 72 * lane * 0.5)), solid_capstyle="butt")
    ax.set_yticks(range(len(rows)), [f"{row.label}\n{len(row.silences)} of {row.pairs_before} pairs silenced"
                                     for row in rows], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("seconds from the leave and the join")
    # linear whatever the spread (no scale rule): a timeline from t0 has its zero, and silences begin before it
    ax.axvline(0, linewidth=0.8, color="black")
    ax.set_title(title, loc="left")
    return canvas.finish(fig, caption, {**meta, "type": "churn_timeline", "rows": [row.label for row in rows],
                                        "silenced": [len(row.silences) for row in rows]})


def cell_seconds(cell) -> float:
    duration = (cell.measurement_params or {}).get("duration")
    return float(duration) if isinstance(duration, (int, float)) else 0.0


def time_series_figures(d: Drawing) -> list[Figure]:
    """Per-second series of long cells (or of every cell when asked), one per technique and
    impairment unless asked: a run of hundreds of cells would otherwise draw hundreds."""
    chosen, seen = [], set()
    for cell in d.cells:
        if not cell.ok or cell.id is None or (not d.timeseries and cell_seconds(cell) < LONG_CELL_S):
            continue
        key = (cell.technique, cell.impairment)
        if d.timeseries or (key not in seen and len(chosen) < MAX_TIMESERIES):
            chosen.append(cell)
            seen.add(key)
    figures = []
    for cell in chosen:
        series: dict[str, dict[str, list[tuple[float, float]]]] = {}
        for point in d.data.series(cell.id):
            base = point.name.split(":", 1)[0]
            if base in {name for name, _, _ in TIME_SERIES}:
                host = point.host + (f" {point.name.split(':', 1)[1]}" if ":" in point.name else "")
                series.setdefault(base, {}).setdefault(host, []).append((point.t, point.value))
        if series:
            figures.append(time_series(d.canvas, series, d.data.events(cell.run_id, cell.id),
                                       f"{d.label}: {cell.technique}, {cell.impairment}, #{cell.repetition}",
                                       f"{d.label}: per second, {cell.technique} under {cell.impairment} "
                                       f"(repetition {cell.repetition}); dashed: events",
                                       {"cell_id": cell.id}))
    return figures


LATENCY_METRIC = re.compile(r"^latency_(?P<load>idle|pdr\d+)_owd_(?P<stat>[a-z0-9]+)_ms$")


def latency_at_pdr_figures(d: Drawing) -> list[Figure]:
    """One-way latency at idle and at 10, 50 and 90 % of the PDR (rate_search's latency loads, as
    FD.io CSIT reports it): a figure per technique and impairment, a line per percentile across the
    loads, mean over the repetitions with its 95 % CI."""
    found = d.summary[d.summary["metric"].str.match(LATENCY_METRIC.pattern)]
    figures = []
    for (technique, impairment), rows in found.groupby(["technique", "impairment"], sort=False):
        parts = rows["metric"].str.extract(LATENCY_METRIC.pattern)
        rows = rows.assign(load=parts["load"], percentile=parts["stat"].map(lambda s: s.replace("p999", "p99.9")))
        order = [s.replace("p999", "p99.9") for s in OWD_STATS]
        rows = rows.sort_values("percentile", key=lambda column: column.map(order.index))
        xs = {load: 0.0 if load == "idle" else float(load.removeprefix("pdr")) for load in rows["load"].unique()}
        figures.append(lines_with_bands(
            d.canvas, rows, xs, "percentile", "load", "load (% of the PDR; 0: idle)", "one-way delay (ms)", 1.0, True,
            f"{d.label}: {technique} ({impairment})",
            f"{d.label}: one-way latency of {technique} under {impairment} at idle and at shares of its PDR",
            {"technique": technique, "impairment": impairment}))
    return figures


# What a Measurement's `figures` names: the function drawing each from a Drawing.
FIGURES = {"headline": headline_figures, "rtt_cdf": rtt_cdfs, "time_series": time_series_figures,
           "setup_ecdf": setup_ecdfs, "convergence_ecdf": convergence_ecdfs, "nat_matrix": nat_matrices,
           "churn_timeline": churn_timelines,
           "host_cpu": single_impairment(host_cpu_bars),
           "received_vs_offered": udp_sweep_figures,
           "latency_at_pdr": latency_at_pdr_figures,
           "cpu_per_core": cpu_figure(cpu_per_core, "busy share of each core the host owns, per technique"),
           "cpu_kinds": cpu_figure(cpu_kinds, "where the CPU time went: user space, kernel, softirq")}
