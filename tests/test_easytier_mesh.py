"""EasyTier 2.0.3 as a mesh on the mesh testbed (issues 41 and 42): every node dials a public peer
on the control node, which forwards. EasyTier's direct connector dials each peer's listener at the
addresses the peer has on its own interfaces, and its UDP hole punching needs its built-in public
STUN servers, unreachable here: so a pair goes direct exactly where one end is on the open segment,
and two nodes both behind NATs are relayed (by the public peer or an open node) even where mesh_spec.direct_path_possible
says a path exists (worse than the arithmetic); over TCP a udp-blocked node goes direct to the
open nodes (better than the arithmetic, which counts UDP). EasyTier's own routes (its next hops)
and the underlay's view agree on that; path = "relayed" (disable_p2p) relays every pair; nothing
is left behind."""

import itertools
import json

import pytest

from conftest import (
    assert_technique_field_refused,
    kill9_mid_traffic_then_cleanup,
    killed_run,
    run_campaign,
)
from mesh_pairs import (
    BLOCKED_NATS,
    NATS,
    assert_needs_a_mesh_testbed,
    auto_and_relayed_campaign,
    auto_and_relayed_cycles,
    convergence_cycles,
    pairs_without_direct_path,
)
from vpnbench.techniques.easytier_mesh import overlay_address, route_view

# s: up() waits for two rounds of EasyTier's direct connector (5 s apart) and for its routes to
# hold still one round more (module docstring): 15 s here, then every pair answers at once
DEADLINE = 40

ROUTE_TABLE = """\
┌──────────────┬────────────────┬─────────────┬───────────────┬───────────────────┬──────────────┬──────┬─────────┐
│ ipv4         │ hostname       │ proxy_cidrs │ next_hop_ipv4 │ next_hop_hostname │ next_hop_lat │ cost │ version │
├──────────────┼────────────────┼─────────────┼───────────────┼───────────────────┼──────────────┼──────┼─────────┤
│ 10.96.0.1/16 │ vpnbench-n0    │             │ -             │ Local             │ 0            │ 0    │ 2.0.3   │
│              │ vpnbench-control │           │ DIRECT        │                   │ 0.2          │ 1    │ 2.0.3   │
│ 10.96.0.2/16 │ vpnbench-n1    │             │ DIRECT        │                   │ 0.1          │ 1    │ 2.0.3   │
│ 10.96.0.5    │ vpnbench-n4    │             │               │ vpnbench-control  │ 0.3          │ 2    │ 2.0.3   │
└──────────────┴────────────────┴─────────────┴───────────────┴───────────────────┴──────────────┴──────┴─────────┘
"""


# -- pure parsing, arithmetic and validation -------------------------------------------------------
def test_the_route_table_gives_each_peer_direct_or_its_next_hop_and_leaves_out_the_node_and_the_public_peer():
    assert route_view(ROUTE_TABLE) == {"10.96.0.2": "direct", "10.96.0.5": "relay:control"}
    assert route_view("") == {}


def test_overlay_addresses_are_distinct_for_the_250_nodes_a_mesh_may_have():
    assert len({overlay_address(i) for i in range(250)}) == 250
    assert overlay_address(0) == "10.96.0.1" and overlay_address(249) == "10.96.0.250"


@pytest.mark.parametrize("entry, expected", [
    ({"path": "direct"}, "technique[1].path: 'direct' is not allowed; allowed values: 'auto', 'relayed'"),
    ({"family": "ipv6"}, "technique[1].family: 'ipv6' is not allowed; allowed values: 'ipv4'"),
    ({"transport": "quic"}, "technique[1].transport: 'quic' is not allowed; allowed values: 'udp', 'tcp'"),
    ({"port": 0}, "technique[1].port:"),
    ({"public_peer": "n0"}, "technique[1].public_peer: unknown key"),  # always the control node
])
def test_bad_fields_are_refused_in_one_line(entry, expected):
    assert_technique_field_refused("easytier-mesh", entry, expected)


def test_a_two_host_testbed_is_refused_before_anything_runs(tmp_path):
    assert_needs_a_mesh_testbed(tmp_path, "easytier-mesh")


# -- real daemons ----------------------------------------------------------------------------------
def _ordered_pairs(nats: list[str]):
    return itertools.permutations(range(len(nats)), 2)


