"""Set-up and rekey rates (draft-ietf-bmwg-ipsec-term's tunnel set-up rate and rekey rate) and NDR
with rekeys inside the trials (CSIT-1886). setup_rate's real cells run in test_setup.py's campaign
(which brings WireGuard and IPsec up already); this file's real run is WireGuard's rekeys."""

import time

import pytest

from conftest import run_campaign, run_cli
from vpnbench.answers.verdicts import verdicts
from vpnbench.foundation.errors import MeasurementError, TechniqueError
from vpnbench.measure.base import MeasureContext
from vpnbench.measure.fping import fping_argv, parse_first_replies, parse_losses
from vpnbench.measure.generators import TrialCounts
from vpnbench.measure.rate_search import RateSearchParams, TrialRunner
from vpnbench.measure.rekey_rate import probe_losses, rekey_rate_metrics
from vpnbench.measure.setup_rate import cycle_rates, rate_summary
from vpnbench.store.records import Bringup, Cell

CAMPAIGN = """
[campaign]
name = "rates"
[[technique]]
kind = "wireguard"
backend = "userspace"
[[measurement]]
kind = "rekey_rate"
duration = "1s"
[[measurement]]
kind = "rate_search"
rekey_in_trials = true
min_rate = "5M"
max_rate = "20M"
relative_width = 0.5
duration_sum = "1s"
budget = "30s"
"""


