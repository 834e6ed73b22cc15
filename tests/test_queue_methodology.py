"""The queue-below-BDP check: linkem's default limit holds the delay line, and where the TCP
window (not the queue) held the cells back, the warning names the window."""

import pytest

from conftest import run_campaign
from vpnbench.answers.methodology import queue_below_bdp
from vpnbench.testbeds.impair_backends import LinkemBackend, NetemBackend, linkem_binary


def cell(spec: dict, backend="netem", throughput=5e9, retransmits=None, measurement="tcp",
         impairment="delay 40ms"):
    metrics = {"throughput_bps": throughput, "bytes_received": throughput / 8 * 10}
    if retransmits is not None:
        metrics["retransmits"] = retransmits
    return {"technique": "wireguard", "impairment": impairment, "measurement": measurement,
            "measurement_label": measurement, "repetition": 1, "status": "ok", "metrics": metrics,
            "impairment_params": {"backend": backend, "egress_spec": spec, "ingress_spec": spec}}


def test_linkem_default_limit_matches_the_rust_formula():
    # values from linkem/src/spec.rs limit_defaults
    def limit(delay_us, jitter_us=0, rate_bps=0):
        return LinkemBackend.default_limit({"delay_us": delay_us, "jitter_us": jitter_us, "rate_bps": rate_bps})
    assert limit(50_000) == 42282
    assert limit(40_000) == 34026
    assert limit(40_000, 10_000) == 42282
    assert limit(50_000, 0, 500e6) == 4129
    assert limit(0, 0, 10e6) == 1000
    assert limit(0) == 1000
    assert limit(10e6) == 1_000_000


def test_linkems_default_holds_delay_line_but_netems_and_an_explicit_limit_do_not():
    spec = {"delay_us": 40000.0, "limit": None}
    assert queue_below_bdp([cell(spec, backend="linkem")]) == []  # 34026 >= 16667 needed
    assert [w.code for w in queue_below_bdp([cell(spec, backend="netem")])] == ["queue_below_bdp"]
    explicit = queue_below_bdp([cell({"delay_us": 40000.0, "limit": 1000}, backend="linkem")])
    assert [w.code for w in explicit] == ["queue_below_bdp"]
    assert "the queue limit of 1000 packets" in explicit[0].message
    # faster than linkem's delay line: its default is named with its size
    fast = queue_below_bdp([cell(spec, backend="linkem", throughput=20e9)])
    assert "linkem's default queue limit of 34026 packets" in fast[0].message


def unimpaired(throughput=5e9):
    baseline = cell({}, throughput=throughput, impairment="none")
    baseline["impairment_params"] = {}
    return baseline


def test_window_named_where_tcp_retransmitted_nothing():
    """The issue's case: 350 Mbit/s over 80 ms is the 3.5 MB default window; netem's 1000
    packets 'allow' 300 Mbit/s with 1500 B packets, yet nothing was dropped."""
    baseline = unimpaired()
    tunnel = cell({"delay_us": 40000.0, "limit": None}, throughput=350e6, retransmits=0)
    warnings = queue_below_bdp([baseline, tunnel])
    assert [w.code for w in warnings] == ["window_below_bdp"]
    message = warnings[0].message
    assert message.startswith("impairment 'delay 40ms', both directions: TCP's window, not the queue")
    assert "3.5 MB in flight over the 80 ms round trip" in message and "about 300 Mbit/s" not in message


def test_queue_named_where_tcp_retransmitted_or_did_not_report_it():
    spec = {"delay_us": 40000.0, "limit": None}
    lossy = queue_below_bdp([unimpaired(), cell(spec, throughput=3e8, retransmits=2000)])
    assert [w.code for w in lossy] == ["queue_below_bdp"] and "about 300 Mbit/s" in lossy[0].message
    unknown = queue_below_bdp([unimpaired(), cell(spec, throughput=3e8)])  # iperf2: no retransmit count
    assert [w.code for w in unknown] == ["queue_below_bdp"]
    udp_only = queue_below_bdp([unimpaired(), cell(spec, throughput=3e8, retransmits=0, measurement="udp")])
    assert [w.code for w in udp_only] == ["queue_below_bdp"]


