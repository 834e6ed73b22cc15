"""Pure parts of the capacity measurements: rate ranges, overhead arithmetic, the MTU bisection,
the sweep's knee. No hosts, no tools."""

import pytest

from vpnbench.foundation.errors import TechniqueError, UserError
from vpnbench.foundation.params import validate_model
from vpnbench.foundation.units import parse_rate_list
from vpnbench.measure.mtu import MtuParams, bisect, probe_verdict
from vpnbench.measure.udp_sweep import Step, UdpSweepParams, knee, sweep_metrics
from vpnbench.techniques import expect, overhead
from vpnbench.techniques.ipsec import LIBIPSEC_TUN_MTU
from vpnbench.techniques.ipsec.proposals import CIPHERS


def test_rate_range_includes_both_ends():
    assert parse_rate_list("25M..400M step 25M")[:2] == [25_000_000, 50_000_000]
    assert len(parse_rate_list("25M..400M step 25M")) == 16
    assert parse_rate_list("100M..400M step 150M") == [100_000_000, 250_000_000, 400_000_000]
    assert parse_rate_list("100M..300M step 150M") == [100_000_000, 250_000_000]  # the end need not be a step
    assert parse_rate_list(["50M", 10_000_000, "50M"]) == [10_000_000, 50_000_000]
    assert parse_rate_list("10M") == [10_000_000]


@pytest.mark.parametrize("text, words", [
    ("100M..400M step 0", "step '0' is not a positive rate"),
    ("100M..400M step -25M", "step '-25M' is not a positive rate"),
    ("400M..100M step 25M", "empty range"),
    ("100M..400M", "is not a rate range"),
    ("x..400M step 1M", "'x' is not a rate"),
    ("1..100000000 step 1", "more than 1000"),
])
def test_bad_rate_ranges_say_why(text, words):
    with pytest.raises(ValueError, match=words):
        parse_rate_list(text)


def test_empty_rate_list_is_refused():
    with pytest.raises(ValueError, match="empty list"):
        parse_rate_list([])


def test_sweep_params_name_the_field():
    with pytest.raises(UserError, match=r"^measurement.rate: '100M..400M step 0': the step"):
        validate_model(UdpSweepParams, {"kind": "udp_sweep", "rate": "100M..400M step 0"}, "measurement")
    with pytest.raises(UserError, match=r"^measurement.max_loss:"):
        validate_model(UdpSweepParams, {"kind": "udp_sweep", "max_loss": 2}, "measurement")


def test_mtu_params_refuse_below_576():
    with pytest.raises(UserError, match=r"^measurement.max_mtu: .*576"):
        validate_model(MtuParams, {"kind": "mtu", "max_mtu": 500}, "measurement")
    with pytest.raises(UserError, match=r"max_mtu: 1000 is below min_mtu 1200"):
        validate_model(MtuParams, {"kind": "mtu", "max_mtu": 1000, "min_mtu": 1200}, "measurement")


def _step(offered, sent, received, loss_pct, seconds=1.0):
    return Step(offered, {"throughput_bps": received, "sender_throughput_bps": sent, "loss_pct": loss_pct}, {},
                length=1300, duration=seconds)


def test_knee_is_last_step_before_loss_first_exceeds():
    steps = [_step(100, 100, 100, 0), _step(200, 200, 199, 0.5), _step(300, 300, 250, 17), _step(400, 400, 399, 0.2)]
    assert knee(steps, 0.01).offered_bps == 200  # the later passing step is noise, not a higher knee
    m = sweep_metrics(steps, 0.01)
    assert m["knee_bps"] == 200 and m["knee_found"] == 1 and m["knee_at_top"] == 0
    assert m["top_gap_bps"] == 1 and m["max_received_bps"] == 399


def test_no_knee_when_first_step_loses():
    steps = [_step(100, 100, 50, 50), _step(200, 200, 60, 70)]
    m = sweep_metrics(steps, 0.01)
    assert "knee_bps" not in m and m["knee_found"] == 0
    assert m["top_gap_bps"] == 140 and m["top_loss_pct"] == 70


def _failed(offered):
    return Step(offered, {}, {}, error="iperf3: control socket has closed unexpectedly", length=1300, duration=1.0)


