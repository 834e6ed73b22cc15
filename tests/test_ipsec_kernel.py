"""IPsec on the kernel's xfrm data path: transport mode, IPComp, null integrity-only (with IPComp), both
underlay families. Runs where the kernel has ESP: in the kernel VM (make test-kernel)."""

import pytest

from conftest import run_campaign
from ipsec_helpers import KERNEL_VM_CAMPAIGN_TIMEOUT, skip_without_kernel_esp
from vpnbench.techniques.ipsec.strongswan import missing_software
from vpnbench.testbeds.probe import NoProbe

pytestmark = [pytest.mark.netns, pytest.mark.vm]

# Measurements use inner IPv6: tunnel mode carries both families (with IPComp only the
# underlay's), transport mode over IPv6 only IPv6.
CAMPAIGN = """
[campaign]
name = "kernel-ipsec"
[[technique]]
kind = "ipsec"
label = "gcm-tunnel-v4"
cipher = "aes256gcm16"
[[technique]]
kind = "ipsec"
label = "chacha-transport-v6"
backend = "kernel"
cipher = "chacha20poly1305"
mode = "transport"
family = "ipv6"
auth = "pubkey"
[[technique]]
kind = "ipsec"
label = "null-sha256-ipcomp"
backend = "kernel"
cipher = "null-sha256"
ipcomp = true
family = "ipv6"
[[technique]]
kind = "ipsec"
label = "ipcomp-v6"
backend = "kernel"
cipher = "aes128-sha256"
ipcomp = true
family = "ipv6"
[[measurement]]
kind = "tcp"
duration = "1s"
family = "ipv6"
[[measurement]]
kind = "ping"
count = 5
interval = "0.05s"
family = "ipv6"
"""


@pytest.fixture(scope="module")
def kernel_esp():
    if missing_software(NoProbe()):
        pytest.skip(missing_software(NoProbe()))
    skip_without_kernel_esp("kernel IPsec")


def test_kernel_ipsec_campaign(tmp_path, kernel_esp, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN, timeout=KERNEL_VM_CAMPAIGN_TIMEOUT)
    assert len(cells) == 8
    for cell in cells:
        assert cell["status"] == "ok", (cell["technique"], cell["error"])
        assert cell["technique_params"]["backend"] == "kernel"  # auto picks kernel where it has ESP
        assert cell["metrics"]["setup_time_s"] > 0
        assert "encap" not in cell["negotiated"]["child"]  # plain ESP: charon lists encap only when on
    by = {c["technique"]: c for c in cells if c["measurement"] == "tcp"}
    assert by["gcm-tunnel-v4"]["wire_check"] == "encrypted"
    assert by["gcm-tunnel-v4"]["negotiated"]["child"]["encr-alg"] == "AES_GCM_16"
    assert by["gcm-tunnel-v4"]["negotiated"]["ike"]["local-host"].startswith("10.")
    transport = by["chacha-transport-v6"]["negotiated"]
    assert transport["child"]["mode"] == "TRANSPORT" and transport["child"]["encr-alg"] == "CHACHA20_POLY1305"
    assert transport["ike"]["local-host"].startswith("fd00:")
    assert by["chacha-transport-v6"]["wire_check"] == "encrypted"
    # compression must not pass for encryption: the proof's pings stay under the IPComp threshold
    assert by["null-sha256-ipcomp"]["wire_check"] == "integrity-only"
    assert by["null-sha256-ipcomp"]["negotiated"]["child"].get("cpi-in")
    assert by["ipcomp-v6"]["wire_check"] == "encrypted"
    assert by["ipcomp-v6"]["negotiated"]["child"].get("cpi-in")  # IPComp was negotiated


DIRECT_LINK = """
[campaign]
name = "kernel-ipsec-direct"
[testbed]
router = false
[[technique]]
kind = "baseline"
[[technique]]
kind = "ipsec"
label = "gcm-tunnel"
cipher = "aes256gcm16"
[[technique]]
kind = "ipsec"
label = "null-transport"
cipher = "null-sha256"
mode = "transport"
[[measurement]]
kind = "ping"
count = 5
interval = "0.05s"
"""


def test_proof_on_a_direct_link_watches_what_each_end_sends(tmp_path, kernel_esp, clean_machine):
    """Without a router the proof captures on the hosts themselves. The kernel re-injects a
    tunnel-mode packet it decrypted on the interface the ESP packet arrived on, so a capture of
    everything there would see the marker in clear (S2's two laptops failed their proof so)."""
    _, cells = run_campaign(tmp_path, DIRECT_LINK)
    by = {c["technique"]: c for c in cells}
    assert {t: c["status"] for t, c in by.items()} == {"baseline": "ok", "gcm-tunnel": "ok", "null-transport": "ok"}
    assert by["gcm-tunnel"]["technique_params"]["backend"] == "kernel"
    assert by["gcm-tunnel"]["wire_check"] == "encrypted"
    # and the out-only captures still see a marker that does cross in clear
    assert by["baseline"]["wire_check"] == "cleartext"
    assert by["null-transport"]["wire_check"] == "integrity-only"
