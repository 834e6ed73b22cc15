"""IPsec with Libreswan (pluto per host, kernel xfrm): PSK and raw RSA keys over IPv4 in the
kernel VM (make test-kernel); validation, proposal translation and doctor rows natively."""

import pytest

from conftest import TCP_AND_PING, run_campaign
from ipsec_helpers import KERNEL_VM_CAMPAIGN_TIMEOUT, assert_refused_before_run, skip_without_kernel_esp
from vpnbench.campaign.spec import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.hosts.resources import RunResources
from vpnbench.techniques.ipsec import IPsec, IPsecParams, capabilities
from vpnbench.techniques.ipsec.libreswan import ike_proposal, missing_software, negotiated
from vpnbench.testbeds.probe import LocalKernelProbe, NoProbe

needs_libreswan = pytest.mark.skipif(missing_software(NoProbe()) is not None, reason=str(missing_software(NoProbe())))

CAMPAIGN = """
[campaign]
name = "libreswan"
[[technique]]
kind = "ipsec"
label = "lsw-psk-ppk"
implementation = "libreswan"
cipher = "aes256gcm16"
ppk = true
[[technique]]
kind = "ipsec"
label = "lsw-pubkey"
implementation = "libreswan"
backend = "kernel"
cipher = "aes256gcm16"
auth = "pubkey"
[[technique]]
kind = "ipsec"
label = "lsw-null-transport"
implementation = "libreswan"
cipher = "null-sha256"
mode = "transport"
[[technique]]
kind = "ipsec"
label = "lsw-ipcomp-transport"
implementation = "libreswan"
cipher = "aes128-sha256"
mode = "transport"
ipcomp = true
""" + TCP_AND_PING


@pytest.fixture(scope="module")
def kernel_esp():
    skip_without_kernel_esp("Libreswan (kernel xfrm only)")


@pytest.mark.netns
@pytest.mark.vm
@needs_libreswan
def test_libreswan_kernel_campaign(tmp_path, kernel_esp, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN, timeout=KERNEL_VM_CAMPAIGN_TIMEOUT)
    assert len(cells) == 8
    for cell in cells:
        assert cell["status"] == "ok", (cell["technique"], cell["error"])
        assert cell["technique_params"]["backend"] == "kernel"  # auto: Libreswan has only the kernel one
        assert cell["metrics"]["setup_time_s"] > 0
        got = cell["negotiated"]
        assert got["implementation"] == "libreswan"
        assert got["ike"]["algorithm"].startswith("AES_GCM_16_256"), got  # the default ike, translated
        assert int(got["child"]["spi-in"], 16) > 0 and int(got["child"]["spi-out"], 16) > 0
        assert "encap" not in got["child"]  # plain ESP, as asked (encapsulation=no)
    by = {c["technique"]: c for c in cells if c["measurement"] == "tcp"}
    for label in ("lsw-psk-ppk", "lsw-pubkey"):
        assert by[label]["negotiated"]["child"]["algorithm"].startswith("AES_GCM_16_256")
        assert by[label]["negotiated"]["child"]["mode"] == "TUNNEL"
        assert by[label]["wire_check"] == "encrypted", by[label]
        assert by[label]["metrics"]["throughput_bps"] > 0
    assert by["lsw-psk-ppk"]["negotiated"]["ike"]["ppk"] == "yes"  # ppk=insist: up only with the PPK
    assert "ppk" not in by["lsw-pubkey"]["negotiated"]["ike"]
    null = by["lsw-null-transport"]
    assert null["negotiated"]["child"]["algorithm"] == "NULL_000-HMAC_SHA2_256_128"
    assert null["negotiated"]["child"]["mode"] == "TRANSPORT"
    assert null["wire_check"] == "integrity-only"  # payload visible (compression would hide it)
    ipcomp = by["lsw-ipcomp-transport"]
    assert ipcomp["negotiated"]["child"]["algorithm"] == "AES_CBC_128-HMAC_SHA2_256_128"
    assert ipcomp["negotiated"]["child"].get("cpi-in") and ipcomp["wire_check"] == "encrypted"


# Natively: validation and translation, before any host is touched.

def validate(**technique):
    return campaign_from_dict({"technique": [{"kind": "ipsec", "implementation": "libreswan", **technique}],
                               "measurement": [{"kind": "ping"}]})


@pytest.mark.parametrize("technique, message", [
    ({"backend": "userspace"}, "technique[1]: backend: libreswan has no userspace data path; allowed values: auto, kernel"),
    ({"ike": "aes128-md5-modp2048"}, "technique[1]: ike: 'md5' in 'aes128-md5-modp2048' has no Libreswan equivalent"),
    ({"ike": "aes128-x25519"}, "needs an encryption, a PRF/integrity and a DH group"),
])
def test_bad_libreswan_parameters_are_refused(technique, message):
    with pytest.raises(UserError) as err:
        validate(**technique)
    assert message in str(err.value)


