"""The traffic primitives' one clock: a load's and a probe's own times (iperf3's interval ends,
ping's sequence numbers) land on the measurement's clock shifted by when each started."""

from vpnbench.measure.traffic import Iperf3Load, PingProbe, TimeAxis

PING = """PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.
64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.050 ms
64 bytes from 10.0.0.2: icmp_seq=3 ttl=64 time=0.070 ms
"""


def test_a_load_and_a_probe_started_apart_share_the_measurements_clock():
    clock = TimeAxis(t0=100.0)
    probe = PingProbe(ctx=None, family="ipv4", interval=0.2, seconds=1)
    probe.started = 100.5  # the probe went out 0.5 s after the clock's zero ...
    load = Iperf3Load(ctx=None, family="ipv4", args=[], seconds=1)
    load.started = 101.0  # ... and the load 1 s after it
    assert probe.series(clock, PING) == [(0.5, 0.05), (0.5 + 0.4, 0.07)]  # seq 3 was sent 0.4 s after seq 1
    assert probe.sent_times(clock, 3) == [0.5, 0.7, 0.5 + 0.4]
    assert load.on(clock, [(1.0, 5e6), (2.0, 6e6)]) == [(2.0, 5e6), (3.0, 6e6)]


def test_a_clock_started_at_the_load_puts_the_probe_before_zero():
    load_start = 50.0
    clock = TimeAxis(t0=load_start)
    probe = PingProbe(ctx=None, family="ipv4", interval=1.0, seconds=5)
    probe.started = 49.75
    assert probe.series(clock, PING)[0] == (-0.25, 0.05)
    assert round(TimeAxis().now(), 1) == 0.0
