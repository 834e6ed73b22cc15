"""VoIP-shaped streams with irtt: one-way delay, loss, late packets and the E-model MOS."""

import json

import pytest

from conftest import run_campaign, run_cli
from vpnbench.measure.irtt import Packet
from vpnbench.measure.stream import stream_metrics

CAMPAIGN = """
[campaign]
name = "stream"
[[technique]]
kind = "baseline"
[[impairment]]
netem = ""
label = "ideal"
[[impairment]]
profile = "s1-network-2"
[[measurement]]
kind = "stream"
duration = "3s"
calls = 3
"""


@pytest.mark.netns
def test_voip_on_network_2_delay_loss_and_a_lower_mos(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    assert [c["status"] for c in cells] == ["ok", "ok"], [c["error"] for c in cells]
    ideal, network = (next(c for c in cells if c["impairment"] == name)["metrics"] for name in ("ideal", "s1-network-2"))
    assert ideal["owd_up_p50_ms"] < 5 and ideal["owd_down_p50_ms"] < 5 and ideal["loss_pct"] == 0
    for way in ("up", "down"):
        # 80 ms each way, 10 ms jitter: the median is near 80, bounded from below by the delay itself
        assert 75 < network[f"owd_{way}_p50_ms"] < 110, network
    packets = network["packets"]  # 3 calls x 150 packets
    assert 400 <= packets <= 460
    # 1 % each way over ~450 packets per direction: mean 4.5, sd 2.1; 0 .. 4 sd above
    assert network["loss_up_pct"] + network["loss_down_pct"] > 0
    assert network["loss_up_pct"] < 3.0 and network["loss_down_pct"] < 3.0
    assert network["mos"] < ideal["mos"] and network["r_factor"] < ideal["r_factor"]
    assert ideal["mos"] > 4.3 and network["ipdv_p50_ms"] > ideal["ipdv_p50_ms"]
    result = run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "x.json"))
    assert result.returncode == 0
    import vpnbench
    data = vpnbench.load(str(tmp_path / "c.db"))
    assert {"owd_up_ms", "owd_down_ms", "rtt_ms"} <= set(data.series["name"])


@pytest.mark.netns
def test_two_video_streams_arrive_whole_on_an_ideal_link(tmp_path, clean_machine):
    text = CAMPAIGN.split("[[impairment]]")[0] + '[[measurement]]\nkind = "stream"\nprofile = "video"\ncalls = 2\nduration = "3s"\n'
    _, [cell] = run_campaign(tmp_path, text)
    m = cell["metrics"]
    assert cell["status"] == "ok" and cell["measurement_params"]["rate"] == 4_280_000
    assert m["frames_sent"] == 150 and m["frames_received"] >= 145, m
    assert m["continuity_errors"] == 0 and m["frame_loss_pct"] < 4


def test_video_metrics_from_receiver_logs():
    from vpnbench.measure.video import video_metrics
    logs = ["frame=   10 fps\rframe=   74 fps=0.0\n", "Continuity check failed for pid 256 expected 3 got 5\nframe=   70\n"]
    m = video_metrics(logs, 3.0, 4_280_000)
    assert m == {"frames_sent": 150.0, "frames_received": 144.0, "frame_loss_pct": 4.0, "continuity_errors": 1.0,
                 "rate_bps": 4_280_000.0}


def test_stream_metrics_late_lost_and_the_worse_direction():
    pkts = [Packet(i * 0.02, 10.0 + (100 if i == 5 else 0), 20.0, 30.0, "false") for i in range(98)]
    # irtt gives no delay at all for a packet lost on the way back: it still arrived upstream
    pkts += [Packet(1.96, None, None, None, "true_up"), Packet(1.98, None, None, None, "true_down")]
    metrics, inputs = stream_metrics(pkts, 0.020, 0.060, "g711")
    assert metrics["loss_up_pct"] == pytest.approx(1.0)  # 1 of 100 sent
    assert metrics["loss_down_pct"] == pytest.approx(100 / 99)  # 1 of the 99 that reached the server
    assert metrics["late_up_pct"] == pytest.approx(1.0)  # the 110 ms packet, beyond 10 + 60
    assert metrics["loss_pct"] == pytest.approx((1.0 + 100 / 99) / 2)
    assert metrics["owd_up_p50_ms"] == 10.0 and metrics["owd_down_p50_ms"] == 20.0
    assert metrics["ipdv_p50_ms"] == 0.0
    down = inputs["directions"]["down"]
    assert down["delay_ms"] == pytest.approx(20 + 60 + 20)  # floor + buffer + packetisation
    assert metrics["r_factor"] == min(d["r_factor"] for d in inputs["directions"].values())
    assert json.dumps(inputs)


@pytest.mark.parametrize("entry, message", [
    ('profile = "video"\nrate = 0', "measurement[1].rate: 0 is not a positive rate"),
    ('profile = "hifi"', "measurement[1].profile: 'hifi' is not allowed"),
    ('calls = 0', "measurement[1].calls"),
    ('jitter_buffer = "0s"', "measurement[1].jitter_buffer"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, entry, message):
    (tmp_path / "c.toml").write_text(f'[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "stream"\n{entry}\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "c.db").exists()
