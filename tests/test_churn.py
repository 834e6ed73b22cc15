"""Churn on a mesh (issue 41, item 3): a node leaves and a newcomer joins mid-run; the time until
every node reaches the newcomer, and the pairs the leave interrupted. The arithmetic on scripted
replies; the refusals; and the static WireGuard mesh (the control: no pair goes through another
node, so a leave interrupts nothing) with its real daemons."""

import json
import types

import pandas as pd
import pytest

from conftest import assert_refused, run_campaign
from mesh_pairs import pairs_without_direct_path
from vpnbench.measure.churn import GAP_PERIODS, ChurnParams, Replies, answerable, churn_nodes, outage, summary
from vpnbench.store.database import Store
from vpnbench.techniques.base import Technique
from vpnbench.views.report import figures

PERIOD = 0.5
GAP = GAP_PERIODS * PERIOD


# -- the arithmetic ------------------------------------------------------------------------------
def test_an_outage_is_a_silence_longer_than_the_gap_after_t0():
    every_period = [t * PERIOD for t in range(20)]  # 0 .. 9.5 s
    assert outage(every_period, t0=5.0, gap=GAP, end=10.0) is None  # one echo a period: served throughout
    one_lost = [t for t in every_period if t != 6.0]
    assert outage(one_lost, t0=5.0, gap=GAP, end=10.0) is None  # one lost echo is no outage
    late = 0.004  # a reply's jitter: two lost echoes stay no outage, three are one, either way
    for jitter in (-late, 0.0, late):
        two_lost = [t + (jitter if t == 7.0 else 0.0) for t in every_period if t not in (6.0, 6.5)]
        assert outage(two_lost, t0=5.0, gap=GAP, end=10.0) is None
        three_lost = [t + (jitter if t == 7.5 else 0.0) for t in every_period if t not in (6.0, 6.5, 7.0)]
        assert outage(three_lost, t0=5.0, gap=GAP, end=10.0) == (5.5, 7.5 + jitter)
    silent = [t for t in every_period if not 5.0 <= t < 8.0]
    assert outage(silent, t0=5.0, gap=GAP, end=10.0) == (4.5, 8.0)  # from the last reply before t0
    assert outage([t for t in every_period if t < 5.0], t0=5.0, gap=GAP, end=10.0) == (4.5, None)  # never again
    assert outage([t for t in every_period if t < 5.0], t0=5.0, gap=GAP, end=5.5) is None  # too soon to say


def test_the_summary_times_the_newcomer_and_the_interrupted_pairs():
    t0, leave_returned = 100.0, 100.2
    replies = Replies()
    stamps = [99.0 + PERIOD * i for i in range(12)]  # 99.0 .. 104.5, one echo a period
    for pair in [("n0", "n1"), ("n1", "n0"), ("n1", "n2"), ("n2", "n1")]:
        for t in stamps:
            if not (pair == ("n1", "n2") and t == 101.0):  # one echo lost: no outage
                replies.add(pair, t)
    for pair, back in [(("n0", "n2"), 103.0), (("n2", "n0"), 103.5)]:  # silent from t0 until `back`
        for t in stamps:
            if t < t0 or t >= back:
                replies.add(pair, t)
    replies.add(("n0", "n9"), 101.0)  # n0 and n1 reach the newcomer n9; n2 never does
    replies.add(("n1", "n9"), 102.5)
    replies.add(("n9", "n0"), 101.2)
    replies.add(("n0", "n3"), 100.1)  # the leaver n3's last reply, before its leave returned
    replies.add(("n1", "n3"), 100.9)  # and one after it: it had not left
    served_before = {(a, b) for a in ("n0", "n1", "n2") for b in ("n0", "n1", "n2") if a != b}
    metrics, detail = summary(replies, t0, 105.0, ["n0", "n1", "n2"], "n9", "n3", leave_returned, PERIOD, served_before)
    assert metrics["newcomer_unreached"] == 1.0 and "newcomer_reached_s" not in metrics  # censored: n2 never
    assert metrics["newcomer_reached_p50_s"] == pytest.approx(1.75)  # of 1.0 and 2.5
    assert metrics["newcomer_reached_max_s"] == pytest.approx(2.5)  # the last of those that reached it
    assert detail["reached_s"] == {"n0": 1.0, "n1": 2.5, "n2": None}
    assert "newcomer_reaches_s" not in metrics  # the newcomer heard from n0 only
    assert metrics["pairs_interrupted"] == 2.0  # n0>n2, n2>n0 (silent 99.5 -> 103, 103.5); n1>n2 lost one echo
    assert metrics["pairs_unserved"] == 0.0 and metrics["served_again_s"] == pytest.approx(3.5)
    assert detail["interrupted"]["n0>n2"] == {"silent_from_s": -0.5, "served_again_s": 3.0}
    assert metrics["leaver_replies_after"] == 1.0
    assert metrics["pairs_before"] == 6.0 and metrics["staying_nodes"] == 3.0


