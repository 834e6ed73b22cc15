"""fping's replies slower than its period, on a real delayed path (linkem between two namespaces).

In count mode fping 5.1 waits for a reply only as long as its period unless -t is given, and
discards a later one: setup_rate and rekey_rate ping every 10 ms, so a 30 ms round trip lost
every reply before vpnbench passed -t.
"""
import re

import pytest
from linkem_helpers import linkem, linkem_bin, topo  # noqa: F401  (fixtures)

from vpnbench.hosts.netns import NetnsHost
from vpnbench.measure.fping import FpingProbe, first_replies, parse_losses

pytestmark = [pytest.mark.netns, pytest.mark.exclusive]

ONE_WAY_MS = 15  # each direction: a round trip of at least 30 ms, three periods of 10 ms
PERIOD_S = 0.01
_RTT = re.compile(r"\[\d+\], \d+ bytes, (?P<ms>[\d.]+) ms")


def test_replies_slower_than_the_period_are_counted(topo, linkem, tmp_path):  # noqa: F811
    linkem(a2b=f"delay {ONE_WAY_MS}ms", b2a=f"delay {ONE_WAY_MS}ms")
    client = NetnsHost("client", topo.c, tmp_path)

    # setup_rate's wait for a first reply: it comes, one round trip after the first ping at the earliest
    first, output = first_replies(client, [topo.s_ip], "ipv4", timeout=5, period=PERIOD_S)
    assert first[topo.s_ip] >= 2 * ONE_WAY_MS / 1e3, output

    # rekey_rate's probe: 40 pings, every one answered although each reply took 3 periods or more
    probe = FpingProbe(client, [topo.s_ip], "ipv4", PERIOD_S, seconds=0.4).start()
    try:
        probe.proc.wait(10)  # it ends by itself after its count (and the last reply)
        output = probe.finish()
    finally:
        probe.stop()
    rtts = [float(m["ms"]) for m in map(_RTT.search, output.splitlines()) if m]
    assert parse_losses(output) == {topo.s_ip: (40, 40)}, output
    assert len(rtts) == 40 and min(rtts) >= 2 * ONE_WAY_MS > 1e3 * PERIOD_S, rtts
