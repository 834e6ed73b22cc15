"""tunnels = N (issue 32, many tunnels): WireGuard (wireguard-go here: N client daemons, one
server interface with N peers) and the baseline (N flows over the plain path) brought up with
10 tunnels through the runner, vpnbench-gen sending one stream to each tunnel's server address
and one iperf3 TCP test through each:
every tunnel carried traffic, Jain's index over them, the aggregate is their sum, nothing left
behind. A tunnels value past a technique's ceiling is refused in one line, naming the reason."""

import pytest

from conftest import assert_refused, run_campaign
from vpnbench.measure.fairness import jain_index, tunnel_metrics
from vpnbench.measure.gen import many_tunnel_metrics, per_tunnel_rates
from vpnbench.store.database import Store
from vpnbench.techniques.wireguard import FIRST_ENDS, INNER, TUNNEL_CEILINGS

TUNNELS = 10
LENGTH = 1000
CAMPAIGN = f"""
[campaign]
name = "tunnels"
repetitions = 1
[testbed]
router = false
[[technique]]
kind = "baseline"
tunnels = {TUNNELS}
[[technique]]
kind = "wireguard"
implementation = "wireguard-go"
tunnels = {TUNNELS}
[[measurement]]
kind = "tcp"
duration = "1s"
[[measurement]]
kind = "udp"
tool = "gen"
rate = "20M"
length = {LENGTH}
duration = "1s"
"""