def test_a_failed_step_is_not_a_lossy_one():
    """A tool's error tells nothing of loss: the knee runs past it and never blames loss for it."""
    from vpnbench.measure.udp_sweep import describe

    steps = [_step(100, 100, 100, 0), _failed(200), _step(300, 300, 300, 0)]
    m = sweep_metrics(steps, 0.01)
    assert m["knee_bps"] == 300 and m["knee_at_top"] == 1 and m["failed_steps"] == 1 and m["top_offered_bps"] == 300
    # the sweep: 25M ok, 50M a tool error, 75M and 100M ok, 125M at 20 % loss
    steps = [_step(25e6, 25e6, 25e6, 0), _failed(50e6), _step(75e6, 75e6, 75e6, 0), _step(100e6, 100e6, 100e6, 0.1),
             _step(125e6, 125e6, 100e6, 20)]
    assert knee(steps, 0.01).offered_bps == 100e6
    text = describe(steps, 0.01)
    assert "knee: 100 Mbit/s, the last step before loss first exceeded 1 % (at 125 Mbit/s)" in text, text
    assert "1 step(s) failed (50 Mbit/s): a tool's error, not loss" in text, text
    # failed steps at the top: the knee is the top step that ran, and may lie higher
    m = sweep_metrics([_step(10e6, 10e6, 10e6, 0), _step(20e6, 20e6, 20e6, 0), _failed(30e6), _failed(40e6)], 0.01)
    assert m["knee_bps"] == 20e6 and m["knee_at_top"] == 1 and m["failed_steps"] == 2
    # the first step failed, the next lost: no knee, and the limit is the lossy step's, not the failure's
    steps = [_failed(100_000_000), _counted(200_000_000, 19_230, 17_000, 19_233)]
    m = sweep_metrics(steps, 0.01)
    assert m["knee_found"] == 0 and m["knee_limit_receiver"] == 1, m
    assert "the first step that ran (200 Mbit/s) already lost more" in describe(steps, 0.01)


def _counted(offered, sent_pkts, received_pkts, arrived_pkts):
    step = Step(offered, {"throughput_bps": received_pkts * 10400.0, "sender_throughput_bps": sent_pkts * 10400.0,
                          "sent_packets": float(sent_pkts), "received_packets": float(received_pkts),
                          "loss_pct": 100.0 * (sent_pkts - received_pkts) / sent_pkts}, {}, length=1300, duration=1.0)
    base = {"client_tx_packets": 0, "server_rx_packets": 0, "client_tx_dropped": 0, "server_rx_dropped": 0}
    step.count(base, {**base, "client_tx_packets": sent_pkts, "server_rx_packets": arrived_pkts})
    return step


def test_the_knee_names_the_limit_its_next_step_met():
    from vpnbench.measure.udp_sweep import UdpSweep

    # 9 615 pps keep up; at 19 230 pps 19 230 reach the server's device but the receiver reads 17 000
    steps = [_counted(100_000_000, 9615, 9615, 9617), _counted(200_000_000, 19_230, 17_000, 19_233)]
    assert steps[0].loss_site is None and steps[1].loss_site == "receiver"
    m = sweep_metrics(steps, 0.01)
    assert m["knee_bps"] == 100e6 and m["knee_limit_receiver"] == 1
    assert "knee 100 Mbit/s (limit: the receiving socket; receiver 2 230 of 2 230 lost)" in UdpSweep.headline_text(m)
    assert steps[1].trial(2, 1300, 1.0).data["loss_site"] == "receiver"
    # without a knee: the first step's limit; lost before the server's device: the path
    steps = [_counted(100_000_000, 9615, 5000, 5002)]
    m = sweep_metrics(steps, 0.01)
    assert m["knee_found"] == 0 and m["knee_limit_path"] == 1


def test_a_step_that_sent_short_of_its_rate_does_not_keep_up_and_the_knee_names_the_generator():
    """The issue's case: the generator tops out at 250 Mbit/s and nothing is lost. 400 Mbit/s was
    never sent, so it cannot be the knee: the knee is 250, and the limit the generator."""
    from vpnbench.measure.udp_sweep import UdpSweep, describe

    steps = [_step(100e6, 99.9e6, 99.9e6, 0.0), _step(250e6, 249.8e6, 249.8e6, 0.0),
             _step(400e6, 250e6, 250e6, 0.0)]
    assert [s.keeps_up(0.01) for s in steps] == [True, True, False]
    assert steps[2].loss_site == "generator" and steps[1].loss_site is None
    m = sweep_metrics(steps, 0.01)
    assert m["knee_bps"] == 250e6 and m["knee_at_top"] == 0 and m["knee_limit_generator"] == 1, m
    text = UdpSweep.headline_text(m)  # 150 Mbit/s unsent over 1 s: 150e6 / (8 x 1300) = 14 423 datagrams
    assert text.startswith("knee 250 Mbit/s (limit: the generator; unsent 14 423 of 14 423 lost or unsent), "), text
    assert "sent short of the offered rate" in describe(steps, 0.01)


