"""The mesh testbed (issue 41, item 1): nodes = N on a routed internet, each behind the NAT it is
given, proven by the testbed's own NAT probe, and nothing left behind."""

import subprocess
import sys
import time

import pytest

from conftest import leftovers, run_cli
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import validate_model
from vpnbench.hosts.resources import RunResources
from vpnbench.testbeds.make import make_testbed
from vpnbench.testbeds.mesh_spec import MAX_NODES, NAT_TYPES, nat_per_node
from vpnbench.testbeds.nat_probe import NatBehaviour, classify, mapping_behaviour
from vpnbench.testbeds.spec import TestbedSpec

EVERY_TYPE = list(NAT_TYPES)  # one node of each: none, the three NAT'd types, udp-blocked


def spec(**fields) -> TestbedSpec:
    return validate_model(TestbedSpec, fields, "testbed")


# -- the [testbed] table ------------------------------------------------------------------------
@pytest.mark.parametrize("fields, message", [
    ({"nodes": 1}, f"testbed.nodes: 1 is not allowed; allowed values: whole numbers from 2 to {MAX_NODES}"),
    ({"nodes": MAX_NODES + 1}, f"testbed.nodes: {MAX_NODES + 1} is not allowed; allowed values: whole numbers"),
    ({"nodes": 3, "nat": "cone"}, "testbed.nat: 'cone' is not allowed; allowed values: none, endpoint-independent"),
    ({"nodes": 3, "nat": {"endpoint-independent": 0.5, "udp-blocked": 0.4}}, "allowed values: fractions above 0 that sum to 1"),
    ({"nodes": 3, "nat": ["none", "none"]}, "nat: a list of 2 types for nodes = 3; allowed values: one type per node"),
    ({"nat": "udp-blocked"}, "nat: only with nodes = N"),
    ({"kind": "vm", "nodes": 3}, "nodes: only for kind = 'local'"),
])
def test_bad_mesh_fields_are_one_line_naming_the_field(fields, message):
    with pytest.raises(UserError) as caught:
        spec(**fields)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.netns
def test_bad_nodes_exit_2_before_anything_is_made(tmp_path, clean_machine):
    campaign = tmp_path / "c.toml"
    campaign.write_text('[testbed]\nnodes = 1000\n[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "ping"\n')
    result = run_cli("run", str(campaign), "--db", str(tmp_path / "d.db"))
    assert result.returncode == 2
    assert f"testbed.nodes: 1000 is not allowed; allowed values: whole numbers from 2 to {MAX_NODES}" in result.stderr + result.stdout
    assert not (tmp_path / "d.db").exists()


def test_a_two_host_campaign_between_nodes_behind_a_nat_is_refused_before_anything_runs(tmp_path):
    """A two-host technique runs between n0 and n1, and a NAT on either would leave the server
    unreachable after every cell's time-outs (a mesh technique is not refused: test_wireguard_mesh)."""
    from vpnbench.campaign.spec import load_campaign

    campaign = tmp_path / "c.toml"
    body = '[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "ping"\n'
    campaign.write_text('[testbed]\nnodes = 3\nnat = ["none", "udp-blocked", "none"]\n' + body)
    with pytest.raises(UserError, match=r"^testbed.nat: .* n1: udp-blocked stands between them .*allowed: \"none\" for n0 and n1, or only mesh techniques$"):
        load_campaign(campaign)
    campaign.write_text('[testbed]\nnodes = 3\nnat = ["none", "none", "udp-blocked"]\n' + body)
    load_campaign(campaign)  # n2's NAT is no obstacle between n0 and n1


@pytest.mark.parametrize("nat, nodes, expected", [
    # 2.5 and 2.5: one node left over, the tie goes to the type named first
    ({"endpoint-independent": 0.5, "address-and-port-dependent": 0.5}, 5,
     ["endpoint-independent"] * 3 + ["address-and-port-dependent"] * 2),
    # quotas 3.3, 3.3, 3.4: floors 3 + 3 + 3, the one left to the largest remainder (the third)
    ({"none": 0.33, "udp-blocked": 0.33, "address-dependent": 0.34}, 10,
     ["none"] * 3 + ["udp-blocked"] * 3 + ["address-dependent"] * 4),
    ("udp-blocked", 3, ["udp-blocked"] * 3),
    (["none", "address-dependent"], 2, ["none", "address-dependent"]),
])
def test_nat_per_node_splits_a_mix_by_largest_remainder(nat, nodes, expected):
    assert nat_per_node(nat, nodes) == expected


