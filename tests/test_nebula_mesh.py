"""Nebula as a mesh on the mesh testbed (issue 41, items 2 and 3): the lighthouse on the control
node, hole punching, the lighthouse as relay. Every pair answers. As the underlay sees it:
- the pairs that need no punched hole go direct;
- those that must punch first go direct or through the relay, whichever answers first;
- the pairs whose NATs leave no direct path (mesh_spec.direct_path_possible) go through the relay.
Without the relay, every pair with a direct path goes direct and the others never answer. Nothing is
left behind."""

import json

import pytest

from conftest import kill9_mid_traffic_then_cleanup, killed_run, run_campaign, run_cli
from mesh_pairs import (
    BLOCKED_NATS,
    NATS,
    convergence_cycles,
    pairs_direct_unasked,
    pairs_without_direct_path,
    udp_blocked_campaign,
)

CAMPAIGN = f"""[campaign]
name = "nebulamesh"
[testbed]
nodes = {len(NATS)}
nat = {json.dumps(NATS)}
[[technique]]
kind = "nebula-mesh"
label = "relayed"
[[technique]]
kind = "nebula-mesh"
label = "direct only"
relays = false
[[measurement]]
kind = "convergence"
deadline = "20s"
[[measurement]]
kind = "ping"
count = 20
"""


@pytest.mark.netns
def test_six_nodes_behind_mixed_nats_go_direct_where_the_nats_allow_else_through_the_relay(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert all(cell["status"] == "ok" for cell in cells), [(c["technique"], c["measurement"], c["error"]) for c in cells]
    for cell in cells:
        assert cell["wire_check"] == "encrypted"
    relayed, direct_only = convergence_cycles(tmp_path / "c.db")  # the blocks' order
    no_direct = pairs_without_direct_path(NATS)
    assert no_direct  # n3, n4, n5 map a new port per destination

    # With the relay on, every pair answers, and the pairs without a direct path are relayed. The
    # pairs that need no punched hole go direct. The other pairs go direct or through the relay:
    # Nebula sends its handshake to the peer and its relay request at once, every try
    # (handshake_manager.go), and keeps whichever tunnel answers first. Until the NAT'd end has
    # punched, the direct one cannot; with the CPU halved, n1 (open) to n3 and n4 (which must
    # punch) went through the relay (stop 70). The direct-only block below shows the punching.
    assert relayed["never"] == []
    paths = relayed["paths"]
    assert all(paths[pair] == "relay" for pair in no_direct), paths
    assert all(paths[pair] == "direct" for pair in pairs_direct_unasked(NATS)), paths
    assert set(paths.values()) == {"direct", "relay"} and len(paths) == len(relayed["pairs"]), paths

    assert set(direct_only["never"]) == no_direct
    assert {pair for pair, path in direct_only["paths"].items() if path == "direct"} == set(direct_only["first_reply_s"])

    # the report draws both NAT matrices from the stored cycles
    report = run_cli("report", str(tmp_path / "c.db"), "-o", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "r.html").read_text()
    assert html.count('data-type="nat_matrix"') == 2 and html.count('data-type="convergence_ecdf"') == 2


@pytest.mark.netns
def test_a_node_whose_nat_drops_udp_never_answers_and_the_others_converge(tmp_path, clean_machine):
    """Nebula speaks UDP only: behind udp-blocked a node never reaches the lighthouse. up() does not
    wait for it (the convergence kind's answer, not a failed bring-up)."""
    _, cells = run_campaign(tmp_path, udp_blocked_campaign("nebula-mesh", 8))
    (cell,) = cells
    assert cell["status"] == "ok", cell["error"]
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    assert set(cycle["never"]) == {"n0>n2", "n2>n0", "n1>n2", "n2>n1"} == pairs_without_direct_path(BLOCKED_NATS)
    assert cell["metrics"]["converged_s_censored"] == 1.0


KILLED_RUN = killed_run("nebula-mesh", {"nodes": 4, "nat": ["none", "none", "address-dependent", "address-and-port-dependent"]})


@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_namespace(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/nebula-n*.yml")
