"""The figures the studies drew, as inline SVG: bars with error bars per technique, lines
against a swept impairment, client and server CPU, CPU per core, UDP sent vs received."""

import io
import math

import matplotlib

matplotlib.use("Agg")  # no display: figures are rendered to SVG text
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from vpnbench.measure import MEASUREMENTS  # noqa: E402
from vpnbench.measure.base import Headline  # noqa: E402

plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                     "axes.spines.right": False, "figure.dpi": 96})

# How a swept impairment field is drawn on the x axis: (field, axis title, scale).
SWEEP_AXES = {"delay_us": ("delay (ms)", 1e-3), "jitter_us": ("jitter (ms)", 1e-3), "loss_pct": ("loss (%)", 1),
              "duplicate_pct": ("duplication (%)", 1), "reorder_pct": ("reordering (%)", 1),
              "corrupt_pct": ("corruption (%)", 1), "rate_bps": ("rate (Mbit/s)", 1e-6)}


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


def sweep_axis(cells: list[dict]) -> tuple[str, dict[str, float]] | None:
    """When the impairments of these cells differ in exactly one numeric field: its axis title
    and the value per impairment label; otherwise None (drawn as categories)."""
    specs = {}
    for cell in cells:
        params = cell.impairment_params
        specs[cell.impairment] = {f"{direction}.{field}": value
                                     for direction in ("egress_spec", "ingress_spec")
                                     for field, value in (params.get(direction) or {}).items()}
    if len(specs) < 3:
        return None
    varying = {key.split(".", 1)[1] for key in next(iter(specs.values()))
               if len({json_key(spec.get(key)) for spec in specs.values()}) > 1}
    if len(varying) != 1 or next(iter(varying)) not in SWEEP_AXES:
        return None
    field = next(iter(varying))
    title, scale = SWEEP_AXES[field]
    values = {}
    for label, spec in specs.items():
        # An asymmetric sweep varies one direction only: take the larger of the two.
        values[label] = max(spec.get(f"egress_spec.{field}") or 0, spec.get(f"ingress_spec.{field}") or 0) * scale
    return title, values


def json_key(value):
    return tuple(value) if isinstance(value, list) else value


def to_svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog: the SVG is inlined in HTML


def technique_bars(summary: pd.DataFrame, metrics: tuple[str, ...], ylabel: str, scale: float, title: str,
                   names: dict[str, str] | None = None) -> str:
    """Grouped bars: one group per technique, one bar per metric, error bars = sd."""
    techniques = list(dict.fromkeys(summary["technique"]))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(techniques) + 1.5), 3.0))
    width = 0.8 / len(metrics)
    for i, metric in enumerate(metrics):
        rows = summary[summary["metric"] == metric].set_index("technique").reindex(techniques)
        positions = [t + (i - (len(metrics) - 1) / 2) * width for t in range(len(techniques))]
        ax.bar(positions, rows["mean"] * scale, width, yerr=(rows["sd"].fillna(0) * scale), capsize=3,
               label=(names or {}).get(metric, metric) if len(metrics) > 1 else None)
    ax.set_xticks(range(len(techniques)), techniques, rotation=20 if len(techniques) > 4 else 0, ha="right"
                  if len(techniques) > 4 else "center")
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left")
    if len(metrics) > 1:
        ax.legend(frameon=False)
    return to_svg(fig)


def sweep_lines(summary: pd.DataFrame, metric: str, ylabel: str, scale: float, log: bool, title: str,
                axis: tuple[str, dict[str, float]] | None) -> str:
    """One line per technique against the impairment (numeric when one field is swept)."""
    impairments = list(dict.fromkeys(summary["impairment"]))
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    for technique in dict.fromkeys(summary["technique"]):
        rows = summary[(summary["technique"] == technique) & (summary["metric"] == metric)]
        rows = rows.set_index("impairment").reindex(impairments).dropna(subset=["mean"])
        xs = [axis[1][label] for label in rows.index] if axis else [impairments.index(label) for label in rows.index]
        ax.errorbar(xs, rows["mean"] * scale, yerr=rows["sd"].fillna(0) * scale, marker="o", ms=3, capsize=2,
                    label=technique)
    if axis:
        ax.set_xlabel(axis[0])
    else:
        ax.set_xticks(range(len(impairments)), impairments, rotation=25, ha="right")
    if log and (summary[summary["metric"] == metric]["mean"] > 0).all():
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left")
    ax.legend(frameon=False, fontsize=8)
    return to_svg(fig)


