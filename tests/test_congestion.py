"""TCP congestion control per technique run: checked against the kernel before anything is
touched, set on both ends, named in the cells; the machine's allowed list put back."""

from pathlib import Path

import pytest

from conftest import run_campaign, run_cli
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import validate_model
from vpnbench.techniques.wireguard import WireGuardParams
from vpnbench.testbeds.congestion import check_offered

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
CONTROL = Path("/proc/sys/net/ipv4/tcp_congestion_control")
ALLOWED = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def test_a_control_the_kernel_does_not_offer_names_the_field_and_the_allowed_values():
    techniques = [WireGuardParams(), validate_model(WireGuardParams, {"kind": "wireguard",
                                                                     "congestion_control": "vegas"}, "technique")]
    with pytest.raises(UserError, match=r"^technique\[2\]\.congestion_control: 'vegas' is not offered by the "
                                        r"server's kernel; allowed values: reno, cubic$"):
        check_offered(techniques, {"the client": ["reno", "cubic", "vegas"], "the server": ["reno", "cubic"]})
    check_offered(techniques, {"the client": ["vegas"], "the server": ["vegas"]})  # offered everywhere: fine
    with pytest.raises(UserError, match=r"^technique\.congestion_control: "):
        validate_model(WireGuardParams, {"kind": "wireguard", "congestion_control": "cubic; reboot"}, "technique")


def test_bad_congestion_control_is_one_line_exit_2_before_anything_is_touched(tmp_path, clean_machine):
    offered = AVAILABLE.read_text().split()
    (tmp_path / "c.toml").write_text('[[technique]]\nkind = "baseline"\ncongestion_control = "nosuch"\n'
                                     '[[measurement]]\nkind = "tcp"\nduration = "1s"\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == (f"vpnbench: error: technique[1].congestion_control: 'nosuch' is not offered by "
                                     f"this machine's kernel; allowed values: {', '.join(offered)}"), result.stderr
    assert not (tmp_path / "c.db").exists()  # and clean_machine: no namespace, no file left


@pytest.mark.exclusive  # alone: the root namespace's tcp_allowed_congestion_control, asserted unchanged
@pytest.mark.netns
def test_each_technique_runs_with_its_chosen_control_on_both_ends(tmp_path, clean_machine):
    own = CONTROL.read_text().strip()
    others = [c for c in AVAILABLE.read_text().split() if c != own]
    if not others:
        pytest.skip(f"this kernel offers only {own}: no other congestion control to choose")
    chosen = "cubic" if "cubic" in others else others[0]
    allowed = ALLOWED.read_text()
    campaign = (f'[[technique]]\nkind = "baseline"\nlabel = "chosen"\ncongestion_control = "{chosen}"\n'
                '[[technique]]\nkind = "baseline"\nlabel = "own"\n'
                '[[measurement]]\nkind = "tcp"\nduration = "1s"\n')
    result, cells = run_campaign(tmp_path, campaign)
    by = {c["technique"]: c for c in cells}
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    assert by["chosen"]["technique_params"]["congestion_control"] == chosen
    assert by["own"]["technique_params"]["congestion_control"] == own  # put back for the next technique
    import json

    from vpnbench.store.database import Store

    store = Store(tmp_path / "c.db")
    text = store.raw_outputs(by["chosen"]["cell_id"])["iperf3_client"]
    store.close()
    doc = json.loads(text[text.index("{"):text.rindex("}") + 1])
    assert doc["end"]["sender_tcp_congestion"] == chosen == doc["end"]["receiver_tcp_congestion"]  # both ends
    assert ALLOWED.read_text() == allowed and CONTROL.read_text().strip() == own  # the machine as it was


def test_the_report_says_the_control_beside_tcp_under_loss_and_a_searchs_limit():
    import html

    from report_records import records
    from vpnbench.views.report import render_with_figures

    spec = {"technique": [{"kind": "baseline"}, {"kind": "wireguard"}], "impairment": [{"netem": "loss 5%"}],
            "measurement": [{"kind": "tcp"}, {"kind": "rate_search"}]}
    run, cells = records(spec, repetitions=2)
    for cell in cells:
        cell.technique_params["congestion_control"] = "bbr"
        if cell.measurement == "rate_search":  # even the lowest load lost, at the receiving socket
            cell.metrics = {"ndr_found": 0.0, "ndr_upper_bound_bps": 10e6, "ndr_limit_receiver": 1.0,
                            "pdr_found": 0.0, "pdr_upper_bound_bps": 10e6, "pdr_limit_receiver": 1.0, "trials": 3.0}
    page = html.unescape(render_with_figures(run, cells)[0])
    assert "tcp under loss (loss 5%): TCP's congestion control was bbr (baseline, wireguard)" in page
    assert ("baseline (loss 5%): NDR not found: even 10.0 Mbit/s lost too much (limit: the receiving socket)"
            in page)
    assert "the NDR and PDR of baseline (loss 5%), wireguard (loss 5%) met the receiving socket's limit" in page
