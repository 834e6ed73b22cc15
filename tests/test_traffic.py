"""The traffic primitives' one shape and one clock: every load and probe is a `Traffic` (start,
stop -> None, outputs, series), and a load's and a probe's own times (iperf3's interval ends,
ping's sequence numbers, irtt's send times) land on the measurement's clock shifted by when each
started."""

import inspect

from vpnbench.measure import irtt, traffic
from vpnbench.measure.base import MeasureContext, PortAllocator
from vpnbench.measure.irtt import Packet
from vpnbench.measure.traffic import Iperf3Load, IrttProbe, PingProbe, TimeAxis, Traffic
from vpnbench.techniques.base import Tunnel

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
    assert probe.series(clock, probe.rtts(PING)) == [(0.5, 0.05), (0.5 + 0.4, 0.07)]  # seq 3 went 0.4 s after seq 1
    assert [t for t, _ in probe.series(clock, probe.sent(3))] == [0.5, 0.7, 0.5 + 0.4]
    assert load.series(clock, [(1.0, 5e6), (2.0, 6e6)]) == [(2.0, 5e6), (3.0, 6e6)]


def test_a_clock_started_at_the_load_puts_the_probe_before_zero():
    load_start = 50.0
    clock = TimeAxis(t0=load_start)
    probe = PingProbe(ctx=None, family="ipv4", interval=1.0, seconds=5)
    probe.started = 49.75
    assert probe.series(clock, probe.rtts(PING))[0] == (-0.25, 0.05)
    assert round(TimeAxis().now(), 1) == 0.0


def primitives() -> list[type]:
    """Every class of measure/traffic.py that starts and stops something."""
    return [cls for _, cls in inspect.getmembers(traffic, inspect.isclass)
            if cls.__module__ == traffic.__name__ and hasattr(cls, "start") and hasattr(cls, "stop")]


def made(cls: type) -> Traffic:
    """A primitive not started (no host is touched): ctx None, the smallest arguments."""
    if cls is Iperf3Load:
        return Iperf3Load(ctx=None, family="ipv4", args=[], seconds=1)
    if cls is PingProbe:
        return PingProbe(ctx=None, family="ipv4", interval=0.2, seconds=1)
    tunnel = Tunnel("kernel", {"ipv4": "10.0.0.2"}, {"ipv4": "10.0.0.1"}, "none", None)
    ctx = MeasureContext(client=None, server=None, tunnel=tunnel, ports=PortAllocator())
    return IrttProbe(ctx, family="ipv4", interval=0.02, size=172, seconds=1)


def test_every_load_and_probe_is_one_traffic_shape():
    """Each primitive is a Traffic with nothing left abstract; a server is a part of one (it
    serves a load or a probe, it has no traffic of its own) but stops the same way: to None."""
    loads_and_probes = [cls for cls in primitives() if not cls.__name__.endswith("Server") and cls is not Traffic]
    assert {cls.__name__ for cls in loads_and_probes} == {"Iperf3Load", "PingProbe", "IrttProbe"}
    for cls in loads_and_probes:
        assert issubclass(cls, Traffic) and not inspect.isabstract(cls), cls
        primitive = made(cls)
        assert primitive.stop() is None and primitive.stop() is None  # not started, and twice: safe
        assert all(isinstance(text, str) for text in primitive.outputs().values()) and primitive.outputs()
    for cls in primitives() + [irtt.IrttServer]:
        assert inspect.signature(cls.stop).return_annotation in (None, "None"), cls


def test_every_primitive_puts_its_samples_on_the_axis_by_its_start():
    axis = TimeAxis(t0=10.0)
    for cls in (Iperf3Load, PingProbe, IrttProbe):
        primitive = made(cls)
        primitive.started = 12.5
        if cls is IrttProbe:
            shifted = primitive.series(axis, [Packet(t=0.25, up_ms=0.5, down_ms=0.5, rtt_ms=1.0, lost="false")])
            assert [pk.t for pk in shifted] == [2.75] and shifted[0].rtt_ms == 1.0
        else:
            assert primitive.series(axis, [(0.25, 7.0)]) == [(2.75, 7.0)]
