"""The tables printed after a run: one per measurement, technique rows, mean ± sd columns."""

import math
import statistics

from rich.table import Table

# Which metrics a table shows per measurement kind: (metric, column title, scale).
COLUMNS = {
    "tcp": [("throughput_bps", "Mbit/s", 1e-6), ("retransmits", "retrans", 1)],
    "udp": [("throughput_bps", "recv Mbit/s", 1e-6), ("sender_throughput_bps", "sent Mbit/s", 1e-6),
            ("loss_pct", "loss %", 1), ("jitter_ms", "jitter ms", 1)],
    "ping": [("rtt_avg_ms", "avg ms", 1), ("rtt_p50_ms", "p50 ms", 1), ("rtt_p99_ms", "p99 ms", 1),
             ("rtt_mdev_ms", "mdev ms", 1), ("loss_pct", "loss %", 1)],
}
HOST_COLUMNS = [("client", "client CPU%"), ("server", "server CPU%")]


def digits_for(value: float) -> int:
    """Decimals that keep three significant figures for small values and none for large ones."""
    return next(d for limit, d in ((100, 0), (10, 1), (1, 2), (0, 3)) if abs(value) >= limit)


def format_mean_sd(mean: float, sd: float | None) -> str:
    """'mean ± sd', or the mean alone when there is no sd (one value)."""
    if mean is None or math.isnan(mean):
        return "–"
    digits = digits_for(mean)
    if sd is None or math.isnan(sd):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def mean_sd(values: list[float], scale: float) -> str:
    if not values:
        return "–"
    values = [v * scale for v in values]
    return format_mean_sd(statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else None)


def bringup_times(cells: list[dict]) -> list[float]:
    """Set-up time of each bring-up: every cell one bring-up served carries its time, so count it once."""
    return list(dict.fromkeys(c["metrics"]["setup_time_s"] for c in cells if "setup_time_s" in c["metrics"]))


def technique_table(cells: list[dict]) -> Table:
    """One row per technique: the data path that ran, the wire proof, how long bring-up took."""
    table = Table(title="techniques", title_justify="left")
    for title in ("technique", "backend", "wire check", "setup s", "cells ok/n"):
        table.add_column(title, justify="right" if title in ("setup s", "cells ok/n") else "left")
    for technique in dict.fromkeys(c["technique"] for c in cells):
        rows = [c for c in cells if c["technique"] == technique]
        setups = bringup_times(rows)
        ok = sum(1 for c in rows if c["status"] == "ok")
        table.add_row(technique, str(rows[0]["technique_params"].get("backend") or "–"), rows[0]["wire_check"],
                      mean_sd(setups, 1), f"{ok}/{len(rows)}")
    return table


def summary_tables(cells: list[dict]) -> list[Table]:
    tables = [technique_table(cells)] if cells else []
    for label in dict.fromkeys(c["measurement_label"] for c in cells):
        mine = [c for c in cells if c["measurement_label"] == label]
        kind = mine[0]["measurement"]
        columns = COLUMNS.get(kind, [])
        impaired = len({c["impairment"] for c in mine}) > 1 or mine[0]["impairment"] != "none"
        table = Table(title=label, title_justify="left")
        table.add_column("technique", no_wrap=True)
        if impaired:
            table.add_column("impairment")
        table.add_column("ok/n", justify="right")
        for _, title, _ in columns:
            table.add_column(title, justify="right")
        for _, title in HOST_COLUMNS:
            table.add_column(title, justify="right")
        for technique, impairment in dict.fromkeys((c["technique"], c["impairment"]) for c in mine):
            rows = [c for c in mine if c["technique"] == technique and c["impairment"] == impairment]
            ok = [c for c in rows if c["status"] == "ok"]
            cells_out = [technique] + ([impairment] if impaired else []) + [f"{len(ok)}/{len(rows)}"]
            cells_out += [mean_sd([c["metrics"][m] for c in ok if m in c["metrics"]], scale) for m, _, scale in columns]
            cells_out += [mean_sd([c["hosts"][h]["cpu_pct"] for c in ok if h in c["hosts"]], 1) for h, _ in HOST_COLUMNS]
            table.add_row(*cells_out)
        tables.append(table)
    return tables
