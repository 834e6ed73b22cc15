"""L2TP/IPsec (`l2tp = true`) as S4 ran it: xl2tpd + pppd over a transport-mode SA that
protects UDP 1701. Needs PPP and ESP in the kernel: it runs in the kernel VM
(make test-kernel); on a kernel without them the refusal must say why."""

import pytest

from bounds import assert_tcp_measured
from conftest import TCP_AND_PING, run_campaign
from ipsec_helpers import skip_without_kernel_esp
from vpnbench.hosts.resources import RunResources
from vpnbench.techniques.ipsec import IPsec, IPsecParams, l2tp
from vpnbench.techniques.ipsec.libreswan import Conn, ipsec_conf
from vpnbench.testbeds.probe import LocalKernelProbe

CAMPAIGN = """
[campaign]
name = "l2tp"
[[technique]]
kind = "ipsec"
label = "l2tp-libreswan"
implementation = "libreswan"
cipher = "aes128-sha256"
mode = "transport"
l2tp = true
[[technique]]
kind = "ipsec"
label = "l2tp-strongswan"
cipher = "aes256gcm16"
mode = "transport"
auth = "pubkey"
l2tp = true
""" + TCP_AND_PING


def kernel_has_ppp() -> bool:
    with RunResources() as resources:
        return LocalKernelProbe(resources).accepts(l2tp.PROBE)


def test_l2tp_needs_transport_mode_and_ipv4():
    with pytest.raises(ValueError, match="l2tp: L2TP/IPsec runs over transport mode"):
        IPsecParams(l2tp=True)
    with pytest.raises(ValueError, match="l2tp: xl2tpd runs over an IPv4 underlay only"):
        IPsecParams(l2tp=True, mode="transport", family="ipv6")


def test_libreswan_l2tp_conf_protects_only_udp_1701():
    params = IPsecParams(implementation="libreswan", mode="transport", l2tp=True)
    conf = ipsec_conf(Conn("client", "server", "10.0.0.1", "10.0.1.1", None, None, l2tp.PORT), params,
                      {"lines": "  authby=secret"})
    assert {"leftprotoport=17/1701", "rightprotoport=17/1701", "type=transport"} <= set(conf.split())


def test_ppp_options_authenticate_the_user_on_the_server_only():
    server, client = l2tp.ppp_options("server").split("\n"), l2tp.ppp_options("client").split("\n")
    assert {"auth", "require-mschap-v2", "refuse-pap", "mtu 1280"} <= set(server)
    assert {"noauth", f"name {l2tp.USER}", "mtu 1280"} <= set(client)
    assert "auth" not in client
    assert "lns = 10.0.1.1" in l2tp.lac_conf("10.0.1.1").splitlines()


@pytest.mark.netns
def test_l2tp_without_ppp_is_refused_with_the_kernel_reason():
    if kernel_has_ppp():
        pytest.skip("this kernel has PPP: L2TP/IPsec runs here (see the campaign test)")
    with RunResources() as resources:
        for implementation in ("strongswan", "libreswan"):
            params = IPsecParams(implementation=implementation, mode="transport", l2tp=True)
            with pytest.raises(ValueError, match="L2TP/IPsec is not available on this kernel \\(no PPP"):
                IPsec.resolve_backend(params, LocalKernelProbe(resources))


@pytest.mark.netns
@pytest.mark.vm
def test_l2tp_ipsec_campaign(tmp_path, clean_machine):
    skip_without_kernel_esp("L2TP/IPsec")
    if not kernel_has_ppp():
        pytest.skip("L2TP/IPsec runs in the kernel VM (make test-kernel): this kernel has no PPP")
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert len(cells) == 4
    for cell in cells:
        assert cell["status"] == "ok", (cell["technique"], cell["error"])
        assert cell["wire_check"] == "encrypted"
        negotiated = cell["negotiated"]
        assert negotiated["l2tp"]["server"] == l2tp.INNER["server"]
        assert negotiated["child"]["mode"] == "TRANSPORT"
        assert cell["metrics"]["setup_time_s"] > 0
    by = {c["technique"]: c for c in cells if c["measurement"] == "tcp"}
    assert by["l2tp-libreswan"]["negotiated"]["implementation"] == "libreswan"
    # charon reads back selectors limited to L2TP's port (1701, "l2f" in /etc/services)
    selectors = " ".join(by["l2tp-strongswan"]["negotiated"]["child"]["local-ts"])
    assert "[udp/1701]" in selectors or "[udp/l2f]" in selectors, selectors
    for cell in by.values():
        assert_tcp_measured(cell)
    print({name: (cell["metrics"]["setup_time_s"], cell["metrics"]["throughput_bps"]) for name, cell in by.items()})
