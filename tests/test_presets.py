"""Every campaign shipped with vpnbench validates, `vpnbench presets` lists it, and a rehearsal
(`run --rehearse`) tries a whole campaign in minutes."""

import time

import pytest

from bounds import assert_tcp_measured
from conftest import run_campaign, run_cli
from vpnbench.campaign import expand, rehearsal
from vpnbench.cli import load_campaign_or_preset, preset_files


@pytest.mark.parametrize("name", sorted(preset_files()))
def test_preset_validates_and_expands(name):
    campaign = load_campaign_or_preset(name)
    assert campaign.name
    assert sum(len(block.cells) for block in expand(campaign)) > 0


def test_presets_command_lists_every_preset():
    result = run_cli("presets")
    assert result.returncode == 0, result.stderr
    for name in preset_files():
        assert name in result.stdout
    assert {"demo", "smoke", "impairments"} <= set(preset_files())


def test_rehearsal_keeps_what_a_study_compares_and_cuts_how_long():
    full = load_campaign_or_preset("s1-impairments")
    short = rehearsal(full)
    assert short.name == "s1-impairments-rehearsal" and short.info.repetitions == 1
    assert short.techniques == full.techniques and short.testbed == full.testbed
    # each sweep at both of its ends, each named network once
    assert [i.label for i in short.impairments] == [
        "delay 0ms", "delay 100ms", "jitter: delay 20ms 0ms", "jitter: delay 20ms 10ms", "loss 0%", "loss 5%",
        "s1-network-1", "s1-network-2", "s1-network-3"]
    tcp, udp, ping = short.measurements
    assert (tcp.duration, udp.duration, udp.rate, udp.length) == (2, 2, 400_000_000, 1300)
    assert (ping.count, ping.interval) == (10, 0.2)
    assert sum(len(block.cells) for block in expand(short)) == 7 * 9 * 3
    assert sum(len(block.cells) for block in expand(full)) == 7 * 36 * 3
    unimpaired = rehearsal(load_campaign_or_preset("s5-vpn-technologies"))
    assert [i.label for i in unimpaired.impairments] == ["none"]
    assert unimpaired.measurements[2].interval == 0.001  # a faster ping than the cap stays as it is


LONG_CAMPAIGN = """
[campaign]
name = "long"
repetitions = 5
[testbed]
kind = "local"
[[technique]]
kind = "baseline"
[[impairment]]
netem = "delay 0..40ms step 10ms"
backend = "linkem"
[[measurement]]
kind = "tcp"
duration = "10m"
omit = "5s"
[[measurement]]
kind = "ping"
count = 1000
interval = "1s"
"""


@pytest.mark.netns
def test_rehearse_runs_every_part_briefly_under_its_own_name(tmp_path, clean_machine):
    started = time.monotonic()
    _, cells = run_campaign(tmp_path, LONG_CAMPAIGN, "--rehearse")
    # un-rehearsed, its first TCP cell alone lasts 10 min (the campaign: 5 x 5 x 10 min of TCP)
    assert time.monotonic() - started < 10 * 60
    assert {c["campaign"] for c in cells} == {"long-rehearsal"}
    assert sorted((c["impairment"], c["measurement"]) for c in cells) == [
        ("delay 0ms", "ping"), ("delay 0ms", "tcp"), ("delay 40ms", "ping"), ("delay 40ms", "tcp")]
    by = {(c["impairment"], c["measurement"]): c for c in cells}
    assert by[("delay 0ms", "tcp")]["measurement_params"]["duration"] == 2.0
    assert_tcp_measured(by[("delay 0ms", "tcp")])
    ping = by[("delay 40ms", "ping")]
    assert ping["metrics"]["sent"] == 10 and ping["measurement_params"]["interval"] == 0.2
    assert ping["metrics"]["rtt_min_ms"] >= 80  # the sweep's end was really applied, both ways
