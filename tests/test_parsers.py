"""Parsers on real outputs captured from iperf3 3.12 and iputils ping on this testbed."""

import re

import pytest

from conftest import DATA
from vpnbench.foundation.errors import MeasurementError
from vpnbench.hosts.base import CommandResult
from vpnbench.measure.iperf import interval_rate, parse_iperf_json, udp_handshake_lost
from vpnbench.measure.ping import parse_ping, percentile
from vpnbench.measure.tcp import tcp_metrics
from vpnbench.measure.udp import udp_metrics


def load(name):
    return (DATA / name).read_text()


def test_tcp_receiver_throughput():
    doc = parse_iperf_json(load("iperf3_3.12_tcp_omit1.json"))
    m = tcp_metrics(doc, duration=2)
    assert m["throughput_bps"] == pytest.approx(16434525935.44, rel=1e-9)
    assert m["sender_throughput_bps"] > 0 and m["retransmits"] >= 0


def test_tcp_omitted_interval_is_left_out_when_the_summary_counts_it():
    doc = parse_iperf_json(load("iperf3_3.12_tcp_omit1.json"))
    # Simulate the versions that fold the omitted second into the summary span.
    doc["end"]["sum_received"]["seconds"] = 3.0
    doc["end"]["sum_received"]["bits_per_second"] = 1.0
    m = tcp_metrics(doc, duration=2)
    assert m["throughput_bps"] == pytest.approx(interval_rate(doc))
    assert m["throughput_bps"] > 1e9


def test_tcp_reverse_multi_stream():
    m = tcp_metrics(parse_iperf_json(load("iperf3_3.12_tcp_P2_reverse.json")), duration=1)
    assert m["throughput_bps"] > 1e8


def test_udp_both_views_and_loss():
    m = udp_metrics(parse_iperf_json(load("iperf3_3.12_udp_loss.json")))
    assert m["sent_packets"] == 372380 and m["lost_packets"] == 5694
    assert m["loss_pct"] == pytest.approx(100 * 5694 / 372380)
    assert m["throughput_bps"] < m["sender_throughput_bps"]
    assert m["received_packets"] == 372380 - 5694


def test_udp_without_loss():
    m = udp_metrics(parse_iperf_json(load("iperf3_3.12_udp_50M.json")))
    assert m["throughput_bps"] == pytest.approx(49977802.04, rel=1e-6)
    assert m["loss_pct"] == 0 and m["jitter_ms"] > 0


def _received(doc: dict, packets: int, lost: int, bps: float) -> dict:
    doc["end"]["sum_received"].update(packets=packets, lost_packets=lost, bits_per_second=bps)
    doc["end"]["sum"].update(packets=packets, lost_packets=lost, bits_per_second=bps)
    return doc


def test_udp_tail_loss_is_counted_against_what_the_sender_sent():
    # 9 612 sent; the receiver's highest sequence number was 9 000 with no gap before it: the
    # 612 after the last one that arrived are lost, though iperf3's receiver says 0 %
    doc = _received(parse_iperf_json(load("iperf3_3.12_udp_50M.json")), 9000, 0, 46.8e6)
    m = udp_metrics(doc)
    assert m["sent_packets"] == 9612 and m["received_packets"] == 9000
    assert m["lost_packets"] == 612 and m["tail_lost_packets"] == 612
    assert m["loss_pct"] == pytest.approx(100 * 612 / 9612)
    # gaps and a tail together: 8 900 of the 9 000 sequence numbers arrived
    m = udp_metrics(_received(parse_iperf_json(load("iperf3_3.12_udp_50M.json")), 9000, 100, 46.3e6))
    assert m["received_packets"] == 8900 and m["loss_pct"] == pytest.approx(100 * 712 / 9612)


def test_udp_nothing_arrived_is_total_loss_not_zero():
    m = udp_metrics(_received(parse_iperf_json(load("iperf3_3.12_udp_50M.json")), 0, 0, 0.0))
    assert m["sent_packets"] == 9612 and m["received_packets"] == 0 and m["lost_packets"] == 9612
    assert m["loss_pct"] == 100.0 and m["throughput_bps"] == 0.0


