"""Traffic patterns over a mesh (issue 41, item 3): tcp, udp and ping with pattern = "ring", "all-pairs"
or "hub" send between the nodes of a mesh at once and report each pair, the aggregate, Jain's index
and the pairs that carried nothing (measure/patterns.py)."""

import json
import sqlite3
from contextlib import closing

import pytest

from conftest import assert_refused, run_campaign
from vpnbench.measure.fairness import jain_index
from vpnbench.measure.patterns import flow_count, pair_summary, pattern_pairs, silent_pairs
from vpnbench.measure.ping import pair_ping_metrics, pooled_ping_metrics

NODES = ["n0", "n1", "n2", "n3"]


# -- pure arithmetic ---------------------------------------------------------------------------------
def test_ring_goes_round_once():
    assert pattern_pairs("ring", NODES) == [("n0", "n1"), ("n1", "n2"), ("n2", "n3"), ("n3", "n0")]


def test_all_pairs_is_every_ordered_pair_once():
    pairs = pattern_pairs("all-pairs", NODES)
    assert len(pairs) == len(set(pairs)) == 4 * 3 == flow_count("all-pairs", 4)
    assert all(a != b for a, b in pairs) and ("n1", "n0") in pairs and ("n0", "n1") in pairs


def test_hub_is_n0_both_ways_with_every_other_node():
    assert pattern_pairs("hub", NODES) == [("n1", "n0"), ("n2", "n0"), ("n3", "n0"),
                                           ("n0", "n1"), ("n0", "n2"), ("n0", "n3")]
    assert flow_count("hub", 4) == 6 and flow_count("ring", 4) == 4
    assert pattern_pairs("pair", NODES) == [("n0", "n1")]


def test_jain_index_by_hand():
    assert jain_index([5.0, 5.0, 5.0, 5.0]) == 1.0  # (20)² / (4·100)
    assert jain_index([0.0, 0.0, 9.0]) == pytest.approx(1 / 3)  # one of three carried all: 81 / (3·81)
    assert jain_index([1.0, 3.0]) == pytest.approx(16 / 20)  # (4)² / (2·(1 + 9))
    assert jain_index([0.0, 0.0]) is None


def test_pair_summary_names_the_silent_pairs():
    shares = {"n0>n1": 4.0, "n1>n2": 0.0, "n2>n0": 2.0}
    summary = pair_summary(shares, "bps")
    assert summary == {"pairs": 3.0, "pairs_silent": 1.0, "pair_min_bps": 0.0, "pair_max_bps": 4.0,
                       "jain_index": pytest.approx(36 / (3 * 20))}
    assert silent_pairs(shares) == ["n1>n2"]
    assert "jain_index" not in pair_summary({"n0>n1": 0.0}, "bps")


def test_ping_pairs_pool_their_samples():
    one = pair_ping_metrics([1.0, None, 3.0, None])
    assert one["sent"] == 4 and one["received"] == 2 and one["loss_pct"] == 50.0 and one["rtt_avg_ms"] == 2.0
    pooled = pooled_ping_metrics([[1.0, 2.0], [None, 3.0], [None, None]])
    assert pooled["sent"] == 6 and pooled["received"] == 3 and pooled["loss_pct"] == 50.0
    assert pooled["rtt_p50_ms"] == 2.0 and pooled["rtt_max_ms"] == 3.0
    assert pooled["rtt_mdev_ms"] == pytest.approx((2 / 3) ** 0.5)  # population deviation of 1, 2, 3


# -- validation ------------------------------------------------------------------------------------
def test_a_pattern_on_a_two_host_testbed_is_refused(tmp_path):
    assert_refused(tmp_path, '[[technique]]\nkind = "wireguard"\n[[measurement]]\nkind = "tcp"\npattern = "ring"\n',
                   'measurement[1].pattern: "ring" sends between the nodes of a mesh, and this testbed has two hosts; '
                   'allowed here: pattern = "pair"')