def test_a_step_a_little_short_that_lost_much_names_where_it_lost():
    """Seen on wireguard-go here: 400 Mbit/s offered, 398.08 sent (0.48 % short: 185 datagrams
    of 1300 B unsent over 1 s), 18 % lost at the receiving socket: the loss, not the shortfall,
    is the limit (the step keeps up neither way)."""
    step = _counted(400_000_000, 38_277, 31_291, 38_280)
    step.metrics["sender_throughput_bps"] = 398.08e6
    assert step.unsent == 185 and step.limit_split == {"generator": 185, "tunnel_device": 0, "path": 0,
                                                       "receiver": 6_986}
    assert step.loss_site == "receiver" and not step.keeps_up(0.01)


def test_the_sending_tolerance_is_iperf3s_pacing_arithmetic():
    """iperf3 checks its average rate since the stream began every --pacing-timer (1 ms): a
    sender that keeps up ends within two ticks and one datagram of rate x seconds. Measured on
    loopback (iperf3 3.12, 1 s, 1300 B): 400 Mbit/s sent 399.67 (0.083 % short, 0.83 ms of
    sending), 100 Mbit/s sent 99.90 (0.096 %); the 2 s fixture in tests/data sent 49.979 of 50."""
    from vpnbench.measure.udp_sweep import sending_tolerance

    assert sending_tolerance(400e6, 1300, 1.0) == pytest.approx((0.002 + 8 * 1300 / 400e6) / 1.0)  # 0.2026 %
    assert _step(400e6, 399.67e6, 399.67e6, 0.0).keeps_up(0.01)
    assert not _step(400e6, 399.0e6, 399.0e6, 0.0).keeps_up(0.01)  # 0.25 % short: 2.5 ms of sending missing
    assert _step(100e6, 99.90e6, 99.90e6, 0.0).keeps_up(0.01)
    assert _step(50e6, 49.979e6, 49.979e6, 0.0, seconds=2.0).keeps_up(0.01)
    assert not _step(50e6, 49.9e6, 49.9e6, 0.0, seconds=5.0).keeps_up(0.01)  # 0.2 % of 5 s: 10 ms


def test_bisect_finds_largest_passing_size():
    probes = []

    def passes(size):
        probes.append(size)
        return size <= 1420

    assert bisect(passes, 576, 1500) == 1420
    assert len(probes) <= 12
    assert bisect(lambda s: True, 576, 1500) == 1500
    assert bisect(lambda s: False, 576, 1500) is None


def test_probe_verdicts():
    assert probe_verdict("1 packets transmitted, 1 received, 0% packet loss") == "passed"
    assert probe_verdict("ping: local error: message too long, mtu=1420\n1 packets transmitted, 0 received") == "too-big"
    assert probe_verdict("From 10.201.1.1 icmp_seq=1 Frag needed and DF set (mtu = 1400)\n"
                         "1 packets transmitted, 0 received, +1 errors") == "too-big"
    assert probe_verdict("1 packets transmitted, 0 received, 100% packet loss") == "lost"


@pytest.mark.parametrize("technique, mtu, overhead_bytes", [
    ({"kind": "baseline"}, 1500, 0),
    ({"kind": "wireguard", "mtu": 9000}, 1440, 60),  # IPv4 underlay: 20 + 8 + 16 + 16
    ({"kind": "wireguard", "mtu": 9000, "family": "ipv6"}, 1420, 80),
    ({"kind": "macsec"}, 1468, 32),
    # ESP tunnel, AES-GCM-16: 20 + 8 + IV 8 + ICV 16 + trailer 2, aligned to 4
    ({"kind": "ipsec", "cipher": "aes128gcm16", "backend": "kernel"}, 1446, 54),
    ({"kind": "ipsec", "cipher": "chacha20poly1305", "backend": "kernel"}, 1446, 54),
    ({"kind": "ipsec", "cipher": "aes128gcm8", "backend": "kernel"}, 1454, 46),
    # NAT-T adds the UDP header
    ({"kind": "ipsec", "cipher": "aes128gcm16", "backend": "userspace", "implementation": "libreswan"}, 1438, 62),
    # transport mode: no second IP header
    ({"kind": "ipsec", "cipher": "aes128gcm16", "backend": "kernel", "mode": "transport"}, 1466, 34),
])
def test_protocol_mtu(technique, mtu, overhead_bytes):
    e = expect(technique, 1500)
    assert (e.protocol_mtu, e.overhead) == (mtu, overhead_bytes)


