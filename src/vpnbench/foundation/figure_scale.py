"""The scale rule of every figure vpnbench draws (report, trend): when the series on one axis
differ by more than LOG_SPREAD, that axis is logarithmic. On a linear axis a tunnel at 0.8 Gbit/s
beside a 30 Gbit/s baseline is drawn flat on the axis, and a 0.05 ms RTT beside a tunnel's 2 ms
is a bar of a few pixels. Pure: it takes the matplotlib axes it is given, never imports matplotlib."""

import math

LOG_SPREAD = 20  # log when the largest level is more than this times the smallest


def wants_log(levels, tops=()) -> bool:
    """levels: where each series (a bar, a line's points, a panel's hosts) sits; tops: the
    highest point drawn for each (an error bar's end), which stretches a linear axis too: a slow
    tunnel's wide interval can flatten a fast baseline's bar although their means differ by less
    than LOG_SPREAD. A level of 0 or below has no place on a log axis: then the axis stays linear."""
    finite = [v for v in levels if v is not None and math.isfinite(v)]
    if not finite or min(finite) <= 0:
        return False
    highest = max([t for t in tops if t is not None and math.isfinite(t)] + finite)
    return highest / min(finite) > LOG_SPREAD


def apply_scale_rule(ax, levels, tops=(), axis: str = "y", allowed: bool = True) -> bool:
    """Set `axis` ("x" or "y") of the matplotlib axes `ax` to log when the rule asks for it, and
    say so in its label (call after the label is set). allowed=False: a quantity with a natural
    linear zero (a share, a count). Returns whether the axis is log."""
    logarithmic = allowed and wants_log(levels, tops)
    if logarithmic:
        getattr(ax, f"set_{axis}scale")("log")
        label = getattr(ax, f"get_{axis}label")()
        if label and not label.endswith("(log scale)"):
            getattr(ax, f"set_{axis}label")(label + " (log scale)")
    return logarithmic
