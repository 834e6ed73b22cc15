"""tinc 1.0 as a mesh on the mesh testbed (issue 41, items 2 and 3): every node ConnectTo the hub
on the control node, which forwards. tinc 1.0 punches no holes: a node probes a peer at the
address the hub's edge gives (its NAT's outside address, its Port) and learns its real UDP address
only from packets that got through, so a pair whose NATs leave no direct path
(mesh_spec.direct_path_possible) is never direct and goes through the hub; every pair answers
within the deadline; path = "relayed" (IndirectData) relays every pair; a udp-blocked node is
reached over its TCP meta connection; nothing is left behind."""


import pytest

from conftest import assert_refused, kill9_mid_traffic_then_cleanup, killed_run, run_campaign
from mesh_pairs import (
    BLOCKED_NATS,
    auto_and_relayed_campaign,
    auto_and_relayed_cycles,
    convergence_cycles,
    mesh_campaign_text,
    pairs_without_direct_path,
    udp_blocked_campaign,
)

# s: every pair has the hub from the start (packets without a key or an answered UDP probe go to
# the next hop, the hub); the relayed ones wait for nothing else
DEADLINE = 30


# -- validation ------------------------------------------------------------------------------------
@pytest.mark.parametrize("testbed, technique, line", [
    ("", "", "testbed.nodes: tinc-mesh brings up a mesh of nodes and needs a mesh testbed; allowed: nodes = 2 to"),
    ("nodes = 3\n", 'path = "direct"\n', "technique[1].path: 'direct' is not allowed; allowed values: 'auto', 'relayed'"),
    ("nodes = 3\n", 'mode = "switch"\n', "technique[1].mode: 'switch' is not allowed; allowed values: 'router'"),
    ("nodes = 3\n", 'family = "ipv6"\n', "technique[1].family: 'ipv6' is not allowed; allowed values: 'ipv4'"),
    ("nodes = 3\n", "port = 0\n", "technique[1].port"),
])
def test_bad_parameters_are_refused_before_anything_runs(tmp_path, testbed, technique, line):
    assert_refused(tmp_path, mesh_campaign_text("tinc-mesh", testbed, technique), line)


# -- real daemons ----------------------------------------------------------------------------------
CAMPAIGN = auto_and_relayed_campaign("tinc-mesh", DEADLINE)


@pytest.mark.netns
def test_six_nodes_behind_mixed_nats_all_answer_and_the_pairs_without_a_direct_path_go_through_the_hub(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    auto, relayed, no_direct = auto_and_relayed_cycles(tmp_path / "c.db", cells, DEADLINE)
    # tinc 1.0 cannot go direct where no UDP packet gets through both NATs: those pairs use the hub
    assert {pair: path for pair, path in auto["paths"].items() if pair in no_direct} == dict.fromkeys(no_direct, "relay")
    assert set(relayed["paths"].values()) == {"relay"}  # IndirectData on every node: no pair direct


@pytest.mark.netns
def test_a_node_whose_nat_drops_udp_is_reached_through_the_hub(tmp_path, clean_machine):
    """The meta connection is TCP to the hub, which a udp-blocked NAT lets out; tinc 1.0 sends a
    packet over it when no UDP probe was answered, so unlike nebula's UDP-only lighthouse the hub
    reaches such a node, relayed."""
    _, cells = run_campaign(tmp_path, udp_blocked_campaign("tinc-mesh", DEADLINE))
    (cell,) = cells
    assert cell["status"] == "ok", cell["error"]
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    assert cycle["never"] == []
    blocked = pairs_without_direct_path(BLOCKED_NATS)
    assert blocked == {"n0>n2", "n2>n0", "n1>n2", "n2>n1"}
    assert {pair for pair, path in cycle["paths"].items() if path == "relay"} == blocked
    assert cell["metrics"]["pairs_relayed"] == 4.0


KILLED_RUN = killed_run("tinc-mesh", {"nodes": 4, "nat": ["none", "none", "address-dependent", "address-and-port-dependent"]})


@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_namespace(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/tinc-n*/rsa_key.priv")
