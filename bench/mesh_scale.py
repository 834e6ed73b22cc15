"""bench/mesh_scale: what a growing mesh costs (issue 41, cost of size). For each mesh technique
and N nodes on the open internet of the mesh testbed:

- convergence, as a user runs it: a campaign with the `convergence` kind (one cycle), its
  converged_s (the last pair's first reply from the daemons' start) and the pairs' median;
- then one bring-up of its own, left idle for `--idle` seconds: every daemon's resident memory
  (per node, the control plane's apart), their CPU seconds over the idle window (keepalives,
  control traffic) and the underlay bytes each node sent and received in it (the internet
  namespace's counters of its attachment), per minute.

Run as root (it takes the test lock while it measures):
    .venv/bin/python bench/mesh_scale.py --nodes 10,30,100 --publish
--publish writes the table into bench/RESULTS.md, section "mesh scale".
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
from common import exclusive, machine, publish, require_root, run_campaign  # noqa: E402
from vpnbench.hosts.resources import RunResources  # noqa: E402
from vpnbench.run.bringup import wait_through  # noqa: E402
from vpnbench.techniques import TECHNIQUES  # noqa: E402
from vpnbench.techniques.base import TechniqueContext  # noqa: E402
from vpnbench.testbeds.mesh import MeshTestbed  # noqa: E402
from vpnbench.testbeds.spec import TestbedSpec  # noqa: E402

TECHNIQUE_KINDS = ("wireguard-mesh", "nebula-mesh")


def convergence(kind: str, nodes: int, period_ms: int) -> dict:
    cells, _ = run_campaign(f"""[campaign]\nname = "mesh-scale-bench"\n[testbed]\nnodes = {nodes}\n
[[technique]]\nkind = "{kind}"\n[[measurement]]\nkind = "convergence"\ndeadline = "120s"\nperiod_ms = {period_ms}\n""")
    (cell,) = cells
    if cell["status"] != "ok":
        return {"error": cell["error"]}
    return cell["metrics"]


def netns_pids(netns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in out]


def attachment_bytes(testbed: MeshTestbed) -> dict[str, int]:
    """Bytes through each node's attachment in the internet namespace (rx + tx), by node."""
    out = subprocess.run(["ip", "-n", testbed.inet, "-j", "-s", "link"], capture_output=True, text=True, check=True).stdout
    names = {node.name for node in testbed.nodes}
    return {link["ifname"]: link["stats64"]["rx"]["bytes"] + link["stats64"]["tx"]["bytes"]
            for link in json.loads(out) if link["ifname"] in names}


def idle_cost(kind: str, nodes: int, idle: float) -> dict:
    cls = TECHNIQUES[kind]
    params = cls.Params()
    resources = RunResources()
    testbed = MeshTestbed(TestbedSpec(nodes=nodes), resources)
    technique = None
    try:
        testbed.up()
        ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), resources, testbed.probe,
                               None, testbed.nodes, testbed.control)
        technique = cls(params, ctx)
        tunnel = technique.up(cls.resolve_backend(params, testbed.probe))
        wait_through(testbed.client, tunnel.server_addrs["ipv4"], 60)
        node_pids = [pid for node in testbed.nodes for pid in netns_pids(node.host.netns)]
        control_pids = netns_pids(testbed.control.netns)
        processes = [psutil.Process(pid) for pid in node_pids + control_pids]
        cpu_before = {p.pid: sum(p.cpu_times()[:2]) for p in processes}
        bytes_before = attachment_bytes(testbed)
        time.sleep(idle)
        cpu = {p.pid: sum(p.cpu_times()[:2]) - cpu_before[p.pid] for p in processes}
        sent = attachment_bytes(testbed)
        node_rss = [psutil.Process(pid).memory_info().rss for pid in node_pids]
        control_rss = sum(psutil.Process(pid).memory_info().rss for pid in control_pids)
        per_minute = 60 / idle
        return {"rss_per_node_mb": sum(node_rss) / nodes / 2**20, "control_rss_mb": control_rss / 2**20,
                "idle_cpu_per_node_pct": 100 * sum(cpu[pid] for pid in node_pids) / nodes / idle,
                "idle_cpu_control_pct": 100 * sum(cpu[pid] for pid in control_pids) / idle,
                "underlay_kb_per_node_min": sum(sent[n] - bytes_before[n] for n in sent) / nodes * per_minute / 1e3}
    finally:
        if technique is not None:
            technique.down()
        testbed.down()
        resources.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="10,30,100")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of the idle window")
    parser.add_argument("--publish", action="store_true")
    args = parser.parse_args()
    require_root("mesh_scale.py")
    rows = []
    with exclusive():
        for kind in TECHNIQUE_KINDS:
            for nodes in [int(n) for n in args.nodes.split(",")]:
                period = 500 if nodes <= 30 else 1000  # N = 100: 9 900 pairs, ~10 000 echoes/s at 1 s
                conv = convergence(kind, nodes, period)
                cost = idle_cost(kind, nodes, args.idle)
                rows.append((kind, nodes, period, conv, cost))
                print(kind, nodes, conv.get("converged_s"), cost, flush=True)
    lines = [machine("mesh_scale.py") + f"; idle window {args.idle:g} s; every node on the open internet.", "",
             "| mesh | N | converged s | pair p50 s | fping period | memory per node MB | control MB "
             "| idle CPU per node % | control CPU % | underlay kB per node per min |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for kind, nodes, period, conv, cost in rows:
        converged = (f"{conv['converged_s']:.2f}" if "converged_s" in conv else
                     "not within 120" if conv.get("converged_s_censored") else conv.get("error", "?")[:60])
        pair = f"{conv['first_reply_p50_s']:.2f}" if "first_reply_p50_s" in conv else "–"
        lines.append(f"| {kind} | {nodes} | {converged} | {pair} | {period} ms | {cost['rss_per_node_mb']:.1f} "
                     f"| {cost['control_rss_mb']:.1f} | {cost['idle_cpu_per_node_pct']:.2f} "
                     f"| {cost['idle_cpu_control_pct']:.2f} | {cost['underlay_kb_per_node_min']:.1f} |")
    body = "\n".join(lines)
    if args.publish:
        publish("mesh scale", body)
    else:
        print(body)


if __name__ == "__main__":
    main()
