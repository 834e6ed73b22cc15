"""Rosenpass setting WireGuard's pre-shared key: real cells over wireguard-go here (and the kernel
module in the VM), the key on both ends, the key exchange timed, a rekey's new exchange, the
wire proof, validation, and nothing left behind."""

import json
import os
import stat
from pathlib import Path

import pytest

from bounds import assert_tcp_measured
from conftest import TCP_AND_PING, run_campaign, run_cli, run_daemons
from vpnbench.campaign import campaign_from_dict
from vpnbench.campaign.spec import technique_label
from vpnbench.foundation.errors import UserError
from vpnbench.hosts import builds
from vpnbench.run.bringup import wait_through
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.rosenpass import Rosenpass, RosenpassParams, psk_fingerprint
from vpnbench.techniques.wirecheck import check_wire
from vpnbench.techniques.wireguard import WireGuard
from vpnbench.testbeds.probe import LocalKernelProbe

PROGRAM = builds.program("rosenpass", "rosenpass")
needs_rosenpass = pytest.mark.skipif(not Path(PROGRAM).exists(),
                                     reason=builds.missing_reason("rosenpass", None, "this machine"))
MCELIECE_460896_PUBLIC_KEY = 524160  # bytes (liboqs' OQS_KEM_classic_mceliece_460896_length_public_key)

CAMPAIGN = """
[campaign]
name = "rosenpass"
[[technique]]
kind = "rosenpass"
[technique.wireguard]
backend = "userspace"
[[measurement]]
kind = "udp"
rate = "20M"
duration = "1s"
[[measurement]]
kind = "rekey"
duration = "5s"
rekey_every = "1.5s"
[[measurement]]
kind = "setup"
count = 2
""" + TCP_AND_PING


@pytest.mark.parametrize("entry, expected", [
    ({"wireguard": {"psk": True}},
     "technique[1]: wireguard.psk: rosenpass sets the pre-shared key itself; allowed values: false"),
    ({"port": 51820}, "technique[1]: port: 51820 is the WireGuard port (wireguard.port)"),
    ({"port": 7000, "wireguard": {"port": 7000}}, "technique[1]: port: 7000 is the WireGuard port"),
    ({"version": "debian"}, "technique[1].version: rosenpass has no Debian package; give a version such as '0.2.3'"),
    ({"version": "latest!"}, "technique[1].version: 'latest!' is not a version"),
    ({"wireguard": {"backend": "gpu"}},
     "technique[1].wireguard.backend: 'gpu' is not allowed; allowed values: 'auto', 'kernel', 'userspace'"),
    ({"wireguard": {"congestion_control": "bbr"}}, "technique[1]: wireguard.congestion_control: set it on the technique"),
    ({"port": 0}, "technique[1].port:"),
    ({"psk": True}, "technique[1].psk: unknown key; allowed keys: kind, label, congestion_control, tunnels, version, port, wireguard"),
])
def test_bad_input_names_the_field_and_allowed_values(entry, expected):
    with pytest.raises(UserError) as info:
        campaign_from_dict({"technique": [{"kind": "rosenpass", **entry}], "measurement": [{"kind": "ping"}]})
    assert str(info.value).startswith(expected), str(info.value)
    assert "\n" not in str(info.value)


def test_bad_input_exits_2_before_anything_is_touched(tmp_path):
    (tmp_path / "c.toml").write_text('[[technique]]\nkind = "rosenpass"\n[technique.wireguard]\npsk = true\n'
                                     '[[measurement]]\nkind = "ping"\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(
        "technique[1]: wireguard.psk: rosenpass sets the pre-shared key itself; allowed values: false")
    assert not (tmp_path / "c.db").exists()


def test_label_names_the_wireguard_settings_and_mtu_is_wireguards():
    params = RosenpassParams(port=9000, wireguard={"backend": "userspace", "mtu": 1380})
    assert technique_label(params) == "rosenpass port=9000 wireguard.backend=userspace wireguard.mtu=1380"
    assert technique_label(RosenpassParams()) == "rosenpass"
    settings = params.settings()
    for underlay in (1500, 1400):
        assert Rosenpass.expectation(settings, underlay) == WireGuard.expectation(settings["wireguard"], underlay)


class Lacking:
    """A probe whose hosts have WireGuard (both data paths) but no rosenpass build."""

    def has_command(self, name):
        return True

    def has_link_type(self, kind, on_ethernet=False):
        return True

    def host_lacking(self, path):
        return "server" if "rosenpass" in path else None


def test_the_build_is_asked_of_the_hosts_and_its_absence_named():
    statuses = Rosenpass.backends(Lacking())
    # WireGuard's data paths, each refused for the missing build beneath it
    assert [s.name for s in statuses] == [s.name for s in WireGuard.backends(Lacking())]
    assert len(statuses) >= 2 and not any(s.available for s in statuses)
    assert all("server lacks rosenpass 0.2.3" in s.reason and "doctor --install rosenpass@0.2.3" in s.reason
               for s in statuses)
    with pytest.raises(ValueError, match="server lacks rosenpass 0.2.3"):
        Rosenpass.resolve_backend(RosenpassParams(), Lacking())



@pytest.fixture
def bed(testbed):
    probe = LocalKernelProbe(testbed.resources)
    yield testbed, TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources, probe)


