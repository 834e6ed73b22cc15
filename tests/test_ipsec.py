"""IPsec (strongSwan) on real namespaces with the userspace data path (kernel-libipsec), every
cipher of the studies; the runner path end to end; and validation of bad proposals."""

import json
import stat

import pytest

from conftest import TCP_AND_PING, run_cli
from ipsec_helpers import assert_refused_before_run, local_bed
from timing import SLOWNESS
from vpnbench.campaign.spec import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.hosts.resources import RunResources
from vpnbench.measure.base import MeasureContext, PortAllocator
from vpnbench.measure.ping import Ping, PingParams
from vpnbench.measure.tcp import Tcp, TcpParams
from vpnbench.run.bringup import SETUP_TIMEOUT, wait_through
from vpnbench.techniques.ipsec import IPsec, IPsecParams
from vpnbench.techniques.ipsec.proposals import CIPHERS
from vpnbench.techniques.ipsec.strongswan import missing_software, negotiated, parse_vici_raw
from vpnbench.techniques.wirecheck import check_wire
from vpnbench.testbeds.probe import LocalKernelProbe, NoProbe

# What charon must report for each cipher: (ESP encryption, key size, integrity)
EXPECTED = {
    "aes128gcm8": ("AES_GCM_8", "128", None), "aes128gcm16": ("AES_GCM_16", "128", None),
    "aes256gcm8": ("AES_GCM_8", "256", None), "aes256gcm16": ("AES_GCM_16", "256", None),
    "chacha20poly1305": ("CHACHA20_POLY1305", None, None),
    "aes128-sha256": ("AES_CBC", "128", "HMAC_SHA2_256_128"),
    "aes256-sha256": ("AES_CBC", "256", "HMAC_SHA2_256_128"),
    "aes256-sha384": ("AES_CBC", "256", "HMAC_SHA2_384_192"),
    "aes256-sha512": ("AES_CBC", "256", "HMAC_SHA2_512_256"),
    "3des-sha256": ("3DES_CBC", None, "HMAC_SHA2_256_128"),
    "null-sha1": ("NULL", None, "HMAC_SHA1_96"), "null-sha256": ("NULL", None, "HMAC_SHA2_256_128"),
}

needs_strongswan = pytest.mark.skipif(missing_software(NoProbe()) is not None, reason=str(missing_software(NoProbe())))


@pytest.fixture(scope="class")
def bed():
    """One testbed for every case of TestUserspace (each case brings its own tunnel up and down)."""
    yield from local_bed()


def bring_up(bed, **params):
    testbed, ctx = bed
    technique = IPsec(IPsecParams(backend="userspace", **params), ctx)
    tunnel = technique.up("userspace")
    wait_through(testbed.client, tunnel.server_addrs[tunnel.family], 10)
    return technique, tunnel


def measure(bed, tunnel, family="ipv4"):
    testbed, _ = bed
    ctx = MeasureContext(testbed.client, testbed.server, tunnel, PortAllocator())
    ping = Ping(PingParams(count=3, interval=0.05, family=family)).run(ctx).metrics
    tcp = Tcp(TcpParams(duration=1, family=family)).run(ctx).metrics
    return ping, tcp


