"""tunnels = N: strongSwan (kernel-libipsec) with N CHILD SAs under one IKE SA and OpenVPN with N
point-to-point pairs, each tunnel answering over its own inner addresses, rekeyed all at once
(IPsec; WireGuard with no traffic through any tunnel) and leaving nothing behind; and every technique's ceiling refused in one line before a run."""

import pytest

from conftest import assert_refused
from ipsec_helpers import local_bed, skip_without_kernel_esp
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.tools import which
from vpnbench.techniques.base import Ends
from vpnbench.techniques.ipsec import CHILD_SA_CEILING, IPsec, IPsecParams
from vpnbench.techniques.ipsec.strongswan import installed_children, missing_software
from vpnbench.techniques.openvpn import PAIR_CEILING, OpenVPN, OpenVPNParams
from vpnbench.techniques.wireguard import WireGuard, WireGuardParams, latest_handshake
from vpnbench.testbeds.probe import NoProbe

# kernel ESP runs in the TCG-emulated VM, where every swanctl call is slow: fewer children there
IPSEC_TUNNELS, IPSEC_KERNEL_TUNNELS, OPENVPN_TUNNELS, WIREGUARD_TUNNELS = 10, 4, 3, 4


def test_nth_ends_count_on_from_the_first_in_their_own_subnets():
    first = Ends({"ipv4": "10.98.0.1", "ipv6": "fd98::1"}, {"ipv4": "10.98.0.2", "ipv6": "fd98::2"})
    assert first.nth(0) == first
    assert first.nth(1) == Ends({"ipv4": "10.98.0.5", "ipv6": "fd98::11"}, {"ipv4": "10.98.0.6", "ipv6": "fd98::12"})
    last = first.nth(9_999)  # the axis's most: still inside the first tunnel's /16 and /64
    assert last.client["ipv4"] == "10.98.156.61" and last.server["ipv6"] == "fd98::2:70f2"


# One technique of each kind above its ceiling, and the reason it must give
@pytest.mark.parametrize("entry, ceiling, reason", [
    ({"kind": "ipsec", "backend": "userspace"}, CHILD_SA_CEILING, "one CHILD SA per tunnel under one IKE SA"),
    ({"kind": "ipsec", "mode": "transport"}, 1, "transport mode protects the two hosts' own addresses"),
    ({"kind": "ipsec", "mode": "transport", "l2tp": True}, 1, "one PPP session over one transport-mode SA"),
    ({"kind": "ipsec", "implementation": "libreswan"}, 1, "one connection with one subnet per side"),
    ({"kind": "openvpn"}, PAIR_CEILING, "one point-to-point pair per tunnel"),
    ({"kind": "openvpn", "port": 65530}, 6, "each its own server port from 65530 up"),
    ({"kind": "macsec"}, 1, "one Ethernet link"),
    ({"kind": "tinc"}, 1, "one meta connection between two nodes"),
    ({"kind": "nebula"}, 1, "N tunnels would be N nodes"),
    ({"kind": "tailscale"}, 1, "N tunnels would be N nodes"),
    ({"kind": "rosenpass"}, 1, "one WireGuard peer per pair of hosts"),
    ({"kind": "external"}, 1, "one pair of inner addresses"),
])
def test_more_tunnels_than_the_ceiling_is_refused_in_one_line(entry, ceiling, reason):
    data = {"campaign": {"name": "n"}, "technique": [{**entry, "tunnels": sorted({1, ceiling, ceiling + 1})}],
            "measurement": [{"kind": "ping"}]}
    with pytest.raises(UserError) as info:
        campaign_from_dict(data)
    message = str(info.value)
    assert message.startswith(f"technique[1].tunnels: {ceiling + 1} is more than {entry['kind']} allows here (")
    assert reason in message and message.endswith(f"allowed values: 1 to {ceiling}") and "\n" not in message
    data["technique"][0]["tunnels"] = sorted({1, ceiling})  # the ceiling itself is allowed
    assert len(campaign_from_dict(data).techniques) == (1 if ceiling == 1 else 2)


def test_rosenpass_wireguard_table_takes_no_tunnels():
    with pytest.raises(UserError, match=r"technique\[1\]: wireguard.tunnels: rosenpass keys one WireGuard peer"):
        campaign_from_dict({"campaign": {"name": "n"}, "technique": [{"kind": "rosenpass", "wireguard": {"tunnels": 2}}],
                            "measurement": [{"kind": "ping"}]})


def test_cli_refuses_tunnels_above_the_ceiling_before_a_run(tmp_path):
    assert_refused(tmp_path, f'[campaign]\nname = "n"\n[[technique]]\nkind = "ipsec"\ntunnels = {CHILD_SA_CEILING + 1}\n'
                   '[[measurement]]\nkind = "ping"\n',
                   f"technique[1].tunnels: {CHILD_SA_CEILING + 1} is more than ipsec allows here")


@pytest.fixture(scope="module")
def bed():
    """One testbed for both bring-ups."""
    yield from local_bed()


def ping_each(client, tunnel, family: str = "ipv4") -> list[str]:
    """Every tunnel's server address pinged from that tunnel's own client address; those that
    did not answer."""
    return [ends.server[family] for ends in tunnel.every()
            if not client.run(["ping", "-c", "1", "-W", "5", "-I", ends.client[family], ends.server[family]],
                              check=False).ok]


