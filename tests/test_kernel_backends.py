"""Kernel data paths: run here when the kernel has them, and always in the kernel VM
(`make test-kernel`), whose distribution kernel does."""

import json
import platform

import pytest

from conftest import run_cli
from vpnbench.hosts.resources import RunResources
from vpnbench.testbeds.probe import LocalKernelProbe

pytestmark = [pytest.mark.netns, pytest.mark.vm]

CAMPAIGN = """
[campaign]
name = "kernel-wg"
[[technique]]
kind = "wireguard"
label = "wg"
implementation = "kernel"
[[technique]]
kind = "wireguard"
label = "wg-psk-v6"
backend = "kernel"
psk = true
family = "ipv6"
[[impairment]]
netem = ""
label = "ideal"
[[impairment]]
netem = "delay 20ms"
[[measurement]]
kind = "tcp"
duration = "1s"
[[measurement]]
kind = "ping"
count = 10
interval = "0.05s"
"""


@pytest.fixture(scope="module")
def kernel_wireguard():
    with RunResources() as resources:
        if not LocalKernelProbe(resources).has_link_type("wireguard"):
            pytest.skip("this kernel lacks WireGuard: kernel WireGuard runs in the kernel VM (make test-kernel)")


def test_kernel_wireguard_with_and_without_delay(tmp_path, kernel_wireguard, clean_machine):
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"), "--resume")
    assert result.returncode == 0, result.stdout + result.stderr
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "c.json"))
    cells = json.loads((tmp_path / "c.json").read_text())
    assert len(cells) == 8
    for cell in cells:
        assert cell["status"] == "ok", cell["error"]
        assert cell["technique_params"]["backend"] == "kernel"
        assert cell["wire_check"] == "encrypted"
        assert not cell["hosts"]["client"]["procs_cpu_pct"].get("wireguard-go")  # no userspace daemon
        # implementation = "kernel" and backend = "kernel" both name it; the kernel's release is its version
        assert (cell["negotiated"]["implementation"], cell["negotiated"]["version"]) == ("kernel", platform.release())
    pings = {(c["technique"], c["impairment"]): c["metrics"] for c in cells if c["measurement"] == "ping"}
    for technique in ("wg", "wg-psk-v6"):
        assert pings[(technique, "delay 20ms")]["rtt_min_ms"] >= 40.0  # 20 ms each way
        ideal = pings[(technique, "ideal")]
        assert ideal["rtt_min_ms"] < 20.0 and ideal["rtt_p50_ms"] < 40.0, ideal  # the delay is gone again