def test_cbc_padding_makes_overhead_depend_on_alignment():
    outer = [overhead.esp_outer(n, "ipv4", CIPHERS["aes128-sha256"].wire) for n in range(1400, 1417)]
    assert len(set(outer)) == 2  # 16 inner sizes share one outer size, then it jumps by a block
    e = expect({"kind": "ipsec", "cipher": "aes128-sha256", "backend": "kernel"}, 1500)
    # 20 + 8 + IV 16 + ICV 16 = 60 fixed, and (inner + 2) padded to 16 must fit 1440: 1438
    assert e.protocol_mtu == 1438 and overhead.esp_outer(1439, "ipv4", CIPHERS["aes128-sha256"].wire) > 1500


@pytest.mark.parametrize("cipher", sorted(CIPHERS))
def test_l2tp_ipsec_counts_udp_l2tp_and_ppp_inside_the_transport_sa(cipher):
    """L2TP/IPsec's ESP (transport mode) protects a UDP packet: UDP 8 + L2TPv2 6 + PPP 4 + the
    inner IP packet, whole. Over a 1300 B underlay with aes128gcm16 (IV 8, ICV 16, 4-byte
    alignment) the outer packet of an n-byte inner one is
        IP 20 + ESP 8 + IV 8 + pad4(UDP 8 + L2TP 6 + PPP 4 + n + trailer 2) + ICV 16
      = 52 + pad4(n + 20) <= 1300  ->  n + 20 <= 1248  ->  n = 1228,
    where running ESP over the inner packet as if it were the UDP packet (its own 20-byte IP
    header taken off, nothing added) gave 52 + pad4(n - 20 + 2) <= 1300 -> n = 1266: 38 bytes
    too many (20 + 8 + 6 + 4), for every cipher. At 1500 B the 1280 PPP MTU hides it
    (1428 > 1280); the protocol limit falls below 1280 under 1280 + 72 = 1352 B."""
    wire = CIPHERS[cipher].wire
    l2tp = expect({"kind": "ipsec", "cipher": cipher, "mode": "transport", "l2tp": True, "backend": "kernel"}, 1300)
    plain = expect({"kind": "ipsec", "cipher": cipher, "mode": "transport", "backend": "kernel"}, 1300)
    assert l2tp.protocol_mtu == plain.protocol_mtu - 38, (l2tp.protocol_mtu, plain.protocol_mtu)
    assert overhead.esp_outer(l2tp.protocol_mtu + 38, "ipv4", wire, "transport") <= 1300
    assert overhead.esp_outer(l2tp.protocol_mtu + 39, "ipv4", wire, "transport") > 1300
    if cipher == "aes128gcm16":
        assert l2tp.protocol_mtu == 1228 and l2tp.expected_mtu == 1228 and plain.protocol_mtu == 1266
        assert expect({"kind": "ipsec", "cipher": cipher, "mode": "transport", "l2tp": True}, 1500).expected_mtu == 1280
        assert expect({"kind": "ipsec", "cipher": cipher, "mode": "transport", "l2tp": True}, 1352).protocol_mtu == 1280
        assert "UDP 8 + L2TPv2 6 + PPP 4" in l2tp.how


def test_device_limits_and_fragmenting_techniques():
    wg = expect({"kind": "wireguard", "mtu": 1420}, 1500)
    assert wg.protocol_mtu == 1440 and wg.expected_mtu == 1420  # wg's 1420 assumes an IPv6 underlay
    libipsec = expect({"kind": "ipsec", "cipher": "aes128gcm16", "backend": "userspace"}, 1500)
    assert libipsec.expected_mtu == LIBIPSEC_TUN_MTU
    ovpn = expect({"kind": "openvpn", "cipher": "AES-256-GCM", "transport": "udp"}, 1500)
    assert ovpn.protocol_mtu == 1448 and ovpn.overhead == 52  # 20 + 8 + opcode/peer 4 + id 4 + tag 16
    assert ovpn.expected_mtu == 1500  # tun-mtu 1500: bigger packets travel in fragmented outer packets
    tcp = expect({"kind": "openvpn", "cipher": "AES-256-GCM", "transport": "tcp", "tun_mtu": 1400}, 1500)
    assert tcp.expected_mtu == 1400 and tcp.overhead == 20 + 32 + 2 + 24


class SimulatedPath:
    """A trial adapter (generators.py's signature) over a simulated path: the generator sends up
    to gen_pps for whole seconds (as iperf3 runs a trial), the path forwards up to cap_pps; what
    it cannot forward is lost `where`: "path" (never reaches the server's tunnel device) or
    "receiver" (reaches the device, not the receiving socket). Keeps the devices' counters."""

    def __init__(self, cap_pps: float, gen_pps: float = 1e12, where: str = "path", device_drops: int = 0):
        self.cap, self.gen, self.where, self.loads = cap_pps, gen_pps, where, []
        self.device_drops = device_drops  # per trial, of other traffic (not the generator's packets)
        self.totals = {"client_tx_packets": 0, "client_tx_dropped": 0, "server_rx_packets": 0, "server_rx_dropped": 0}

    def counters(self) -> dict:
        return dict(self.totals)

    def __call__(self, ctx, family, offered_bps, length, seconds):
        from vpnbench.measure.generators import TrialCounts

        load = offered_bps / (8 * length)
        self.loads.append(load)
        rate = min(load, self.gen)
        sent = int(rate * seconds)
        received = sent if rate <= self.cap else int(self.cap * seconds)
        self.totals["client_tx_packets"] += sent
        self.totals["client_tx_dropped"] += self.device_drops
        self.totals["server_rx_packets"] += sent if self.where == "receiver" else received
        return TrialCounts(sent, received, sent * 8 * length / seconds, received * 8 * length / seconds, {})


def _params(**kw):
    from vpnbench.measure.rate_search import RateSearchParams

    return RateSearchParams(**{"duration_sum": 1.0, **kw})


def _search(path: SimulatedPath, params) -> dict:
    """The search through rate_search's own TrialRunner and metrics, over the simulated path."""
    from vpnbench.measure import rate_search
    from vpnbench.measure.search import search

    runner = rate_search.TrialRunner(None, params, generator=path, counters=path.counters)
    outcome = search(runner, params)
    return {**rate_search.search_metrics(outcome, runner, params.length), "_bounds": outcome.bounds,
            "_trials": runner.trials}


def test_search_brackets_the_simulated_capacity():
    path = SimulatedPath(30_000)
    m = _search(path, _params(relative_width=0.005))
    lower, upper = m["_bounds"]["ndr"]
    assert lower <= 30_000 < upper and (upper - lower) / upper <= 0.0051
    assert m["_bounds"]["pdr"][0] >= lower  # a partial drop allows at least as much
    # what was sent at the bound's load: whole packets, at most one short of the load over 1 s
    assert lower - 1 <= m["ndr_pps"] <= lower and m["ndr_bps"] == m["ndr_pps"] * 8 * 1300
    assert m["ndr_load_bps"] == lower * 8 * 1300 and "generator_limit_bps" not in m
    assert m["ndr_limit_path"] == 1 and "ndr_limit_receiver" not in m  # lost before the server's device


def test_generator_limit_is_never_a_false_ndr():
    # The generator tops out at 20 kpps, the path would forward 30 kpps.
    m = _search(SimulatedPath(30_000, gen_pps=20_000), _params(relative_width=0.01))
    for goal in ("ndr", "pdr"):
        assert m[f"{goal}_generator_limited"] == 1 and f"{goal}_bps" not in m
    # the lowest load it fell short of by more than its pacing allows (0.2 % + one datagram)
    assert 20_000 * 8 * 1300 < m["generator_limit_bps"] <= 1.05 * 20_000 * 8 * 1300
    assert m["generator_max_sent_bps"] == pytest.approx(20_000 * 8 * 1300)


def test_a_generator_short_over_a_rounded_up_trial_is_never_a_false_ndr():
    # 1.2 s trials run 2 s (whole seconds): a generator capped at 65 Mbit/s sends 130 Mbit in
    # them, more than 100 Mbit/s x the 1.2 s asked; the device loses nothing. The search must not
    # call 100 Mbit/s an NDR: the generator, not the device, is what it met.
    gen_pps = 65e6 / (8 * 1300)
    params = _params(min_rate="10M", max_rate="100M", relative_width=0.05, trial_duration="1.2s",
                     final_trial_duration="1.2s", duration_sum="1.2s")
    m = _search(SimulatedPath(1e12, gen_pps=gen_pps), params)
    assert all(t.duration_s == 2.0 for t in m["_trials"])
    assert m.get("ndr_bps", 0) < 65e6 and m["ndr_generator_limited"] == 1, m
    assert 65e6 <= m["generator_limit_bps"] <= 100e6 and m["generator_max_sent_bps"] == pytest.approx(65e6)
    from vpnbench.measure.rate_search import RateSearch

    assert "NDR generator-limited (iperf3) at" in RateSearch.headline_text(m)


class ShortGenerator(SimulatedPath):
    """A generator that sends `share` of every load it is asked for, over a path of cap_pps."""

    def __init__(self, cap_pps: float, share: float):
        super().__init__(cap_pps)
        self.share = share

    def __call__(self, ctx, family, offered_bps, length, seconds):
        return super().__call__(ctx, family, offered_bps * self.share, length, seconds)


def test_a_generator_always_short_by_more_than_its_pacing_is_named_never_an_ndr():
    # 2.5 % short at every load, a path of 30 kpps: with the 97 % bound the search found an NDR
    # near 30 000 / 0.975 = 30 769 pps, above what was sent and above the path.
    from vpnbench.measure.rate_search import RateSearch

    m = _search(ShortGenerator(30_000, 0.975), _params(relative_width=0.01))
    assert m.get("ndr_bps", 0) <= 30_000 * 8 * 1300, m
    assert m["ndr_generator_limited"] == 1 and m["generator_limited_by_iperf3"] == 1, m
    short = [t for t in m["_trials"] if t.data["generator_limited"]]
    assert short and all(t.data["generator"] == "iperf3" for t in short)
    assert all(t.data["unsent_packets"] == int(t.offered_pps * t.duration_s) - t.sent_packets for t in short)
    assert "NDR generator-limited (iperf3) at" in RateSearch.headline_text(m)


def test_an_ndr_is_what_was_sent_not_what_was_asked():
    # 0.1 % short: within iperf3's pacing, so the loads count as sent; the NDR reported is the
    # rate that was sent at the bound's load, 0.1 % under it, and never above the path's 25 kpps.
    m = _search(ShortGenerator(25_000, 0.999), _params(relative_width=0.005))
    lower = m["_bounds"]["ndr"][0]
    assert m["ndr_load_bps"] == lower * 8 * 1300 and "generator_limit_bps" not in m, m
    assert m["ndr_bps"] == pytest.approx(0.999 * lower * 8 * 1300, abs=8 * 1300)  # whole packets
    assert m["ndr_bps"] < m["ndr_load_bps"] and m["ndr_bps"] <= 25_000 * 8 * 1300


def test_a_lossless_search_up_to_max_rate_with_a_short_generator_says_so():
    # every load passes (the generator's shortfall is unsent, not lost, to a search that ignores
    # it) - max_rate itself "passed": the shortfall must still be reported, not NDR at max rate
    from vpnbench.measure.rate_search import search_metrics
    from vpnbench.measure.search import SearchOutcome
    from vpnbench.store.records import Trial

    class Runner:
        trials = [Trial(1, offered_bps=100e6, offered_pps=100e6 / 10400, loss_ratio=0.0,
                        data={"generator_limited": True, "sent_bps": 65e6})]
        params = _params()

        def generator_limit(self):
            return 100e6

    m = search_metrics(SearchOutcome({"ndr": (100e6 / 10400, None), "pdr": (100e6 / 10400, None)}), Runner(), 1300)
    assert "ndr_bps" not in m and m["ndr_generator_limited"] == 1 and m["generator_limit_bps"] == 100e6


def test_a_receiver_that_cannot_keep_up_is_named_the_limit():
    from vpnbench.measure.rate_search import RateSearch

    m = _search(SimulatedPath(30_000, where="receiver"), _params(relative_width=0.01))
    assert m["ndr_found"] == 1 and m["ndr_limit_receiver"] == 1 and "ndr_limit_path" not in m
    assert "limit: the receiving socket" in RateSearch.headline_text(m)
    assert {t.data.get("loss_site") for t in m["_trials"] if t.loss_ratio} == {"receiver"}


def test_a_search_whose_lowest_load_already_lost_says_so_with_the_limit_it_met():
    from vpnbench.measure.rate_search import RateSearch

    # the receiver keeps up with 500 pps; min_rate (10 Mbit/s of 1300 B) is 961 pps
    m = _search(SimulatedPath(500, where="receiver"), _params(relative_width=0.05))
    assert m["ndr_found"] == 0 and "ndr_bps" not in m and m["ndr_limit_receiver"] == 1, m
    assert m["ndr_upper_bound_bps"] == pytest.approx(10e6, rel=0.01)
    text = RateSearch.headline_text(m)
    assert "NDR not found: even 10.0 Mbit/s lost too much (limit: the receiving socket; receiver 461 of 461 lost)" in text, text


@pytest.mark.parametrize("counters, site", [
    # the baseline trial: 91 488 reached the server's device, iperf3 counted 90 005
    ({"generator_sent": 91_488, "generator_received": 90_005, "client_tx_packets": 91_490,
      "server_rx_packets": 91_492, "client_tx_dropped": 0, "server_rx_dropped": 0}, "receiver"),
    ({"generator_sent": 1000, "generator_received": 800, "client_tx_packets": 1002, "server_rx_packets": 804,
      "client_tx_dropped": 0, "server_rx_dropped": 0}, "path"),
    ({"generator_sent": 1000, "generator_received": 800, "client_tx_packets": 802, "server_rx_packets": 803,
      "client_tx_dropped": 198, "server_rx_dropped": 0}, "tunnel_device"),
    ({"generator_sent": 1000, "generator_received": 1000, "server_rx_packets": 1003}, None),
    ({"generator_sent": 1000, "generator_received": 900}, None),  # no counters: cannot tell
])
def test_loss_site_from_both_ends_counters(counters, site):
    from vpnbench.measure.generators import loss_site

    assert loss_site(counters) == site
    assert loss_site(counters, generator_limited=True) == "generator"


def test_loss_site_names_the_site_that_lost_most_not_any_nonzero_drop_counter():
    from vpnbench.measure.generators import describe_split, loss_site, loss_split

    # the case: 10 000 lost between the devices, 1 dropped at the client's device
    counters = {"generator_sent": 100_000, "generator_received": 90_000, "client_tx_packets": 99_999,
                "client_tx_dropped": 1, "server_rx_packets": 90_000, "server_rx_dropped": 0}
    assert loss_split(counters) == {"tunnel_device": 1, "path": 9_999, "receiver": 0}
    assert loss_site(counters) == "path"
    assert describe_split(loss_split(counters)) == "path 9 999, tunnel device 1 of 10 000 lost"
    # 6 000 lost on the path, 4 000 at the receiving socket: no site lost 80 %, so neither is named
    mixed = {"generator_sent": 100_000, "generator_received": 90_000, "client_tx_packets": 100_000,
             "client_tx_dropped": 0, "server_rx_packets": 94_000, "server_rx_dropped": 0}
    assert loss_split(mixed) == {"tunnel_device": 0, "path": 6_000, "receiver": 4_000}
    assert loss_site(mixed) == "mixed"
    assert describe_split(loss_split(mixed)) == "path 6 000, receiver 4 000 of 10 000 lost"
    # 8 000 of 10 000 is the dominance threshold itself: named
    eighty = {**mixed, "server_rx_packets": 92_000}
    assert loss_site(eighty) == "path"


def test_a_search_whose_device_dropped_one_other_packet_per_trial_names_the_path():
    """The issue's end-to-end case: the path loses above 30 kpps, and every trial the client's
    tunnel device dropped one packet of other traffic; the limit met is the path, with counts."""
    from vpnbench.measure.rate_search import RateSearch

    m = _search(SimulatedPath(30_000, device_drops=1), _params(relative_width=0.01))
    assert m["ndr_found"] == 1 and m["ndr_limit_path"] == 1 and "ndr_limit_tunnel_device" not in m, m
    assert m["ndr_lost_path"] > 0 and m["ndr_lost_tunnel_device"] <= 1, m
    text = RateSearch.headline_text(m)
    assert "(limit: the path between the tunnel devices; path " in text and "a tunnel device" not in text, text
    assert text.count(", tunnel device 1 of ") == 2, text  # NDR's and PDR's: the one drop, counted


def test_a_generator_slightly_under_its_target_still_counts_as_sending_the_load():
    from vpnbench.measure.search import intended_count

    assert intended_count(64_004, 64_038.4, 1300, 1.0) == 64_004  # iperf3 paces ~0.05 % under: not unsent loss
    assert intended_count(60_000, 64_038.4, 1300, 1.0) == 64_038  # 6 % short: the unsent packets count as lost
    assert intended_count(130_000, 64_038.4, 1300, 1.0) == 130_000  # ran longer (whole seconds): never negative
    # 2.5 % short once passed as sent in full (the bound was 97 %); the pacing allows 0.2 % + 1 datagram
    assert intended_count(62_437, 64_038.4, 1300, 1.0) == 64_038
    assert intended_count(63_910, 64_038.4, 1300, 1.0) == 63_910  # 0.20 % short: within 0.2016 %
    assert intended_count(63_900, 64_038.4, 1300, 1.0) == 64_038  # 0.22 % short: not
    # over 10 s the ticks weigh a tenth: 0.1 % short is already more than the pacing allows
    assert intended_count(639_744, 640_384, 1300, 10.0) == 640_384


def test_rate_search_params_refuse_bad_loss_ratios():
    from vpnbench.measure.rate_search import RateSearchParams

    for value in (-0.1, 1.0, 1.5):
        with pytest.raises(UserError, match=r"^measurement.ndr_loss: "):
            validate_model(RateSearchParams, {"kind": "rate_search", "ndr_loss": value}, "measurement")
    with pytest.raises(UserError, match=r"min_rate: .* must be below max_rate"):
        validate_model(RateSearchParams, {"kind": "rate_search", "min_rate": "1G", "max_rate": "10M"}, "measurement")


def test_an_unknown_technique_kind_gets_no_silent_expectation():
    with pytest.raises(TechniqueError, match="'quantum' is not known"):
        expect({"kind": "quantum"}, 1500)


def test_no_loss_site_where_the_devices_count_gso_batches_not_datagrams():
    """gen's --gso auto: a veth counts a batch of up to 64 datagrams as one packet. 1 000 of
    1 000 000 datagrams lost, in batches of 16 at both devices: the split blamed the tunnel
    device for 937 500 of them."""
    from vpnbench.measure.generators import counter_comparison, loss_site, loss_split, units_differ

    both = counter_comparison({"client_tx_packets": 0, "server_rx_packets": 0},
                              {"client_tx_packets": 62_500, "server_rx_packets": 62_500}, 1_000_000, 999_000)
    assert loss_split(both) is None and loss_site(both) is None
    assert units_differ(both).startswith("the client's tunnel device counted 62500 packets for 999000 datagrams")
    # GSO at the client only, 497 lost on the path and 3 control packets at the server: the client's
    # batches made "unsent by the client" 960 000, and the device was blamed for the path's 497
    client_only = counter_comparison({"client_tx_packets": 0, "server_rx_packets": 0},
                                     {"client_tx_packets": 40_000, "server_rx_packets": 999_503}, 1_000_000, 999_000)
    assert loss_split(client_only) is None and loss_site(client_only) is None
    assert units_differ(client_only).startswith("the client's")
    # GRO at the server only: its device counted 31 250 merged packets for 999 000 datagrams
    server_only = counter_comparison({"client_tx_packets": 0, "server_rx_packets": 0},
                                     {"client_tx_packets": 1_000_004, "server_rx_packets": 31_250}, 1_000_000, 999_000)
    assert loss_site(server_only) is None and units_differ(server_only).startswith("the server's")
    # in datagrams, the same loss is split and named as before: 497 on the path, 503 at the receiver
    datagrams = counter_comparison({"client_tx_packets": 0, "server_rx_packets": 0},
                                   {"client_tx_packets": 1_000_004, "server_rx_packets": 999_503}, 1_000_000, 999_000)
    assert units_differ(datagrams) is None
    assert loss_split(datagrams) == {"tunnel_device": 0, "path": 497, "receiver": 503}
    assert sum(loss_split(datagrams).values()) == 1_000


def test_a_search_trial_says_why_it_names_no_loss_site():
    from vpnbench.measure import rate_search
    from vpnbench.measure.rate_search import RateSearch

    class BatchCounting(SimulatedPath):
        """The simulated path's devices counting batches of 16 datagrams."""

        def counters(self):
            return {name: value // 16 if name.endswith("_packets") else value for name, value in self.totals.items()}

    path = BatchCounting(30_000)
    runner = rate_search.TrialRunner(None, _params(), generator=path, counters=path.counters)
    runner.run_trial(1.0, 40_000)
    data = runner.trials[0].data
    assert "loss_site" not in data and "loss_split" not in data
    assert "(GSO/GRO batches): no loss site is named" in data["loss_site_unknown"], data
    # a whole search over such counters: the limit is said to be unknown, never a site
    m = _search(BatchCounting(30_000), _params(relative_width=0.01))
    assert m["ndr_limit_unknown"] == 1 and not any(f"ndr_limit_{site}" in m for site in ("path", "tunnel_device")), m
    assert "(limit: not named: the tunnel devices count GSO/GRO batches, not datagrams)" in RateSearch.headline_text(m)