@pytest.mark.netns
@needs_strongswan
class TestUserspace:
    """Every case brings its own tunnel up and down on one shared testbed."""

    @pytest.mark.parametrize("cipher", list(CIPHERS))
    def test_userspace_cipher_sweep(self, bed, cipher):
        testbed, ctx = bed
        technique, tunnel = bring_up(bed, cipher=cipher)
        try:
            child = tunnel.negotiated["child"]
            encr, keysize, integ = EXPECTED[cipher]
            assert (child["mode"], child["protocol"], child["encap"]) == ("TUNNEL", "ESP", "yes")
            assert child["encr-alg"] == encr and child.get("encr-keysize") == keysize and child.get("integ-alg") == integ
            assert len(child["spi-in"]) == 8 and child["spi-in"] != child["spi-out"]
            verdict = check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources)
            if CIPHERS[cipher].encrypts:
                assert verdict.verdict == "encrypted" and verdict.protocol_packets > 0
            else:
                assert verdict.verdict == "integrity-only" and verdict.marker_seen and tunnel.protection == "integrity-only"
            ping, tcp = measure(bed, tunnel)
            assert ping["loss_pct"] == 0 and tcp["throughput_bps"] > 0 and tcp["bytes_received"] > 0
            assert technique.failure() is None
        finally:
            technique.down()
        assert not list(ctx.resources.dir.glob("swan-*"))  # configs, PSK and keys wiped


    def test_ipv6_underlay_pubkey_ppk_inner_ipv6(self, bed):
        testbed, ctx = bed
        technique, tunnel = bring_up(bed, cipher="aes256gcm16", family="ipv6", auth="pubkey", ppk=True)
        try:
            keys = list(ctx.resources.dir.glob("swan-*/swanctl/private/*.pem"))
            assert len(keys) == 2 and all(stat.S_IMODE(k.stat().st_mode) == 0o600 for k in keys)
            ike = tunnel.negotiated["ike"]
            assert ike["local-host"].startswith("fd00:") and ike["ppk"] == "yes"
            assert check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources, "ipv6").verdict == "encrypted"
            ping, tcp = measure(bed, tunnel, "ipv6")
            assert ping["loss_pct"] == 0 and tcp["throughput_bps"] > 0 and tcp["bytes_received"] > 0
        finally:
            technique.down()


    def test_dead_charon_is_reported_and_a_new_bring_up_works(self, bed):
        technique, tunnel = bring_up(bed)
        try:
            next(p for p in tunnel.procs if p.name == "charon-server").stop()
            reason = technique.failure()
            assert reason.startswith("charon-server exited:") and "charon" in reason.lower()
        finally:
            technique.down()
        technique, tunnel = bring_up(bed)  # inner addresses and routes were cleaned: it comes up again
        technique.down()


@pytest.mark.netns
@needs_strongswan
def test_campaign_stores_negotiated_and_setup_time(tmp_path, clean_machine):
    (tmp_path / "c.toml").write_text("""
[campaign]
name = "ipsec"
[[technique]]
kind = "ipsec"
cipher = "aes128-sha256"
ike = "aes128-sha256-prfsha256-modp1024"
""" + TCP_AND_PING)
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 0, result.stdout + result.stderr
    warning = "vpnbench: warning: ike proposal 'aes128-sha256-prfsha256-modp1024' uses modp1024 "
    assert warning in result.stderr and "weak; kept as asked" in result.stderr
    assert "site-packages" not in result.stderr  # one line, not a trace into pydantic
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "c.json"))
    cells = json.loads((tmp_path / "c.json").read_text())
    assert len(cells) == 2
    for cell in cells:
        assert cell["status"] == "ok", cell["error"]
        assert cell["wire_check"] == "encrypted"
        assert cell["technique_params"]["backend"] in ("kernel", "userspace")
        assert 0 < cell["metrics"]["setup_time_s"] < SETUP_TIMEOUT * SLOWNESS  # the run's own bring-up deadline
        assert cell["negotiated"]["ike"]["dh-group"] == "MODP_1024"
        assert cell["negotiated"]["child"]["integ-alg"] == "HMAC_SHA2_256_128"
        assert "modp1024" in cell["negotiated"]["warnings"][0]


# Validation: before any host is touched, one line naming the field and what is allowed.

def validate(**technique):
    return campaign_from_dict({"technique": [{"kind": "ipsec", **technique}], "measurement": [{"kind": "ping"}]})


@pytest.mark.parametrize("technique, message", [
    ({"cipher": "aes-gcm"}, "technique[1].cipher: 'aes-gcm' is not allowed; allowed values: 'aes128gcm8'"),
    ({"ike": "aes256 -sha256"}, "technique[1].ike: String should match pattern"),
    ({"mode": "beet"}, "technique[1].mode: 'beet' is not allowed; allowed values: 'tunnel', 'transport'"),
    ({"auth": "eap"}, "technique[1].auth: 'eap' is not allowed"),
    ({"l2tp": True}, "technique[1]: l2tp: L2TP/IPsec runs over transport mode"),
    ({"implementation": "libreswan", "backend": "userspace"}, "libreswan has no userspace data path"),
    ({"ke": "kyber"}, "technique[1].ke: 'kyber' is not allowed; allowed values: 'none', 'mlkem512'"),
    ({"esp": "aes128"}, "technique[1].esp: unknown key; allowed keys: kind, label, congestion_control, tunnels, implementation"),
])
def test_bad_parameters_are_refused(technique, message):
    with pytest.raises(UserError) as err:
        validate(**technique)
    assert message in str(err.value)