def test_a_lossy_impairment_whose_queue_never_filled_is_not_blamed_on_the_queue():
    """The issue's case: TCP at 50 Mbit/s through 1 % loss and 20 ms. What sat in the queue is
    50 Mbit/s × 20 ms = 125 kB, 83 packets of 1500 B, against netem's 1000: the queue never
    filled, so the retransmissions are the impairment's own loss. The old check compared the
    limit with the fastest cell of the run (5 Gbit/s unimpaired: 8334 packets) and said "the
    queue, not the delay, limits throughput (to about 600 Mbit/s)" (1000 × 1500 B × 8 / 20 ms)."""
    spec = {"delay_us": 20000.0, "loss_pct": 1.0, "limit": None}
    tcp = cell(spec, throughput=50e6, retransmits=400, impairment="delay 20ms loss 1%")
    assert queue_below_bdp([unimpaired(), tcp]) == []
    # the queue is named when what went through it could have filled it: 600 Mbit/s × 20 ms is
    # 1000 packets of 1500 B, netem's whole default limit
    full = cell(spec, throughput=600e6, retransmits=4000, impairment="delay 20ms loss 1%")
    assert [w.code for w in queue_below_bdp([unimpaired(), full])] == ["queue_below_bdp"]


def test_the_emulators_own_queue_drops_decide_where_it_counts_them():
    """linkem counts what its queue limit dropped (dropped_limit), netem without a loss model
    what it dropped at all: a cell that records them (impairment_queue_drops_<direction>) says
    whether the queue dropped anything, whatever the arithmetic suggests."""
    spec = {"delay_us": 40000.0, "limit": 1000}
    dropped = cell(spec, backend="linkem", throughput=3e8, retransmits=2000)
    dropped["metrics"].update(impairment_queue_drops_egress=1234.0, impairment_queue_drops_ingress=0.0)
    (warning,) = queue_below_bdp([unimpaired(), dropped])
    assert warning.code == "queue_below_bdp" and "both directions:" in warning.message
    assert "linkem counted 1234 packets dropped at the queue limit" in warning.message, warning.message
    # in flight the queue could have filled, but linkem dropped nothing at its limit: the
    # retransmissions were the loss model's, the queue is not named
    lossy = {**spec, "loss_pct": 1.0}
    clean = cell(lossy, backend="linkem", throughput=3e8, retransmits=2000)
    clean["metrics"].update(impairment_queue_drops_egress=0.0, impairment_queue_drops_ingress=0.0)
    assert queue_below_bdp([unimpaired(), clean]) == []


def test_queue_drops_from_each_emulators_counters():
    linkem = LinkemBackend.__new__(LinkemBackend)
    before = {"a2b": {"dropped_limit": 5, "dropped_loss": 1}, "b2a": {"dropped_limit": 0}}
    after = {"a2b": {"dropped_limit": 105, "dropped_loss": 50}, "b2a": {"dropped_limit": 0}}
    assert linkem.queue_drops(before, after) == {"egress": 100, "ingress": 0}  # the loss model's 49 are not
    assert linkem.queue_drops({}, after) == {}
    netem = NetemBackend.__new__(NetemBackend)
    before = {"egress": {"drops": 10, "loss_model": False}, "ingress": {"drops": 3, "loss_model": True}}
    after = {"egress": {"drops": 60, "loss_model": False}, "ingress": {"drops": 90, "loss_model": True}}
    assert netem.queue_drops(before, after) == {"egress": 50}  # ingress: loss and limit in one counter
    assert netem.queue_drops({"egress": {"drops": 70}}, after) == {}  # a new qdisc: counted from 0 again


QUEUE_CAMPAIGN = """
[campaign]
name = "short-queue"
[[technique]]
kind = "baseline"
[[impairment]]
netem = "delay 0ms"
[[impairment]]
netem = "delay 20ms limit 20"
[[measurement]]
kind = "udp"
rate = "50M"
duration = "1s"
"""


@pytest.mark.netns
def test_a_run_records_the_emulators_queue_drops_and_the_check_counts_them(tmp_path, clean_machine):
    """50 Mbit/s of 1300 B datagrams is 4 808 packets/s; held 20 ms that is 96 in the queue
    against a limit of 20, so the emulator drops about four in five at its limit, and says so."""
    if linkem_binary() is None:
        pytest.fail("linkem is not built: `make` builds it")
    _, cells = run_campaign(tmp_path, QUEUE_CAMPAIGN)
    by = {c["impairment"]: c for c in cells}
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    short = by["delay 20ms limit 20"]["metrics"]
    backend = by["delay 20ms limit 20"]["impairment_params"]["backend"]
    # (50e6 / 8 / 1328 B) × 1 s sent, at most 20 per 20 ms (1000/s) through: at least 2 000 dropped
    assert short["impairment_queue_drops_egress"] >= 2000, short
    both = int(short["impairment_queue_drops_egress"] + short["impairment_queue_drops_ingress"])
    (warning,) = queue_below_bdp(cells)  # one finding: the same spec both ways
    assert warning.code == "queue_below_bdp" and "delay 20ms limit 20" in warning.message
    assert f"{backend} counted {both} packets dropped at the queue limit" in warning.message, warning.message