def test_udp_sweep_knee_uses_the_senders_count():
    from vpnbench.measure.udp_sweep import Step, knee

    lossless = udp_metrics(parse_iperf_json(load("iperf3_3.12_udp_50M.json")))
    tail = udp_metrics(_received(parse_iperf_json(load("iperf3_3.12_udp_50M.json")), 9000, 0, 46.8e6))
    steps = [Step(50_000_000, lossless, {}, length=1300, duration=2.0),
             Step(60_000_000, tail, {}, length=1300, duration=2.0)]
    assert knee(steps, 0.01) is steps[0]  # 6.4 % lost at the tail: the second step fell behind
    assert steps[1].trial(2, 1300, 1.0).loss_ratio == pytest.approx(612 / 9612)


def test_text_around_json_and_nan_values():
    text = re.sub(r'("jitter_ms":\s*)[0-9.e-]+', r"\1-nan", load("iperf3_3.12_udp_50M.json"))
    assert '"jitter_ms":\t-nan,' in text
    doc = parse_iperf_json("warning: some banner\n" + text + "\niperf3: interrupt - the client has terminated\n")
    m = udp_metrics(doc)
    assert "jitter_ms" not in m  # unknown, not zero
    assert m["throughput_bps"] > 0


@pytest.mark.parametrize("text, message", [
    ("", "no JSON"),
    ("iperf3: error - unable to connect", "no JSON"),
    ('{"start": {}}', "no 'end'"),
])
def test_unparseable_output_raises_value_error(text, message):
    with pytest.raises(ValueError, match=message):
        parse_iperf_json(text)


def test_iperf_error_field_is_reported():
    with pytest.raises(ValueError, match="Connection refused"):
        parse_iperf_json(load("iperf3_3.12_refused.json"))


def test_a_udp_stream_that_never_opened_is_told_apart():
    killed = CommandResult(["iperf3"], -9, "", "timed out after 22 s")
    # captured in the kernel VM: S1 network 2 (80 ms, 1 % loss); the server's reply was lost
    lost = load("iperf3_3.12_server_udp_handshake_lost.json")
    assert udp_handshake_lost(killed, lost)
    assert not udp_handshake_lost(CommandResult(["iperf3"], 0, load("iperf3_3.12_udp_50M.json"), ""), lost)
    refused = CommandResult(["iperf3"], 1, load("iperf3_3.12_refused.json"), "")
    assert not udp_handshake_lost(refused, lost)  # the client said why: no hang, no retry
    ok = load("iperf3_3.12_server_udp_ok.json")
    assert not udp_handshake_lost(killed, ok)  # data arrived: some other failure, not retried
    assert not udp_handshake_lost(killed, "iperf3: error - unable to start listener")
    assert not udp_handshake_lost(killed, "")


def test_ping_summary_and_percentiles():
    m = parse_ping(load("ping_ok.txt"))
    assert (m["sent"], m["received"], m["loss_pct"]) == (5, 5, 0)
    assert (m["rtt_min_ms"], m["rtt_avg_ms"], m["rtt_max_ms"], m["rtt_mdev_ms"]) == (0.045, 0.112, 0.340, 0.114)
    assert m["rtt_p50_ms"] == 0.058
    assert m["rtt_min_ms"] <= m["rtt_p50_ms"] <= m["rtt_p95_ms"] <= m["rtt_p99_ms"] <= m["rtt_max_ms"]


def test_ping_total_loss_and_garbage():
    m = parse_ping(load("ping_unreachable.txt"))
    assert m["received"] == 0 and m["loss_pct"] == 100 and "rtt_avg_ms" not in m
    assert parse_ping("ping: connect: Network is unreachable") is None


def test_ping_duplicates_are_counted_once():
    text = load("ping_ok.txt").replace("icmp_seq=2 ttl=64 time=0.058 ms",
                                       "icmp_seq=2 ttl=64 time=0.058 ms\n64 bytes from 10.250.0.2: icmp_seq=2 ttl=64 time=9.0 ms (DUP!)")
    m = parse_ping(text.replace("0% packet loss", "+1 duplicates, 0% packet loss"))
    assert m["rtt_p99_ms"] < 1.0
    assert m["duplicates"] == 1


