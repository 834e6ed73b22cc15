"""Tailscale with a Headscale control server vpnbench starts: validation, the arithmetic and
recognisers it relies on, real cells (direct and forced relayed) and leave-no-trace."""

import ipaddress
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

import machine_places
from bounds import assert_tcp_measured
from conftest import TCP_UDP_PING, run_campaign, run_cli, run_daemons
from pcaps import pcap_of, udp_frame
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.hosts import builds
from vpnbench.run.bringup import wait_through
from vpnbench.store.database import Store
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.tailscale import TUN_MTU, Tailscale, TailscaleParams, control_certificate, headscale_config
from vpnbench.techniques.wirecheck import is_tls_record, is_wireguard, recognise
from vpnbench.testbeds.probe import LocalKernelProbe

BUILDS = [builds.program("tailscale", "tailscaled"), builds.program("tailscale", "tailscale"),
          builds.program("headscale", "headscale")]
needs_builds = pytest.mark.skipif(not all(Path(p).exists() for p in BUILDS),
                                  reason="tailscale/headscale builds missing: vpnbench doctor --install tailscale headscale")


@pytest.mark.parametrize("entry, expected", [
    ({"path": "x"}, "technique[1].path: 'x' is not allowed; allowed values: 'direct', 'relayed'"),
    ({"version": "a b"}, "technique[1].version: 'a b' is not a version (digits, dots, letters); allowed: a version "
                         "such as '1.102.0', git:REF (a commit, tag or branch of tailscale.com) or path:/DIR (a local "
                         "source directory)"),
    ({"headscale_version": "debian"}, "technique[1].headscale_version: headscale has no Debian package"),
    ({"port": 0}, "technique[1].port:"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    with pytest.raises(UserError) as info:
        campaign_from_dict({"technique": [{"kind": "tailscale", **entry}], "measurement": [{"kind": "ping"}]})
    assert str(info.value).startswith(expected), str(info.value)


@pytest.mark.parametrize("line, message", [
    ('path = "x"', "technique[1].path: 'x' is not allowed; allowed values: 'direct', 'relayed'"),
    ('version = "a b"', "technique[1].version: 'a b' is not a version"),
])
def test_bad_input_exits_2_in_one_line_before_anything_is_touched(tmp_path, line, message):
    (tmp_path / "c.toml").write_text(f'[[technique]]\nkind = "tailscale"\n{line}\n[[measurement]]\nkind = "ping"\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"vpnbench: error: {message}"] or message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "c.db").exists()


def test_refused_on_an_ssh_testbed_whose_ip_rules_are_the_machines_own(tmp_path):
    """tailscaled in TUN mode rewrites the host-wide ip rules 52xx: on an ssh testbed's real machines
    that clobbers their own Tailscale, so the campaign is refused before any host is reached."""
    inventory = {"kind": "ssh", "router": False,
                 "hosts": {"client": {"host": "client.test", "iface": "c0", "ipv4": "10.0.0.1"},
                           "server": {"host": "server.test", "iface": "s0", "ipv4": "10.0.0.2"}}}
    with pytest.raises(UserError, match=r"^technique\[1\]\.kind: tailscaled rewrites a host's own ip rules .*"
                                        r"allowed testbed kinds for tailscale: local, vm$"):
        campaign_from_dict({"testbed": inventory, "technique": [{"kind": "tailscale"}],
                            "measurement": [{"kind": "ping"}]})
    for kind in ("local", "vm"):  # their hosts are namespaces or guests the run made
        campaign_from_dict({"testbed": {"kind": kind}, "technique": [{"kind": "tailscale"}],
                            "measurement": [{"kind": "ping"}]})


def test_mtu_expectation_is_tailscaleds_tun_mtu_within_the_protocols_room():
    direct = Tailscale.expectation({"kind": "tailscale"}, 1500)
    assert (direct.protocol_mtu, direct.overhead, direct.expected_mtu) == (1440, 60, TUN_MTU)
    # an underlay too small for 1280 + 60 leaves WireGuard's room, below the TUN's
    assert Tailscale.expectation({"kind": "tailscale"}, 1300).expected_mtu == 1240
    relayed = Tailscale.expectation({"kind": "tailscale", "path": "relayed"}, 1500)
    # IP 20 + TCP 32 + TLS record 22 + DERP frame 37 + WireGuard 32; TCP carries bigger ones segmented
    assert relayed.overhead == 143 and relayed.fragments_outer and relayed.expected_mtu == TUN_MTU


def test_wire_recognisers_tell_wireguard_and_tls_from_other_payloads():
    assert is_wireguard(b"\x01\0\0\0" + bytes(144)) and is_wireguard(b"\x02\0\0\0" + bytes(88))
    assert is_wireguard(b"\x04\0\0\0" + bytes(12) + bytes(32))  # transport data: 16 + 16k + 16
    assert is_wireguard(b"\x04\0\0\0" + bytes(12) + bytes(33))  # boringtun does not pad to 16
    assert not is_wireguard(b"\x04\0\0\0" + bytes(12) + bytes(15))  # shorter than header + tag
    assert not is_wireguard(b"TS\xf0\x9f\x92\xac" + bytes(60))  # tailscale's disco message
    assert not is_wireguard(b"\x01\0\0\x01" + bytes(144))  # reserved bytes set
    assert is_tls_record(b"\x17\x03\x03\x00\x20") and not is_tls_record(b"GET / HTTP/1.1")
    pcap = pcap_of([udp_frame(b"\x04\0\0\0" + bytes(44)), udp_frame(b"\x01\0\0\0" + bytes(144)),
                    udp_frame(b"hello" * 7)])
    assert recognise(pcap, "WireGuard") == 2 and recognise(pcap, "TLS") == 0


def test_headscale_config_reaches_nothing_outside_and_keeps_everything_in_its_directory(tmp_path):
    config = headscale_config(tmp_path, "10.0.1.1", "https://10.0.1.1:8443", 8443)
    assert config["derp"]["urls"] == [] and config["derp"]["paths"] == [] and config["derp"]["server"]["enabled"]
    assert config["disable_check_updates"] and not config["logtail"]["enabled"]
    assert not config["dns"]["magic_dns"] and not config["dns"]["override_local_dns"]
    paths = [config["tls_cert_path"], config["tls_key_path"], config["noise"]["private_key_path"], config["unix_socket"],
             config["derp"]["server"]["private_key_path"], config["database"]["sqlite"]["path"]]
    assert all(Path(p).parent == tmp_path for p in paths)


def test_control_certificate_is_signed_by_the_run_ca_for_the_address():
    ca_pem, cert_pem, key_pem = control_certificate("10.0.1.1")
    ca, cert = x509.load_pem_x509_certificate(ca_pem.encode()), x509.load_pem_x509_certificate(cert_pem.encode())
    cert.verify_directly_issued_by(ca)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("10.0.1.1")]
    assert "PRIVATE KEY" in key_pem and "PRIVATE KEY" not in ca_pem + cert_pem
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    assert control_certificate("10.0.1.1")[0] != ca_pem  # a new CA each bring-up


CAMPAIGN = """
[campaign]
name = "tailscale"
[[technique]]
kind = "tailscale"
label = "ts-direct"
[[technique]]
kind = "tailscale"
label = "ts-relayed"
path = "relayed"
""" + TCP_UDP_PING


@needs_builds
@pytest.mark.netns
def test_direct_and_relayed_cells_join_headscale_pass_traffic_and_the_wire_proof(tmp_path, clean_machine):
    """The testbed's router runs Headscale; tailscaled joins from client and server."""
    before = machine_places.snapshot()
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert len(cells) == 6
    for cell in cells:
        label, negotiated = cell["technique"], cell["negotiated"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == "encrypted", label
        assert negotiated["implementation"] == "tailscaled" and negotiated["version"] == "1.102.0"
        assert negotiated["build"] and negotiated["headscale_version"] == "0.26.1" and negotiated["headscale_build"]
        assert negotiated["path"] == negotiated["path_asked"] == label.removeprefix("ts-"), negotiated
        assert negotiated["join_s"] > 0 and negotiated["cipher"] == "chacha20poly1305"
        # the set-up time holds the join and the wait for the path (and Headscale's start, the first packet)
        assert 0 < negotiated["join_s"] + negotiated["path_s"] < cell["metrics"]["setup_time_s"], negotiated
        assert cell["tunnel"]["interface_mtu"] == TUN_MTU
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
        if cell["measurement"] == "udp":
            assert cell["metrics"]["received_packets"] > 0, label
        if cell["measurement"] == "ping":
            assert cell["metrics"]["loss_pct"] < 50, label
    relayed = {c["negotiated"]["via"] for c in cells if c["technique"] == "ts-relayed"}
    assert relayed == {"DERP(vpnbench)"}
    wire = {b.technique: b.wire_check for b in Store(tmp_path / "c.db").bringups(cells[0]["run_id"])}
    assert wire["ts-direct"]["protocol"] == "WireGuard" and "of them WireGuard" in wire["ts-direct"]["detail"]
    assert wire["ts-relayed"]["protocol"] == "TLS" and "tcp port 8443" in wire["ts-relayed"]["detail"]
    assert run_daemons("tailscaled", "headscale") == []
    assert machine_places.changed(before) == []  # nothing made in, or written into, the machine's own places


@needs_builds
@pytest.mark.netns
def test_key_and_state_are_private_never_on_a_command_line_and_wiped(testbed):
    """Without a router Headscale runs on the server."""
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources))
    technique = Tailscale(TailscaleParams(), ctx)
    run_dir = ctx.resources.dir
    try:
        tunnel = technique.up("userspace")
        wait_through(testbed.client, tunnel.server_addrs["ipv6"], 10)
        assert ipaddress.ip_address(tunnel.client_addrs["ipv4"]) in ipaddress.ip_network("100.64.0.0/10")
        assert ipaddress.ip_address(tunnel.server_addrs["ipv6"]) in ipaddress.ip_network("fd7a:115c:a1e0::/48")
        assert technique.tunnel.negotiated["control_url"].startswith(f"https://{ctx.underlay['server']['ipv4']}:")
        key_file = run_dir / "tailscale-auth.key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        secrets = [key_file.read_text().strip(), (run_dir / "headscale" / "tls.key").read_text().strip()]
        assert all(stat.S_IMODE((run_dir / d).stat().st_mode) == 0o700
                   for d in ("headscale", "tailscaled-client", "tailscaled-server"))
        for pid in run_daemons("tailscaled", "headscale"):
            argv = Path(f"/proc/{pid}/cmdline").read_text()
            assert not any(secret in argv for secret in secrets)
            if "tailscaled" in argv:  # it looks no host name up: /etc/nsswitch.conf as it sees it
                assert Path(f"/proc/{pid}/root/etc/nsswitch.conf").read_text() == "hosts: files\n"
        for proc in tunnel.procs:
            assert not any(secret in proc.output() for secret in secrets)  # nor in a log
        tunnel.procs[-1].stop()  # the client's tailscaled
        assert "tailscaled exited" in technique.failure()
    finally:
        technique.down()
    assert run_daemons("tailscaled", "headscale") == []
    made = ("tailscale-ca.pem", "tailscale-auth.key", "headscale", "tailscaled-client", "tailscaled-server")
    assert [name for name in made if (run_dir / name).exists()] == []  # (the daemons' logs go with the run directory)
    for host in (testbed.client, testbed.server):
        assert "vpb" + ctx.resources.run_id + "t" not in host.run(["ip", "-o", "link"]).stdout  # the TUN is gone