def test_the_report_draws_each_cell_from_what_it_stored():
    """A churn cell's stored detail, as _measure keeps it, read back into the timeline figure's row:
    a technique's note on the leaver (Yggdrasil's root) in the row's label, a silence never served
    again drawn to the deadline."""
    replies = Replies()
    for t in (99.0, 99.5, 102.0):
        replies.add(("n0", "n1"), t)  # silent from 99.5 to 102.0: 5 periods
    replies.add(("n1", "n0"), 99.5)  # and never again
    replies.add(("n0", "n9"), 100.5)
    metrics, detail = summary(replies, 100.0, 110.0, ["n0", "n1"], "n9", "n3", 100.2, PERIOD,
                              {("n0", "n1"), ("n1", "n0")})
    metrics.update({"leave_s": 0.2, "join_s": 0.1, "deadline_s": 10.0})
    detail.update({"leaving": "n3", "joining": "n9", "staying": ["n0", "n1"],
                   "leave": {"node": "n3", "role": "the spanning tree's root"}, "join": {"node": "n9"}})
    cell = types.SimpleNamespace(ok=True, technique="yggdrasil-mesh", id=7, impairment="none", repetition=2,
                                 metrics=metrics)
    data = types.SimpleNamespace(raw_outputs=lambda cell_id: {"churn": json.dumps(detail)} if cell_id == 7 else {})
    drawing = figures.Drawing("churn", "churn", pd.DataFrame(), [cell], [], data, figures.Canvas())
    (row,) = figures.churn_rows(drawing, "yggdrasil-mesh")
    assert row.label == "none #2: n3 leaves (the spanning tree's root), n9 joins"
    assert (row.leave_s, row.join_s, row.end_s, row.pairs_before) == (0.2, 0.1, 10.0, 2)
    assert row.reached_s == [0.5, None]
    assert set(row.silences) == {(-0.5, 2.0), (-0.5, None)}  # n0>n1 served again at 2.0 s, n1>n0 never
    (figure,) = figures.churn_timelines(drawing)
    assert figure.meta["type"] == "churn_timeline" and figure.meta["silenced"] == [2]
    assert "2 of 2 pairs silenced" in figure.svg


