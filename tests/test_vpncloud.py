"""VpnCloud between namespaces: every algorithm carries traffic, the wire proof names vpncloud (and
sees the marker in clear with "plain"), each packet framed as the MTU arithmetic says (from a
capture), keys private and wiped, nothing left behind; its bad input; its recogniser."""

import json
import stat
from pathlib import Path

import pytest

import machine_places
import vpnbench
from bounds import assert_tcp_measured
from conftest import (
    HostsWithoutBuilds,
    assert_refused,
    assert_technique_field_refused,
    captured_payload_sizes,
    kill9_mid_traffic_then_cleanup,
    killed_run,
    run_campaign,
    run_daemons,
)
from pcaps import pcap_of, udp_frame
from vpnbench.foundation.tools import which
from vpnbench.hosts import builds
from vpnbench.run.bringup import wait_through
from vpnbench.techniques import expect
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.vpncloud import BASE62, VpnCloud, VpnCloudParams, keeps_its_length
from vpnbench.techniques.wirecheck import check_wire, is_vpncloud, recognise
from vpnbench.testbeds.probe import LocalKernelProbe

PINNED = VpnCloudParams().version
LACKING = None if which(builds.program("vpncloud", "vpncloud", PINNED)) else \
    builds.missing_reason("vpncloud", PINNED, "this machine")
needs_vpncloud = pytest.mark.skipif(LACKING is not None, reason=str(LACKING))
ALGORITHMS = ("aes128", "aes256", "chacha20", "plain")


@pytest.mark.parametrize("entry, expected", [
    ({"algorithm": "aes"}, "technique[1].algorithm: 'aes' is not allowed; allowed values: 'aes128', 'aes256', "
                           "'chacha20', 'plain'"),
    ({"version": "2.3.0; reboot"}, "technique[1].version: '2.3.0; reboot' is not a version"),
    ({"version": "git:master"}, "technique[1].version: 'git:master': vpncloud is a crate"),
    ({"port": 0}, "technique[1].port:"),
    ({"password": "x"}, "technique[1].password: unknown key"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    assert_technique_field_refused("vpncloud", entry, expected)


def test_bad_input_exits_2_with_one_line_before_anything_is_touched(tmp_path):
    assert_refused(tmp_path, '[[technique]]\nkind = "vpncloud"\nalgorithm = "des"\n[[measurement]]\nkind = "ping"\n',
                   "technique[1].algorithm: 'des' is not allowed; allowed values: 'aes128', 'aes256', 'chacha20', 'plain'")


def test_mtu_expectation_is_vpnclouds_own_reserve():
    """vpncloud sets its TUN MTU to the underlay's less 73 (an IPv6 header whatever the family):
    1427 of 1500, below the 1447 an IPv4 underlay would carry (20 + 8 + type 1 + 8 + tag 16)."""
    for algorithm in ALGORITHMS:
        settings = VpnCloudParams(algorithm=algorithm).settings()
        assert expect(settings, 1500).expected_mtu == 1427
    assert expect(VpnCloudParams().settings(), 1500).protocol_mtu == 1500 - 20 - 8 - 1 - 8 - 16
    assert expect(VpnCloudParams(algorithm="plain", family="ipv6").settings(), 1500).protocol_mtu == 1500 - 40 - 8 - 1


def test_the_recogniser_takes_vpnclouds_messages():
    sealed = bytes([1]) + bytes(range(7)) + b"\x8f" * 40  # key id 1, nonce, type + packet + tag
    init = bytes([0xFF, 0]) + b"\x01" * 60
    plain = bytes([0, 0x45]) + bytes(27)  # data type 0, then an IPv4 header
    assert is_vpncloud(sealed) and is_vpncloud(init) and is_vpncloud(plain)
    assert not is_vpncloud(bytes([7]) + bytes(40))  # key ids end at 3
    assert not is_vpncloud(bytes([2]) + bytes(10))  # shorter than nonce + type + tag
    pcap = pcap_of([udp_frame(sealed), udp_frame(init), udp_frame(bytes([0x10]) + bytes(40))])
    assert recognise(pcap, "vpncloud") == 2


CELLS = "[campaign]\nname = \"vpncloud\"\n" + "".join(
    f'[[technique]]\nkind = "vpncloud"\nlabel = "{algorithm}"\nalgorithm = "{algorithm}"\n'
    + (f'version = "{PINNED}"\n' if algorithm == "aes128" else "") for algorithm in ALGORITHMS) + """
[[measurement]]
kind = "tcp"
duration = "1s"
[[measurement]]
kind = "ping"
count = 5
interval = "0.05s"
"""


@needs_vpncloud
@pytest.mark.netns
def test_every_algorithm_carries_traffic_with_the_proof_and_leaves_nothing(tmp_path, clean_machine):
    before = machine_places.snapshot()
    _, cells = run_campaign(tmp_path, CELLS)
    assert len(cells) == 8
    for cell in cells:
        label, params, metrics = cell["technique"], cell["technique_params"], cell["metrics"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == ("cleartext" if params["algorithm"] == "plain" else "encrypted"), label
        negotiated = cell["negotiated"]
        assert negotiated["implementation"] == "vpncloud" and negotiated["version"] == PINNED, negotiated
        assert negotiated["build"]["version"] == PINNED and negotiated["algorithm"] == params["algorithm"]
        assert negotiated["mtu"] == cell["tunnel"]["interface_mtu"] == 1500 - 73  # the testbed's veths: 1500
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
            assert all(cell["hosts"][role]["procs_cpu_pct"]["vpncloud"] > 0 for role in ("client", "server"))
        if cell["measurement"] == "ping":
            assert metrics["received"] > 0 and metrics["rtt_min_ms"] > 0, metrics
    wire = vpnbench.load(tmp_path / "c.db").bringups["wire_check"]
    assert sorted(check["verdict"] for check in wire) == ["cleartext"] + ["encrypted"] * 3, list(wire)
    assert all(check["protocol"] == "vpncloud" for check in wire if check["verdict"] == "encrypted"), list(wire)
    assert not run_daemons("vpncloud")
    assert machine_places.changed(before) == []


WITHOUT_A_ROUTER = """
[campaign]
name = "vpncloud-no-router"
[testbed]
router = false
[[technique]]
kind = "vpncloud"
[[measurement]]
kind = "ping"
count = 5
interval = "0.05s"
"""


@needs_vpncloud
@pytest.mark.netns
def test_hosts_without_a_default_route_carry_traffic(tmp_path, clean_machine):
    """A testbed without a router has no default route, and vpncloud 2.3.0 panicked at start
    ("Network is unreachable": it connects a UDP socket to 8.8.8.8 to learn its own address);
    the technique gives that one address a route on the link it uses, and takes it away."""
    _, cells = run_campaign(tmp_path, WITHOUT_A_ROUTER)
    assert [cell["status"] for cell in cells] == ["ok"], [cell["error"] for cell in cells]
    assert cells[0]["metrics"]["received"] > 0 and cells[0]["wire_check"] == "encrypted"
    assert not run_daemons("vpncloud")


@needs_vpncloud
@pytest.mark.netns
@pytest.mark.parametrize("algorithm, sealed", [("chacha20", 8 + 16), ("plain", 0)])
def test_keys_are_private_wiped_and_each_packet_framed_as_the_arithmetic_says(testbed, algorithm, sealed):
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources), testbed.router)
    technique = VpnCloud(VpnCloudParams(algorithm=algorithm), ctx)
    run_dir = ctx.resources.dir
    try:
        tunnel = technique.up("userspace")
        wait_through(testbed.client, tunnel.server_addrs["ipv4"], 10)
        configs = sorted(run_dir.glob("vpncloud-*.yml"))
        assert [p.name for p in configs] == ["vpncloud-client.yml", "vpncloud-server.yml"]
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in configs)
        crypto = [json.loads(p.read_text())["crypto"] for p in configs]
        keys = [c["private-key"] for c in crypto]
        assert len(set(keys)) == 2 and crypto[0]["trusted-keys"] == crypto[1]["trusted-keys"]
        assert all(c["algorithms"] == [algorithm] for c in crypto)
        for proc in tunnel.procs:
            argv = Path(f"/proc/{proc.pid}/cmdline").read_text().rstrip("\0").split("\0")
            assert argv[-2] == "--config" and argv[-1].startswith(str(run_dir))
            assert not any(key in " ".join(argv) or key in proc.output() for key in keys)
        if algorithm != "plain":
            proof = check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources)
            assert (proof.verdict, proof.protocol) == ("encrypted", "vpncloud"), proof
        # An IPv4 ping of 200 bytes is a 228-byte packet: its UDP payload is type 1 + it (+ nonce and tag)
        assert 228 + 1 + sealed in captured_payload_sizes(testbed, ctx, lambda: _ping(testbed, tunnel, 200), "udp", is_vpncloud)
        ifaces = technique.ifaces
        tunnel.procs[0].stop()
        assert "vpncloud exited" in technique.failure()
    finally:
        technique.down()
    assert not list(run_dir.glob("vpncloud-*"))
    assert not run_daemons("vpncloud")
    assert not any(host.run(["ip", "link", "show", "dev", ifaces[role]], check=False).ok
                   for role, host in (("client", testbed.client), ("server", testbed.server)))


