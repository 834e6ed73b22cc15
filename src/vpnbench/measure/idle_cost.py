"""Idle cost: what a tunnel or a mesh costs while it carries nothing, per node: resident memory, CPU
(keepalives, timers, control-plane traffic) and, on a mesh testbed, the bytes on its underlay.

The cost of size of issue 41: run at N = 10, 30, 100 it says what each node and the control plane
pay for a growing mesh. After `settle` (the bring-up's own traffic, handshakes and the peers
learnt, is not idle) every node is read twice, `window` apart, each time in one command run
inside it: /proc/net/dev (the node's own namespace's counters) and /proc/<pid>/stat of every
process the node holds. A node's memory is its processes' resident set at the end; its CPU, the
user and system time they spent in the window (a process that exited in it loses what it had
spent), as a share of one core; its underlay bytes, both directions on its underlay interface,
per minute. The control node (Headscale, a lighthouse) is reported apart. vpnbench's own tools
(cat reading the counters) are left out. A kernel data path (kernel WireGuard, ESP) has no
process: its nodes read 0 MB and 0 % here, as the baseline's do; its memory is the kernel's.

The nodes are a mesh tunnel's (Tunnel.overlay), else the two ends. Underlay bytes only where the
testbed names the underlay interface: a mesh testbed's eth0; on two hosts the links also carry
what the run itself sends (ssh, the monitor) and are left out.
"""

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Params
from vpnbench.hosts.base import Host
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.ping import percentile
from vpnbench.testbeds.mesh import IFACE

OWN_TOOLS = frozenset({"cat"})  # the reader itself
PARALLEL = 8  # nodes read at once: two readings of 100 nodes should be close in time


class IdleCostParams(Params):
    kind: Literal["idle_cost"] = "idle_cost"
    window: Duration = Field(60.0, ge=5, le=3600)  # the idle time measured
    # Waited first: a bring-up's handshakes and peer discovery are its set-up, not its idle cost
    settle: Duration = Field(10.0, ge=0, le=600)


class IdleCost(Measurement):
    kind = "idle_cost"
    Params = IdleCostParams
    columns = (Column("rss_per_node_p50_mb", "MB/node p50"), Column("rss_per_node_max_mb", "MB/node max"),
               Column("cpu_per_node_p50_pct", "CPU %/node"), Column("underlay_kb_per_min_p50", "kB/min/node"))
    headline = Headline(("rss_per_node_p50_mb", "rss_per_node_max_mb"), "resident memory per node (MB)",
                        names=("p50", "max"))
    figures = ("headline", "host_cpu")

    def expected_seconds(self) -> float:
        return self.params.settle + self.params.window

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"window": min(params.window, max(seconds, 5.0)),
                                         "settle": min(params.settle, 2.0)})

    def run(self, ctx: MeasureContext) -> MeasureResult:
        nodes = nodes_to_read(ctx)
        underlay = IFACE if ctx.nodes else None
        hosts = dict(nodes) | ({"ctl": ctx.control} if ctx.control is not None else {})
        time.sleep(self.params.settle)
        first = read_all(hosts, underlay)
        started = time.monotonic()
        time.sleep(self.params.window)
        last = read_all(hosts, underlay)
        window = time.monotonic() - started
        costs = {name: cost(first[name], last[name], window, os.sysconf("SC_CLK_TCK")) for name in hosts}
        return MeasureResult(idle_metrics({n: costs[n] for n in nodes}, costs.get("ctl"), window),
                             {"costs": json.dumps(costs)})


def nodes_to_read(ctx: MeasureContext) -> dict[str, Host]:
    """A mesh tunnel's every node, else the tunnel's two ends."""
    if ctx.tunnel.overlay:
        missing = [name for name in ctx.tunnel.overlay if name not in ctx.nodes]
        if missing:
            raise MeasurementError(f"idle_cost: the testbed has no host for node {missing[0]}")
        return {name: ctx.nodes[name].host for name in ctx.tunnel.overlay}
    return {"client": ctx.client, "server": ctx.server}