@pytest.mark.parametrize("reach, answering", [
    ("relay", {"none>udp-blocked", "address-and-port-dependent>address-and-port-dependent", "none>none"}),
    ("udp-relay", {"address-and-port-dependent>address-and-port-dependent", "none>none"}),
    ("direct", {"none>none"}),
])
def test_the_pairs_waited_for_are_those_the_meshs_design_lets_answer(reach, answering):
    """A mesh with a relay over TCP answers every pair; one whose relay speaks UDP none with a node
    behind udp-blocked; one without a relay only where a direct path exists (two NATs that choose
    a port per destination have none). The churn stops waiting once those have answered."""
    nats = {"a": "none", "b": "none", "c": "udp-blocked", "d": "address-and-port-dependent",
            "e": "address-and-port-dependent"}
    technique = types.SimpleNamespace(reach=reach)
    ctx = types.SimpleNamespace(nodes={name: types.SimpleNamespace(nat=nat) for name, nat in nats.items()},
                                pair_can_answer=lambda x, y: Technique.pair_can_answer(technique, x, y))
    can = answerable(ctx)
    assert {f"{nats[x]}>{nats[y]}" for x, y in (("a", "c"), ("d", "e"), ("a", "b")) if can(x, y)} == answering
    assert can("a", "d") and can("d", "a")  # an open end: direct, whatever the design
    assert answerable(types.SimpleNamespace(nodes={}, pair_can_answer=None))("x", "y")  # no say: wait for all


def test_the_default_nodes_are_the_meshs_last_two():
    assert churn_nodes(ChurnParams(), 6) == ("n4", "n5")
    assert churn_nodes(ChurnParams(leaving="n0", joining="n2"), 6) == ("n0", "n2")


# -- bad input, before anything runs -------------------------------------------------------------
def churn_campaign(nodes: int | None, technique: str = "wireguard-mesh", measurement: str = "") -> str:
    testbed = f"[testbed]\nnodes = {nodes}\n" if nodes else ""
    return f'{testbed}[[technique]]\nkind = "{technique}"\n[[measurement]]\nkind = "churn"\n{measurement}'


@pytest.mark.parametrize("text, line", [
    (churn_campaign(3), "measurement[1].kind: churn takes a node out of a mesh and a newcomer in, with two nodes "
                        "staying; allowed: [testbed] nodes = 4 or more"),
    (churn_campaign(5, measurement='joining = "n7"\n'), "measurement[1].joining: n7 is not a node of this mesh; "
                                                         "allowed: n0 to n4"),
    (churn_campaign(5, measurement='leaving = "n4"\n'), "measurement[1].joining: n4 is also the node that leaves; "
                                                         "allowed: another node than leaving (n4)"),
    (churn_campaign(5, "n2n-mesh"), "measurement[1].kind: churn cannot run on technique[1] (n2n-mesh: a node's "
                                    "leave and a newcomer's join are not built for it); allowed technique kinds: "
                                    "easytier-mesh, innernet-mesh, nebula-mesh, netbird-mesh, tailscale-mesh, "
                                    "tinc-mesh, vpncloud-mesh, wireguard-mesh, yggdrasil-mesh"),
    (churn_campaign(5, "baseline"), "measurement[1].kind: churn cannot run on technique[1] (baseline runs between "
                                    "two hosts, not as a mesh of nodes)"),
])
def test_a_churn_that_cannot_run_is_refused_in_one_line(tmp_path, text, line):
    assert_refused(tmp_path, text, line)


# -- real daemons --------------------------------------------------------------------------------
# n3 (behind a NAT that picks a port per destination) leaves; n4 (behind a full cone) joins: every
# staying node reaches it directly, in a static mesh too (mesh_spec.direct_path_possible).
NATS = ["none", "none", "endpoint-independent", "address-and-port-dependent", "endpoint-independent"]
DEADLINE = 30
INNERNET_INTERVAL = 5  # s between an innernet node's fetches: the others learn of a newcomer at their next


@pytest.mark.netns
@pytest.mark.parametrize("kind", ["wireguard-mesh", "nebula-mesh", "tailscale-mesh", "tinc-mesh", "vpncloud-mesh",
                                  "yggdrasil-mesh", "easytier-mesh", "netbird-mesh", "innernet-mesh"])
