"""iperf3's traps that only a real link shows."""

import subprocess

import pytest

from vpnbench.measure.base import MeasureContext, PortAllocator
from vpnbench.measure.iperf import UDP_ATTEMPTS
from vpnbench.measure.udp import Udp, UdpParams
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.baseline import Baseline, BaselineParams
from vpnbench.testbeds.probe import LocalKernelProbe

pytestmark = pytest.mark.netns

# iperf3 opens a UDP stream with a 4-byte datagram (UDP length 12), its data datagrams are
# longer. The server's namespace drops the first one only: its 32 bytes (IPv4) fill the quota.
DROP_FIRST_OPENING = """
table inet vpnbench_test {
  chain input {
    type filter hook input priority 0;
    udp length 12 quota until 32 bytes drop
  }
}
"""


def test_a_lost_udp_opening_datagram_is_retried_and_recorded(testbed):
    probe = LocalKernelProbe(testbed.resources)
    tctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources, probe)
    tunnel = Baseline(BaselineParams(), tctx).up("kernel")
    subprocess.run(["ip", "netns", "exec", testbed.server.netns, "nft", "-f", "-"], input=DROP_FIRST_OPENING,
                   text=True, check=True)
    ctx = MeasureContext(testbed.client, testbed.server, tunnel, PortAllocator())
    result = Udp(UdpParams(rate="10M", duration=1)).run(ctx)
    assert result.metrics["throughput_bps"] > 0  # the second attempt measured (the lost one moved nothing)
    # the lost attempt is kept: a client killed after its guard time, a server whose stream never opened
    assert "timed out" in result.raw["iperf3_client_attempt1"]
    assert '"connected":\t[]' in result.raw["iperf3_server_attempt1"]
    assert "iperf3_client_attempt2" not in result.raw and UDP_ATTEMPTS >= 2
    counted = subprocess.run(["ip", "netns", "exec", testbed.server.netns, "nft", "list", "table", "inet",
                              "vpnbench_test"], capture_output=True, text=True, check=True).stdout
    assert "quota 32 bytes used 32 bytes drop" in counted  # the rule did drop one opening datagram


DROP_ALL_UDP = """
table inet vpnbench_test {
  chain input {
    type filter hook input priority 0;
    meta l4proto udp counter drop
  }
}
"""


def test_udp_loss_after_the_last_arrived_packet_counts_from_the_senders_count(testbed):
    import threading
    import time

    probe = LocalKernelProbe(testbed.resources)
    tctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources, probe)
    tunnel = Baseline(BaselineParams(), tctx).up("kernel")
    ctx = MeasureContext(testbed.client, testbed.server, tunnel, PortAllocator())

    def drop_everything():  # the path drops everything from then on; iperf3's control (TCP) goes on
        subprocess.run(["ip", "netns", "exec", testbed.server.netns, "nft", "-f", "-"], input=DROP_ALL_UDP,
                       text=True, check=True)
        dropped_at.append(time.monotonic())

    dropped_at: list[float] = []
    started = time.monotonic()
    timer = threading.Timer(1.5, drop_everything)
    timer.start()
    try:
        m = Udp(UdpParams(rate="10M", duration=3)).run(ctx).metrics
    finally:
        timer.cancel()
    assert dropped_at and dropped_at[0] - started < 2.5, "the drop rule came too late to test anything"
    # The receiver saw no gap (nothing arrived after the drop): only the sender's count shows the loss
    assert m["sent_packets"] >= 0.9 * 3 * 10e6 / (8 * 1300)
    assert m["tail_lost_packets"] > 0.2 * m["sent_packets"]
    assert m["loss_pct"] == pytest.approx(100 * (m["sent_packets"] - m["received_packets"]) / m["sent_packets"])
    assert 20 < m["loss_pct"] < 95, m
    counted = subprocess.run(["ip", "netns", "exec", testbed.server.netns, "nft", "list", "table", "inet",
                              "vpnbench_test"], capture_output=True, text=True, check=True).stdout
    dropped = int(counted.split("counter packets ")[1].split()[0])
    assert dropped >= 0.9 * m["tail_lost_packets"]  # the rule did drop what the sender's count says was lost