# -- the probe's reading, without a network ---------------------------------------------------------
A, A2, B = ("198.18.1.5", 4000), ("198.18.1.5", 4001), ("198.18.1.5", 4002)


@pytest.mark.parametrize("mapped, expected", [
    ((A, A, A), "endpoint-independent"),
    ((A, A, B), "address-dependent"),
    ((A, A2, B), "address-and-port-dependent"),
    ((("10.64.0.2", 5000),) * 3, "none"),
])
def test_mapping_behaviour_compares_the_three_mappings(mapped, expected):
    assert mapping_behaviour(("10.64.0.2", 5000), mapped) == expected


def test_classify_names_rfc4787_pairs_and_says_what_is_outside_the_table():
    assert classify(NatBehaviour(False, True)) == "udp-blocked"
    assert classify(NatBehaviour(False, False)) == "unreachable"
    assert classify(NatBehaviour(True, True, ("10.64.0.2", 1), (A, A, A), True, True)) == "endpoint-independent"
    # Linux's plain masquerade: a port-restricted cone, a pair none of the five names
    assert (classify(NatBehaviour(True, True, ("10.64.0.2", 1), (A, A, A), False, False))
            == "endpoint-independent mapping, address-and-port-dependent filtering")


# -- real namespaces --------------------------------------------------------------------------------
@pytest.mark.netns
def test_five_nodes_each_nat_classified_as_configured_and_nothing_left(clean_machine):
    with RunResources() as resources:
        testbed = make_testbed(spec(nodes=5, nat=EVERY_TYPE), resources)
        try:
            testbed.up()
            seen = testbed.nat_behaviours()
            assert {name: s.name for name, s in seen.items()} == {f"n{i}": nat for i, nat in enumerate(EVERY_TYPE)}
            assert seen["n4"].tcp and not seen["n4"].udp  # udp-blocked: only TCP leaves
            assert testbed.facts["nat_observed"]["n3"]["type"] == "address-and-port-dependent"
            assert set(testbed.hosts) == {"n0", "n1", "n2", "n3", "n4", "ctl"}
        finally:
            testbed.down()
        assert not [name for name in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                    if name.startswith(f"vpb-{resources.run_id}")]


@pytest.mark.netns
def test_mixed_nats_come_up_classified_as_assigned(clean_machine):
    mix = {"endpoint-independent": 0.5, "address-and-port-dependent": 0.5}
    with RunResources() as resources:
        testbed = make_testbed(spec(nodes=5, nat=mix), resources)
        try:
            testbed.up()
            assert {name: s.name for name, s in testbed.nat_behaviours().items()} == testbed.facts["nat"]
            assert list(testbed.facts["nat"].values()) == nat_per_node(mix, 5)
        finally:
            testbed.down()


KILLED_RUN = """
import sys, time
from vpnbench.hosts.resources import RunResources
from vpnbench.testbeds.make import make_testbed
from vpnbench.testbeds.spec import TestbedSpec
testbed = make_testbed(TestbedSpec(nodes=5, nat={"address-dependent": 0.6, "none": 0.4}), RunResources())
testbed.up()
print("up", flush=True)
time.sleep(600)
"""


@pytest.mark.netns
def test_kill9_then_cleanup_removes_every_mesh_namespace(clean_machine):
    proc = subprocess.Popen([sys.executable, "-c", KILLED_RUN], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "up"
    finally:
        proc.kill()
        proc.wait()
    # 5 nodes, 3 NATs, the internet, the control node and the probe's outside namespace
    assert len([found for found in leftovers() if found.startswith("netns vpb-")]) == 11
    result = run_cli("cleanup")
    assert result.returncode == 0 and "removed netns vpb-" in result.stdout
    assert leftovers() == []


@pytest.mark.netns
def test_hundred_nodes_bring_up_and_teardown_timed(clean_machine):
    mix = {"endpoint-independent": 0.5, "address-and-port-dependent": 0.5}
    with RunResources() as resources:
        testbed = make_testbed(spec(nodes=100, nat=mix), resources)
        started = time.monotonic()
        try:
            testbed.up()
            up = time.monotonic() - started
            assert testbed.nat_behaviour("n99").name == "address-and-port-dependent"
        finally:
            started = time.monotonic()
            testbed.down()
            down = time.monotonic() - started
    print(f"\nN = 100 (50 behind full cones, 50 behind symmetric NATs, 203 namespaces): up {up:.2f} s "
          f"{testbed.timings}, down {down:.2f} s")
    assert [found for found in leftovers() if found.startswith("netns vpb-")] == []
