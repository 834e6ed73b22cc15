"""The idle_cost kind (issue 41, cost of size): each node's memory, CPU and underlay bytes while nothing
is sent, read from the node's own /proc; on a real mesh the keepalives' bytes are the floor."""

import json
import sqlite3
from contextlib import closing

import pytest

from conftest import assert_refused, run_campaign
from vpnbench.measure.idle_cost import cost, idle_metrics, parse_reading

DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:     500       5    0    0    0     0          0         0      500       5    0    0    0     0       0          0
  eth0:    {rx}      12    0    0    0     0          0         0     {tx}      14    0    0    0     0       0          0
"""
# /proc/<pid>/stat: utime and stime are fields 14 and 15, rss (pages) field 24; a comm with a space and a ")"
STAT = "{pid} (wireguard-go) S 1 1 1 0 -1 4194560 99 0 0 0 {utime} {stime} 0 0 20 0 9 0 5218668 3133440 {rss} 1844 0"
ODD = "{pid} (a) b) S 1 1 1 0 -1 4194560 99 0 0 0 {utime} 0 0 0 20 0 1 0 5218668 3133440 {rss} 1844 0"
CAT = "77 (cat) R 1 1 1 0 -1 4194304 99 0 0 0 50 50 0 0 20 0 1 0 5218668 3133440 1000 1844 0"


def reading(rx, tx, *stats):
    return parse_reading("\n".join([DEV.format(rx=rx, tx=tx), *stats, CAT]), "eth0", 4096)


def test_a_reading_takes_the_underlay_counters_and_each_process_but_the_reader():
    r = reading(1000, 2000, STAT.format(pid=10, utime=7, stime=3, rss=256), ODD.format(pid=11, utime=5, rss=1))
    assert r["underlay_bytes"] == 3000  # eth0's receive + transmit bytes, lo left out
    assert r["procs"] == {10: (10, 256 * 4096), 11: (5, 4096)}  # cat, the reader itself, left out
    assert parse_reading(DEV.format(rx=1, tx=2), None, 4096)["underlay_bytes"] is None  # no underlay named


def test_cost_is_the_windows_cpu_share_the_end_memory_and_bytes_per_minute():
    first = reading(1000, 2000, STAT.format(pid=10, utime=100, stime=0, rss=100))
    last = reading(1600, 2600, STAT.format(pid=10, utime=130, stime=20, rss=300),
                   STAT.format(pid=12, utime=25, stime=5, rss=50))  # born in the window: counts whole
    node = cost(first, last, window=30.0, ticks_per_s=100)
    assert node["cpu_pct"] == pytest.approx(100 * (50 + 30) / 100 / 30, abs=1e-3)  # 0.8 s of CPU in 30 s
    assert node["rss_bytes"] == 350 * 4096 and node["processes"] == 2
    assert node["underlay_bytes_per_min"] == pytest.approx(1200 * 60 / 30)


def test_metrics_are_the_nodes_medians_and_maxima_and_the_control_apart():
    nodes = {f"n{i}": {"rss_bytes": (i + 1) * 1e6, "cpu_pct": float(i), "processes": 1,
                       "underlay_bytes_per_min": 1000.0 * i} for i in range(3)}
    control = {"rss_bytes": 20e6, "cpu_pct": 0.5, "processes": 1, "underlay_bytes_per_min": 9000.0}
    m = idle_metrics(nodes, control, 30.0)
    assert (m["rss_per_node_p50_mb"], m["rss_per_node_max_mb"]) == (2.0, 3.0)
    assert (m["cpu_per_node_p50_pct"], m["underlay_kb_per_min_max"], m["nodes"]) == (1.0, 2.0, 3.0)
    assert (m["control_rss_mb"], m["control_underlay_kb_per_min"]) == (20.0, 9.0)
    assert "control_rss_mb" not in idle_metrics(nodes, {**control, "processes": 0}, 30.0)  # nothing runs there


def test_a_window_below_five_seconds_is_refused(tmp_path):
    assert_refused(tmp_path, '[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "idle_cost"\nwindow = "1s"\n',
                   "window")


@pytest.mark.netns
def test_an_idle_static_mesh_costs_each_node_a_daemon_and_its_keepalives(tmp_path, clean_machine):
    """Four wireguard-mesh nodes with a 5 s keepalive, idle for 11 s: every node holds its
    wireguard-go, and sends each of its 3 peers at least one keepalive (a 60-byte IP packet: WireGuard's
    32-byte keepalive in UDP) in the window, so its underlay carries at least 3 × 60 bytes; no
    control plane runs."""
    _, cells = run_campaign(tmp_path, """[campaign]
name = "idle-mesh"
[testbed]
nodes = 4
[[technique]]
kind = "wireguard-mesh"
keepalive = 5
[[measurement]]
kind = "idle_cost"
window = "11s"
settle = "1s"
""")
    [cell] = cells
    assert cell["status"] == "ok", cell["error"]
    with closing(sqlite3.connect(tmp_path / "c.db")) as conn:
        [(text,)] = conn.execute("SELECT text FROM raw_outputs WHERE name = 'costs'").fetchall()
    metrics, costs = cell["metrics"], json.loads(text)
    assert metrics["nodes"] == 4 and metrics["window_s"] >= 11
    for name in ("n0", "n1", "n2", "n3"):
        node = costs[name]
        assert node["processes"] >= 1 and node["rss_bytes"] > 0, (name, node)
        assert node["underlay_bytes_per_min"] >= 3 * 60 * 60 / metrics["window_s"], (name, node)
    assert metrics["rss_per_node_max_mb"] >= metrics["rss_per_node_p50_mb"] > 0
    assert "control_rss_mb" not in metrics  # the static mesh has no control plane: ctl holds nothing
