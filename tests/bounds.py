"""Bounds on measured rates that hold on any host.

How fast a path is belongs to the machine: a halved CPU halves it, and scp's CPU-bound cipher
moved 469 Mbit/s where iperf3's TCP moved 33 Gbit/s on one host. So a test never bounds a rate
by another tool's rate, or by a number this machine happened to reach: comparisons of that kind
are bench/'s, which print ratios (applications.py: a transfer against iperf3; capacity.py:
techniques side by side; linkem/run.py: linkem against a bridge; report.py: render time). What holds everywhere is the measurement's own arithmetic: a
rate is bytes over the interval it was measured over, that interval lies inside the cell's own
wall-clock time, and a rate limit is a ceiling no host can beat.
"""

import datetime


def cell_wall_seconds(cell: dict) -> float:
    """The exported cell's own start to end, in seconds."""
    started, finished = (datetime.datetime.fromisoformat(cell[k]) for k in ("started_at", "finished_at"))
    return (finished - started).total_seconds()


def assert_tcp_measured(cell: dict) -> None:
    """An iperf3 TCP cell moved data, and its rate agrees with its bytes: bytes_received over the
    rate is the interval iperf3 measured over, which is at least (nearly) the sender's duration
    and at most the cell's wall-clock time. A rate of 0, or one off by a unit, fails this."""
    m = cell["metrics"]
    assert m["throughput_bps"] > 0 and m["bytes_received"] > 0, m
    measured_over = m["bytes_received"] * 8 / m["throughput_bps"]
    duration = cell["measurement_params"]["duration"]
    assert 0.9 * duration <= measured_over <= cell_wall_seconds(cell), (measured_over, duration, cell)