def host_facts(cells: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """(technique, host) -> the monitor's summary of that host in every successful cell."""
    data: dict[tuple[str, str], list[dict]] = {}
    for cell in cells:
        if cell.ok:
            for host in ("client", "server"):
                if cell.hosts.get(host):
                    data.setdefault((cell.technique, host), []).append(cell.hosts[host])
    return data


def cpu_per_core(cells: list[dict], title: str) -> str | None:
    """Mean busy share of every core a host owns (its pinned cores, or all), per technique:
    shows which techniques spread over cores and which stay on one."""
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
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(keys) + 1.5), 3.0))
    width = 0.8 / len(all_cores)
    for i, core in enumerate(all_cores):
        positions = [k + (i - (len(all_cores) - 1) / 2) * width for k in range(len(keys))]
        ax.bar(positions, [_mean(by_core[key].get(core, [])) for key in keys], width, label=f"CPU {core}")
    ax.set_xticks(range(len(keys)), [f"{t}\n{h}" for t, h in keys], fontsize=7)
    ax.set_ylabel("busy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title, loc="left")
    ax.legend(frameon=False, fontsize=7, ncol=min(len(all_cores), 4))
    return to_svg(fig)


def cpu_kinds(cells: list[dict], title: str) -> str | None:
    """User, system and softirq time stacked per technique and host: the kernel's share of the
    work (in-kernel data paths show no process of their own)."""
    kinds = (("cpu_user_pct", "user"), ("cpu_system_pct", "system"), ("cpu_softirq_pct", "softirq"))
    data = {key: rows for key, rows in host_facts(cells).items() if "cpu_system_pct" in rows[0]}
    if not data:
        return None
    keys = list(data)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(keys) + 1.5), 3.0))
    bottom = [0.0] * len(keys)
    for field, name in kinds:
        heights = [_mean([facts.get(field) or 0 for facts in data[key]]) for key in keys]
        ax.bar(range(len(keys)), heights, 0.6, bottom=bottom, label=name)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(range(len(keys)), [f"{t}\n{h}" for t, h in keys], fontsize=7)
    ax.set_ylabel("CPU (% of the host's cores)")
    ax.set_title(title, loc="left")
    ax.legend(frameon=False, fontsize=7)
    return to_svg(fig)


def figures_for(label: str, kind: str, summary: pd.DataFrame, cells: list[dict]) -> list[tuple[str, str]]:
    """The figures of one measurement: (caption, svg) pairs."""
    mine = summary[summary["measurement_label"] == label]
    pick = headline(kind, set(mine["metric"]))
    figures = []
    swept = len(set(mine["impairment"])) > 1
    if pick:
        if swept:
            axis = sweep_axis(cells)
            for metric in pick.metrics:
                figures.append((f"{label}: {metric_name(pick, metric)} by impairment",
                                sweep_lines(mine, metric, pick.axis, pick.scale, pick.log, label, axis)))
        else:
            figures.append((f"{label}: {pick.axis} per technique (mean, error bars ± sd)",
                            technique_bars(mine, pick.metrics, pick.axis, pick.scale, label,
                                           dict(zip(pick.metrics, pick.names)))))
    if not swept:
        hosts = tuple(m for m in ("client_cpu_pct", "server_cpu_pct") if m in set(mine["metric"]))
        if hosts:
            figures.append((f"{label}: CPU of client and server (% of the host's cores)",
                            technique_bars(mine.replace({"metric": {"client_cpu_pct": "client", "server_cpu_pct": "server"}}),
                                           tuple(h.removesuffix("_cpu_pct") for h in hosts), "CPU (%)", 1.0,
                                           f"{label}: CPU")))
        if kind in MEASUREMENTS and MEASUREMENTS[kind].cpu_figures:
            for figure, caption in ((cpu_per_core(cells, f"{label}: CPU per core"),
                                     "busy share of each core the host owns, per technique"),
                                    (cpu_kinds(cells, f"{label}: user, system and softirq time"),
                                     "where the CPU time went: user space, kernel, softirq (packet processing)")):
                if figure:
                    figures.append((f"{label}: {caption}", figure))
    return figures


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan
