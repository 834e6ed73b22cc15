"""Pure parts of the capacity measurements: rate ranges, overhead arithmetic, the MTU bisection,
the sweep's knee. No hosts, no tools."""

import pytest

from vpnbench import overhead
from vpnbench.measure.mtu import MtuParams, bisect, probe_verdict
from vpnbench.measure.udp_sweep import Step, UdpSweepParams, knee, sweep_metrics
from vpnbench.params import validate_model
from vpnbench.errors import TechniqueError, UserError
from vpnbench.units import parse_rate_list
from vpnbench.techniques import expect
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


def _step(offered, sent, received, loss_pct):
    return Step(offered, {"throughput_bps": received, "sender_throughput_bps": sent, "loss_pct": loss_pct}, {})


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


def test_failed_step_ends_the_knee_but_not_the_sweep():
    steps = [_step(100, 100, 100, 0), Step(200, {}, {}, error="timeout"), _step(300, 300, 300, 0)]
    m = sweep_metrics(steps, 0.01)
    assert m["knee_bps"] == 100 and m["failed_steps"] == 1 and m["top_offered_bps"] == 300


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
    """A path that forwards up to cap_pps without loss, behind a generator that sends up to gen_pps."""

    def __init__(self, cap_pps: float, gen_pps: float = 1e12):
        self.cap, self.gen, self.loads = cap_pps, gen_pps, []

    def run_trial(self, duration, load):
        from vpnbench.measure.generators import TrialCounts

        self.loads.append(load)
        sent = int(min(load, self.gen) * duration)
        received = sent if min(load, self.gen) <= self.cap else int(self.cap * duration)
        return TrialCounts(sent, received, sent * 8 * 1300 / duration, received * 8 * 1300 / duration, {})


def _params(**kw):
    from vpnbench.measure.rate_search import RateSearchParams

    return RateSearchParams(duration_sum=1.0, **kw)


def test_search_brackets_the_simulated_capacity():
    from vpnbench.measure.search import search

    path = SimulatedPath(30_000)
    outcome = search(path, _params(relative_width=0.005))
    lower, upper = outcome.bounds["ndr"]
    assert lower <= 30_000 < upper and (upper - lower) / upper <= 0.0051
    assert outcome.bounds["pdr"][0] >= lower  # a partial drop allows at least as much
    from vpnbench.measure import rate_search
    from vpnbench.records import Trial

    runner = rate_search.TrialRunner.__new__(rate_search.TrialRunner)
    runner.trials = [Trial(i, offered_bps=load * 8 * 1300, loss_ratio=0.0 if load <= 30_000 else 0.1,
                           data={"generator_limited": False, "sent_bps": load * 8 * 1300})
                     for i, load in enumerate(path.loads, 1)]
    metrics = rate_search.search_metrics(outcome, runner, 1300)
    assert metrics["ndr_pps"] == lower and metrics["ndr_bps"] == lower * 8 * 1300 and "generator_limit_bps" not in metrics


def test_generator_limit_is_never_a_false_ndr():
    from vpnbench.measure import rate_search
    from vpnbench.records import Trial

    # The generator tops out at 20 kpps, the path would forward 30 kpps.
    path = SimulatedPath(30_000, gen_pps=20_000)
    from vpnbench.measure.search import search

    params = _params(relative_width=0.01)
    outcome = search(path, params)
    runner = rate_search.TrialRunner.__new__(rate_search.TrialRunner)
    runner.trials = [Trial(i, offered_bps=load * 8 * 1300, loss_ratio=0.0,
                           data={"generator_limited": min(load, 20_000) < 0.97 * load,
                                 "sent_bps": min(load, 20_000) * 8 * 1300})
                     for i, load in enumerate(path.loads, 1)]
    metrics = rate_search.search_metrics(outcome, runner, 1300)
    for goal in ("ndr", "pdr"):
        assert metrics[f"{goal}_generator_limited"] == 1 and f"{goal}_bps" not in metrics
    # the lowest load it fell more than 3 % short of
    assert 20_000 / 0.97 * 8 * 1300 <= metrics["generator_limit_bps"] <= 1.05 * 20_000 / 0.97 * 8 * 1300
    assert metrics["generator_max_sent_bps"] == pytest.approx(20_000 * 8 * 1300)


def test_a_generator_slightly_under_its_target_still_counts_as_sending_the_load():
    from vpnbench.measure.search import intended_count

    assert intended_count(64_004, 64_038.4, 0.97) == 64_004  # iperf3 paces ~0.05 % under: not unsent loss
    assert intended_count(60_000, 64_038.4, 0.97) == 64_038  # 6 % short: the unsent packets count as lost
    assert intended_count(130_000, 64_038.4, 0.97) == 130_000  # ran longer (whole seconds): never negative


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
