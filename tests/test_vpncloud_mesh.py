"""VpnCloud 2 as a mesh on the mesh testbed (issue 42 item 1, issue 41 items 2 and 3): a rendezvous
on the control node, every node's one configured peer; the others learnt by peer exchange, each
pair punching its hole at the mappings the rendezvous saw. VpnCloud has no relay: a pair goes
direct exactly where mesh_spec.direct_path_possible says a direct path exists, and every other
pair never answers (udp-blocked nodes too: VpnCloud speaks UDP only); nothing is left behind."""


import pytest

from conftest import (
    assert_technique_field_refused,
    kill9_mid_traffic_then_cleanup,
    killed_run,
    run_campaign,
)
from mesh_pairs import (
    BLOCKED_NATS,
    assert_cells_ok_over_every_node,
    assert_direct_exactly_where_the_nats_allow,
    assert_needs_a_mesh_testbed,
    convergence_cycles,
    mixed_nats_campaign,
    pairs_without_direct_path,
    udp_blocked_campaign,
)
from vpnbench.techniques.vpncloud_mesh import overlay_address

# s: a node learns of a peer that joined after it at the rendezvous's next node info (keepalive
# 5 s), then both send their handshakes (retried each second): 5 + a few, doubled for the slow
DEADLINE = 25


# -- pure arithmetic and validation ----------------------------------------------------------------
def test_overlay_addresses_are_distinct_for_the_250_nodes_a_mesh_may_have():
    assert len({overlay_address(i) for i in range(250)}) == 250
    assert overlay_address(0) == "10.79.0.1" and overlay_address(249) == "10.79.0.250"


@pytest.mark.parametrize("entry, expected", [
    ({"family": "ipv6"}, "technique[1].family: 'ipv6' is not allowed; allowed values: 'ipv4'"),
    ({"algorithm": "des"}, "technique[1].algorithm: 'des' is not allowed; allowed values: 'aes128', 'aes256', "
                           "'chacha20', 'plain'"),
    ({"keepalive": 0}, "technique[1].keepalive:"),
    ({"keepalive": 241}, "technique[1].keepalive:"),
    ({"peers": ["198.18.0.10:5700"]}, "technique[1].peers: unknown key"),  # always the control node
])
def test_bad_fields_are_refused_in_one_line(entry, expected):
    assert_technique_field_refused("vpncloud-mesh", entry, expected)


def test_a_two_host_testbed_is_refused_before_anything_runs(tmp_path):
    assert_needs_a_mesh_testbed(tmp_path, "vpncloud-mesh")


# -- real daemons ----------------------------------------------------------------------------------
CAMPAIGN = mixed_nats_campaign("vpncloudmesh", "vpncloud-mesh", DEADLINE, 'algorithm = "chacha20"\n')


@pytest.mark.netns
def test_six_nodes_behind_mixed_nats_go_direct_exactly_where_the_nats_allow_and_the_rest_never_answer(
        tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert_cells_ok_over_every_node(cells)
    for cell in cells:
        negotiated = cell["negotiated"]
        assert negotiated["aead"] == "ChaCha20-Poly1305"
        assert negotiated["mtu"] == cell["tunnel"]["interface_mtu"] == 1500 - 73  # its reserve; the veths: 1500
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    assert_direct_exactly_where_the_nats_allow(cycle, DEADLINE)


@pytest.mark.netns
def test_a_node_whose_nat_drops_udp_never_answers_and_the_others_do(tmp_path, clean_machine):
    """VpnCloud 2 speaks UDP only: behind udp-blocked a node never reaches the rendezvous.
    up() does not wait for it."""
    _, cells = run_campaign(tmp_path, udp_blocked_campaign("vpncloud-mesh", 8))
    (cell,) = cells
    assert cell["status"] == "ok", cell["error"]
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    assert set(cycle["never"]) == {"n0>n2", "n2>n0", "n1>n2", "n2>n1"} == pairs_without_direct_path(BLOCKED_NATS)
    assert cycle["paths"]["n0>n1"] == cycle["paths"]["n1>n0"] == "direct"
    assert cell["metrics"]["converged_s_censored"] == 1.0


KILLED_RUN = killed_run("vpncloud-mesh", {"nodes": 4, "nat": ["none", "none", "address-dependent",
                                                              "address-and-port-dependent"]})


@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_namespace(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/vpncloud-mesh-n*.yml")