def test_jain_index_is_one_for_equal_shares_and_one_over_n_for_one_taker():
    assert jain_index([5.0, 5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert jain_index([9.0, 0.0, 0.0]) == pytest.approx(1 / 3)
    assert jain_index([3.0, 1.0]) == pytest.approx(16 / 20)  # (3+1)^2 / (2 x (9+1))
    assert jain_index([0.0, 0.0]) is None  # nothing received: no share to compare
    metrics = tunnel_metrics([4.0, 0.0, 2.0])
    assert (metrics["tunnels"], metrics["tunnels_silent"], metrics["tunnel_min_bps"], metrics["tunnel_max_bps"]) == (3, 1, 0, 4)


def test_jain_index_compares_each_tunnel_with_the_load_it_was_offered():
    # gen, threads = 3 over 2 tunnels: streams 0 and 2 to tunnel 0, 1 to tunnel 1 (2:1), every
    # datagram delivered. Over the raw rates the index read 0.9: (2+1)^2 / (2 x (4+1))
    doc = {"params": {"length": 1000}, "receiver": {"seconds": 1.0, "streams": [
        {"stream": 0, "sent": 500, "unique": 500}, {"stream": 1, "sent": 500, "unique": 500},
        {"stream": 2, "sent": 500, "unique": 500}]}}
    assert jain_index(per_tunnel_rates(doc, 2)) == pytest.approx(0.9)
    assert many_tunnel_metrics(doc, 2)["jain_index"] == pytest.approx(1.0)
    # 5 streams over 3 tunnels (2:2:1), tunnel 2 delivered half its load: shares 1, 1, 0.5
    doc["receiver"]["streams"] = [{"stream": n, "sent": 400, "unique": 200 if n == 2 else 400} for n in range(5)]
    assert many_tunnel_metrics(doc, 3)["jain_index"] == pytest.approx(2.5 ** 2 / (3 * 2.25))  # 0.926
    # equal loads: the same as over the raw rates
    assert tunnel_metrics([3.0, 1.0], [5.0, 5.0])["jain_index"] == pytest.approx(0.8)
    with pytest.raises(ValueError, match="2 offered loads for 3 tunnels"):
        tunnel_metrics([1.0, 1.0, 1.0], [1.0, 1.0])


def test_tcp_over_more_tunnels_than_it_measures_says_how_many_it_left_out():
    metrics = tunnel_metrics([1e9] * 32, of=100)  # iperf3.IPERF3_TUNNELS_MAX pairs of 100 tunnels
    assert metrics["tunnels"] == 32 and metrics["tunnels_unmeasured"] == 68
    assert "tunnels_unmeasured" not in tunnel_metrics([1e9] * 10, of=10)


def test_tunnel_numbering_keeps_the_first_tunnels_addresses_and_never_repeats_one():
    first = FIRST_ENDS.nth(0)
    assert (first.client, first.server) == (INNER["client"], INNER["server"])
    assert FIRST_ENDS.nth(1).client == {"ipv4": "10.99.0.5", "ipv6": "fd99::11"}
    ends = [FIRST_ENDS.nth(index) for index in range(10_000)]
    addresses = [end[family] for tunnel in ends for end in (tunnel.client, tunnel.server) for family in ("ipv4", "ipv6")]
    assert len(set(addresses)) == len(addresses) == 40_000
    assert ends[-1].server["ipv4"] == "10.99.156.62"  # still inside 10.99.0.0/16
    assert ends[-1].server["ipv6"] == "fd99::2:70f2"  # and fd99::/64


def test_per_tunnel_rates_add_the_streams_of_each_tunnel():
    doc = {"params": {"length": 100}, "receiver": {"seconds": 2.0, "streams": [
        {"stream": 0, "sent": 10, "unique": 10}, {"stream": 1, "sent": 10, "unique": 5},
        {"stream": 2, "sent": 10, "unique": 1}]}}
    assert per_tunnel_rates(doc, 2) == [11 * 100 * 8 / 2.0, 5 * 100 * 8 / 2.0]  # stream 2 went to tunnel 0


def test_tunnels_past_the_ceiling_are_refused_with_the_reason(tmp_path):
    ceiling = TUNNEL_CEILINGS["wireguard-go"][0]
    assert_refused(tmp_path, f'[[technique]]\nkind = "wireguard"\nimplementation = "wireguard-go"\n'
                             f'tunnels = {ceiling + 1}\n[[measurement]]\nkind = "ping"\n',
                   f"tunnels: {ceiling + 1} is more than wireguard allows here (wireguard-go: one wireguard-go process")


@pytest.mark.netns
def test_ten_tunnels_each_carry_traffic_through_the_runner(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert sorted((cell["technique_params"]["kind"], cell["measurement"]) for cell in cells) == [
        ("baseline", "tcp"), ("baseline", "udp"), ("wireguard", "tcp"), ("wireguard", "udp")]
    store = Store(tmp_path / "c.db", read_only=True)
    try:
        bringups = {bringup.kind: bringup for bringup in store.bringups(cells[0]["run_id"])}
        raws = {(cell.technique_params["kind"], cell.measurement_params["kind"]): store.raw_outputs(cell.id)
                for cell in store.cells(cells[0]["run_id"])}
    finally:
        store.close()
    for cell in cells:
        kind, metrics = (cell["technique_params"]["kind"], cell["measurement"]), cell["metrics"]
        assert cell["status"] == "ok", (kind, cell["error"])
        assert cell["technique_params"]["tunnels"] == TUNNELS
        assert metrics["tunnels"] == TUNNELS and metrics["tunnels_silent"] == 0, metrics
        assert metrics["tunnel_min_bps"] > 0 and 0 < metrics["jain_index"] <= 1, metrics
        rates = [float(line.split()[2]) for line in raws[kind]["per_tunnel"].splitlines()]
        assert len(rates) == TUNNELS and all(rate > 0 for rate in rates)
        # the aggregate is the sum of the tunnels' shares (each rounded to 1 bit/s in the raw table)
        assert sum(rates) == pytest.approx(metrics["throughput_bps"], abs=TUNNELS)
        if kind[1] == "udp":  # what arrived never exceeds what was sent
            assert metrics["received_packets"] <= metrics["sent_packets"]
        else:  # every byte counted was carried in the one second each test ran
            assert metrics["bytes_received"] * 8 == pytest.approx(metrics["throughput_bps"], rel=0.15)
    wireguard = bringups["wireguard"]
    assert wireguard.ok and wireguard.setup_time_s > 0  # timed until all ten answered
    assert wireguard.negotiated["tunnels"] == TUNNELS
    assert wireguard.wire_check["verdict"] == "encrypted"