def test_a_pattern_with_a_two_host_technique_on_a_mesh_testbed_is_refused(tmp_path):
    assert_refused(tmp_path, '[testbed]\nnodes = 3\n[[technique]]\nkind = "wireguard"\n'
                   '[[measurement]]\nkind = "ping"\npattern = "all-pairs"\n',
                   'measurement[1].pattern: "all-pairs" sends between every node of a mesh, and wireguard runs '
                   'between n0 and n1 only; allowed with it: pattern = "pair"')


def test_tcp_all_pairs_beyond_32_flows_is_refused(tmp_path):
    # 7 nodes: 7·6 = 42 flows > 32; ring (7) and hub (12) still fit
    assert_refused(tmp_path, '[testbed]\nnodes = 7\n[[technique]]\nkind = "wireguard-mesh"\n'
                   '[[measurement]]\nkind = "tcp"\npattern = "all-pairs"\n',
                   'measurement[1].pattern: "all-pairs" over 7 nodes is 42 flows at once, more than 32')


def test_tcp_reverse_with_a_pattern_is_refused(tmp_path):
    assert_refused(tmp_path, '[testbed]\nnodes = 3\n[[technique]]\nkind = "wireguard-mesh"\n'
                   '[[measurement]]\nkind = "tcp"\npattern = "ring"\nreverse = true\n',
                   'measurement[1].reverse: pattern = "ring" names each flow\'s direction')


def test_udp_gen_with_a_pattern_is_refused(tmp_path):
    assert_refused(tmp_path, '[testbed]\nnodes = 3\n[[technique]]\nkind = "wireguard-mesh"\n'
                   '[[measurement]]\nkind = "udp"\npattern = "hub"\ntool = "gen"\n',
                   'measurement[1].tool: pattern = "hub" runs iperf3 flows over the mesh\'s overlay, each pair '
                   'naming who sends; allowed with it: tool = "iperf3"')


@pytest.mark.parametrize("techniques, family, line", [
    (["wireguard-mesh"], "ipv6", 'measurement[1].family: pattern = "ring" sends to the mesh\'s overlay addresses, and '
                                 'wireguard-mesh has IPv4 ones; allowed with it: family = "ipv4", or '
                                 'family left unset (each mesh over its own overlay family)'),
    (["yggdrasil-mesh"], "ipv4", 'measurement[1].family: pattern = "ring" sends to the mesh\'s overlay addresses, and '
                                 'yggdrasil-mesh has IPv6 ones; allowed with it: family = "ipv6", or '
                                 'family left unset (each mesh over its own overlay family)'),
    (["nebula-mesh", "yggdrasil-mesh"], "ipv4", 'measurement[1].family: pattern = "ring" sends to the mesh\'s overlay '
                                                'addresses, and yggdrasil-mesh has IPv6 ones; allowed with it: family left '
                                                'unset (each mesh over its own overlay family)'),
])
@pytest.mark.parametrize("kind", ["ping", "tcp", "udp"])
def test_a_pattern_to_another_overlay_family_is_refused(tmp_path, techniques, family, line, kind):
    """A pattern sends to the nodes' overlay addresses: a family the campaign sets is the mesh's
    (Yggdrasil's are IPv6, from its keys), or the campaign is refused before anything runs."""
    blocks = "".join(f'[[technique]]\nkind = "{technique}"\n' for technique in techniques)
    assert_refused(tmp_path, f'[testbed]\nnodes = 3\n{blocks}[[measurement]]\nkind = "{kind}"\npattern = "ring"\n'
                             f'family = "{family}"\n', line)


def test_an_unknown_pattern_is_refused(tmp_path):
    assert_refused(tmp_path, '[testbed]\nnodes = 3\n[[technique]]\nkind = "wireguard-mesh"\n'
                   '[[measurement]]\nkind = "ping"\npattern = "star"\n', "pattern")


