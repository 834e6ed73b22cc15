"""Latency under load: irtt idle, then under TCP flows both ways (iperf3), through wireguard-go."""

import pytest

from conftest import run_campaign, run_cli
from vpnbench.foundation.errors import MeasurementError
from vpnbench.measure.irtt import Packet
from vpnbench.measure.latency_under_load import phase_metrics

CAMPAIGN = """
[campaign]
name = "lul"
[[technique]]
kind = "wireguard"
backend = "userspace"
[[measurement]]
kind = "latency_under_load"
idle = "2s"
duration = "3s"
flows_up = 2
flows_down = 2
"""


@pytest.mark.netns
def test_load_through_wireguard_go_raises_latency(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    [cell] = cells
    assert cell["status"] == "ok", cell["error"]
    m = cell["metrics"]
    assert m["rtt_loaded_p99_ms"] > m["rtt_idle_p99_ms"]
    assert m["induced_latency_p99_ms"] == pytest.approx(m["rtt_loaded_p99_ms"] - m["rtt_idle_p99_ms"])
    for way in ("up", "down"):
        assert f"owd_{way}_induced_p99_ms" in m and f"owd_{way}_induced_p50_ms" in m
        assert m[f"throughput_{way}_bps"] > 0
    assert m["probes_idle"] >= 50 and m["probes_loaded"] >= 50  # 20 ms probes: 2 s idle, 2 s after the ramp
    import vpnbench
    data = vpnbench.load(str(tmp_path / "c.db"))
    assert {"rtt_ms", "throughput_up_bps", "throughput_down_bps"} <= set(data.series["name"])
    assert {"load-start", "load-end"} <= set(data.events["kind"])


def _probe(t, rtt):
    return Packet(t, rtt / 2, rtt / 2, rtt, "false")


def test_phase_metrics_split_idle_ramp_and_load():
    pkts = [_probe(t / 10, 1.0) for t in range(20)]  # idle: 0 .. 1.9 s
    pkts += [_probe(2 + t / 10, 50.0) for t in range(10)]  # the ramp: left out
    pkts += [_probe(3 + t / 10, 10.0) for t in range(20)] + [Packet(4.5, None, None, None, "true")]
    m = phase_metrics(pkts, load_at=2.0, duration=5.0)
    assert m["rtt_idle_p99_ms"] == 1.0 and m["rtt_loaded_p99_ms"] == 10.0
    assert m["induced_latency_p50_ms"] == 9.0 and m["owd_up_induced_p99_ms"] == 4.5
    assert m["probe_loss_loaded_pct"] == pytest.approx(100 / 21)
    with pytest.raises(MeasurementError):
        phase_metrics(pkts[:20], load_at=2.0, duration=5.0)


@pytest.mark.parametrize("entry, message", [
    ("flows_up = 0\nflows_down = 0", "flows_up, flows_down: both are 0"),
    ('duration = "1s"', "leaves nothing after the 1 s ramp"),
    ("flows_up = -1", "measurement[1].flows_up"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, entry, message):
    (tmp_path / "c.toml").write_text(f'[[technique]]\nkind = "baseline"\n[[measurement]]\nkind = "latency_under_load"\n{entry}\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "c.db").exists()
