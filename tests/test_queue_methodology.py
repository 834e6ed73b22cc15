"""The queue-below-BDP check: linkem's default limit holds the delay line, and where the TCP
window (not the queue) held the cells back, the warning names the window."""

from vpnbench.impair.backends import LinkemBackend
from vpnbench.methodology import queue_below_bdp


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
