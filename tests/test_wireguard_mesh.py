"""WireGuard as a static full mesh on the mesh testbed (issue 41, items 2 and 3): every pair that
WireGuard's rules and the NATs allow answers, the others never do, as direct_path_possible() says
from RFC 4787's terms; the convergence kind times each pair; nothing is left behind."""

import itertools
import json

import pytest

from conftest import assert_refused, kill9_mid_traffic_then_cleanup, killed_run, run_campaign
from mesh_pairs import NATS, convergence_cycles, pairs_without_direct_path
from vpnbench.measure import convergence
from vpnbench.measure.convergence import Convergence, ConvergenceParams, fewer_peers, new_replies, share_curve, summary
from vpnbench.testbeds.mesh_spec import NAT_TYPES, direct_path_possible

DEADLINE = 30  # s: unreachable pairs are waited for this long; reachable ones answer after WireGuard's 5 s retry at most


# -- pure arithmetic ---------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b, reaches", [  # mesh_spec.direct_path_possible
    ("none", "address-and-port-dependent", True),  # the NAT'd end sends first
    ("none", "udp-blocked", False),
    ("endpoint-independent", "address-and-port-dependent", True),  # into the full cone, at the kept port
    ("endpoint-independent", "endpoint-independent", True),
    ("address-dependent", "address-dependent", False),  # both map WireGuard's port elsewhere
    ("address-dependent", "address-and-port-dependent", False),
    ("address-and-port-dependent", "address-and-port-dependent", False),
])
def test_direct_path_possible_follows_the_nat_types(a, b, reaches):
    assert direct_path_possible(a, b) is reaches
    assert direct_path_possible(b, a) is reaches  # symmetric: either direction's first packet will do


def test_every_nat_pair_has_an_answer():
    for a, b in itertools.product(NAT_TYPES, repeat=2):
        assert isinstance(direct_path_possible(a, b), bool)


class ScriptedPaths:
    """observe_paths as a mesh testbed answers it, one scripted answer per window, on a clock that
    moves by the window instead of sleeping."""

    def __init__(self, answers: list[str]):
        self.answers, self.now, self.calls = answers, 0.0, 0

    def observe_paths(self, window: float) -> dict:
        self.now += window
        self.calls += 1
        return {("n0", "n2"): self.answers[min(self.calls, len(self.answers)) - 1]}


@pytest.mark.parametrize("hold, settled, windows", [(0.0, "relay", 2), (5.0, "direct", 9)])
def test_paths_settle_once_alike_for_the_meshs_own_round(monkeypatch, hold, settled, windows):
    """Relayed for two windows, then direct (EasyTier's direct connector dials every 5 s): without a
    round the first two alike windows settle it as relayed; holding the mesh's round of 5 s sees it
    go direct and stay so for 5 s more (the CI failure of stop 52's rehearsal, CPU halved)."""
    scripted = ScriptedPaths(["relay"] * 3 + ["direct"] * 20)
    monkeypatch.setattr(convergence.time, "monotonic", lambda: scripted.now)
    monkeypatch.setattr(convergence.time, "time", lambda: scripted.now)
    paths, direct = Convergence(ConvergenceParams(period_ms=500))._settled_paths(scripted, 0.0, 60.0, hold)
    assert paths == {("n0", "n2"): settled} and scripted.calls == windows
    assert direct == ({("n0", "n2"): 4.0} if settled == "direct" else {})


def test_convergence_summary_censors_a_cycle_with_silent_pairs():
    converged = {"up_s": 0.3, "pairs": ["a>b", "b>a"], "first_reply_s": {"a>b": 0.5, "b>a": 0.7},
                 "never": [], "converged_s": 0.7}
    silent = {"up_s": 0.4, "pairs": ["a>b", "b>a"], "first_reply_s": {"a>b": 0.6}, "never": ["b>a"]}
    assert summary([converged], 10)["converged_s"] == 0.7
    both = summary([converged, silent], 10)
    assert "converged_s" not in both and both["converged_s_censored"] == 1.0 and both["pairs_never"] == 1.0
    assert share_curve({"a>b": 0.6}, 2) == [(0.6, 0.5)]  # the silent pair keeps the share below 1
    assert "cycles_up_past_deadline" not in both
    late = {"up_s": 12.0, "pairs": ["a>b", "b>a"], "first_reply_s": {}, "never": ["a>b", "b>a"], "up_past_deadline": True}
    assert summary([converged, late], 10)["cycles_up_past_deadline"] == 1.0  # counted, so the cell says why


def test_the_probe_asks_fewer_peers_as_they_answer():
    """A node's fping starts again on the silent peers once half have answered: at N = 100 a node
    restarts about log2(99) times, not once per reply; the peers that answered are never asked again."""
    peers = [f"n{i}" for i in range(1, 100)]
    assert fewer_peers(peers, {"n1", "n2"}) is None  # 2 of 99: keep it
    assert fewer_peers(peers, set(peers[:50])) == peers[50:]  # 50 of 99: the other 49
    assert fewer_peers(["n1", "n2"], {"n1", "n2"}) == []  # every peer answered: the node rests
    asked, restarts = peers, 0
    for answered in range(1, 100):  # the peers answer one at a time
        if (left := fewer_peers(asked, set(peers[:answered]))) is not None:
            asked, restarts = left, restarts + 1
    assert asked == [] and restarts == 7  # 99 -> 49 -> 24 -> 12 -> 6 -> 3 -> 1 -> 0


