"""iperf 2.1.8's enhanced text reports, captured from real runs (tests/data/iperf2_*), read into
the same metric names iperf3 gives; and the engine through the netns testbed."""

from pathlib import Path

import pytest

from conftest import run_campaign
from vpnbench.measure.iperf2 import parse_iperf2, tcp_metrics2, udp_metrics2

DATA = Path(__file__).parent / "data"


def _read(name):
    return parse_iperf2((DATA / name).read_text())


def test_tcp_two_streams_sum_and_retransmits():
    client, server = _read("iperf2_tcp_P2_client.txt"), _read("iperf2_tcp_P2_server.txt")
    m = tcp_metrics2(client, server)
    assert m["sender_throughput_bps"] == 24193423659  # the client's [SUM] 0.0-2.0001 line
    assert m["throughput_bps"] == 24159480845  # the server's [SUM] 0.0-2.0029 line
    assert m["retransmits"] == 0 + 36  # Rtry of both streams' final lines
    assert m["bytes_received"] == 6048579704
    assert [t for t, _ in client.interval_series()] == [1.0, 2.0]
    assert client.interval_series()[0][1] == 27002930112


def test_tcp_single_stream():
    client = _read("iperf2_tcp_client.txt")
    assert set(client.streams()) == {"1"} and "SUM" not in client.finals()
    m = tcp_metrics2(client, client)
    assert m["throughput_bps"] == client.streams()["1"].bps and m["retransmits"] >= 0


def test_udp_single_stream_reads_client_sent_and_server_relayed_report_skipped():
    client = _read("iperf2_udp_client.txt")
    # The relayed server report is not a sender line: the sender's final is the client's own.
    assert client.finals()["1"].bps == 104870454
    assert client.sent_datagrams == {"1": 20169}
    with_report = parse_iperf2((DATA / "iperf2_udp_client.txt").read_text(), skip_server_reports=False)
    relayed = [line for line in with_report.lines if "Lost" in line.rest or "/" in line.rest and " ms " in line.rest]
    assert len(relayed) == 1 and relayed[0].bps == 104871398
    m = udp_metrics2(client, type(client)(relayed, {}))  # the relayed report as the receiver's view
    assert m["sent_packets"] == 20168 and m["lost_packets"] == 0 and m["loss_pct"] == 0
    assert m["jitter_ms"] == pytest.approx(0.001)


def test_udp_two_streams_loss_summed_over_the_receivers_streams():
    client, server = _read("iperf2_udp_P2_client.txt"), _read("iperf2_udp_P2_server.txt")
    m = udp_metrics2(client, server)
    assert m["sender_throughput_bps"] == 104873521  # client [SUM] 0.0-2.0003
    assert m["throughput_bps"] == 104878398  # server [SUM] 0.0-2.0002
    assert m["sent_packets"] == 10085 + 10086 and m["lost_packets"] == 1
    assert m["received_packets"] == 20170
    assert m["loss_pct"] == pytest.approx(100 / 20171)
    assert len(server.interval_series()) >= 1


def test_udp_reverse_reads_the_starred_streams_of_the_receiving_client():
    """-R: the client receives and marks its stream [ *1]; the server sends and counts (real 2.1.8 output)."""
    client, server = _read("iperf2_udp_R_client.txt"), _read("iperf2_udp_R_server.txt")
    assert set(client.streams()) == {"1"} and server.sent_datagrams == {"1": 895}
    m = udp_metrics2(server, client)
    assert m["sent_packets"] == 894 and m["received_packets"] == 894 and m["lost_packets"] == 0
    assert m["throughput_bps"] == 10508259 and m["sender_throughput_bps"] == 10496635


def test_udp_loss_after_the_last_datagram_that_arrived_is_counted_from_the_sender():
    """The receiver's Lost/Total ends at the last datagram it saw: 1 000 more sent and lost
    after it are loss all the same (issue 22: 9 612 sent, 9 000 received is not 0 %)."""
    text = (DATA / "iperf2_udp_client.txt").read_text()
    receiver = type(_read("iperf2_udp_client.txt"))(
        [line for line in parse_iperf2(text, skip_server_reports=False).lines if " ms " in line.rest], {})
    sender = parse_iperf2(text.replace("Sent 20169 datagrams", "Sent 21169 datagrams"))
    m = udp_metrics2(sender, receiver)
    assert m["sent_packets"] == 21168 and m["received_packets"] == 20168
    assert m["lost_packets"] == m["tail_lost_packets"] == 1000
    assert m["loss_pct"] == pytest.approx(100 * 1000 / 21168)


def test_udp_where_nothing_arrived_is_all_lost_not_no_loss():
    sender, nothing = _read("iperf2_udp_client.txt"), parse_iperf2("")
    m = udp_metrics2(sender, nothing)
    assert m["loss_pct"] == 100 and m["received_packets"] == 0 and m["throughput_bps"] == 0
    assert m["sent_packets"] == 20168


def test_garbage_is_ignored_and_empty_is_an_error():
    report = parse_iperf2("read failed: Connection refused\n[  3] WARNING: did not receive ack\n")
    assert report.lines == []
    with pytest.raises(ValueError, match="no iperf2 report lines"):
        report.total()
    with pytest.raises(ValueError, match="Lost/Total"):
        udp_metrics2(_read("iperf2_udp_client.txt"), _read("iperf2_tcp_client.txt"))


IPERF2 = """
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[measurement]]
kind = "tcp"
tool = "iperf2"
streams = 4
duration = "2s"
[[measurement]]
kind = "udp"
tool = "iperf2"
rate = "100M"
duration = "2s"
[[measurement]]
kind = "udp"
tool = "iperf2"
rate = "50M"
duration = "1s"
reverse = true
[[measurement]]
kind = "tcp"
tool = "iperf2"
duration = "1s"
reverse = true
"""


@pytest.mark.netns
def test_iperf2_engine_through_the_testbed(tmp_path, clean_machine):
    import vpnbench

    _, cells = run_campaign(tmp_path, IPERF2)
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    for cell in cells:
        assert cell["measurement_params"]["tool"] == "iperf2"
        m = cell["metrics"]
        assert m["throughput_bps"] > 0 and m["sender_throughput_bps"] > 0
        reverse = cell["measurement_params"]["reverse"]  # the server sends; the client's streams are [ *1]
        if cell["measurement"] == "udp":
            # the sender's own count agrees with its rate (1300-byte datagrams over the run's
            # duration) and stays within the paced load; the loss is the counts' arithmetic
            p = cell["measurement_params"]
            sent_bps = m["sent_packets"] * 1300 * 8 / p["duration"]
            assert sent_bps == pytest.approx(m["sender_throughput_bps"], rel=0.05) and sent_bps <= 1.05 * p["rate"], m
            assert 0 <= m["received_packets"] <= m["sent_packets"], m
            assert m["loss_pct"] == pytest.approx(100 * (m["sent_packets"] - m["received_packets"]) / m["sent_packets"])
            assert reverse or cell["measurement_label"] == "udp_100M_1300_iperf2"
        else:
            assert "retransmits" in m and (reverse or cell["measurement_label"] == "tcp_P4_iperf2")
    series = vpnbench.load(tmp_path / "c.db").series
    assert len(series[series.name == "throughput_bps"]) >= 4
