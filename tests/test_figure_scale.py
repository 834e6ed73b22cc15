"""The scale rule holds in every figure vpnbench draws: series more than LOG_SPREAD apart get a
log axis (the trend page drew a 0.8 Gbit/s tunnel flat on a 0-30 000 Mbit/s axis beside its
baseline). Each drawing function is called with series 40 times apart and 4 times apart, and the
scale is read from the matplotlib figure it drew, not from the code."""

import inspect
import types
from pathlib import Path

import pandas as pd
import pytest

import vpnbench
from vpnbench.answers import trend
from vpnbench.answers.nat_matrix import nat_matrix
from vpnbench.foundation.figure_scale import LOG_SPREAD
from vpnbench.views.report import figures
from vpnbench.views.report.figures import Canvas


class KeepingCanvas(Canvas):
    """A canvas that keeps the matplotlib figures it finished, to read their axes."""

    def __init__(self):
        super().__init__()
        self.kept = []

    def finish(self, fig, caption, meta):
        self.kept.append(fig)
        return super().finish(fig, caption, meta)


def cells_with(facts_of: dict) -> list:
    """Stand-ins for records.Cell: what the CPU figures read (ok, technique, hosts)."""
    return [types.SimpleNamespace(ok=True, technique=technique, hosts={"client": facts, "server": facts})
            for technique, facts in facts_of.items()]


def summary(fast: float, slow: float) -> pd.DataFrame:
    return pd.DataFrame({"technique": ["baseline", "baseline", "wireguard", "wireguard"],
                         "impairment": ["a", "b", "a", "b"], "mean": [fast, fast, slow, slow],
                         "ci95": [0.0, 0.0, 0.0, 0.0]})


def trend_group(fast: float, slow: float) -> list:
    def one(technique, level):
        key = trend.SeriesKey("bed", technique, "none", "tcp", "throughput_bps")
        points = [trend.RunPoint(f"r{i}", f"2026-11-0{i + 1}T00:00:00", [level]) for i in range(3)]
        return trend.Trend(key, points, [trend.Segment(0, 2, level, 0.0)], [])
    return [one("baseline", fast), one("wireguard", slow)]


# Every function that draws a figure, drawing two series `fast` and `slow` (fast / slow apart).
DRAWERS = {
    "lines_with_bands": lambda c, fast, slow: figures.lines_with_bands(
        c, summary(fast, slow), {"a": 1.0, "b": 2.0}, "technique", "impairment", "x", "Mbit/s", 1e-6, True,
        "t", "lines", {}),
    "grouped_bars": lambda c, fast, slow: figures.grouped_bars(
        c, summary(fast, slow), ["a", "b"], "Mbit/s", 1e-6, "t", "bars", {}, log=True),
    "heatmap": lambda c, fast, slow: figures.heatmap(
        c, {(1, 1): fast, (1, 2): fast, (2, 1): slow, (2, 2): slow}, "x", "y", "Mbit/s", "t", "heat", {}),
    "received_vs_offered": lambda c, fast, slow: figures.received_vs_offered(
        c, {"baseline": [(fast, fast)], "wireguard": [(fast, slow)]}, {}, "t", "sweep", {}),
    "cdf": lambda c, fast, slow: figures.cdf(
        c, {"baseline": [fast * 0.9, fast, fast * 1.1], "wireguard": [slow * 0.9, slow, slow * 1.1]}, "RTT (ms)",
        "t", "cdf", {}),
    "time_series": lambda c, fast, slow: figures.time_series(
        c, {"cpu_pct": {"client": [(1.0, fast), (2.0, fast)], "server": [(1.0, slow), (2.0, slow)]}}, [], "t",
        "series", {}),
    "cpu_per_core": lambda c, fast, slow: figures.cpu_per_core(
        c, cells_with({"baseline": {"cpu_per_core_pct": [fast, fast]}, "wireguard": {"cpu_per_core_pct": [slow, slow]}}),
        "t", "cores"),
    "cpu_kinds": lambda c, fast, slow: figures.cpu_kinds(
        c, cells_with({k: {"cpu_user_pct": v, "cpu_system_pct": v, "cpu_softirq_pct": v}
                       for k, v in (("baseline", fast), ("wireguard", slow))}), "t", "kinds"),
    "censored_ecdf": lambda c, fast, slow: figures.censored_ecdf(
        c, {"loss 0%": [slow * 0.9, slow, None], "loss 30%": [fast * 0.9, fast, fast * 1.1]}, [], "t", "ecdf", {}),
    "trend_figure": lambda c, fast, slow: c.kept.append(trend.trend_figure("t", trend_group(fast, slow))),
}


