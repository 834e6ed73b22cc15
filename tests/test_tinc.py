"""tinc 1.0: validation, its packet arithmetic, real cells in router and switch mode, key hygiene."""

import stat

import pytest

import machine_places
from bounds import assert_tcp_measured
from conftest import TCP_UDP_PING, run_campaign, run_cli
from timing import SLOWNESS
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.tools import which
from vpnbench.run.bringup import SETUP_TIMEOUT, wait_through
from vpnbench.techniques import expect
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.tinc import Tinc, TincParams, wire_filter
from vpnbench.techniques.wirecheck import check_wire
from vpnbench.testbeds.probe import LocalKernelProbe

needs_tinc = pytest.mark.skipif(not which("tincd"), reason="tincd not installed (apt-get install tinc)")


def campaign(techniques: list[dict]) -> dict:
    return {"campaign": {"name": "tinc"}, "technique": techniques,
            "measurement": [{"kind": "ping", "count": 5, "interval": "0.05s"}]}


@pytest.mark.parametrize("entry, expected", [
    ({"cipher": "bf-cbc"}, "technique[1].cipher: 'bf-cbc' is not allowed; allowed values: 'aes-256-cbc', "
                           "'aes-128-cbc', 'camellia-256-cbc'"),
    ({"cipher": "chacha20"}, "technique[1].cipher: 'chacha20' is not allowed"),
    ({"mode": "hub"}, "technique[1].mode: 'hub' is not allowed; allowed values: 'router', 'switch'"),
    ({"digest": "md5"}, "technique[1].digest: 'md5' is not allowed; allowed values: 'sha256', 'sha1'"),
    ({"digest": "sha1", "mac_length": 32}, "technique[1].mac_length: 32 is longer than sha1's 20 bytes; "
                                           "allowed values: 4-20"),
    ({"mac_length": 0}, "technique[1].mac_length:"),
    ({"compression": 9}, "technique[1].compression: unknown key"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    with pytest.raises(UserError) as info:
        campaign_from_dict(campaign([{"kind": "tinc", **entry}]))
    message = str(info.value)
    assert expected in message and "\n" not in message, message


def test_bad_input_exits_2_before_anything_is_touched(tmp_path):
    (tmp_path / "c.toml").write_text('[[technique]]\nkind = "tinc"\nmode = "hub"\n[[measurement]]\nkind = "ping"\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2
    assert result.stderr.strip() == ("vpnbench: error: technique[1].mode: 'hub' is not allowed; "
                                     "allowed values: 'router', 'switch'")
    assert not (tmp_path / "c.db").exists()


def test_mtu_arithmetic_is_tinc_1_0s_packet():
    """IP + UDP 8 + CBC(seqno 4 + Ethernet 14 + packet, PKCS#7-padded to 16) + MAC. Over a
    1500-byte IPv4 underlay: 28 + pad16(19 + 1437) = 1484, + MAC 16 = 1500, and one byte more
    needs another block; tinc 1.0.36 itself answered a larger DF ping "Frag needed (mtu = 1437)"."""
    assert expect({"kind": "tinc", "mac_length": 16}, 1500).protocol_mtu == 1437
    assert expect({"kind": "tinc"}, 1500).protocol_mtu == 1437  # MAC 4: 1484 + 4 still fits one packet
    # IPv6: 20 more header bytes leave 1436 for the blocks: 89 whole ones, 19 + 1405 bytes
    assert expect({"kind": "tinc", "family": "ipv6", "mac_length": 16}, 1500).protocol_mtu == 1405
    assert expect({"kind": "tinc", "mac_length": 32}, 1500).protocol_mtu == 1437 - 16  # a MAC over a block's slack
    assert expect({"kind": "tinc", "mac_length": 16}, 1500).overhead == 63


def test_wire_filter_recognises_the_packet_layout():
    assert wire_filter(655, "ipv4", 4) == ("(udp and port 655 and (udp[4:2] - 12) % 16 = 0 and udp[4:2] >= 28) "
                                           "or tcp port 655")
    assert "ip6[44:2]" in wire_filter(655, "ipv6", 16)  # libpcap has no udp[] over IPv6


CELLS = """
[campaign]
name = "tinc"
[[technique]]
kind = "tinc"
label = "router"
[[technique]]
kind = "tinc"
label = "switch-v6"
mode = "switch"
family = "ipv6"
cipher = "aes-128-cbc"
digest = "sha512"
mac_length = 16
port = 6655
""" + TCP_UDP_PING


@needs_tinc
@pytest.mark.netns
def test_router_and_switch_mode_carry_tcp_udp_ping_with_the_wire_proof(tmp_path, clean_machine):
    before = machine_places.snapshot()
    _, cells = run_campaign(tmp_path, CELLS)
    assert len(cells) == 6
    for cell in cells:
        label, negotiated = cell["technique"], cell["negotiated"]
        assert cell["status"] == "ok", (label, cell["error"])
        assert cell["wire_check"] == "encrypted", label
        assert negotiated["version"].startswith("1.0."), negotiated
        assert negotiated["mode"] == cell["technique_params"]["mode"]
        assert negotiated["device"] == {"router": "tun", "switch": "tap"}[negotiated["mode"]]
        assert negotiated["cipher"] == cell["technique_params"]["cipher"]
        assert 0 < cell["metrics"]["setup_time_s"] < SETUP_TIMEOUT * SLOWNESS
        assert all(cell["hosts"][role]["procs_cpu_pct"].get("tincd") is not None for role in ("client", "server"))
        if cell["measurement"] == "tcp":
            assert_tcp_measured(cell)
        if cell["measurement"] == "udp":
            assert cell["metrics"]["received_packets"] > 0, label
        if cell["measurement"] == "ping":
            assert cell["metrics"]["loss_pct"] < 50, label
    assert machine_places.changed(before) == []  # nothing made in, or written into, the machine's own places


@needs_tinc
@pytest.mark.netns
def test_keys_are_made_on_their_host_private_never_in_argv_or_logs_and_wiped(testbed):
    ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources,
                           LocalKernelProbe(testbed.resources))
    technique = Tinc(TincParams(mode="switch"), ctx)
    net_dirs = [ctx.resources.path("tinc-client"), ctx.resources.path("tinc-server")]
    try:
        tunnel = technique.up("userspace")
        assert technique.handshake_s is not None and technique.handshake_s > 0
        wait_through(testbed.client, tunnel.server_addrs["ipv6"], 10)
        proof = check_wire(tunnel, testbed.client, testbed.capture_points(tunnel.capture_near), ctx.resources)
        assert proof.verdict == "encrypted" and proof.protocol_packets > 0, proof
        assert proof.protocol == "tinc 1.0" and proof.detail.endswith("of them tinc 1.0"), proof.detail
        for net_dir in net_dirs:
            assert stat.S_IMODE(net_dir.stat().st_mode) == 0o700
            key = net_dir / "rsa_key.priv"
            assert stat.S_IMODE(key.stat().st_mode) == 0o600
            assert "PRIVATE KEY" in key.read_text()
            assert not [p for p in net_dir.iterdir() if p.name.startswith("tinc-")]  # no tinc-up/down script
        private = {p.read_text().strip() for p in (d / "rsa_key.priv" for d in net_dirs)}
        assert len(private) == 2  # each host its own
        for proc in tunnel.procs:
            argv = open(f"/proc/{proc.pid}/cmdline").read().split("\0")
            assert argv[0] == "tincd" and "-D" in argv and not any("PRIVATE" in arg for arg in argv)
            assert not any(key in proc.output() for key in private)
        tunnel.procs[1].stop()
        assert "tincd exited" in technique.failure()
    finally:
        technique.down()
    assert not any(d.exists() for d in net_dirs)
