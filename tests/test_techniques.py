"""Techniques on real namespaces: WireGuard (wireguard-go here) and the baseline, with the wire proof."""

import stat

import pytest

from vpnbench.foundation.errors import TechniqueError
from vpnbench.measure.base import MeasureContext, PortAllocator
from vpnbench.measure.tcp import Tcp, TcpParams
from vpnbench.run.bringup import wait_through
from vpnbench.techniques.base import TechniqueContext, Tunnel
from vpnbench.techniques.baseline import Baseline, BaselineParams
from vpnbench.techniques.wirecheck import check_wire, judge
from vpnbench.techniques.wireguard import WireGuard, WireGuardParams
from vpnbench.testbeds.probe import LocalKernelProbe

pytestmark = pytest.mark.netns


@pytest.fixture
def bed(testbed):
    probe = LocalKernelProbe(testbed.resources)
    yield testbed, TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources, probe)


def tcp_through(testbed, tunnel, family="ipv4"):
    ctx = MeasureContext(testbed.client, testbed.server, tunnel, PortAllocator())
    return Tcp(TcpParams(duration=1, family=family)).run(ctx).metrics["throughput_bps"]


@pytest.mark.parametrize("params", [
    WireGuardParams(backend="userspace"),
    WireGuardParams(backend="userspace", psk=True, family="ipv6"),
], ids=["plain-v4-underlay", "psk-v6-underlay"])
def test_wireguard_userspace_carries_traffic_encrypted(bed, params):
    testbed, ctx = bed
    technique = WireGuard(params, ctx)
    try:
        tunnel = technique.up("userspace")
        wait_through(testbed.client, tunnel.server_addrs["ipv4"], 10)
        keys = [p for p in ctx.resources.dir.iterdir() if p.name.startswith("wg")]
        assert len(keys) == (3 if params.psk else 2)
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in keys)
        verdict = check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources)
        assert verdict.verdict == "encrypted" and not verdict.marker_seen and verdict.protocol_packets > 0
        assert tcp_through(testbed, tunnel, "ipv6") > 0  # inner IPv6 works too
        assert technique.failure() is None
    finally:
        technique.down()
    assert not [p for p in ctx.resources.dir.iterdir() if p.name.startswith("wg")]  # keys wiped


def test_fresh_keys_every_bring_up(bed):
    testbed, ctx = bed
    publics = []
    for _ in range(2):
        technique = WireGuard(WireGuardParams(backend="userspace"), ctx)
        technique.up("userspace")
        iface = technique.ifaces["client"]
        publics.append(testbed.client.run(["wg", "show", iface, "public-key"]).stdout.strip())
        technique.down()
    assert publics[0] != publics[1] and all(publics)


def test_baseline_is_the_negative_control(bed):
    testbed, ctx = bed
    tunnel = Baseline(BaselineParams(), ctx).up("kernel")
    verdict = check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources)
    assert verdict.verdict == "cleartext" and verdict.marker_seen


def test_dead_daemon_is_reported(bed):
    testbed, ctx = bed
    technique = WireGuard(WireGuardParams(backend="userspace"), ctx)
    try:
        technique.up("userspace")
        technique.tunnel.procs[0].stop()
        assert "wireguard-go exited" in technique.failure()
    finally:
        technique.down()


def test_kernel_backend_is_refused_where_the_kernel_lacks_it(bed):
    _, ctx = bed
    if ctx.probe_kernel.has_link_type("wireguard"):
        pytest.skip("this kernel has WireGuard; the refusal path cannot be shown here")
    with pytest.raises(ValueError, match="kernel lacks WireGuard"):
        WireGuard.resolve_backend(WireGuardParams(backend="kernel"), ctx.probe_kernel)
    assert WireGuard.resolve_backend(WireGuardParams(), ctx.probe_kernel) == "userspace"


def test_judge_rules():
    enc = Tunnel("x", {}, {}, "encrypted", "udp port 51820")
    with pytest.raises(TechniqueError, match="in clear"):
        judge(enc, marker_seen=True, protocol_packets=10)
    with pytest.raises(TechniqueError, match="no packets matching"):
        judge(enc, marker_seen=False, protocol_packets=0)
    assert judge(enc, False, 3).verdict == "encrypted"
    plain = Tunnel("x", {}, {}, "none", None)
    with pytest.raises(TechniqueError, match="capture is broken"):
        judge(plain, marker_seen=False, protocol_packets=0)
    integrity = Tunnel("x", {}, {}, "integrity-only", "esp")
    assert judge(integrity, True, 4).verdict == "integrity-only"