@pytest.mark.netns
def test_six_nodes_behind_mixed_nats_go_direct_where_one_end_is_open_and_relay_the_rest(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, auto_and_relayed_campaign("easytier-mesh", DEADLINE))
    auto, relayed, no_direct = auto_and_relayed_cycles(tmp_path / "c.db", cells, DEADLINE)
    open_end = {f"n{i}>n{j}" for i, j in _ordered_pairs(NATS) if "none" in (NATS[i], NATS[j])}
    both_natted = set(auto["paths"]) - open_end
    # EasyTier's own view (its next hops, read at up()): direct exactly where one end is open
    (routes,) = {json.dumps(c["negotiated"]["mesh"]["routes"]) for c in cells if c["technique"] == "auto"}
    routes = json.loads(routes)
    assert {pair for pair, hop in routes.items() if hop == "direct"} == open_end
    # the rest through a node both hold a connection to, each cost 2 (its shortest paths tie): the public
    # peer or an open node, which forwards like the public peer does
    assert {routes[pair] for pair in both_natted} <= {"relay:control", "relay:n0", "relay:n1"}
    # the underlay never shows a pair direct that EasyTier did not hold direct at that cycle's up(), and
    # EasyTier holds direct only where one end is open; some pairs go direct on the wire. Not every pair
    # it held direct is seen direct: with the CPU halved, a pair its direct connector had not reached yet
    # stayed relayed (stop 52), and a cycle up after 15 s held n0>n1 direct while the wire showed it
    # relayed throughout the window (stop 53: its direct connections timed out on a starved CPU)
    direct = {pair for pair, path in auto["paths"].items() if path == "direct"}
    held_direct = {pair for pair, hop in auto["own_view"].items() if hop == "direct"}
    assert direct and direct <= held_direct <= open_end, (sorted(direct - held_direct), sorted(held_direct - open_end))
    # worse than the arithmetic: NATed pairs it allows (a full cone and another) stay relayed, no STUN here
    assert both_natted - no_direct, "the NAT mix should hold NATed pairs the arithmetic lets go direct"
    # path = "relayed": every pair through the public peer, as the underlay sees it
    assert set(relayed["paths"].values()) == {"relay"}
    relayed_cell = next(c for c in cells if c["technique"] == "relayed")
    assert relayed_cell["negotiated"]["forced_by"] == "disable_p2p = true"
    assert relayed_cell["negotiated"]["mtu"] == 1360  # the pair technique's arithmetic: 1380 less 20


@pytest.mark.netns
def test_over_tcp_a_node_whose_nat_drops_udp_joins_and_goes_direct_to_the_open_nodes(tmp_path, clean_machine):
    """Over TCP the udp-blocked node dials the public peer and the open nodes' listeners: every pair
    answers, and its pairs with the open nodes are direct, which mesh_spec.direct_path_possible (UDP
    paths) does not count."""
    _, cells = run_campaign(tmp_path, f"""[campaign]
name = "blocked"
[testbed]
nodes = 3
nat = {json.dumps(BLOCKED_NATS)}
[[technique]]
kind = "easytier-mesh"
transport = "tcp"
[[measurement]]
kind = "convergence"
deadline = "{DEADLINE}s"
""")
    (cell,) = cells
    assert cell["status"] == "ok", cell["error"]
    assert cell["wire_check"] == "encrypted"
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    assert cycle["never"] == []
    blocked = pairs_without_direct_path(BLOCKED_NATS)
    assert blocked == {"n0>n2", "n2>n0", "n1>n2", "n2>n1"}
    # EasyTier's own view at up(): every pair direct, the udp-blocked node's too (over TCP)
    assert set(cell["negotiated"]["mesh"]["routes"].values()) == {"direct"}
    # some of the udp-blocked node's pairs go direct on the wire. Not all of them: with another test's
    # traffic beside it (two at a time, CI of stop 56) a connection EasyTier held direct at up() had
    # timed out and the wire showed n0>n2 relayed throughout the window, as the six-node test saw
    # with the CPU halved (stop 53)
    direct = {pair for pair, path in cycle["paths"].items() if path == "direct"}
    assert direct & blocked, cycle["paths"]


KILLED_RUN = killed_run("easytier-mesh", {"nodes": 4, "nat": ["none", "none", "address-dependent", "address-and-port-dependent"]})


@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_secret_or_namespace(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/easytier-mesh-*.toml")
