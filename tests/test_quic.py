"""QUIC through the tunnel: tquic_server and tquic_client (vpnbench's build) in the namespace testbed."""

from pathlib import Path

import pytest

from conftest import assert_refused, run_campaign
from vpnbench.hosts import builds
from vpnbench.measure.quic import client_stats, qlog_timings

DATA = Path(__file__).parent / "data"
RTT_S = 0.020  # netem "delay 10ms" on both directions of the path
RATE_BPS = 100e6  # netem "rate 100mbit": the link's bits per second, IP headers included

CAMPAIGN = """
[campaign]
name = "quic"
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
backend = "userspace"
[[impairment]]
label = "none"
[[impairment]]
label = "wan"
netem = "delay 10ms rate 100mbit"
[[measurement]]
kind = "quic"
size = "16M"
connections = 3
"""


def test_client_stats_are_read_from_a_real_run():
    stats = client_stats((DATA / "tquic_client_throughput.txt").read_text())
    assert stats["requests_succeeded"] == 1
    assert stats["request_mean_s"] > 0
    assert stats["recv_bytes"] >= 16 * 1024**2  # the file, plus QUIC's headers
    assert stats["lost_packets"] >= 0 and stats["recv_packets"] > stats["sent_packets"] > 0


def test_qlog_timings_are_read_from_a_real_run():
    handshake, first_byte = qlog_timings((DATA / "tquic_client_timing.qlog").read_text())
    assert 0 < handshake <= first_byte


def test_a_qlog_without_the_response_is_refused():
    text = (DATA / "tquic_client_timing.qlog").read_text()
    kept = [record for record in text.split("\x1e") if '"frame_type":"stream"' not in record
            or '"packet_sent"' in record.split('"data"')[0]]
    with pytest.raises(ValueError, match="no STREAM frame received"):
        qlog_timings("\x1e".join(kept))


@pytest.mark.parametrize("entry, message", [
    ('congestion_control = "reno"',
     "measurement[1].congestion_control: 'reno' is not allowed; allowed values: 'bbr', 'bbr3', 'cubic', 'copa'"),
    ("udp_payload = 1000", "measurement[1].udp_payload"),
    ("connections = 0", "measurement[1].connections"),
    ("size = 0", "measurement[1].size: 0 is not a positive size"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, entry, message):
    assert_refused(tmp_path, f'[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "quic"\n{entry}\n', message)


@pytest.mark.netns
def test_quic_through_baseline_and_wireguard(tmp_path, clean_machine):
    if not Path(builds.program("tquic", "tquic_client")).exists():
        pytest.skip("tquic is not built here: vpnbench doctor --install tquic")
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert len(cells) == 4 and all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    for cell in cells:
        m, delayed = cell["metrics"], cell["impairment"] == "wan"
        # Throughput: positive, and over the 100 Mbit/s link no more than the link carries (the
        # file's bits are fewer than the link's: QUIC, UDP and IP headers ride on them).
        assert m["throughput_bps"] > 0
        if delayed:
            assert m["throughput_bps"] <= RATE_BPS, cell
        assert m["throughput_bps"] == pytest.approx(m["bytes"] * 8 / m["request_s"])
        # A QUIC handshake takes at least one round trip, its first byte (a request's answer) one more.
        assert m["handshake_s"] > 0 and m["ttfb_s"] >= m["handshake_s"], cell
        if delayed:
            assert m["handshake_s"] >= RTT_S and m["ttfb_s"] >= 2 * RTT_S, cell
