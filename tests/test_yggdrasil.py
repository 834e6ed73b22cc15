"""Yggdrasil between namespaces: TCP and TLS peerings carry traffic with the wire proof naming
their protocol, each packet's framing as the MTU arithmetic says (from a capture), keys private
and wiped, nothing left behind; its bad input; its recogniser; its build record."""

import json
import stat
import subprocess
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
from pcaps import pcap_of
from vpnbench.foundation.tools import which
from vpnbench.hosts import builds
from vpnbench.run.bringup import wait_through
from vpnbench.techniques import expect
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.wirecheck import check_wire, is_yggdrasil, recognise
from vpnbench.techniques.yggdrasil import FRAME_OVERHEAD, TLS13_RECORD, Yggdrasil, YggdrasilParams
from vpnbench.testbeds.probe import LocalKernelProbe

PINNED = YggdrasilParams().version
LACKING = None if which(builds.program("yggdrasil", "yggdrasil", PINNED)) else \
    builds.missing_reason("yggdrasil", PINNED, "this machine")
needs_yggdrasil = pytest.mark.skipif(LACKING is not None, reason=str(LACKING))


@pytest.mark.parametrize("entry, expected", [
    ({"transport": "udp"}, "technique[1].transport: 'udp' is not allowed; allowed values: 'tcp', 'tls'"),
    ({"version": "0.5.14; reboot"}, "technique[1].version: '0.5.14; reboot' is not a version"),
    ({"version": "debian"}, "technique[1].version: yggdrasil has no Debian package"),
    ({"family": "ipv5"}, "technique[1].family: 'ipv5' is not allowed; allowed values: 'ipv4', 'ipv6'"),
    ({"mtu": 1000}, "technique[1].mtu:"),
    ({"peers": "x"}, "technique[1].peers: unknown key"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    assert_technique_field_refused("yggdrasil", entry, expected)


def test_bad_input_exits_2_with_one_line_before_anything_is_touched(tmp_path):
    assert_refused(tmp_path, '[[technique]]\nkind = "yggdrasil"\ntransport = "quic"\n[[measurement]]\nkind = "ping"\n',
                   "technique[1].transport: 'quic' is not allowed; allowed values: 'tcp', 'tls'")


def test_mtu_expectation_is_the_tun_mtu_over_a_stream():
    """A TCP stream segments any frame: the device's MTU is what a DF ping finds; the overhead is
    the framing of one packet in one segment."""
    plain = expect(YggdrasilParams().settings(), 1500)
    assert plain.expected_mtu == 65535 and plain.overhead == 20 + 32 + FRAME_OVERHEAD
    tls = expect(YggdrasilParams(transport="tls", family="ipv6", mtu=1400).settings(), 1500)
    assert tls.expected_mtu == 1400 and tls.overhead == 40 + 32 + FRAME_OVERHEAD + TLS13_RECORD


def _tcp_segment(payload: bytes) -> bytes:
    import struct
    tcp = struct.pack(">HHIIBBHHH", 5000, 40000, 1, 1, 5 << 4, 0x18, 65535, 0, 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return bytes(12) + b"\x08\x00" + ip + tcp


def test_the_recogniser_takes_whole_ironwood_frames_only():
    keep_alive = bytes([1, 1])  # uvarint 1, type keep-alive
    traffic = bytes([0xC8, 0x01, 9]) + b"\x8f" * 199  # uvarint 200, type traffic
    assert is_yggdrasil(keep_alive) and is_yggdrasil(traffic) and is_yggdrasil(keep_alive + traffic)
    assert not is_yggdrasil(traffic[:-1])  # a frame cut off: the middle of a larger one
    assert not is_yggdrasil(bytes([2, 10, 0]))  # type 10 is none of ironwood's
    assert not is_yggdrasil(bytes([0x16, 3, 3, 0, 2, 1, 1]))  # a TLS record
    assert not is_yggdrasil(b"")
    pcap = pcap_of([_tcp_segment(keep_alive), _tcp_segment(traffic), _tcp_segment(b"GET / HTTP/1.1\r\n")])
    assert recognise(pcap, "yggdrasil") == 2


@needs_yggdrasil
def test_the_build_records_its_stub_and_its_version():
    record = json.loads(Path(builds.record_path("yggdrasil", PINNED)).read_text())
    assert record["module"] == f"github.com/yggdrasil-network/yggdrasil-go@v{PINNED}" and record["checksum"]
    assert "suah.dev/protect" in record["replaced"]
    said = subprocess.run([builds.program("yggdrasil", "yggdrasil", PINNED), "-version"], capture_output=True, text=True)
    assert f"Build version: {PINNED}" in said.stdout  # injected at the build (-X), else "unknown"


CELLS = f"""
[campaign]
name = "yggdrasil"
[[technique]]
kind = "yggdrasil"
label = "tcp"
version = "{PINNED}"
[[technique]]
kind = "yggdrasil"
label = "tls-v6"
transport = "tls"
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
[[measurement]]
kind = "setup"
count = 2
"""


@needs_yggdrasil
@pytest.mark.netns
def test_tcp_and_tls_peerings_carry_traffic_with_the_proof_and_leave_nothing(tmp_path, clean_machine):
    before = machine_places.snapshot()
    _, cells = run_campaign(tmp_path, CELLS)
    assert len(cells) == 6
    for cell in cells:
        label, params, metrics = cell["technique"], cell["technique_params"], cell["metrics"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == "encrypted", label
        negotiated = cell["negotiated"]
        assert negotiated["implementation"] == "yggdrasil" and negotiated["version"] == PINNED, negotiated
        assert negotiated["build"]["version"] == PINNED and "suah.dev/protect" in negotiated["build"]["replaced"]
        assert (negotiated["transport"], negotiated["underlay_family"]) == (params["transport"], params["family"])
        assert negotiated["mtu"] == cell["tunnel"]["interface_mtu"] == 65535  # IfMTU, as the arithmetic says
        assert len(set(negotiated["public_keys"].values())) == 2
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
            assert all(cell["hosts"][role]["procs_cpu_pct"]["yggdrasil"] > 0 for role in ("client", "server"))
        if cell["measurement"] == "ping":
            assert metrics["received"] > 0 and metrics["rtt_min_ms"] > 0, metrics
        if cell["measurement"] == "setup":
            assert 0 < metrics["handshake_p50_s"] < metrics["up_p50_s"] <= metrics["setup_p50_s"], metrics
    wire = vpnbench.load(tmp_path / "c.db").bringups["wire_check"]
    assert sorted(check["protocol"] for check in wire) == ["TLS", "yggdrasil"], list(wire)
    assert not run_daemons("yggdrasil")
    assert machine_places.changed(before) == []  # nothing in the machine's own places (no /var/run socket)


@needs_yggdrasil
@pytest.mark.netns
def test_keys_are_private_wiped_and_each_packet_framed_as_the_arithmetic_says(testbed):
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources), testbed.router)
    technique = Yggdrasil(YggdrasilParams(), ctx)
    run_dir = ctx.resources.dir
    try:
        tunnel = technique.up("userspace")
        wait_through(testbed.client, tunnel.server_addrs["ipv6"], 10)
        configs = sorted(run_dir.glob("yggdrasil-*.json"))
        assert [p.name for p in configs] == ["yggdrasil-client.json", "yggdrasil-server.json"]
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in configs)
        keys = [json.loads(p.read_text())["PrivateKey"] for p in configs]
        assert len(set(keys)) == 2 and all(len(key) == 128 for key in keys)  # Ed25519: seed and public key, hex
        server = json.loads((run_dir / "yggdrasil-server.json").read_text())
        assert server["AllowedPublicKeys"] == [tunnel.negotiated["public_keys"]["client"]]
        assert server["MulticastInterfaces"] == [] and server["AdminListen"].startswith(f"unix://{run_dir}")
        for proc in tunnel.procs:
            argv = Path(f"/proc/{proc.pid}/cmdline").read_text().rstrip("\0").split("\0")
            assert argv[-4:-2] == ["-useconffile", str(run_dir / f"yggdrasil-{proc_role(tunnel, proc)}.json")]
            assert not any(key in " ".join(argv) or key in proc.output() for key in keys)
        assert all(address.startswith("2") or address.startswith("3") for address in
                   (tunnel.server_addrs["ipv6"], tunnel.client_addrs["ipv6"]))  # 200::/7
        proof = check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources, "ipv6")
        assert (proof.verdict, proof.protocol) == ("encrypted", "yggdrasil"), proof
        # Framing from a capture: an IPv6 ping of N bytes is an (N + 48)-byte packet, its frame that + FRAME_OVERHEAD
        for size in (200, 1000):
            frames = captured_payload_sizes(testbed, ctx, lambda: _ping(testbed, tunnel, size), "tcp", is_yggdrasil)
            assert size + 48 + FRAME_OVERHEAD in frames, (size, sorted(frames))
        ifaces = technique.ifaces
        assert _has_link(testbed.client, ifaces["client"]) and _has_link(testbed.server, ifaces["server"])
        tunnel.procs[0].stop()
        assert "yggdrasil exited" in technique.failure()
    finally:
        technique.down()
    assert not list(run_dir.glob("yggdrasil-*.json"))
    assert not run_daemons("yggdrasil")
    assert not _has_link(testbed.client, ifaces["client"]) and not _has_link(testbed.server, ifaces["server"])


def _ping(testbed, tunnel, size: int) -> None:
    """The client pings the server's overlay address with `size` bytes of data."""
    testbed.client.run(["ping", "-n", "-c", "3", "-i", "0.05", "-s", str(size), tunnel.server_addrs["ipv6"]],
                       timeout=10)


def proc_role(tunnel, proc) -> str:
    return ("server", "client")[tunnel.procs.index(proc)]


def _has_link(host, name: str) -> bool:
    return host.run(["ip", "link", "show", "dev", name], check=False).ok



def test_an_ipv4_measurement_through_an_ipv6_overlay_says_what_to_set():
    """The overlay carries IPv6 only: a measurement of the default family fails in one line."""
    from vpnbench.foundation.errors import MeasurementError
    from vpnbench.measure.base import MeasureContext
    from vpnbench.techniques.base import Tunnel
    tunnel = Tunnel("userspace", {"ipv6": "200::2"}, {"ipv6": "200::1"}, "encrypted", "tcp port 5000")
    ctx = MeasureContext.__new__(MeasureContext)
    ctx.tunnel = tunnel
    assert ctx.target("ipv6") == "200::2"
    with pytest.raises(MeasurementError, match=r'^family: the tunnel carries only ipv6 inside; set family = "ipv6"'):
        ctx.target("ipv4")


@needs_yggdrasil
@pytest.mark.netns
def test_kill9_mid_run_then_cleanup_leaves_no_daemon_key_or_device(tmp_path, clean_machine):
    kill9_mid_traffic_then_cleanup(tmp_path, KILLED_RUN, "*/yggdrasil-*")



KILLED_RUN = killed_run("yggdrasil", family="ipv6")


def test_a_missing_build_is_unavailable_with_the_way_to_get_it():
    with pytest.raises(ValueError, match=r"server lacks yggdrasil 0\.5\.9 .*vpnbench doctor --install yggdrasil@0\.5\.9"):
        Yggdrasil.resolve_backend(YggdrasilParams(version="0.5.9"), HostsWithoutBuilds())
    assert not Yggdrasil.backends(HostsWithoutBuilds())[0].available
