"""ESP transport mode over IPv6 on the kernel's xfrm data path: the MTU a don't-fragment ping
finds is the one the RFC 4303 arithmetic gives with the packet's own 40-byte header (issue 22
item 5). Runs where the kernel has ESP: in the kernel VM (make test-kernel); kernel-libipsec,
this host's data path, does tunnel mode only."""

import pytest

from conftest import run_campaign
from ipsec_helpers import skip_without_kernel_esp
from vpnbench.techniques.ipsec.strongswan import missing_software
from vpnbench.testbeds.probe import NoProbe

pytestmark = [pytest.mark.netns, pytest.mark.vm]

# Two CBC ciphers whose padding makes the IPv6 figure differ from IPv4's minus 20:
# aes128-sha256 40 + 8 + 16 + pad16(1406 + 2) + 16 = 1488, one byte more pads to 1504 -> 1446;
# aes256-sha512 40 + 8 + 16 + pad16(1390 + 2) + 32 = 1488, one byte more 1504 -> 1430.
CAMPAIGN = """
[campaign]
name = "esp-transport-v6-mtu"
[[technique]]
kind = "ipsec"
label = "aes128-sha256-transport-v6"
backend = "kernel"
cipher = "aes128-sha256"
mode = "transport"
family = "ipv6"
auth = "pubkey"
[[technique]]
kind = "ipsec"
label = "aes256-sha512-transport-v6"
backend = "kernel"
cipher = "aes256-sha512"
mode = "transport"
family = "ipv6"
auth = "pubkey"
[[measurement]]
kind = "mtu"
family = "ipv6"
# A too-big probe is dropped silently here (no "message too long"), so each is waited out:
# twice (the retry), 18 of them over both ciphers, 18 s at the default 1 s. A probe that fits
# is answered in milliseconds (<= 10 ms in the TCG VM's ping cells), so 0.5 s still leaves a
# retried probe two waits of 50x that; a slow reply could only make the MTU read low (a failure).
timeout = "0.5s"
"""


def test_esp_transport_over_ipv6_mtu_is_the_arithmetics(tmp_path, clean_machine):
    if missing_software(NoProbe()):
        pytest.skip(missing_software(NoProbe()))
    skip_without_kernel_esp("kernel ESP transport mode")
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    by = {c["technique"]: c for c in cells}
    assert all(c["status"] == "ok" for c in cells), [(c["technique"], c["error"]) for c in cells]
    for label, mtu in (("aes128-sha256-transport-v6", 1446), ("aes256-sha512-transport-v6", 1430)):
        metrics = by[label]["metrics"]
        assert metrics["underlay_mtu_bytes"] == 1500
        assert metrics["mtu_bytes"] == mtu, (label, metrics)
        assert metrics["mtu_expected_bytes"] == mtu and metrics["mtu_difference_bytes"] == 0
