"""Traffic patterns over a mesh (issue 41, item 3): which ordered pairs of nodes send at once, and
what a cell of many pairs reports beside its aggregate.

- `pair`: today's two-host measurement (client -> server, n0 -> n1 on a mesh testbed).
- `ring`: n0 -> n1 -> ... -> n(N-1) -> n0, N flows (the peer vpn-bench's A -> B -> C -> A).
- `all-pairs`: every ordered pair, N·(N-1) flows.
- `hub`: every other node to n0 and n0 to every other node, 2·(N-1) flows. Both directions: a
  hub (a gateway, an exit node, a relay's host) sends as much as it receives, and one direction
  alone would not show which of the two limits it.

Every pattern but `pair` needs a mesh technique on a mesh testbed (Tunnel.overlay names the
nodes). The per-pair summary is the same for every kind: how many pairs, which carried nothing,
the least and most served, and Jain's index over the pairs' shares (fairness.jain_index).
"""

import dataclasses
import itertools
from typing import Literal

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Params
from vpnbench.hosts.base import Host
from vpnbench.measure.base import MeasureContext
from vpnbench.measure.fairness import jain_index
from vpnbench.techniques import TECHNIQUES
from vpnbench.testbeds.spec import TestbedSpec

Pattern = Literal["pair", "ring", "all-pairs", "hub"]
PATTERNS: tuple[str, ...] = ("pair", "ring", "all-pairs", "hub")


def nodes_of(ctx: MeasureContext, tunnel) -> tuple[dict[str, Host], dict[str, str]]:
    """The nodes to probe: a mesh tunnel's every node (its hosts from the testbed), else the two ends."""
    if tunnel.overlay:
        missing = [name for name in tunnel.overlay if name not in ctx.nodes]
        if missing:
            raise MeasurementError(f"the testbed has no host for node {missing[0]}")
        return {name: ctx.nodes[name].host for name in tunnel.overlay}, dict(tunnel.overlay)
    family = tunnel.family
    return ({"client": ctx.client, "server": ctx.server},
            {"client": tunnel.client_addrs[family], "server": tunnel.server_addrs[family]})


def pair_context(ctx: MeasureContext, hosts: dict[str, Host], overlay: dict[str, str], pair: tuple[str, str],
                 family: str) -> MeasureContext:
    """The context of one flow of a pattern: from the sender's node to the receiver's overlay
    address (of `family`, the mesh's overlay family: refused_pattern checked it)."""
    sender, receiver = pair
    tunnel = dataclasses.replace(ctx.tunnel, client_addrs={family: overlay[sender]},
                                 server_addrs={family: overlay[receiver]}, more=[])
    return dataclasses.replace(ctx, client=hosts[sender], server=hosts[receiver], tunnel=tunnel)



def pattern_pairs(pattern: str, nodes: list[str]) -> list[tuple[str, str]]:
    """The ordered (sender, receiver) pairs of `pattern` over `nodes` (n0 first: the hub)."""
    if pattern == "pair":
        return [(nodes[0], nodes[1])]
    if pattern == "ring":
        return [(node, nodes[(i + 1) % len(nodes)]) for i, node in enumerate(nodes)]
    if pattern == "all-pairs":
        return list(itertools.permutations(nodes, 2))
    if pattern == "hub":
        hub, spokes = nodes[0], nodes[1:]
        return [(spoke, hub) for spoke in spokes] + [(hub, spoke) for spoke in spokes]
    raise ValueError(f"pattern: {pattern!r}; allowed: {', '.join(PATTERNS)}")


def flow_count(pattern: str, nodes: int) -> int:
    """How many flows `pattern` runs at once over `nodes` nodes."""
    return {"pair": 1, "ring": nodes, "all-pairs": nodes * (nodes - 1), "hub": 2 * (nodes - 1)}[pattern]


def pair_name(pair: tuple[str, str]) -> str:
    return f"{pair[0]}>{pair[1]}"


def refused_pattern(pattern: str, family: str | None, techniques: list[Params], testbed: TestbedSpec,
                    max_flows: int | None = None) -> str | None:
    """Why `pattern` cannot run in this campaign ("pattern: why; allowed ..."), or None. Only
    `pair` runs between two hosts; the others need every technique to be a mesh, on a mesh
    testbed, whose overlay addresses are of the measurement's `family` where it is set (params.set_family),
    and (where the kind runs a process pair per flow) at most `max_flows` flows."""
    if pattern == "pair":
        return None
    if testbed.nodes is None:
        return (f"pattern: \"{pattern}\" sends between the nodes of a mesh, and this testbed has two hosts; "
                f"allowed here: pattern = \"pair\" (the others need [testbed] nodes = N and a mesh technique)")
    two_host = sorted({params.kind for params in techniques if not TECHNIQUES[params.kind].mesh})
    if two_host:
        meshes = sorted(kind for kind, cls in TECHNIQUES.items() if cls.mesh)
        return (f"pattern: \"{pattern}\" sends between every node of a mesh, and {', '.join(two_host)} runs "
                f"between n0 and n1 only; allowed with it: pattern = \"pair\" (mesh techniques: {', '.join(meshes)})")
    overlays = {params.kind: TECHNIQUES[params.kind].overlay_family for params in techniques}
    other = sorted(kind for kind, overlay in overlays.items() if family is not None and overlay != family)
    if other:
        wanted = sorted(set(overlays.values()))
        allowed = (f"family = \"{wanted[0]}\", or " if len(wanted) == 1 else "") + \
            "family left unset (each mesh over its own overlay family)"
        return (f"family: pattern = \"{pattern}\" sends to the mesh's overlay addresses, and {', '.join(other)} "
                f"{'has' if len(other) == 1 else 'have'} {overlays[other[0]].replace('ip', 'IP')} ones; allowed with it: {allowed}")
    flows = flow_count(pattern, testbed.nodes)
    if max_flows is not None and flows > max_flows:
        fits = [p for p in PATTERNS if flow_count(p, testbed.nodes) <= max_flows]
        return (f"pattern: \"{pattern}\" over {testbed.nodes} nodes is {flows} flows at once, more than {max_flows} "
                f"(two processes each: beyond that the processes, not the mesh, are measured on one host); "
                f"allowed here: pattern = {' or '.join(f'{chr(34)}{p}{chr(34)}' for p in fits)}")
    return None


def pair_summary(shares: dict[str, float], unit: str) -> dict[str, float]:
    """The metrics a pattern cell adds, from each pair's share (`unit` names it in the metrics:
    "bps" for received bits/s, "delivered" for the share of echoes answered): the pairs, the
    silent ones (nothing carried), the least and most served, Jain's index over the shares
    (absent when every pair carried nothing)."""
    values = list(shares.values())
    metrics = {"pairs": float(len(values)), "pairs_silent": float(sum(1 for v in values if v <= 0)),
               f"pair_min_{unit}": min(values), f"pair_max_{unit}": max(values)}
    jain = jain_index(values)
    return metrics if jain is None else {**metrics, "jain_index": jain}


def silent_pairs(shares: dict[str, float]) -> list[str]:
    """The pairs that carried nothing, in the pattern's order."""
    return [name for name, value in shares.items() if value <= 0]