# -- real daemons ----------------------------------------------------------------------------------
def trials(db, label: str) -> list[dict]:
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT t.data FROM trials t JOIN cells c ON c.id = t.cell_id WHERE c.measurement_label = ? "
                            "ORDER BY t.number", (label,)).fetchall()
    return [json.loads(data) for (data,) in rows]


@pytest.mark.netns
def test_ring_and_all_pairs_over_four_wireguard_mesh_nodes(tmp_path, clean_machine):
    nodes = 4
    _, cells = run_campaign(tmp_path, f"""[campaign]
name = "patterns"
[testbed]
nodes = {nodes}
[[technique]]
kind = "wireguard-mesh"
[[measurement]]
kind = "ping"
pattern = "ring"
count = 10
[[measurement]]
kind = "ping"
pattern = "all-pairs"
count = 10
[[measurement]]
kind = "tcp"
pattern = "ring"
duration = "2s"
[[measurement]]
kind = "udp"
pattern = "hub"
rate = "10M"
duration = "2s"
""")
    by_label = {cell["measurement_label"]: cell for cell in cells}
    assert all(cell["status"] == "ok" for cell in cells), [(c["measurement_label"], c["error"]) for c in cells]
    # every session made before the first measurement (two crossing handshakes cost a pair 5 s:
    # CI once saw two of the ring's pairs silent through all ten echoes)
    sessions = by_label["ping_ring"]["negotiated"]["mesh"]["sessions"]
    assert sessions["pairs"] == sessions["answered"] == nodes * (nodes - 1) // 2
    for label, pairs in (("ping_ring", nodes), ("ping_all-pairs", nodes * (nodes - 1))):
        metrics = by_label[label]["metrics"]
        assert metrics["pairs"] == pairs and metrics["pairs_silent"] == 0
        each = trials(tmp_path / "c.db", label)
        assert len(each) == pairs and all(t["received"] > 0 for t in each)  # every pair answered
        assert metrics["sent"] == 10 * pairs == sum(t["sent"] for t in each)
        assert metrics["received"] == sum(t["received"] for t in each)
        assert 0 < metrics["jain_index"] <= 1
    assert {t["pair"] for t in trials(tmp_path / "c.db", "ping_ring")} == {"n0>n1", "n1>n2", "n2>n3", "n3>n0"}
    tcp = by_label["tcp_ring"]["metrics"]
    each = trials(tmp_path / "c.db", "tcp_ring")
    assert len(each) == tcp["pairs"] == nodes and tcp["pairs_silent"] == 0
    assert all(t["bytes_received"] > 0 and t["throughput_bps"] > 0 for t in each)  # every pair carried bytes
    assert tcp["throughput_bps"] == pytest.approx(sum(t["throughput_bps"] for t in each))
    assert tcp["bytes_received"] == sum(t["bytes_received"] for t in each)
    assert 0 < tcp["jain_index"] <= 1
    assert tcp["jain_index"] == pytest.approx(jain_index([t["throughput_bps"] for t in each]))
    udp = by_label["udp_10M_1300_hub"]["metrics"]
    each = trials(tmp_path / "c.db", "udp_10M_1300_hub")
    assert len(each) == udp["pairs"] == 2 * (nodes - 1) and udp["pairs_silent"] == 0
    assert {t["pair"] for t in each} == {"n1>n0", "n2>n0", "n3>n0", "n0>n1", "n0>n2", "n0>n3"}
    assert all(0 < t["received_packets"] <= t["sent_packets"] for t in each)
    assert udp["sent_packets"] == sum(t["sent_packets"] for t in each)
    assert udp["throughput_bps"] == pytest.approx(sum(t["throughput_bps"] for t in each))
    assert udp["loss_pct"] == pytest.approx(100 * udp["lost_packets"] / udp["sent_packets"])
    assert 0 < udp["jain_index"] <= 1
