"""Nebula between namespaces: both ciphers, the lighthouse on the server and on the router, the wire
proof naming nebula, keys private and wiped, nothing left behind; its bad input; its arithmetic."""

import json
import stat
from pathlib import Path

import pytest

import machine_places
import vpnbench
from bounds import assert_tcp_measured, cell_wall_seconds
from conftest import TCP_UDP_PING, assert_refused, run_campaign, run_daemons
from pcaps import pcap_of, udp_frame
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.tools import which
from vpnbench.hosts import builds
from vpnbench.run.bringup import wait_through
from vpnbench.techniques import expect
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.nebula import Nebula, NebulaParams, handshake_seconds, log_entries, pem_blocks
from vpnbench.techniques.wirecheck import check_wire, recognise
from vpnbench.testbeds.probe import LocalKernelProbe

PINNED = NebulaParams().version


def lacking(version: str) -> str | None:
    """Why this machine cannot run that nebula (the tests' own look: they run on this machine)."""
    if all(which(builds.program("nebula", program, version)) for program in ("nebula", "nebula-cert")):
        return None
    return builds.missing_reason("nebula", version, "this machine")


needs_nebula = pytest.mark.skipif(lacking(PINNED) is not None, reason=str(lacking(PINNED)))


@pytest.mark.parametrize("entry, expected", [
    ({"cipher": "des"}, "technique[1].cipher: 'des' is not allowed; allowed values: 'aes', 'chachapoly'"),
    ({"lighthouse": "x"}, "technique[1].lighthouse: 'x' is not allowed; allowed values: 'server', 'router'"),
    ({"version": "1.10.3; reboot"}, "technique[1].version: '1.10.3; reboot' is not a version"),
    ({"family": "ipv5"}, "technique[1].family: 'ipv5' is not allowed; allowed values: 'ipv4', 'ipv6'"),
    ({"mtu": 100}, "technique[1].mtu:"),
    ({"ciphers": "aes"}, "technique[1].ciphers: unknown key"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    with pytest.raises(UserError) as info:
        campaign_from_dict({"campaign": {"name": "nb"}, "technique": [{"kind": "nebula", **entry}],
                            "measurement": [{"kind": "ping"}]})
    assert str(info.value).startswith(expected), str(info.value)


@pytest.mark.parametrize("setting, line", [
    ('cipher = "des"', "technique[1].cipher: 'des' is not allowed; allowed values: 'aes', 'chachapoly'"),
    ('lighthouse = "x"', "technique[1].lighthouse: 'x' is not allowed; allowed values: 'server', 'router'"),
])
def test_bad_input_exits_2_with_one_line_before_anything_is_touched(tmp_path, setting, line):
    assert_refused(tmp_path, f'[[technique]]\nkind = "nebula"\n{setting}\n[[measurement]]\nkind = "ping"\n', line)


def test_mtu_expectation_is_nebulas_arithmetic():
    """IP + UDP 8 + nebula's header 16 (header.Len) + the AEAD's tag 16, either cipher."""
    for cipher in ("aes", "chachapoly"):
        settings = NebulaParams(cipher=cipher).settings()
        assert expect(settings, 1500).expected_mtu == 1500 - 20 - 8 - 16 - 16
        assert expect({**settings, "family": "ipv6"}, 1500).overhead == 40 + 8 + 16 + 16
    assert expect(NebulaParams(mtu=1300).settings(), 1500).expected_mtu == 1300


def test_the_wire_proof_recognises_nebulas_header_only():
    data = bytes([0x11, 0, 0, 0]) + (7).to_bytes(4, "big") + (9).to_bytes(8, "big") + b"\x8f" * 60
    handshake = bytes([0x10, 0, 0, 0]) + bytes(12) + b"\x01" * 40
    wireguard = bytes([4, 0, 0, 0]) + bytes(12) + b"\x8f" * 64  # a WireGuard data message: 16 + 16k + 16
    type_7 = bytes([0x17, 0, 0, 0]) + bytes(20)  # nebula's types end at 6
    later_fragment = udp_frame(data, fragment_offset=185)  # no UDP header: its bytes are payload
    pcap = pcap_of([udp_frame(data), udp_frame(handshake), udp_frame(wireguard), udp_frame(type_7), later_fragment])
    assert recognise(pcap, "nebula") == 2 and recognise(pcap, "WireGuard") == 1
    assert recognise(pcap_of([]), "nebula") == 0


# Handshake lines as Debian's 1.6.1 and the pinned 1.10.3 log them (format: json), trimmed.
LOG_1_6 = ('{"handshake":{"stage":1,"style":"ix_psk0"},"msg":"Handshake message sent","vpnIp":"10.96.7.2"}\n'
           '{"certName":"server","durationNs":1235257,"handshake":{"stage":2,"style":"ix_psk0"},'
           '"msg":"Handshake message received","vpnIp":"10.96.7.2"}\n')
LOG_1_10 = ('{"build":"1.10.3","msg":"Nebula interface is active"}\npanic: not json\n'
            '{"certVersion":2,"durationNs":4754000,"handshake":{"stage":2,"style":"ix_psk0"},'
            '"msg":"Handshake message received","vpnAddrs":["10.96.7.2"]}\n')


def test_handshake_time_is_nebulas_own_duration():
    assert handshake_seconds(log_entries(LOG_1_6)) == 0.001235
    assert handshake_seconds(log_entries(LOG_1_10)) == 0.004754
    responder = '{"handshake":{"stage":1},"msg":"Handshake message received"}\n'  # the responder's side
    assert handshake_seconds(log_entries(responder)) is None


def test_pem_blocks_split_nebula_certs_keygen_output():
    text = ("-----BEGIN NEBULA X25519 PRIVATE KEY-----\nAAAA\n-----END NEBULA X25519 PRIVATE KEY-----\n"
            "-----BEGIN NEBULA X25519 PUBLIC KEY-----\nBBBB\n-----END NEBULA X25519 PUBLIC KEY-----\n")
    private, public = pem_blocks(text)
    assert private.startswith("-----BEGIN NEBULA X25519 PRIVATE KEY") and "BBBB" not in private
    assert public.endswith("-----END NEBULA X25519 PUBLIC KEY-----\n")


CELLS = f"""
[campaign]
name = "nebula"
[testbed]
router = true
[[technique]]
kind = "nebula"
label = "aes-lighthouse-server"
version = "{PINNED}"
cipher = "aes"
lighthouse = "server"
[[technique]]
kind = "nebula"
label = "chachapoly-lighthouse-router"
cipher = "chachapoly"
lighthouse = "router"
""" + TCP_UDP_PING + """[[measurement]]
kind = "setup"
count = 3
"""


@needs_nebula
@pytest.mark.netns
def test_both_ciphers_and_lighthouses_carry_traffic_with_the_proof_and_leave_nothing(tmp_path, clean_machine):
    before = machine_places.snapshot()
    _, cells = run_campaign(tmp_path, CELLS)
    assert len(cells) == 8
    for cell in cells:
        label, params, metrics = cell["technique"], cell["technique_params"], cell["metrics"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == "encrypted", label
        negotiated = cell["negotiated"]
        assert negotiated["implementation"] == "nebula" and negotiated["version"] == PINNED, negotiated
        assert negotiated["build"]["version"] == PINNED and negotiated["build"]["goarch"], negotiated
        assert (negotiated["cipher"], negotiated["lighthouse"]) == (params["cipher"], params["lighthouse"])
        assert negotiated["curve"] == "25519" and negotiated["mtu"] == 1500 - 60  # the testbed's veths: 1500
        assert cell["tunnel"]["interface_mtu"] == negotiated["mtu"]
        assert metrics["setup_time_s"] > 0
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
            assert all(cell["hosts"][role]["procs_cpu_pct"]["nebula"] > 0 for role in ("client", "server"))
        if cell["measurement"] == "udp":  # its rate is its packets over the time it measured them in
            received_over = metrics["received_packets"] * 1200 * 8 / metrics["throughput_bps"]
            assert 0.9 * 1.0 <= received_over <= cell_wall_seconds(cell), metrics
        if cell["measurement"] == "ping":
            assert metrics["received"] > 0 and metrics["rtt_min_ms"] > 0, metrics
        if cell["measurement"] == "setup":  # nebula's handshake with the lighthouse is inside up()
            assert 0 < metrics["handshake_p50_s"] < metrics["up_p50_s"] <= metrics["setup_p50_s"], metrics
    wire = vpnbench.load(tmp_path / "c.db").bringups["wire_check"]
    assert len(wire) == 2 and all(check["protocol"] == "nebula" for check in wire), list(wire)
    assert not run_daemons("nebula")
    assert machine_places.changed(before) == []  # nothing made in, or written into, the machine's own places


@needs_nebula
@pytest.mark.netns
@pytest.mark.parametrize("version, family", [(PINNED, "ipv6"), ("debian", "ipv4")])
def test_keys_are_private_never_on_a_command_line_and_wiped(testbed, version, family):
    """Also: an IPv6 underlay (the proof recognises nebula in IPv6 packets) and Debian's 1.6.1."""
    if lacking(version):
        pytest.skip(lacking(version))
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources), testbed.router)
    technique = Nebula(NebulaParams(version=version, lighthouse="router", family=family), ctx)
    run_dir = ctx.resources.dir
    try:
        tunnel = technique.up("userspace")
        wait_through(testbed.client, tunnel.server_addrs["ipv4"], 10)
        configs = sorted(run_dir.glob("nebula-*.yml"))
        assert [p.name for p in configs] == ["nebula-client.yml", "nebula-router.yml", "nebula-server.yml"]
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in configs)
        keys = {p.name: json.loads(p.read_text())["pki"]["key"] for p in configs}
        assert len(set(keys.values())) == 3 and all("X25519 PRIVATE KEY" in key for key in keys.values())
        assert not list(run_dir.glob("nebula-pki-*"))  # the CA's directory: made and wiped
        assert not [p for p in run_dir.rglob("*") if p.is_file() and b"ED25519 PRIVATE KEY" in p.read_bytes()]
        for proc in tunnel.procs:
            argv = Path(f"/proc/{proc.pid}/cmdline").read_text().rstrip("\0").split("\0")
            assert argv[-2] == "-config" and argv[-1].startswith(str(run_dir))
            assert not any(key.strip() in proc.output() for key in keys.values())  # nor in a log
        assert technique.handshake_s is not None and technique.handshake_s > 0
        assert technique.tunnel.negotiated["version"] == ("1.6.1" if version == "debian" else version)
        proof = check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources)
        assert (proof.verdict, proof.protocol) == ("encrypted", "nebula"), proof
        ifaces = {role: ctx.resources.iface_name("n" + role[0]) for role in ("client", "server")}
        assert _has_link(testbed.client, ifaces["client"]) and _has_link(testbed.server, ifaces["server"])
        tunnel.procs[0].stop()
        assert "nebula exited" in technique.failure()
    finally:
        technique.down()
    assert not list(run_dir.glob("nebula-*"))
    assert not run_daemons("nebula")
    assert not _has_link(testbed.client, ifaces["client"]) and not _has_link(testbed.server, ifaces["server"])


def _has_link(host, name: str) -> bool:
    return host.run(["ip", "link", "show", "dev", name], check=False).ok



def test_debian_means_the_distributions_package():
    assert builds.program("nebula", "nebula", "debian") == "nebula"
    assert builds.record_command("nebula", "debian")[-1] == "nebula"  # dpkg-query about Debian's package


class _HostsWithout:
    """A probe double: the hosts have no nebula at all (neither a build nor Debian's)."""

    def host_lacking(self, path: str) -> str | None:
        return "server" if path.startswith(str(builds.PREFIX)) else None

    def has_command(self, name: str) -> bool:
        return False


def test_a_missing_nebula_is_unavailable_with_the_way_to_get_it():
    with pytest.raises(ValueError, match=r"server lacks nebula 1\.9\.9 .*vpnbench doctor --install nebula@1\.9\.9"):
        Nebula.resolve_backend(NebulaParams(version="1.9.9"), _HostsWithout())
    with pytest.raises(ValueError, match=r"lacks nebula \(Debian\): apt-get install nebula"):
        Nebula.resolve_backend(NebulaParams(version="debian"), _HostsWithout())
    assert not Nebula.backends(_HostsWithout())[0].available