def test_ike_proposal_in_libreswan_syntax():
    assert ike_proposal("aes256gcm16-prfsha256-x25519") == "aes_gcm_c256-sha2_256-dh31"
    assert ike_proposal("aes128gcm8-prfsha384-ecp256") == "aes_gcm_a128-sha2_384-dh19"
    assert ike_proposal("aes128-sha256-modp2048") == "aes128-sha2_256-modp2048"
    assert ike_proposal("3des-sha1-prfsha256-modp3072") == "3des-sha2_256-modp3072"  # PRF wins over integrity


@pytest.mark.netns
@needs_libreswan
@pytest.mark.parametrize("technique, message", [
    ({"ike": "aes128-sha256-modp1024"}, "Libreswan 4.10 refuses ike=aes128-sha2_256-modp1024: IKE DH algorithm 'modp1024' is not supported"),
    ({"ke": "mlkem768"}, "Libreswan 4.10 has no post-quantum"),
])
def test_impossible_libreswan_combinations_fail_before_the_run(technique, message):
    assert_refused_before_run(validate(**technique), message)


@pytest.mark.netns
@needs_libreswan
def test_doctor_rows_for_libreswan():
    with RunResources() as resources:
        probe = LocalKernelProbe(resources)
        rows = [row for row in capabilities(probe) if row["backend"].startswith("libreswan")]
        kernel_esp = IPsec.backends(probe)[0].available
    userspace = [row for row in rows if row["backend"] == "libreswan userspace"]
    assert userspace == [{"backend": "libreswan userspace", "feature": "all", "available": False,
                          "reason": "libreswan has no userspace data path (kernel xfrm only)"}]
    gcm = next(row for row in rows if row.get("cipher") == "aes256gcm16")
    assert gcm["available"] == kernel_esp
    if not kernel_esp:
        assert gcm["reason"] == "the kernel has no ESP (xfrm) data path"


def test_parse_whack_status():
    status = """000 "vpb":   IKEv2 algorithm newest: AES_GCM_16_256-HMAC_SHA2_256-DH31
000 "vpb":   ESP algorithm newest: AES_GCM_16_256-NONE; pfsgroup=<Phase1>
000 #1: "vpb":500 STATE_V2_ESTABLISHED_IKE_SA (established IKE SA); REKEY in 28744s; newest; idle;
000 #2: "vpb":500 STATE_V2_ESTABLISHED_CHILD_SA (established Child SA); newest; eroute owner; IKE SA #1; idle;
000 #2: "vpb" esp.ee2b7a7f@10.201.2.2 esp.1fd1e2b5@10.201.1.2 tun.0@10.201.2.2 tun.0@10.201.1.2 Traffic: ESPin=0B
"""
    got = negotiated(status)
    assert got["ike"] == {"algorithm": "AES_GCM_16_256-HMAC_SHA2_256-DH31", "state": "ESTABLISHED", "version": "2"}
    assert got["child"] == {"algorithm": "AES_GCM_16_256-NONE", "protocol": "ESP", "spi-out": "ee2b7a7f",
                            "spi-in": "1fd1e2b5", "mode": "TUNNEL"}
    assert negotiated("000 no connections") == {}
    with_ppk = status + '000 "vpb":   policy: IKEv2+PSK+ENCRYPT+TUNNEL+PFS+PPK_ALLOW+PPK_INSIST+ESN_NO;\n'
    assert negotiated(with_ppk)["ike"]["ppk"] == "yes"


def test_ipsec_conf_asks_for_the_cipher_and_keeps_secrets_out():
    from vpnbench.techniques.ipsec.libreswan import Conn, ipsec_conf
    params = IPsecParams(implementation="libreswan", cipher="null-sha256", mode="transport", ipcomp=True)
    conf = ipsec_conf(Conn("client", "server", "10.0.0.1", "10.0.1.1", None, None), params, {"lines": "  authby=secret"})
    lines = set(conf.split())
    assert {"esp=null-sha2_256", "ike=aes_gcm_c256-sha2_256-dh31", "type=transport", "compress=yes",
            "authby=secret", "leftid=@client.vpnbench", "rightid=@server.vpnbench", "encapsulation=no"} <= lines
    assert "leftsubnet" not in conf and "PSK" not in conf
    tunnel = ipsec_conf(Conn("server", "client", "10.0.1.1", "10.0.0.1", "10.98.0.2/32", "10.98.0.1/32"),
                        IPsecParams(implementation="libreswan"), {"lines": "  authby=secret"})
    assert {"leftsubnet=10.98.0.2/32", "rightsubnet=10.98.0.1/32", "leftsourceip=10.98.0.2", "type=tunnel"} <= set(tunnel.split())