@needs_rosenpass
@pytest.mark.netns
@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_same_psk_on_both_ends_before_the_tunnel_counts_as_up(bed, family):
    testbed, ctx = bed
    technique = Rosenpass(RosenpassParams(wireguard={"backend": "userspace", "family": family}), ctx)
    try:
        tunnel = technique.up("userspace")
        ifaces = technique.wireguard.ifaces
        for role, host in (("client", testbed.client), ("server", testbed.server)):
            assert "preshared key: (hidden)" in host.run(["wg", "show", ifaces[role]]).stdout, role
        client_psk = psk_fingerprint(testbed.client, ifaces["client"])
        assert client_psk is not None and client_psk == psk_fingerprint(testbed.server, ifaces["server"])
        assert technique.handshake_s > 0 and tunnel.negotiated["key_exchange_s"] == technique.handshake_s
        assert tunnel.negotiated["keygen_s"] > 0
        negotiated = tunnel.negotiated
        assert negotiated["implementation"] == "rosenpass" and negotiated["version"] == "0.2.3"
        assert "McEliece 460896" in negotiated["kem"] and "Kyber 512" in negotiated["kem"]
        assert negotiated["wireguard"]["key_exchange"] == "x25519" and negotiated["wireguard_backend"] == "userspace"
        assert negotiated["build"]  # the host's BUILD.json (or why it could not be read)
        keys = sorted(p for p in ctx.resources.dir.iterdir() if p.name.startswith("rosenpass-"))
        assert [p.name for p in keys] == ["rosenpass-client.pk", "rosenpass-client.sk",
                                          "rosenpass-server.pk", "rosenpass-server.sk"]
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in keys)
        assert all(p.stat().st_size == MCELIECE_460896_PUBLIC_KEY for p in keys if p.suffix == ".pk")
        wait_through(testbed.client, tunnel.server_addrs["ipv4"], 10)
        verdict = check_wire(tunnel, testbed.client, testbed.capture_points(), ctx.resources)
        # the filter counts WireGuard transport data (type 4) only: the marker pings crossed as such
        assert verdict.verdict == "encrypted" and verdict.protocol_packets > 0, verdict
        assert technique.keys_agreed() == {"client": 1, "server": 1}
        assert technique.failure() is None and len(run_daemons("rosenpass")) == 2
    finally:
        technique.down()
    assert not [p for p in ctx.resources.dir.iterdir() if p.name.startswith("rosenpass-")]  # keys wiped
    assert run_daemons("rosenpass") == []
    assert tunnel.negotiated["psk_keys_agreed"] == {"client": 1, "server": 1}  # noted at down()
    for host in (testbed.client, testbed.server):
        assert not [i for i in ifaces.values() if i in host.run(["ip", "-o", "link"]).stdout]


@needs_rosenpass
@pytest.mark.netns
def test_a_real_cell_rekeys_with_a_new_exchange_and_leaves_nothing(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    by = {cell["measurement"].split("_")[0]: cell for cell in cells}
    assert len(cells) == 5 and all(c["status"] == "ok" for c in cells), [(c["measurement"], c["error"]) for c in cells]
    for cell in cells:
        assert cell["wire_check"] == "encrypted", cell["measurement"]
        assert cell["technique_params"]["version"] == "0.2.3"
        assert cell["negotiated"]["protocol"] == "WireGuard + Rosenpass" and cell["negotiated"]["key_exchange_s"] > 0
        assert cell["metrics"]["setup_time_s"] > cell["negotiated"]["key_exchange_s"]  # the exchange is part of it
    assert_tcp_measured(by["tcp"])
    assert by["udp"]["metrics"]["received_packets"] > 0 and by["ping"]["metrics"]["loss_pct"] < 50
    assert by["setup"]["metrics"]["cycles"] == 2 and by["setup"]["metrics"]["handshake_p50_s"] > 0
    import vpnbench
    data = vpnbench.load(str(tmp_path / "c.db"))
    rekey = by["rekey"]
    events = data.events[(data.events.cell_id == rekey["cell_id"]) & (data.events.kind == "rekey")]
    assert rekey["metrics"]["rekeys"] == 2 and len(events) == 2
    for detail in events.detail:
        assert detail["psk_changed"] and detail["psk_exchange_s"] > 0
        assert detail["handshake_after"] >= detail["handshake_before"] > 0
    # the bring-up's record, noted when the first tunnel went down (the setup cell's first cycle):
    # the first exchange and the rekeys' two on each end
    assert rekey["negotiated"]["psk_keys_agreed"] == {"client": 3, "server": 3}
    assert run_daemons("rosenpass") == []  # clean_machine checks the namespaces, interfaces and the run directory


@pytest.fixture(scope="module")
def kernel_wireguard():
    from vpnbench.hosts.resources import RunResources
    with RunResources() as resources:
        if not LocalKernelProbe(resources).has_link_type("wireguard"):
            pytest.skip("this kernel lacks WireGuard: kernel WireGuard runs in the kernel VM")


@needs_rosenpass
@pytest.mark.netns
@pytest.mark.vm
def test_kernel_wireguard_gets_its_psk_from_rosenpass(tmp_path, kernel_wireguard, clean_machine):
    (tmp_path / "c.toml").write_text('[campaign]\nname = "rp-kernel"\n[[technique]]\nkind = "rosenpass"\n'
                                     '[technique.wireguard]\nbackend = "kernel"\n'
                                     '[[measurement]]\nkind = "tcp"\nduration = "1s"\n'
                                     '[[measurement]]\nkind = "ping"\ncount = 5\ninterval = "0.05s"\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"), timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "c.json"))
    cells = json.loads((tmp_path / "c.json").read_text())
    assert len(cells) == 2 and all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    for cell in cells:
        assert cell["wire_check"] == "encrypted" and cell["negotiated"]["wireguard_backend"] == "kernel"
        assert cell["negotiated"]["key_exchange_s"] > 0
        assert not cell["hosts"]["client"]["procs_cpu_pct"].get("wireguard-go")
    assert_tcp_measured(next(c for c in cells if c["measurement"] == "tcp"))
    assert run_daemons("rosenpass") == [] and os.path.exists(PROGRAM)