def read_all(hosts: dict[str, Host], underlay: str | None) -> dict[str, dict]:
    def read(host: Host) -> dict:
        result = host.run(["cat", "/proc/net/dev", *[f"/proc/{pid}/stat" for pid in host.pids()]],
                          timeout=20, check=False)  # a process that exited meanwhile: cat goes on
        return parse_reading(result.stdout, underlay, os.sysconf("SC_PAGE_SIZE"))
    with ThreadPoolExecutor(PARALLEL) as pool:
        return dict(zip(hosts, pool.map(read, hosts.values())))


def parse_reading(text: str, underlay: str | None, page_size: int) -> dict:
    """From concatenated /proc/net/dev and /proc/<pid>/stat: {"underlay_bytes": rx + tx on the
    underlay interface (None without one, or where it is missing), "procs": {pid: (cpu ticks,
    rss bytes)}} leaving out OWN_TOOLS."""
    reading: dict = {"underlay_bytes": None, "procs": {}}
    for line in text.splitlines():
        name, colon, counters = line.partition(":")
        if underlay is not None and colon and name.strip() == underlay:
            fields = counters.split()
            reading["underlay_bytes"] = int(fields[0]) + int(fields[8])  # receive bytes, transmit bytes
            continue
        pid, _, rest = line.partition(" (")
        if not pid.isdigit() or ") " not in rest:
            continue
        comm, fields = rest.rsplit(") ", 1)[0], rest.rsplit(") ", 1)[1].split()
        if comm in OWN_TOOLS or len(fields) < 22:
            continue
        # stat's fields 14 and 15 (utime, stime, in clock ticks) and 24 (rss, in pages), counted from 1
        reading["procs"][int(pid)] = (int(fields[11]) + int(fields[12]), int(fields[21]) * page_size)
    return reading


def cost(first: dict, last: dict, window: float, ticks_per_s: int) -> dict:
    """One node's idle cost between two readings: resident bytes at the end, CPU as a share of one
    core (a process born in the window counts whole), underlay bytes per minute."""
    ticks = sum(cpu - first["procs"].get(pid, (0, 0))[0] for pid, (cpu, _) in last["procs"].items())
    node = {"rss_bytes": sum(rss for _, rss in last["procs"].values()), "processes": len(last["procs"]),
            "cpu_pct": round(100.0 * max(ticks, 0) / ticks_per_s / window, 3)}
    if first["underlay_bytes"] is not None and last["underlay_bytes"] is not None:
        node["underlay_bytes_per_min"] = round((last["underlay_bytes"] - first["underlay_bytes"]) * 60 / window, 1)
    return node


def idle_metrics(nodes: dict[str, dict], control: dict | None, window: float) -> dict[str, float]:
    """Per-node medians and maxima, the control node's own, and the window really measured."""
    metrics: dict[str, float] = {"nodes": float(len(nodes)), "window_s": round(window, 3)}
    for key, name, scale in (("rss_bytes", "rss_per_node_{}_mb", 1e-6), ("cpu_pct", "cpu_per_node_{}_pct", 1.0),
                             ("underlay_bytes_per_min", "underlay_kb_per_min_{}", 1e-3)):
        values = sorted(node[key] * scale for node in nodes.values() if key in node)
        if values:
            metrics[name.format("p50")] = round(percentile(values, 0.5), 3)
            metrics[name.format("max")] = round(values[-1], 3)
    if control is not None and control["processes"]:
        metrics["control_rss_mb"] = round(control["rss_bytes"] * 1e-6, 3)
        metrics["control_cpu_pct"] = control["cpu_pct"]
        if "underlay_bytes_per_min" in control:
            metrics["control_underlay_kb_per_min"] = round(control["underlay_bytes_per_min"] * 1e-3, 3)
    return metrics