@pytest.mark.netns
@needs_strongswan
@pytest.mark.parametrize("technique, message", [
    ({"backend": "userspace", "mode": "transport"}, "does tunnel mode only"),
    ({"backend": "userspace", "ipcomp": True}, "has no IPComp"),
    ({"ke": "mlkem768"}, "needs strongSwan 6.0 or later"),
])
def test_impossible_combinations_fail_before_the_run(technique, message):
    assert_refused_before_run(validate(**technique), message)


@pytest.mark.netns
def test_kernel_backend_refused_without_kernel_esp():
    with RunResources() as resources:
        probe = LocalKernelProbe(resources)
        if probe.accepts([["ip", "xfrm", "state", "list"]]) and IPsec.backends(probe)[0].available:
            pytest.skip("this kernel has ESP; the refusal path cannot be shown here")
        with pytest.raises(ValueError, match="no ESP"):
            IPsec.resolve_backend(IPsecParams(backend="kernel"), probe)
        assert IPsec.resolve_backend(IPsecParams(), probe) == "userspace"  # auto falls back


def test_parse_swanctl_raw():
    raw = ("list-sa event {vpb {uniqueid=1 version=2 state=ESTABLISHED local-host=10.0.0.1 initiator-spi=7207 "
           "responder-spi=6939 encr-alg=AES_GCM_16 encr-keysize=256 dh-group=CURVE_25519 empty= child-sas "
           "{net-1 {name=net mode=TUNNEL protocol=ESP encap=yes spi-in=41caf5ee spi-out=6a22a0b0 "
           "encr-alg=AES_GCM_16 local-ts=[10.98.0.1/32 fd98::1/128] remote-ts=[10.98.0.2/32]}}}}\n"
           "list-sas reply {}\n")
    parsed = parse_vici_raw(raw)
    assert parsed["list-sas reply"] == [{}]
    got = negotiated(parsed)
    assert got["ike"]["encr-keysize"] == "256" and got["ike"]["initiator-spi"] == "7207"
    assert got["child"]["local-ts"] == ["10.98.0.1/32", "fd98::1/128"] and got["child"]["spi-out"] == "6a22a0b0"
    assert negotiated(parse_vici_raw("list-sas reply {}")) == {}
    # selectors with a protocol and port (L2TP/IPsec) carry brackets inside the list
    ports = parse_vici_raw("list-sa event {vpb {child-sas {l2tp {local-ts=[10.0.0.1/32[udp/l2f] "
                           "fd00::1/128[udp/1701]] mode=TRANSPORT}}}}")
    child = ports["list-sa event"][0]["vpb"]["child-sas"]["l2tp"]
    assert child == {"local-ts": ["10.0.0.1/32[udp/l2f]", "fd00::1/128[udp/1701]"], "mode": "TRANSPORT"}


def test_doctor_groups_ipsec_capabilities_by_reason():
    from vpnbench.commands.doctor import ipsec_rows
    rows = [{"backend": "kernel", "cipher": c, "available": False, "reason": "no ESP"} for c in ("a", "b")]
    rows += [{"backend": "userspace", "cipher": "a", "available": True, "reason": ""},
             {"backend": "userspace", "feature": "ipcomp", "available": False, "reason": "no IPComp"}]
    assert ipsec_rows(rows) == [("kernel", "a, b", "no", "no ESP"), ("userspace", "a", "yes", ""),
                                ("userspace", "ipcomp", "no", "no IPComp")]


def test_xfrm_probe_asks_for_the_kernel_algorithms():
    from vpnbench.techniques.ipsec.proposals import xfrm_probe_commands
    null = xfrm_probe_commands(CIPHERS["null-sha256"], "transport", True)
    assert null[0][null[0].index("enc") + 1:null[0].index("enc") + 3] == ["ecb(cipher_null)", ""]
    assert "transport" in null[0] and null[1][-2:] == ["comp", "deflate"]
    gcm = xfrm_probe_commands(CIPHERS["aes256gcm8"], "tunnel", False)[0]
    assert gcm[-4:] == ["aead", "rfc4106(gcm(aes))", "0x" + "00" * 36, "64"]  # 256-bit key + 4-byte salt
