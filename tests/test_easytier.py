"""EasyTier between namespaces: encryption on and off, multi-thread and the TCP transport carry
traffic, the wire proof names easytier (and sees the marker in clear with encryption off), each
packet framed as the MTU arithmetic says (from a capture), the network secret only in 0600 files
and wiped (blanked in the daemon's log), nothing left behind; its bad input; its recognisers."""

import re
import stat
import struct
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
from vpnbench.techniques.easytier import EasyTier, EasyTierParams
from vpnbench.techniques.wirecheck import check_wire, is_easytier, is_easytier_tcp, recognise
from vpnbench.testbeds.probe import LocalKernelProbe

PINNED = EasyTierParams().version
LACKING = None if which(builds.program("easytier", "easytier-core", PINNED)) else \
    builds.missing_reason("easytier", PINNED, "this machine")
needs_easytier = pytest.mark.skipif(LACKING is not None, reason=str(LACKING))


@pytest.mark.parametrize("entry, expected", [
    ({"encryption": "off"}, "technique[1].encryption: 'off' is not allowed; allowed values: true, false"),
    ({"encryption": 0}, "technique[1].encryption: 0 is not allowed; allowed values: true, false"),
    ({"multi_thread": "yes"}, "technique[1].multi_thread: 'yes' is not allowed; allowed values: true, false"),
    ({"transport": "quic"}, "technique[1].transport: 'quic' is not allowed; allowed values: 'udp', 'tcp'"),
    ({"version": "2.0.3; reboot"}, "technique[1].version: '2.0.3; reboot' is not a version"),
    ({"version": "git:main"}, "technique[1].version: 'git:main': easytier is a crate"),
    ({"port": 70000}, "technique[1].port:"),
    ({"network_secret": "x"}, "technique[1].network_secret: unknown key"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    assert_technique_field_refused("easytier", entry, expected)


def test_bad_input_exits_2_with_one_line_before_anything_is_touched(tmp_path):
    assert_refused(tmp_path, '[[technique]]\nkind = "easytier"\nencryption = "no"\n[[measurement]]\nkind = "ping"\n',
                   "technique[1].encryption: 'no' is not allowed; allowed values: true, false")


def test_mtu_expectation_is_easytiers_flag_and_framing():
    """The TUN MTU is the mtu flag 1380, less 20 with encryption: 1360 and 1380 of 1500, below
    what the framing allows (UDP/IPv4: 20 + 8 + tunnel 8 + peer header 16 (+ tag 16 + nonce 12))."""
    on, off = EasyTierParams().settings(), EasyTierParams(encryption=False).settings()
    assert (expect(on, 1500).expected_mtu, expect(off, 1500).expected_mtu) == (1360, 1380)
    assert expect(on, 1500).protocol_mtu == 1500 - 20 - 8 - 8 - 16 - 16 - 12
    assert expect(off, 1500).protocol_mtu == 1500 - 20 - 8 - 8 - 16
    assert expect(EasyTierParams(family="ipv6").settings(), 1500).protocol_mtu == 1500 - 40 - 8 - 8 - 16 - 28
    # on an underlay of 1400 the framing, not the flag, is the limit
    assert expect(on, 1400).expected_mtu == 1400 - 20 - 8 - 8 - 16 - 28
    # a TCP stream segments: the flag is the limit, whatever the underlay
    assert expect(EasyTierParams(transport="tcp").settings(), 1280).expected_mtu == 1360


def _peer_header(packet_type: int, flags: int, length: int) -> bytes:
    return struct.pack("<IIBBBBI", 7, 9, packet_type, flags, 1, 0, length)


def test_the_recognisers_take_easytiers_frames():
    body = _peer_header(1, 1, 84) + bytes(84 + 28)  # a data packet, encrypted, with tag and nonce
    data = struct.pack("<IBBH", 0x1234, 3, 0, len(body)) + body
    syn = struct.pack("<IBBH", 0x1234, 1, 0, 8) + bytes(8)
    assert is_easytier(data) and is_easytier(syn)
    assert not is_easytier(data[:-1])  # the length must be the rest of the datagram's
    assert not is_easytier(struct.pack("<IBBH", 1, 9, 0, 8) + bytes(8))  # message types end at 5
    assert not is_easytier(struct.pack("<IBBH", 1, 3, 0, 16) + _peer_header(11, 0, 0))  # packet types end at 10
    frame = struct.pack("<I", len(body)) + body
    assert is_easytier_tcp(frame) and not is_easytier_tcp(struct.pack("<I", 3) + _peer_header(1, 0, 0))
    pcap = pcap_of([udp_frame(data), udp_frame(syn), udp_frame(bytes([0x45]) + bytes(40))])
    assert recognise(pcap, "easytier") == 2


CELLS = """[campaign]
name = "easytier"
[[technique]]
kind = "easytier"
label = "encrypted"
version = "%s"
[[technique]]
kind = "easytier"
label = "clear"
encryption = false
[[technique]]
kind = "easytier"
label = "multi-thread"
multi_thread = true
[[technique]]
kind = "easytier"
label = "tcp"
transport = "tcp"
[[measurement]]
kind = "tcp"
duration = "1s"
[[measurement]]
kind = "ping"
count = 5
interval = "0.05s"
""" % PINNED


@needs_easytier
@pytest.mark.netns
def test_encryption_on_off_multi_thread_and_tcp_carry_traffic_with_the_proof_and_leave_nothing(tmp_path, clean_machine):
    before = machine_places.snapshot()
    _, cells = run_campaign(tmp_path, CELLS)
    assert len(cells) == 8
    for cell in cells:
        label, params, metrics = cell["technique"], cell["technique_params"], cell["metrics"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == ("encrypted" if params["encryption"] else "cleartext"), label
        negotiated = cell["negotiated"]
        assert negotiated["implementation"] == "easytier" and negotiated["version"].startswith(PINNED), negotiated
        assert negotiated["build"]["version"] == PINNED and negotiated["encryption"] == params["encryption"]
        assert negotiated["peer_link"] == params["transport"] and negotiated["multi_thread"] == params["multi_thread"]
        # the testbed's veths are 1500: the flag's 1380, less 20 with encryption
        assert negotiated["mtu"] == cell["tunnel"]["interface_mtu"] == (1360 if params["encryption"] else 1380)
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
            assert all(cell["hosts"][role]["procs_cpu_pct"]["easytier-core"] > 0 for role in ("client", "server"))
        if cell["measurement"] == "ping":
            assert metrics["received"] > 0 and metrics["rtt_min_ms"] > 0, metrics
    wire = vpnbench.load(tmp_path / "c.db").bringups["wire_check"]
    assert sorted(check["verdict"] for check in wire) == ["cleartext"] + ["encrypted"] * 3, list(wire)
    assert sorted(check["protocol"] for check in wire if check["verdict"] == "encrypted") == \
        ["easytier", "easytier", "easytier-tcp"], list(wire)
    assert not run_daemons("easytier-core")
    assert machine_places.changed(before) == []


@needs_easytier
@pytest.mark.netns
@pytest.mark.parametrize("transport, encryption, framing", [
    ("udp", True, 8 + 16 + 16 + 12), ("udp", False, 8 + 16), ("tcp", True, 4 + 16 + 16 + 12)])
def test_secret_private_blanked_wiped_and_each_packet_framed_as_the_arithmetic_says(testbed, transport, encryption,
                                                                                     framing):
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources), testbed.router)
    technique = EasyTier(EasyTierParams(transport=transport, encryption=encryption), ctx)
    run_dir = ctx.resources.dir
    try:
        tunnel = technique.up("userspace")
        wait_through(testbed.client, tunnel.server_addrs["ipv4"], 10)
        configs = sorted(run_dir.glob("easytier-*.toml"))
        assert [p.name for p in configs] == ["easytier-client.toml", "easytier-server.toml"]
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in configs)
        secrets_found = {re.search(r'network_secret = "(\w+)"', p.read_text()).group(1) for p in configs}
        assert len(secrets_found) == 1
        secret = secrets_found.pop()
        assert len(secret) == 48
        for proc in tunnel.procs:
            argv = Path(f"/proc/{proc.pid}/cmdline").read_text().rstrip("\0").split("\0")
            assert argv[1:3] == ["--config-file", str(run_dir / Path(argv[2]).name)]
            assert secret not in " ".join(argv)
            # it printed its configuration, secret included, and vpnbench blanked it there
            assert "network_secret = \"" + "*" * len(secret) + "\"" in proc.output()
            assert secret not in proc.output()
        assert not any(secret in text for text in technique.evidence().values())
        if encryption:
            proof = check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources)
            assert (proof.verdict, proof.protocol) == ("encrypted", tunnel.wire_protocol), proof
        # An IPv4 ping of 200 bytes is a 228-byte packet: its UDP or TCP payload is it and the framing
        recognised = is_easytier if transport == "udp" else is_easytier_tcp
        assert 228 + framing in captured_payload_sizes(testbed, ctx, lambda: _ping(testbed, tunnel, 200), transport,
                                                       recognised)
        ifaces = technique.ifaces
        tunnel.procs[0].stop()
        assert "easytier-core exited" in technique.failure()
    finally:
        technique.down()
    assert not list(run_dir.glob("easytier-*"))
    assert not run_daemons("easytier-core")
    assert not any(host.run(["ip", "link", "show", "dev", ifaces[role]], check=False).ok
                   for role, host in (("client", testbed.client), ("server", testbed.server)))


def _ping(testbed, tunnel, size: int) -> None:
    testbed.client.run(["ping", "-n", "-c", "3", "-i", "0.05", "-s", str(size), tunnel.server_addrs["ipv4"]],
                       timeout=10)



@needs_easytier
@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_secret_or_device(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/easytier-*")


KILLED_RUN = killed_run("easytier")


def test_a_missing_build_is_unavailable_with_the_way_to_get_it():
    with pytest.raises(ValueError, match=r"server lacks easytier 2\.0\.2 .*vpnbench doctor --install easytier@2\.0\.2"):
        EasyTier.resolve_backend(EasyTierParams(version="2.0.2"), HostsWithoutBuilds())
    assert not EasyTier.backends(HostsWithoutBuilds())[0].available