def test_percentile_interpolates():
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([5.0], 0.99) == 5.0


def test_proc_net_listen_table():
    from vpnbench.hosts.netns import _listens

    tcp6 = """  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1451 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
   1: 0000000000000000FFFF00000A000002:1452 0000000000000000FFFF00000A000001:C350 01 00000000:00000000 00:00000000 00000000     0        0 2 1
"""
    assert _listens(tcp6, 5201, udp=False)
    assert not _listens(tcp6, 5202, udp=False)  # established, not listening
    assert not _listens(tcp6, 81, udp=False)  # 0x51 is the end of 0x1451, not the port
    udp = """   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  7: 00000000:11D7 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 3 2 0 0
"""
    assert _listens(udp, 4567, udp=True) and not _listens(udp, 4567, udp=False)


@pytest.mark.parametrize("order", ["<", ">"])
def test_pcap_packets_counts_whole_records_of_a_growing_file(order):
    """The encryption proof stops tcpdump once its capture holds the pings' packets
    (wirecheck._wait_written); a record still being written does not count."""
    import struct

    from vpnbench.techniques.wirecheck import pcap_packets

    header = struct.pack(order + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)
    record = struct.pack(order + "IIII", 1, 2, 60, 60) + bytes(60)
    assert pcap_packets(b"") == pcap_packets(header) == 0
    assert pcap_packets(header + record) == 1
    assert pcap_packets(header + record * 2 + record[:30]) == 2
    assert pcap_packets(header + record * 3) == 3


def test_flows_run_again_where_a_udp_streams_opening_datagram_was_lost(monkeypatch):
    """run_iperf_flows (patterns, tunnels = N) retries as run_iperf does: every flow again while one
    flow's client hung with its server receiving nothing, the lost attempt's outputs kept."""
    from vpnbench.measure import iperf

    good = load("iperf3_3.12_udp_50M.json")
    attempts = [
        ([CommandResult(["iperf3"], 0, good, ""), CommandResult(["iperf3"], -9, "", "")],
         {"iperf3_client_0": good, "iperf3_server_0": load("iperf3_3.12_server_udp_ok.json"),
          "iperf3_client_1": "", "iperf3_server_1": load("iperf3_3.12_server_udp_handshake_lost.json")}),
        ([CommandResult(["iperf3"], 0, good, "")] * 2,
         {"iperf3_client_0": good, "iperf3_server_0": "", "iperf3_client_1": good, "iperf3_server_1": ""}),
    ]
    monkeypatch.setattr(iperf, "_flows_attempt", lambda *args: attempts.pop(0))
    docs, raw = iperf.run_iperf_flows([None, None], "ipv4", ["-u"], 2.0, ["n0>n1", "n1>n0"])
    assert len(docs) == 2 and not attempts
    assert raw["iperf3_client_1"] == good and "iperf3_server_1_attempt1" in raw
    hung = ([CommandResult(["iperf3"], -9, "", "")],
            {"iperf3_client_0": "", "iperf3_server_0": load("iperf3_3.12_server_udp_handshake_lost.json")})
    lost_every_time = [hung] * 3
    monkeypatch.setattr(iperf, "_flows_attempt", lambda *args: lost_every_time.pop(0))
    with pytest.raises(MeasurementError, match="n0>n1: .*lost in all 3 attempts"):
        iperf.run_iperf_flows([None], "ipv4", ["-u"], 2.0, ["n0>n1"])
    assert not lost_every_time  # three attempts, no more


@pytest.mark.parametrize("stderr, said", [
    ("RTNETLINK answers: File exists\nCommand failed -:1\n", "ip exited with 1: RTNETLINK answers: File exists (Command failed -:1)"),
    ("Cannot find device \"vpb1k1\"\n", "ip exited with 1: Cannot find device \"vpb1k1\""),
    ("", "ip exited with 1: no output"),
])
def test_a_failed_command_is_described_by_its_reason(stderr, said):
    """`ip -batch` ends with "Command failed -:N": the reason is the line before, and a cell's error shows it."""
    assert CommandResult(["ip", "-batch", "-"], 1, "", stderr).describe_failure() == said