def inner_addresses(host) -> str:
    return host.run(["ip", "-o", "addr", "show"]).stdout


@pytest.mark.netns
@pytest.mark.skipif(missing_software(NoProbe()) is not None, reason=str(missing_software(NoProbe())))
@pytest.mark.parametrize("backend, count", [("userspace", IPSEC_TUNNELS),
                                            pytest.param("kernel", IPSEC_KERNEL_TUNNELS, marks=pytest.mark.vm)])
def test_strongswan_tunnels_are_child_sas_of_one_ike_sa(bed, backend, count):
    testbed, ctx = bed
    if backend == "kernel":
        skip_without_kernel_esp("kernel IPsec with many CHILD SAs")
    technique = IPsec(IPsecParams(backend=backend, tunnels=count), ctx)
    try:
        tunnel = technique.up(backend)
        assert len(tunnel.every()) == count and tunnel.negotiated["children"] == count
        assert tunnel.negotiated["all_children_s"] >= technique.handshake_s >= 0  # the first child comes first
        assert ping_each(testbed.client, tunnel) == [] and ping_each(testbed.client, tunnel, "ipv6") == []
        sas = technique.daemons["client"].list_sas()
        assert len(sas["list-sa event"]) == 1  # one IKE SA carries them all
        children = installed_children(sas)
        assert len(children) == count
        # each tunnel's own selectors, and the pings above went through each one's own SA
        assert {child["local-ts"][0] for child in children.values()} == \
            {f"{ends.client['ipv4']}/32" for ends in tunnel.every()}
        assert all(int(child["packets-in"]) > 0 for child in children.values()), children
        rekeyed = technique.rekey()
        assert rekeyed["tunnels_rekeyed"] == count and rekeyed["spi_in_after"] != rekeyed["spi_in_before"]
        after = installed_children(technique.daemons["client"].list_sas())
        assert len(after) == count
        assert not {c["spi-in"] for c in after.values()} & {c["spi-in"] for c in children.values()}
        assert ping_each(testbed.client, tunnel) == []  # through the new SAs
        charons = [daemon.proc for daemon in technique.daemons.values()]
    finally:
        technique.down()
    assert not any(proc.alive() for proc in charons)
    assert not list(ctx.resources.dir.glob("swan-*"))  # configs and the PSK wiped
    for host in (testbed.client, testbed.server):
        assert "10.98." not in inner_addresses(host) and "fd98:" not in inner_addresses(host)
        assert "ipsec0" not in host.run(["ip", "link"]).stdout
        assert host.run(["ip", "xfrm", "state"], check=False).stdout.strip() == ""  # the kernel's SAs (its data path)


@pytest.mark.netns
def test_wireguard_rekeys_every_tunnel_though_none_carries_traffic(bed):
    # A re-added peer starts its handshake with its next packet; the rekey measurement's one flow
    # crosses the first tunnel only, and this test sends nothing: the rekey itself must start each.
    testbed, ctx = bed
    technique = WireGuard(WireGuardParams(backend="userspace", tunnels=WIREGUARD_TUNNELS), ctx)
    try:
        tunnel = technique.up("userspace")
        rekeyed = technique.rekey()  # raised "4 of 4 tunnels had no new WireGuard handshake" before
        assert rekeyed["tunnels_rekeyed"] == WIREGUARD_TUNNELS
        # setconf replaced each peer (its handshake time back to 0): a time now is a new handshake
        assert all(latest_handshake(testbed.client, iface) > 0 for iface in technique.client_ifaces)
        assert ping_each(testbed.client, tunnel) == []
        procs = list(tunnel.procs)
    finally:
        technique.down()
    assert not any(proc.alive() for proc in procs)


@pytest.mark.netns
@pytest.mark.skipif(not which("openvpn"), reason="openvpn not installed (apt-get install openvpn)")
def test_openvpn_tunnels_are_point_to_point_pairs(bed):
    testbed, ctx = bed
    technique = OpenVPN(OpenVPNParams(backend="userspace", tunnels=OPENVPN_TUNNELS), ctx)
    try:
        tunnel = technique.up("userspace")
        assert len(tunnel.procs) == 2 * OPENVPN_TUNNELS
        assert tunnel.wire_filter == f"udp portrange 1194-{1194 + OPENVPN_TUNNELS - 1}"
        assert ping_each(testbed.client, tunnel) == [] and ping_each(testbed.client, tunnel, "ipv6") == []
        # each tunnel's addresses on its own device, on both hosts
        for index, ends in enumerate(tunnel.every()):
            for role, host in (("client", testbed.client), ("server", testbed.server)):
                shown = host.run(["ip", "-o", "addr", "show", "dev", technique._iface(role, index)]).stdout
                assert getattr(ends, role)["ipv4"] in shown and getattr(ends, role)["ipv6"] in shown
        procs = list(tunnel.procs)
    finally:
        technique.down()
    assert not any(proc.alive() for proc in procs)
    assert not list(ctx.resources.dir.glob("ovpn-*"))  # keys and certificates wiped
    for host in (testbed.client, testbed.server):
        assert "10.98." not in inner_addresses(host)