def test_each_poll_parses_only_the_new_whole_lines_of_an_fping():
    one = "[1795938338.66361] 10.77.0.2 : [0], 64 bytes, 0.132 ms (0.132 avg, 0% loss)\n"
    two = "[1795938339.16400] 10.77.0.3 : [1], 64 bytes, 0.150 ms (0.141 avg, 0% loss)\n"
    half = two[:30]  # fping is still writing this line
    replies, at = new_replies(one + half, 0)
    assert replies == [(1795938338.66361, "10.77.0.2")] and at == len(one)
    replies, at = new_replies(one + two, at)  # the line is whole now: read once, the first not again
    assert replies == [(1795938339.164, "10.77.0.3")] and at == len(one + two)
    assert new_replies(one + two, at) == ([], at)
    unreachable = "10.77.0.4 : duplicate for [0], 64 bytes\nICMP Host Unreachable from 10.77.0.1\n"
    assert new_replies(one + two + unreachable, at)[0] == []  # lines that are not replies


# -- validation ------------------------------------------------------------------------------------
def test_a_mesh_technique_on_a_two_host_testbed_is_refused(tmp_path):
    assert_refused(tmp_path, '[[technique]]\nkind = "wireguard-mesh"\n[[measurement]]\nkind = "ping"\n',
                   "testbed.nodes: wireguard-mesh brings up a mesh of nodes and needs a mesh testbed; allowed: nodes = 2 to")


def test_a_mesh_technique_may_have_nats_on_n0_and_n1(tmp_path):
    from vpnbench.campaign.spec import load_campaign

    (tmp_path / "c.toml").write_text('[testbed]\nnodes = 3\nnat = "address-dependent"\n'
                                     '[[technique]]\nkind = "wireguard-mesh"\n[[measurement]]\nkind = "convergence"\n')
    load_campaign(tmp_path / "c.toml")


# -- real daemons ----------------------------------------------------------------------------------
@pytest.mark.netns
def test_six_nodes_behind_mixed_nats_answer_where_the_nats_allow(tmp_path, clean_machine):
    nat_lines = json.dumps(NATS)
    result, cells = run_campaign(tmp_path, f"""[campaign]
name = "wgmesh"
[testbed]
nodes = 6
nat = {nat_lines}
[[technique]]
kind = "wireguard-mesh"
[[measurement]]
kind = "convergence"
deadline = "{DEADLINE}s"
[[measurement]]
kind = "ping"
count = 20
""")
    by_kind = {cell["measurement"]: cell for cell in cells}
    assert all(cell["status"] == "ok" for cell in cells), [(c["measurement"], c["error"]) for c in cells]
    assert by_kind["ping"]["wire_check"] == "encrypted"  # seen on the internet side of n0's link
    assert by_kind["ping"]["negotiated"]["mesh"]["nodes"] == 6
    (cycle,) = convergence_cycles(tmp_path / "c.db")
    expected_never = pairs_without_direct_path(NATS)
    assert expected_never  # the mix has pairs a static mesh cannot join (n3, n4, n5: no kept port)
    # up() waited for a session with every node it can reach, and for no other
    sessions = by_kind["ping"]["negotiated"]["mesh"]["sessions"]
    assert sessions["pairs"] == sessions["answered"] == (6 * 5 - len(expected_never)) // 2
    assert set(cycle["never"]) == expected_never
    assert set(cycle["first_reply_s"]) == set(cycle["pairs"]) - expected_never
    assert len(cycle["pairs"]) == 6 * 5
    # each pair counts from the daemons' start: not before up() returned, within the deadline
    assert all(cycle["up_s"] <= t <= DEADLINE for t in cycle["first_reply_s"].values())
    # a static mesh has no relay: what answers went direct, as the underlay saw it in each node
    assert {pair for pair, path in cycle["paths"].items() if path == "direct"} == set(cycle["first_reply_s"])
    metrics = by_kind["convergence"]["metrics"]
    assert metrics["converged_s_censored"] == 1.0 and metrics["pairs_never"] == len(expected_never)


@pytest.mark.netns
def test_three_open_nodes_converge(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, """[campaign]
name = "wgmesh3"
[testbed]
nodes = 3
[[technique]]
kind = "wireguard-mesh"
[[measurement]]
kind = "convergence"
count = 2
deadline = "20s"
""")
    (cell,) = cells
    assert cell["status"] == "ok", cell["error"]
    cycles = convergence_cycles(tmp_path / "c.db")
    assert len(cycles) == 2 and all(not c["never"] for c in cycles)
    for c in cycles:
        assert c["converged_s"] == max(c["first_reply_s"].values()) >= c["up_s"] > 0
    assert cell["metrics"]["converged_s"] == pytest.approx(sorted(c["converged_s"] for c in cycles)[0] / 2
                                                           + sorted(c["converged_s"] for c in cycles)[1] / 2)


KILLED_RUN = killed_run("wireguard-mesh", {"nodes": 4, "nat": ["none", "none", "endpoint-independent", "address-and-port-dependent"]})


@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_namespace(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/wgm-*.conf")
