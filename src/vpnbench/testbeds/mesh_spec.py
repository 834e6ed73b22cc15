"""What [testbed] nodes = N and nat = ... say: pure data and arithmetic, no host touched.

The NAT types are RFC 4787's, each a (mapping, filtering) pair. The three NAT'd types the issue
names take the same word for both behaviours (a full cone is endpoint-independent in both; the
symmetric NAT address-and-port-dependent in both); udp-blocked maps TCP like a home router
(endpoint-independent mapping, address-and-port-dependent filtering) and drops every UDP packet.
"""

import math
from typing import Annotated

from pydantic import BeforeValidator

# The hard limit of the kernel's ARP table, net.ipv4.neigh.default.gc_thresh3 (1024 by default),
# counts every namespace's entries together: it is one table for the whole machine. A NAT'd node
# of the routed layout (mesh.py) holds 4 entries (node -> NAT, NAT -> node, NAT -> internet,
# internet -> NAT), so 250 nodes fill 1000 of the 1024, the control node and the probe's outside
# addresses the rest. More would need gc_thresh3 raised on the machine, which vpnbench does not do.
MAX_NODES = 250
MIN_NODES = 2  # a pair is the smallest mesh (the issue's meshes start at 3; 2 is the NAT matrix's cell)

ENDPOINT_INDEPENDENT = "endpoint-independent"
ADDRESS_DEPENDENT = "address-dependent"
ADDRESS_AND_PORT_DEPENDENT = "address-and-port-dependent"

# name -> (mapping behaviour, filtering behaviour), RFC 4787 sections 4.1 and 5; None: no NAT
NAT_TYPES: dict[str, tuple[str, str] | None] = {
    "none": None,
    "endpoint-independent": (ENDPOINT_INDEPENDENT, ENDPOINT_INDEPENDENT),
    "address-dependent": (ADDRESS_DEPENDENT, ADDRESS_DEPENDENT),
    "address-and-port-dependent": (ADDRESS_AND_PORT_DEPENDENT, ADDRESS_AND_PORT_DEPENDENT),
    "udp-blocked": (ENDPOINT_INDEPENDENT, ADDRESS_AND_PORT_DEPENDENT),  # for TCP; UDP never leaves
}
ALLOWED_NAT = ", ".join(NAT_TYPES)


def _check_nodes(value):
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_NODES <= value <= MAX_NODES:
        raise ValueError(f"{value!r} is not allowed; allowed values: whole numbers from {MIN_NODES} to {MAX_NODES} "
                         "(the machine's ARP table, gc_thresh3 = 1024 entries, holds 4 per NAT'd node)")
    return value


def _check_nat(value):
    """One type for every node, a list (one per node), or a mix {type = fraction} summing to 1."""
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, dict)) else None
    if names is None:
        raise ValueError(f"{value!r} is not allowed; allowed values: a type, a list of types (one per node) or a "
                         f"mix {{type = fraction}}; types: {ALLOWED_NAT}")
    for name in names:
        if name not in NAT_TYPES:
            raise ValueError(f"{name!r} is not allowed; allowed values: {ALLOWED_NAT}")
    if isinstance(value, dict):
        fractions = list(value.values())
        if any(isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 1 for f in fractions) \
                or not math.isclose(sum(fractions), 1.0, abs_tol=1e-9):
            raise ValueError(f"{value!r} is not allowed; allowed values: fractions above 0 that sum to 1 "
                             f"(e.g. {{\"endpoint-independent\" = 0.5, \"address-and-port-dependent\" = 0.5}})")
    return value


Nodes = Annotated[int | None, BeforeValidator(_check_nodes)]
NatSetting = Annotated[str | list[str] | dict[str, float], BeforeValidator(_check_nat)]


def nat_per_node(nat: str | list[str] | dict[str, float], nodes: int) -> list[str]:
    """Each node's NAT type, n0 first. A mix is split by the largest remainder (Hamilton's method:
    each type gets floor(fraction x N) nodes, the nodes left over go to the largest remainders,
    ties to the type named first), then given out in the order the mix names them: the same
    campaign always gives the same node the same NAT."""
    if isinstance(nat, str):
        return [nat] * nodes
    if isinstance(nat, list):
        return list(nat)
    quotas = {name: fraction * nodes for name, fraction in nat.items()}
    counts = {name: math.floor(quota) for name, quota in quotas.items()}
    order = sorted(quotas, key=lambda name: (-(quotas[name] - counts[name]), list(nat).index(name)))
    for name in order[:nodes - sum(counts.values())]:
        counts[name] += 1
    return [name for name in nat for _ in range(counts[name])]


def nat_list_error(nat, nodes: int | None) -> str | None:
    """Why nat does not fit nodes (a per-node list of another length; nat without nodes), or None."""
    if nodes is None:
        return None if nat == "none" else "nat: only with nodes = N (a mesh testbed); allowed here: leave nat out"
    if isinstance(nat, list) and len(nat) != nodes:
        return (f"nat: a list of {len(nat)} types for nodes = {nodes}; allowed values: one type per node "
                f"({nodes}), one type for all, or a mix {{type = fraction}}")
    return None


def direct_path_possible(nat_a: str, nat_b: str) -> bool:
    """Can two nodes behind these NATs (NAT_TYPES names) exchange UDP directly, each sending to the
    address and port the other is known by: its NAT's outside address and the port it listens on
    (a static mesh's configured endpoint), or the mapping a lighthouse or STUN server saw (a mesh
    that punches holes)? Both are the node's mapping for a new peer only where its NAT maps
    endpoint-independently: that is the whole arithmetic, in RFC 4787's terms.

    One open end: yes (the NAT'd end sends first, the reply is conntrack's; udp-blocked excepted).
    Both behind NATs: a packet from A to B's configured endpoint gets in only where B's NAT has a
    mapping of that very port (kept only by an endpoint-independent mapping; nat.py's address-
    dependent and address-and-port-dependent ones choose another port per destination) and B's filter
    admits A's packet: endpoint-independent filtering admits anyone once B has sent from the port
    (it has: its own handshakes and keepalives to A), address-dependent admits A's address (B sent
    to it), address-and-port-dependent only A's configured port, which is A's real source only if
    A's mapping kept it. A pair reaches when either direction gets in (the answer rides on the
    conntrack entries the first packet made)."""
    if "udp-blocked" in (nat_a, nat_b):
        return False
    if "none" in (nat_a, nat_b):
        return True
    return _gets_in(nat_a, nat_b) or _gets_in(nat_b, nat_a)


def _gets_in(sender: str, receiver: str) -> bool:
    """Does the sender's packet to the receiver's configured endpoint get in (both behind NATs)?"""
    receiver_mapping, receiver_filter = NAT_TYPES[receiver]
    sender_mapping, _ = NAT_TYPES[sender]
    if receiver_mapping != ENDPOINT_INDEPENDENT:
        return False  # no mapping of the configured port: the packet meets a closed port
    if receiver_filter in (ENDPOINT_INDEPENDENT, ADDRESS_DEPENDENT):
        return True
    return sender_mapping == ENDPOINT_INDEPENDENT  # from the very address:port the receiver sent to
