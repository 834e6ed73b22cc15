"""bench/mesh_scale: what a growing mesh costs (issue 41, cost of size). For each mesh technique
and N nodes on the open internet of the mesh testbed:

- convergence, as a user runs it: a campaign with the `convergence` kind (one cycle), its
  converged_s (the last pair's first reply from the daemons' start) and the pairs' median;
- then, on the same mesh, the `idle_cost` kind for `--idle` seconds: each node's resident memory (the
  control plane's apart), its CPU over the idle window (keepalives, control traffic) and the
  underlay bytes it sent and received, per minute (medians over the nodes).

Run as root (it takes the test lock while it measures):
    .venv/bin/python bench/mesh_scale.py --nodes 10,30,100 --publish
--publish writes the table into bench/RESULTS.md, section "mesh scale".
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import exclusive, machine, publish, require_root, run_campaign  # noqa: E402
from vpnbench.techniques import TECHNIQUES  # noqa: E402

# Every mesh technique registered (issue 41: each mesh at N = 10, 30 and 100), in registry order
TECHNIQUE_KINDS = tuple(kind for kind, cls in TECHNIQUES.items() if getattr(cls, "mesh", False))


def probe_plan(nodes: int) -> tuple[int, int]:
    """(fping period ms, convergence deadline s) for N nodes. Every node's fping asks every other
    node each period at first: N(N-1) echoes a period through userspace daemons, which at N = 100
    and 1 s (9 900 echoes a second) was more than this 2-core machine carried (stop 55: RTTs near
    1 s at a third lost). At 5 s it is 1 980 a second; a silent pair is still asked at once by
    each restarted fping, so the period bounds a pair's resolution, not its wait."""
    if nodes <= 30:
        return 500, 120
    return (1000, 120) if nodes < 100 else (5000, 300)


def measured(kind: str, nodes: int, period_ms: int, deadline_s: int, idle: float) -> dict[str, dict]:
    """One campaign: convergence as a user runs it, then the idle_cost kind on the same mesh; a
    mesh that does not come up at this N gives its cells' errors (what ran out first), and the
    bench goes on with the next."""
    cells, _ = run_campaign(f"""[campaign]\nname = "mesh-scale-bench"\n[testbed]\nnodes = {nodes}\n
[[technique]]\nkind = "{kind}"\n[[measurement]]\nkind = "convergence"\ndeadline = "{deadline_s}s"\nperiod_ms = {period_ms}\n
[[measurement]]\nkind = "idle_cost"\nwindow = "{idle:g}s"\n""", check=False)
    return {cell["measurement"]: cell["metrics"] if cell["status"] == "ok" else {"error": cell["error"]}
            for cell in cells}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="10,30,100")
    parser.add_argument("--kinds", default=",".join(TECHNIQUE_KINDS), help="the mesh techniques, comma-separated")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of the idle window")
    parser.add_argument("--publish", action="store_true")
    args = parser.parse_args()
    require_root("mesh_scale.py")
    rows = []
    with exclusive():
        for kind in args.kinds.split(","):
            for nodes in [int(n) for n in args.nodes.split(",")]:
                period, deadline = probe_plan(nodes)
                cells = measured(kind, nodes, period, deadline, args.idle)
                rows.append((kind, nodes, period, deadline, cells["convergence"], cells["idle_cost"]))
                print(kind, nodes, cells, flush=True)
    lines = [machine("mesh_scale.py") + f"; idle window {args.idle:g} s; every node on the open internet.", "",
             "| mesh | N | converged s | pair p50 s | fping period | memory per node MB p50 (max) | control MB "
             "| idle CPU per node % p50 | control CPU % | underlay kB per node per min p50 |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for kind, nodes, period, deadline, conv, cost in rows:
        converged = (f"{conv['converged_s']:.2f}" if "converged_s" in conv else
                     f"not within {deadline}" if conv.get("converged_s_censored") else conv.get("error", "?")[:60].replace("|", "/"))
        pair = f"{conv['first_reply_p50_s']:.2f}" if "first_reply_p50_s" in conv else "–"
        if "error" in cost:
            said = cost["error"][:60].replace("|", "/")
            lines.append(f"| {kind} | {nodes} | {converged} | {pair} | {period} ms | {said} | | | | |")
            continue
        lines.append(f"| {kind} | {nodes} | {converged} | {pair} | {period} ms | {cost['rss_per_node_p50_mb']:.1f} "
                     f"({cost['rss_per_node_max_mb']:.1f}) | {cost.get('control_rss_mb', 0):.1f} "
                     f"| {cost['cpu_per_node_p50_pct']:.2f} | {cost.get('control_cpu_pct', 0):.2f} "
                     f"| {cost['underlay_kb_per_min_p50']:.1f} |")
    body = "\n".join(lines)
    if args.publish:
        publish("mesh scale", body)
    else:
        print(body)


if __name__ == "__main__":
    main()