# Figures with no value axis: categories on both axes, the values written in (the scale rule has
# nothing to scale). Each draws two values `fast` and `slow` apart as the others do.
CATEGORICAL = {
    "nat_matrix_figure": lambda c, fast, slow: figures.nat_matrix_figure(c, nat_matrix([{
        "pairs": ["a>b", "b>a", "a>c", "c>a"], "nat": {"a": "none", "b": "none", "c": "udp-blocked"},
        "first_reply_s": {"a>b": fast, "b>a": slow}, "never": ["a>c", "c>a"],
        "paths": {"a>b": "direct", "b>a": "direct"}}]), "t", "matrix", {}),
}

# Figures whose value axis has a natural zero that a log axis would lose: linear whatever the spread.
LINEAR_BY_NATURE = {
    # seconds from the churn's t0: silences begin before it
    "churn_timeline": lambda c, fast, slow: figures.churn_timeline(
        c, [figures.ChurnRow("r", slow, slow, [slow, fast], [(-slow, fast), (slow, None)], 2, fast)], "t", "churn", {}),
}

DRAWING_MODULES = (figures, trend)


def drawing_functions() -> set[str]:
    """Every function of the modules that draw, whose code opens a matplotlib figure."""
    found = set()
    for module in DRAWING_MODULES:
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__ and "plt.subplots(" in inspect.getsource(function):
                found.add(name)
    return found


def test_every_drawing_function_is_walked():
    package = Path(vpnbench.__file__).parent
    drawing_files = {path for path in package.rglob("*.py") if "subplots(" in path.read_text()}
    assert drawing_files == {Path(module.__file__) for module in DRAWING_MODULES}  # no figure drawn elsewhere
    assert drawing_functions() == set(DRAWERS) | set(CATEGORICAL) | set(LINEAR_BY_NATURE)


def drawn_linear(drawer):
    """The one figure `drawer` draws from values 40 times apart, which it must not put on a log axis."""
    canvas = KeepingCanvas()
    drawer(canvas, 40.0, 1.0)
    (fig,) = canvas.kept
    assert not log_axes(fig)
    return fig


@pytest.mark.parametrize("name", sorted(CATEGORICAL))
def test_a_categorical_figure_has_no_value_axis_to_scale(name):
    ax = drawn_linear(CATEGORICAL[name]).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [t.get_text() for t in ax.get_yticklabels()] == ["none", "udp-blocked"]


@pytest.mark.parametrize("name", sorted(LINEAR_BY_NATURE))
def test_a_figure_with_a_natural_zero_stays_linear(name):
    fig = drawn_linear(LINEAR_BY_NATURE[name])
    assert fig.axes[0].get_xlim()[0] < -1.0 + 0.1  # the silence from before t0 is on the axis


def log_axes(fig) -> list[str]:
    """The axes of a drawn figure on a log scale (a colour bar's is its value axis)."""
    return [f"{i}{axis}" for i, ax in enumerate(fig.axes) for axis in "xy"
            if getattr(ax, f"get_{axis}scale")() == "log"]


@pytest.mark.parametrize("name", sorted(DRAWERS))
def test_series_more_than_the_spread_apart_get_a_log_axis(name):
    canvas = KeepingCanvas()
    DRAWERS[name](canvas, 40.0, 1.0)
    DRAWERS[name](canvas, 4.0, 1.0)
    apart, near = canvas.kept
    assert 40 > LOG_SPREAD > 4
    assert log_axes(apart), f"{name}: series 40 x apart on a linear axis"
    assert not log_axes(near), f"{name}: series 4 x apart on a log axis {log_axes(near)}"