def test_the_newcomer_is_reached_and_no_pair_is_interrupted(tmp_path, clean_machine, kind):
    """Five nodes: n3 leaves, n4 (held out first) joins. No mesh here carries a pair through another
    node (the static mesh, VpnCloud and innernet have no relay; Nebula's is the lighthouse, Tailscale's
    Headscale's DERP, tinc's its hub, Yggdrasil's the public peer, NetBird's netbird-server's relay,
    all on the control node; EasyTier
    relays n2-n4, both behind NATs, through a node both hold a connection to: the public peer, n0 or
    n1, never n3, whom n2 holds none to), so the leave interrupts no staying pair, save Yggdrasil's
    pairs with its tree's root (below); the leaver answers nothing after its leave; and the cell after
    the churn finds every node again (n3 joined back), every pair answering. Headscale gives a
    newcomer an address of its own, and so do NetBird's management and innernet's server (a new
    peer, invited): the churn asks the new one."""
    _, cells = run_campaign(tmp_path, f"""[campaign]
name = "churn"
[testbed]
nodes = {len(NATS)}
nat = {json.dumps(NATS)}
[[technique]]
kind = "{kind}"
{f"interval = {INNERNET_INTERVAL}" if kind == "innernet-mesh" else ""}
[[measurement]]
kind = "churn"
deadline = "{DEADLINE}s"
[[measurement]]
kind = "ping"
pattern = "all-pairs"
count = 10
{'family = "ipv6"' if kind == "yggdrasil-mesh" else ""}
""")
    by_kind = {cell["measurement"]: cell for cell in cells}
    assert all(cell["status"] == "ok" for cell in cells), [(c["measurement"], c["error"]) for c in cells]
    metrics = by_kind["churn"]["metrics"]
    assert metrics["staying_nodes"] == 3 and metrics["pairs_before"] == 6  # n0, n1, n2 among themselves
    assert metrics["newcomer_unreached"] == 0 and 0 < metrics["newcomer_reached_s"] < DEADLINE
    assert 0 < metrics["newcomer_reaches_s"] < DEADLINE
    assert metrics["join_s"] > 0 and metrics["leave_s"] > 0
    assert metrics["leaver_replies_after"] == 0
    (cell_id,) = [c["cell_id"] for c in cells if c["measurement"] == "churn"]
    detail = json.loads(Store(tmp_path / "c.db").raw_outputs(cell_id)["churn"])
    assert (detail["leaving"], detail["joining"], detail["staying"]) == ("n3", "n4", ["n0", "n1", "n2"])
    assert set(detail["reached_s"]) == {"n0", "n1", "n2"} and detail["leave"]["node"] == "n3"
    if kind == "yggdrasil-mesh":
        # every pair goes through the public peer, yet every node's coordinates hang from the
        # spanning tree's root, the node with the smallest key (stop 66, 6 nodes: a leaving root
        # silenced 10-11 of 12 pairs for 2-3 s; another node's leave or join cost the pairs with
        # the root one or two echoes). Where n3 or n4 holds it, the root leaves (n4 is held out
        # first, then joins): any pair may be interrupted; else only pairs with the root may be
        by_key = by_kind["churn"]["negotiated"]["mesh"]["by_key"]
        # the leave says when n3 was the root: the smallest key running then (n4 held out)
        assert ("role" in detail["leave"]) == ([name for name in by_key if name != "n4"][0] == "n3"), (by_key, detail)
        if by_key[0] not in ("n3", "n4"):
            assert all(by_key[0] in pair.split(">") for pair in detail["interrupted"]), (by_key, detail["interrupted"])
        assert metrics["pairs_unserved"] == 0
    else:
        assert metrics["pairs_interrupted"] == 0 and not detail["interrupted"], detail["interrupted"]
    if kind == "tailscale-mesh":  # two joins (n4, then n3 back at the end), each a node Headscale had not seen
        assert by_kind["ping"]["negotiated"]["mesh"]["nodes"] == 5
    # after the churn every pair answers again: each pair of this mix has a direct path
    # (pairs_without_direct_path(NATS) is empty), so even the static mesh joins them all
    ping = by_kind["ping"]["metrics"]
    assert not pairs_without_direct_path(NATS)
    assert ping["pairs"] == 20 and ping["pairs_silent"] == 0, ping
