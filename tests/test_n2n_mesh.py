"""n2n 1.x as a mesh on the mesh testbed (issues 41 and 42): the supernode on the control node, an
edge on every node. A pair whose NATs leave no direct path (mesh_spec.direct_path_possible) is
never seen direct; a udp-blocked node never answers (n2n speaks UDP only); two open nodes, the
smallest mesh, answer; nothing is left behind."""


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
    convergence_cycles,
    mixed_nats_campaign,
    pairs_without_direct_path,
    udp_blocked_campaign,
)
from vpnbench.techniques.n2n import MAX_MTU
from vpnbench.techniques.n2n_mesh import mac_address, overlay_address

DEADLINE = 30  # s: the relay answers once both edges registered (at their start); see the module's docstring


# -- pure arithmetic and validation ----------------------------------------------------------------
def test_overlay_and_macs_are_distinct_for_the_250_nodes_a_mesh_may_have():
    assert len({overlay_address(i) for i in range(250)}) == len({mac_address(i) for i in range(250)}) == 250
    assert overlay_address(0) == "10.95.0.1" and overlay_address(249) == "10.95.0.250"
    assert mac_address(0) == "02:6e:32:6e:00:00" and mac_address(249) == "02:6e:32:6e:00:f9"


@pytest.mark.parametrize("entry, expected", [
    ({"cipher": "aes"}, "technique[1].cipher: 'aes' is not allowed; allowed values: 'twofish'"),
    ({"mtu": MAX_MTU + 1}, "technique[1].mtu:"),
    ({"port": 65535}, "technique[1].port:"),  # the supernode takes port + 1
    ({"supernode": "n0"}, "technique[1].supernode: unknown key"),  # always the control node
])
def test_bad_fields_are_refused_in_one_line(entry, expected):
    assert_technique_field_refused("n2n-mesh", entry, expected)


def test_a_two_host_testbed_is_refused_before_anything_runs(tmp_path):
    assert_needs_a_mesh_testbed(tmp_path, "n2n-mesh")


# -- real daemons ----------------------------------------------------------------------------------
CAMPAIGN = mixed_nats_campaign("n2nmesh", "n2n-mesh", DEADLINE)


@pytest.mark.netns
def test_six_nodes_behind_mixed_nats_never_go_direct_where_the_nats_allow_no_path(tmp_path, clean_machine):
    """What follows from n2n 1.x's code (the module's docstring), and only that: the pairs without a
    direct path are never seen direct (they are relayed, or silent where 1.3 bound a peer to another's
    address); n0 and n1, bound before the others talk, answer each other directly; every answer
    comes within the deadline, counted from the daemons' start."""
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert all(cell["status"] == "ok" for cell in cells), [(c["technique"], c["measurement"], c["error"]) for c in cells]
    for cell in cells:
        assert cell["wire_check"] == "encrypted"
        assert cell["negotiated"]["mesh"]["nodes"] == len(NATS) and cell["negotiated"]["mtu"] == 1364
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    no_direct = pairs_without_direct_path(NATS)
    assert no_direct  # n3, n4, n5 map a new port per destination

    assert len(cycle["pairs"]) == len(NATS) * (len(NATS) - 1)
    assert {"n0>n1", "n1>n0"} <= set(cycle["first_reply_s"]) and cycle["paths"]["n0>n1"] == "direct"
    assert all(t <= DEADLINE for t in cycle["first_reply_s"].values())
    assert set(cycle["first_reply_s"]) | set(cycle["never"]) == set(cycle["pairs"])
    assert not {pair for pair, path in cycle["paths"].items() if path == "direct"} & no_direct


@pytest.mark.netns
def test_two_open_nodes_the_smallest_mesh_answer_each_other_directly(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, f"""[campaign]
name = "two"
[testbed]
nodes = 2
[[technique]]
kind = "n2n-mesh"
[[measurement]]
kind = "convergence"
deadline = "{DEADLINE}s"
""")
    (cell,) = cells
    assert cell["status"] == "ok", cell["error"]
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    assert cycle["never"] == [] and cycle["paths"] == {"n0>n1": "direct", "n1>n0": "direct"}


@pytest.mark.netns
def test_a_node_whose_nat_drops_udp_never_answers_and_the_others_do(tmp_path, clean_machine):
    """n2n 1.x's edge speaks UDP (its TCP tunnelling to the supernode, -t, is experimental and not
    used): behind udp-blocked a node never registers. up() does not wait for it."""
    _, cells = run_campaign(tmp_path, udp_blocked_campaign("n2n-mesh", 8))
    (cell,) = cells
    assert cell["status"] == "ok", cell["error"]
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    assert set(cycle["never"]) == {"n0>n2", "n2>n0", "n1>n2", "n2>n1"} == pairs_without_direct_path(BLOCKED_NATS)
    assert cell["metrics"]["converged_s_censored"] == 1.0


KILLED_RUN = killed_run("n2n-mesh", {"nodes": 4, "nat": ["none", "none", "address-dependent", "address-and-port-dependent"]})


@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_namespace(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/n2n-mesh-n*.conf")
