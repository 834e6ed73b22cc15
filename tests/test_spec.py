import pytest

from vpnbench.campaign import campaign_from_dict, expand, load_campaign
from vpnbench.foundation.errors import UserError

MEAS = [{"kind": "tcp", "duration": "2s"}, {"kind": "udp", "rate": "50M", "length": 1300, "duration": "2s"},
        {"kind": "ping", "count": 20, "interval": "0.05s"}]


def campaign(**overrides):
    data = {"campaign": {"name": "t", "repetitions": 2},
            "technique": [{"kind": "baseline"}, {"kind": "wireguard"}], "measurement": MEAS}
    data.update(overrides)
    return data


def error_of(data) -> str:
    with pytest.raises(UserError) as info:
        campaign_from_dict(data)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_smoke_preset_parses_and_expands_in_study_order():
    from importlib import resources
    path = resources.files("vpnbench.campaign").joinpath("presets/smoke.toml")
    c = load_campaign(str(path))
    blocks = expand(c)
    assert [b.label for b in blocks] == ["baseline", "wireguard"]
    assert [cell.key for cell in blocks[0].cells] == [
        "baseline|none|tcp|1", "baseline|none|udp_50M_1300|1", "baseline|none|ping|1"]


def test_expansion_is_the_full_product():
    blocks = expand(campaign_from_dict(campaign()))
    keys = [cell.key for b in blocks for cell in b.cells]
    assert len(keys) == 2 * 3 * 2 == len(set(keys))


def test_a_family_left_unset_is_each_techniques_overlay_family_and_one_set_is_kept():
    """Yggdrasil's overlay is IPv6 only: beside IPv4 overlays in one campaign, its measurements
    run over IPv6 and its cells store that; a family the campaign sets is every cell's."""
    data = campaign(technique=[{"kind": "wireguard"}, {"kind": "yggdrasil"}],
                    measurement=[*MEAS, {"kind": "tcp", "family": "ipv4", "label": "tcp4"}, {"kind": "setup"}])
    families = {(block.label, cell.measurement): getattr(cell.measurement_params, "family", None)
                for block in expand(campaign_from_dict(data)) for cell in block.cells}
    assert families == {
        ("wireguard", "tcp"): "ipv4", ("wireguard", "udp_50M_1300"): "ipv4", ("wireguard", "ping"): "ipv4",
        ("wireguard", "tcp4"): "ipv4", ("wireguard", "setup"): None,
        ("yggdrasil", "tcp"): "ipv6", ("yggdrasil", "udp_50M_1300"): "ipv6", ("yggdrasil", "ping"): "ipv6",
        ("yggdrasil", "tcp4"): "ipv4", ("yggdrasil", "setup"): None,
    }


def test_shuffled_order_is_seeded_and_stays_within_a_technique():
    data = campaign(campaign={"name": "t", "repetitions": 3, "order": "shuffled", "seed": 7})
    first = [[c.key for c in b.cells] for b in expand(campaign_from_dict(data))]
    again = [[c.key for c in b.cells] for b in expand(campaign_from_dict(data))]
    assert first == again
    assert all(k.startswith("baseline|") for k in first[0])
    assert first[0] != sorted(first[0], key=lambda k: (k.split("|")[2], k))  # really shuffled


@pytest.mark.parametrize("data, expected", [
    (campaign(technique=[{"kind": "ipsecx"}]), "technique[1].kind: 'ipsecx' is not allowed; allowed values: baseline, wireguard"),
    (campaign(technique=[{"kind": "wireguard", "backend": "fast"}]), "technique[1].backend: 'fast' is not allowed; allowed values: 'auto', 'kernel', 'userspace'"),
    (campaign(technique=[{"kind": "baseline", "cipher": "aes"}]), "technique[1].cipher: unknown key; allowed keys: kind, label"),
    (campaign(measurement=[{"kind": "udp", "rate": "fast"}]), "measurement[1].rate: 'fast' is not a rate"),
    (campaign(measurement=[{"kind": "tcp", "duration": "-2s"}]), "measurement[1].duration: '-2s' is not a duration"),
    (campaign(measurement=[{"kind": "tcp", "duration": "2 parsecs"}]), "unit us, ms, s, m or h"),
    (campaign(testbed={"kind": "cloud"}), "testbed.kind: 'cloud' is not allowed; allowed values: 'local'"),
    (campaign(campaign={"repetitions": 0}), "campaign.repetitions:"),
    (campaign(impairments=[]), "impairments: unknown section; allowed sections: campaign, testbed, technique, impairment, measurement"),
    (campaign(technique=[]), "technique: at least one [[technique]] is required"),
    (campaign(technique=[{"kind": "wireguard"}, {"kind": "wireguard"}]), "technique[2].label: 'wireguard' is used twice"),
    (campaign(measurement=[{"duration": "2s"}]), "measurement[1].kind: required key is missing; allowed values: tcp, udp, ping"),
])
def test_bad_input_names_the_field_and_allowed_values(data, expected):
    assert expected in error_of(data)