@pytest.mark.netns
def test_wireguard_rekeys_back_to_back_and_inside_every_search_trial(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    by = {c["measurement"]: c for c in cells}
    assert all(c["status"] == "ok" for c in cells), [(c["measurement"], c["error"]) for c in cells]
    import vpnbench
    data = vpnbench.load(str(tmp_path / "c.db"))

    m = by["rekey_rate"]["metrics"]
    assert m["rekeys"] >= 1 and m["tunnels_rekeyed"] == m["rekeys"]  # one tunnel: one renewed per call
    assert m["rekey_rate"] == pytest.approx(m["tunnels_rekeyed"] / m["elapsed_s"])
    events = data.events[(data.events.cell_id == by["rekey_rate"]["cell_id"]) & (data.events.kind == "rekey")]
    assert len(events) == m["rekeys"]
    took = [d["rekey_seconds"] for d in events.detail]
    # back to back: the rekeys fill the time, the last began before `duration` ended
    assert sum(took) <= m["elapsed_s"] + 1e-3 and list(events.t)[-1] < 1.0 <= m["elapsed_s"]
    assert all(d["handshake_after"] > 0 for d in events.detail)  # each a new WireGuard handshake
    assert m["rekey_max_s"] == pytest.approx(max(took), abs=1e-3) and 0 < m["rekey_p50_s"] <= m["rekey_max_s"]
    assert m["pings_sent"] > 0 and 0 <= m["pings_lost"] <= m["pings_sent"]

    search = by["rate_search"]
    assert search["measurement_params"]["rekey_in_trials"] is True
    trials = data.trials[data.trials.cell_id == search["cell_id"]]
    assert len(trials) >= 1 and search["metrics"]["rekeys_in_trials"] == len(trials)
    for trial in trials.itertuples():
        rekey = trial.data["rekey"]
        # halfway through the trial, over before the generator returned
        assert rekey["inside"] and 0.5 <= rekey["at_s"] and rekey["at_s"] + rekey["seconds"] <= rekey["trial_s"]
    metrics = search["metrics"]
    if "pdr_bps" in metrics:  # finite, within the searched range
        assert 5e6 <= metrics["pdr_bps"] <= 20e6
    else:  # the rekeys cost packets at every load searched (CSIT-1886's finding): where it gave up, said
        assert 5e6 <= metrics["pdr_upper_bound_bps"] <= 20e6


def test_a_campaign_with_rekey_rate_and_the_baseline_is_refused(tmp_path):
    (tmp_path / "c.toml").write_text('[[technique]]\nkind = "baseline"\n[[technique]]\nkind = "wireguard"\n'
                                     '[[measurement]]\nkind = "rekey_rate"\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert 'technique[1]: baseline has no keys to renew, so measurement[1] (kind = "rekey_rate")' in result.stderr
    assert not (tmp_path / "c.db").exists()


def test_rekeys_in_trials_are_refused_only_where_a_technique_cannot_rekey():
    from vpnbench.campaign.spec import campaign_from_dict
    from vpnbench.foundation.errors import UserError

    search = {"kind": "rate_search", "rekey_in_trials": True}
    campaign = campaign_from_dict({"technique": [{"kind": "baseline"}, {"kind": "wireguard"}], "measurement": [search]})
    assert campaign.measurements[0].rekey_in_trials  # the baseline runs it as the control
    with pytest.raises(UserError, match=r'technique\[1\]: macsec.*measurement\[1\] \(kind = "rate_search"\)'):
        campaign_from_dict({"technique": [{"kind": "macsec"}], "measurement": [search]})
    plain = campaign_from_dict({"technique": [{"kind": "macsec"}], "measurement": [{"kind": "rate_search"}]})
    assert "rekey_in_trials" not in plain.measurements[0].settings()  # stored searches' settings unchanged


def test_fping_output_gives_each_tunnels_first_reply_on_the_hosts_clock():
    output = ("1795722728.400000000\n"
              "[1795722728.46306] 10.0.0.2 : [0], 64 bytes, 0.041 ms (0.041 avg, 0% loss)\n"
              "ICMP Host Unreachable from 10.0.0.1 for ICMP Echo sent to 10.0.1.2\n"
              "[1795722728.47341] 10.0.0.2 : [1], 64 bytes, 0.041 ms (0.041 avg, 0% loss)\n"
              "[1795722728.51391] 10.0.1.2 : [5], 64 bytes, 0.039 ms (0.039 avg, 0% loss)\n"
              "10.0.0.2 : xmt/rcv/%loss = 7/7/0%, min/avg/max = 0.037/0.039/0.041\n"
              "10.0.1.2 : xmt/rcv/%loss = 7/2/71%, min/avg/max = 0.037/0.039/0.041\n")
    started, first = parse_first_replies(output)
    assert started == 1795722728.4 and first == {"10.0.0.2": pytest.approx(0.06306), "10.0.1.2": pytest.approx(0.11391)}
    assert parse_first_replies("") == (None, {})
    losses = parse_losses(output)
    assert losses == {"10.0.0.2": (7, 7), "10.0.1.2": (7, 2)}
    # a tunnel fping never summarised counts as one with loss
    assert probe_losses(losses, ["10.0.0.2", "10.0.1.2", "10.0.2.2"]) == {
        "pings_sent": 14.0, "pings_lost": 5.0, "tunnels_with_loss": 2.0}


def test_fping_argv_fits_a_round_of_every_tunnel_into_one_period():
    argv = fping_argv([f"10.0.{n}.2" for n in range(100)], "ipv4", 0.01, 50)
    assert argv[:3] == ["sh", "-c", 'date +%s.%N; exec fping "$@"']
    options = argv[4:argv.index("10.0.0.2")]
    assert options[options.index("-p") + 1] == "10" and options[options.index("-i") + 1] == "0.1"  # 100 × 0.1 ms
    assert "-D" in options and options[options.index("-c") + 1] == "50" and "-4" in options
    assert "-6" in fping_argv(["fd00::2"], "ipv6", 0.5, 3)
    # the reply timeout is always set: fping's default in count mode is the period (10 ms here)
    assert options[options.index("-t") + 1] == "2000"
    shorter = fping_argv(["10.0.0.2"], "ipv4", 0.01, 5, reply_timeout=0.25)
    assert shorter[shorter.index("-t") + 1] == "250"


def test_set_up_rate_is_tunnels_over_the_time_to_the_last():
    cycle = cycle_rates([0.30, 0.10, 0.20, 0.40])
    assert (cycle["first_s"], cycle["last_s"], cycle["tunnels"]) == (0.10, 0.40, 4)
    assert cycle["setup_rate"] == pytest.approx(4 / 0.40) and cycle["median_s"] == pytest.approx(0.25)
    assert cycle["tunnel_s"] == [0.10, 0.20, 0.30, 0.40]
    one = cycle_rates([0.25])
    assert one["first_s"] == one["last_s"] and one["setup_rate"] == pytest.approx(1 / 0.25)
    metrics = rate_summary([dict(cycle, up_s=0.1, handshake_s=None), dict(one, up_s=0.2, handshake_s=None)])
    assert metrics["cycles"] == 2 and metrics["setup_rate_min"] == pytest.approx(4.0)
    assert metrics["last_p50_s"] == pytest.approx(0.325) and metrics["first_min_s"] == 0.10
    assert metrics["up_p50_s"] == pytest.approx(0.15) and "handshake_p50_s" not in metrics


def test_rekey_rate_counts_the_tunnels_each_rekey_renewed():
    metrics = rekey_rate_metrics([(0.05, 10), (0.15, 10), (0.10, 10)], elapsed=0.5)
    assert metrics["rekeys"] == 3 and metrics["tunnels_rekeyed"] == 30 and metrics["rekey_rate"] == pytest.approx(60)
    assert metrics["rekey_p50_s"] == 0.10 and metrics["rekey_max_s"] == 0.15
    assert metrics["rekey_mean_s"] == pytest.approx(0.10)


def _trial_runner(renew, technique="wireguard", seconds=0.6):
    def generator(ctx, family, offered_bps, length, trial_seconds):
        time.sleep(seconds)  # the trial's traffic: the rekey lands inside it
        return TrialCounts(1000, 1000, offered_bps, offered_bps, {})

    ctx = MeasureContext(None, None, None, None, {"kind": technique}, rekey=renew)
    return TrialRunner(ctx, RateSearchParams(rekey_in_trials=True), generator=generator, counters=lambda: {})


def test_a_rekey_that_fails_inside_a_trial_fails_the_search_naming_it():
    def renew():
        raise TechniqueError("rekey: no new WireGuard handshake within 10 s")

    runner = _trial_runner(renew)
    with pytest.raises(MeasurementError, match="trial 1: the rekey inside it failed: rekey: no new WireGuard"):
        runner.run_trial(1.0, 1000)
    assert runner.trials[0].data["rekey"]["error"] and not runner.trials[0].data["rekey"]["inside"]


def test_the_baselines_trials_are_the_control_without_rekeys():
    runner = _trial_runner(None, technique="baseline", seconds=0)
    runner.run_trial(1.0, 1000)
    assert runner.trials[0].data["rekey"] == {"control": True}


def _search_cell(number, rekeyed: bool, ndr: float | None) -> Cell:
    bringup = Bringup("r", "wireguard", "wireguard", "userspace", "t0", setup_time_s=0.1, id=1)
    params = {"kind": "rate_search", "length": 1300, **({"rekey_in_trials": True} if rekeyed else {})}
    label = "rate_search_1300" + ("_rekeyed" if rekeyed else "")
    return Cell("r", "c", f"wireguard|none|{label}|1", "wireguard", {"kind": "wireguard"}, "none", {},
                "rate_search", label, params, 1, "t0", status="ok",
                metrics={"ndr_bps": ndr} if ndr else {"ndr_found": 0.0, "ndr_upper_bound_bps": 10e6},
                bringup_id=1, bringup=bringup, id=number)


def test_the_cost_of_rekeys_in_trials_is_named_against_the_same_search_without():
    found = verdicts([_search_cell(1, False, 100e6), _search_cell(2, True, 80e6)])
    assert ("wireguard: NDR with rekeys in trials 80.0 Mbit/s is 20.0 % below without (100.0 Mbit/s, "
            "rate_search_1300)") in found.captions["rate_search_1300_rekeyed"]
    assert not any("rekeys in trials" in text for text in found.captions["rate_search_1300"])
    lost = _search_cell(2, True, None)  # every load lost packets to the rekeys: no NDR
    found = verdicts([_search_cell(1, False, 100e6), lost])
    assert ("wireguard: no NDR with rekeys in trials: even 10.0 Mbit/s lost packets; without (100.0 Mbit/s, "
            "rate_search_1300)") in found.captions["rate_search_1300_rekeyed"]
    alone = verdicts([_search_cell(2, True, 80e6)])  # nothing to compare with: no cost claimed
    assert not any("rekeys in trials" in text for text in alone.captions["rate_search_1300_rekeyed"])