def _ping(testbed, tunnel, size: int) -> None:
    testbed.client.run(["ping", "-n", "-c", "3", "-i", "0.05", "-s", str(size), tunnel.server_addrs["ipv4"]],
                       timeout=10)



@needs_vpncloud
@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_device(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/vpncloud-*")



KILLED_RUN = killed_run("vpncloud")


def test_a_missing_build_is_unavailable_with_the_way_to_get_it():
    with pytest.raises(ValueError, match=r"server lacks vpncloud 2\.2\.0 .*vpnbench doctor --install vpncloud@2\.2\.0"):
        VpnCloud.resolve_backend(VpnCloudParams(version="2.2.0"), HostsWithoutBuilds())
    assert not VpnCloud.backends(HostsWithoutBuilds())[0].available


def _to_base62(data: bytes) -> str:
    """vpncloud 2.3.0's util.rs to_base62: the bytes as one big-endian number in base62 digits."""
    value, digits = int.from_bytes(data, "big"), ""
    while value:
        value, digit = divmod(value, 62)
        digits = BASE62[digit] + digits
    return digits


@pytest.mark.parametrize("first_byte, kept", [(0, False), (1, True), (255, True)])
def test_a_key_whose_first_byte_is_zero_is_one_vpncloud_would_shorten(first_byte, kept):
    """A key pair vpncloud makes is refused when its base62 loses a leading zero byte (one pair in
    128; its node panicked "Keys rejected by crypto library", the six-node mesh test's flake)."""
    key = bytes([first_byte]) + bytes(range(7, 38))
    assert len(key) == 32 and keeps_its_length(_to_base62(key)) is kept
