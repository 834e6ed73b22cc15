"""bench/scale: what N tunnels between the same two hosts cost (issue 32, many tunnels): for each
N, one bring-up on the local testbed (namespaces, no router), the time until every tunnel
answered a ping, the daemons' resident memory and the machine's memory growth, then a fixed load
spread over all N (vpnbench-gen, one stream per tunnel) with the CPU it took: the daemons' and
the machine's, per tunnel; the aggregate received and Jain's index over the tunnels.

Per tunnel means the figure divided by N; the growth between two N is the honest part (the
first tunnel carries the fixed costs: the server daemon, the testbed).

Run as root (it takes the test lock while it measures):
    .venv/bin/python bench/scale.py --tunnels 1,10,100 --technique wireguard --set implementation=wireguard-go
    .venv/bin/python bench/scale.py --tunnels 1,10,100,1000 --technique baseline --publish
--publish writes the table into bench/RESULTS.md, section "scale: <technique> <settings>".
"""

import argparse
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
from common import exclusive, machine, require_root, write_section  # noqa: E402
from vpnbench.hosts.resources import RunResources  # noqa: E402
from vpnbench.measure.base import MeasureContext, PortAllocator  # noqa: E402
from vpnbench.measure.gen import run_gen  # noqa: E402
from vpnbench.run.bringup import wait_all_through, wait_through  # noqa: E402
from vpnbench.techniques import TECHNIQUES  # noqa: E402
from vpnbench.techniques.base import TechniqueContext  # noqa: E402
from vpnbench.testbeds.local import LocalTestbed  # noqa: E402
from vpnbench.testbeds.probe import LocalKernelProbe  # noqa: E402
from vpnbench.testbeds.spec import TestbedSpec

SETUP_TIMEOUT = 120.0
LENGTH = 1000  # UDP payload bytes of the load


def cpu_seconds(pids: list[int]) -> float:
    """User + system seconds these processes have used so far."""
    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def busy_seconds() -> float:
    """Seconds the machine's cores have been busy (all but idle and iowait)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def measure(kind: str, settings: dict, tunnels: int, rate: int, seconds: float) -> dict:
    technique_class = TECHNIQUES[kind]
    params = technique_class.Params(**settings, tunnels=tunnels)
    ceiling, reason = technique_class.tunnel_ceiling(params)
    if tunnels > ceiling:
        return {"tunnels": tunnels, "skipped": f"above the ceiling {ceiling}: {reason}"}
    resources = RunResources()
    testbed = LocalTestbed(TestbedSpec(router=False), resources)
    try:
        testbed.up()
        probe = LocalKernelProbe(resources)
        ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), resources, probe)
        technique = technique_class(params, ctx)
        backend = technique_class.resolve_backend(params, probe)
        memory_before = psutil.virtual_memory().used
        started = time.monotonic()
        try:
            tunnel = technique.up(backend)
            up_s = time.monotonic() - started
            wait_through(testbed.client, tunnel.server_addrs["ipv4"], SETUP_TIMEOUT)
            if tunnel.more:
                wait_all_through(testbed.client, [ends.server["ipv4"] for ends in tunnel.more], SETUP_TIMEOUT)
            setup_s = time.monotonic() - started
            pids = [proc.pid for proc in tunnel.procs]
            rss = sum(psutil.Process(pid).memory_info().rss for pid in pids)
            memory_growth = psutil.virtual_memory().used - memory_before
            daemons_before, busy_before = cpu_seconds(pids), busy_seconds()
            load = run_gen(MeasureContext(testbed.client, testbed.server, tunnel, PortAllocator()), "ipv4", rate,
                           LENGTH, seconds)
            daemons_cpu, busy = cpu_seconds(pids) - daemons_before, busy_seconds() - busy_before
        finally:
            down_started = time.monotonic()
            technique.down()
            down_s = time.monotonic() - down_started
    finally:
        testbed.down()
        resources.close()
    metrics = load.metrics
    return {"tunnels": tunnels, "up_s": up_s, "setup_s": setup_s, "down_s": down_s, "daemons": len(pids),
            "rss_per_tunnel_mb": rss / tunnels / 1e6, "memory_growth_per_tunnel_mb": memory_growth / tunnels / 1e6,
            "daemon_cpu_ms_per_tunnel_s": 1e3 * daemons_cpu / seconds / tunnels,
            "machine_cpu_pct": 100 * busy / seconds, "received_mbps": metrics["throughput_bps"] / 1e6,
            "loss_pct": metrics.get("loss_pct", 0.0), "jain": metrics.get("jain_index", 1.0)}


def table(rows: list[dict]) -> str:
    lines = ["| N | up s | all answer s | down s | daemons | RSS MB / tunnel | machine memory MB / tunnel "
             "| daemon CPU ms/s / tunnel | machine CPU % | received Mbit/s | loss % | Jain |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        if "skipped" in row:
            lines.append(f"| {row['tunnels']} | {row['skipped']} |" + " |" * 10)
            continue
        lines.append(f"| {row['tunnels']} | {row['up_s']:.2f} | {row['setup_s']:.2f} | {row['down_s']:.2f} "
                     f"| {row['daemons']} | {row['rss_per_tunnel_mb']:.2f} | {row['memory_growth_per_tunnel_mb']:.2f} "
                     f"| {row['daemon_cpu_ms_per_tunnel_s']:.2f} | {row['machine_cpu_pct']:.0f} "
                     f"| {row['received_mbps']:.1f} | {row['loss_pct']:.2f} | {row['jain']:.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tunnels", default="1,10,100", help="the N to measure, comma-separated")
    parser.add_argument("--technique", default="wireguard", choices=sorted(TECHNIQUES))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting of the technique, as in a campaign (implementation=wireguard-go)")
    parser.add_argument("--rate", type=float, default=50e6, help="the fixed load's bits/s over all tunnels")
    parser.add_argument("--seconds", type=float, default=3.0, help="how long the load runs")
    parser.add_argument("--publish", action="store_true", help="write the table into bench/RESULTS.md")
    args = parser.parse_args()
    require_root("scale.py")
    settings = dict(item.split("=", 1) for item in args.set)
    rows = []
    for tunnels in [int(n) for n in args.tunnels.split(",")]:
        with exclusive():
            rows.append(measure(args.technique, settings, tunnels, int(args.rate), args.seconds))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    named = " ".join(f"{key}={value}" for key, value in settings.items())
    body = (f"{machine('scale.py')}; load {args.rate / 1e6:g} Mbit/s of {LENGTH}-byte UDP over all tunnels for "
            f"{args.seconds:g} s.\n\n{table(rows)}\n")
    print(body)
    if args.publish:
        write_section(f"scale: {args.technique} {named}".strip(), body)


if __name__ == "__main__":
    main()