def test_labels_distinguish_variants():
    data = campaign(technique=[{"kind": "wireguard"}, {"kind": "wireguard", "psk": True}])
    labels = [b.label for b in expand(campaign_from_dict(data))]
    assert labels == ["wireguard", "wireguard psk=true"]


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_campaign(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[campaign\nname=")
    with pytest.raises(UserError, match="not valid TOML"):
        load_campaign(bad)


def test_every_preset_is_a_valid_campaign():
    from importlib import resources
    presets = [p for p in resources.files("vpnbench.campaign").joinpath("presets").iterdir() if p.name.endswith(".toml")]
    assert {p.name for p in presets} >= {"demo.toml", "smoke.toml", "impairments.toml"}
    for preset in presets:
        campaign = load_campaign(str(preset))
        assert campaign.name == preset.name.removesuffix(".toml")
    impaired = load_campaign(str(resources.files("vpnbench.campaign").joinpath("presets/impairments.toml")))
    assert len(impaired.impairments) == 6 + 3


def test_missing_tool_names_its_package(tmp_path):
    from vpnbench.foundation.tools import missing_tool_reason
    from vpnbench.hosts.netns import NetnsHost

    assert missing_tool_reason("iperf3") == "iperf3 not found; install the Debian package 'iperf3' (apt-get install iperf3)"
    host = NetnsHost("client", "unused", tmp_path)
    with pytest.raises(FileNotFoundError, match="no-such-tool-xyz not found; install"):
        host.require("ip", "no-such-tool-xyz")


@pytest.mark.parametrize("value, seconds", [(0, 0.0), ("0s", 0.0), ("0ms", 0.0), ("1.5s", 1.5), (2, 2.0)])
def test_settle_max_zero_turns_settling_off(value, seconds):
    data = campaign()
    data["campaign"]["settle_max"] = value
    assert campaign_from_dict(data).info.settle_max == seconds


def test_settle_max_refuses_a_negative_wait():
    data = campaign()
    data["campaign"]["settle_max"] = "-1s"
    assert "settle_max" in error_of(data)


def test_tunnels_sweeps_and_one_tunnel_keeps_the_settings_stored_before_the_axis():
    techniques = campaign_from_dict(campaign(technique=[{"kind": "baseline", "tunnels": 1},
                                                        {"kind": "wireguard", "tunnels": [1]}])).techniques
    assert [t.label for t in techniques] == [None, "wireguard tunnels=1"]  # unswept: named by its kind
    assert all("tunnels" not in t.settings() for t in techniques)  # as every cell stored before the axis


def test_tunnels_above_a_techniques_ceiling_is_refused_with_its_reason():
    from vpnbench.techniques import TECHNIQUES
    for kind, cls in TECHNIQUES.items():
        try:
            params = cls.Params()
        except ValueError:  # external: required keys
            continue
        most, reason = cls.tunnel_ceiling(params)
        assert most >= 1 and reason
        if most >= 10_000:  # the axis's own limit: refused by the field, as any out-of-range value
            continue
        message = error_of(campaign(technique=[{"kind": kind, "tunnels": most + 1}]))
        assert message.startswith(f"technique[1].tunnels: {most + 1} is more than {kind} allows")
        assert f"allowed values: 1 to {most}" in message


def test_a_measurement_runs_only_under_the_impairments_it_names():
    from vpnbench.campaign import rehearsal
    ladder = [{"netem": "loss 0..30% step 10%", "backend": "linkem"}]
    data = campaign(technique=[{"kind": "baseline"}], impairment=ladder,
                    measurement=[{"kind": "ping", "count": 5, "impairments": "loss 0%"},
                                 {"kind": "tcp", "duration": "2s", "impairments": ["loss 10%", "loss 20%"]},
                                 {"kind": "udp", "rate": "1M", "duration": "2s"}])
    full = campaign_from_dict(data)
    cells = [(cell.impairment.label, cell.measurement) for block in expand(full) for cell in block.cells
             if cell.repetition == 1]
    assert [i for i, m in cells if m == "ping"] == ["loss 0%"]
    assert [i for i, m in cells if m == "tcp"] == ["loss 10%", "loss 20%"]
    assert len([m for _, m in cells if m.startswith("udp")]) == 4  # not named: under every one
    short = rehearsal(full)  # the sweep's ends, and what a measurement is limited to
    assert {i.label for i in short.impairments} == {"loss 0%", "loss 10%", "loss 20%", "loss 30%"}
    bad = campaign(technique=[{"kind": "baseline"}], impairment=ladder,
                   measurement=[{"kind": "ping", "impairments": ["loss 50%"]}])
    assert error_of(bad) == ("measurement[1].impairments: 'loss 50%' is not an impairment of this campaign; "
                             "allowed values: 'loss 0%', 'loss 10%', 'loss 20%', 'loss 30%'")
