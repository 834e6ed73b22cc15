"""iperf3's traps that only a real link shows."""

import subprocess

import pytest

from vpnbench.measure.base import MeasureContext, PortAllocator
from vpnbench.measure.iperf import UDP_ATTEMPTS
from vpnbench.measure.udp import Udp, UdpParams
from vpnbench.probe import LocalKernelProbe
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.baseline import Baseline, BaselineParams

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
    assert result.metrics["throughput_bps"] > 5e6  # the second attempt measured
    # the lost attempt is kept: a client killed after its guard time, a server whose stream never opened
    assert "timed out" in result.raw["iperf3_client_attempt1"]
    assert '"connected":\t[]' in result.raw["iperf3_server_attempt1"]
    assert "iperf3_client_attempt2" not in result.raw and UDP_ATTEMPTS >= 2
    counted = subprocess.run(["ip", "netns", "exec", testbed.server.netns, "nft", "list", "table", "inet",
                              "vpnbench_test"], capture_output=True, text=True, check=True).stdout
    assert "quota 32 bytes used 32 bytes drop" in counted  # the rule did drop one opening datagram
