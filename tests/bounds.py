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
    rate is the interval iperf3's receiver measured over, which lies inside the cell's wall-clock
    time. A rate of 0, or one too small by a unit (bytes for bits), fails this. The interval has
    no lower bound a host can promise: the receiver's clock starts when the server process sees
    the test start, which on a loaded TCG guest was 0.6 s into a 1 s test (0.40 s measured)."""
    m = cell["metrics"]
    assert m["throughput_bps"] > 0 and m["bytes_received"] > 0, m
    measured_over = m["bytes_received"] * 8 / m["throughput_bps"]
    assert 0 < measured_over <= cell_wall_seconds(cell), (measured_over, cell)
