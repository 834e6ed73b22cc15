"""Each impairment measured against its setting, through vpnbench's own backends.

The same assertions run for linkem (here) and for the kernel's netem (in the kernel VM,
`make test-kernel`, since this kernel has no sch_netem). Tolerances are wide enough for a
noisy 2-core machine or a TCG guest, and tight enough to fail when a feature is broken.
"""

import dataclasses
import json
import re
import statistics

import pytest

from timing import P50_SLACK_MS, SLOWNESS, assert_delay_added
from vpnbench.hosts.resources import RunResources
from vpnbench.impair.bursts import loss_bursts
from vpnbench.impair.model import Impairment
from vpnbench.impair.spec import parse_netem
from vpnbench.measure.base import MeasureContext, PortAllocator
from vpnbench.measure.ping import Ping, PingParams, rtts
from vpnbench.measure.tcp import Tcp, TcpParams
from vpnbench.run.impairments import make_impairer
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.baseline import Baseline, BaselineParams
from vpnbench.testbeds.base import plan_links
from vpnbench.testbeds.impair_backends import ImpairmentBackend, linkem_binary
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbeds.probe import has_qdisc
from vpnbench.testbeds.spec import TestbedSpec

# Alone, not beside other machine tests (exclusive): delays, jitter and rates held to milliseconds and to a share of the cores.
pytestmark = [pytest.mark.netns, pytest.mark.exclusive]
# the router's side of the server's link, the link the bump sits on
GATEWAY = next(link for link in plan_links(router=True, bump=True) if link.bump).addr("a", "ipv4")


@dataclasses.dataclass
class Link:
    impairer: ImpairmentBackend
    ctx: MeasureContext

    def set(self, egress: str = "", ingress: str = "") -> None:
        self.impairer.apply(Impairment("test", parse_netem(egress), parse_netem(ingress), "auto", "auto"))

    def ping(self, count: int, interval: float = 0.01) -> tuple[dict, list[float]]:
        result = Ping(PingParams(count=count, interval=interval, timeout=3)).run(self.ctx)
        return result.metrics, rtts(result.raw["ping"])

    def tcp(self, seconds: float = 3) -> float:
        return Tcp(TcpParams(duration=seconds, omit=1)).run(self.ctx).metrics["throughput_bps"]


@pytest.fixture(params=["linkem", pytest.param("netem", marks=pytest.mark.vm)], scope="module")
def link(request):
    backend = request.param
    resources = RunResources()
    try:
        if backend == "netem" and not has_qdisc(resources, "netem"):
            pytest.skip("this kernel has no sch_netem: the netem backend runs in the kernel VM (make test-kernel)")
        if backend == "linkem" and linkem_binary() is None:
            pytest.fail("linkem is not built: `make` builds it")
        testbed = LocalTestbed(TestbedSpec(), resources, bump=backend == "linkem")
        testbed.up()
        impairer = make_impairer(backend, testbed)
        try:
            impairer.start()
            testbed.wait_ready()
            ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), resources, None)
            tunnel = Baseline(BaselineParams(), ctx).up("kernel")
            yield Link(impairer, MeasureContext(testbed.client, testbed.server, tunnel, PortAllocator()))
        finally:
            impairer.stop()
            testbed.down()
    finally:
        resources.close()


@pytest.fixture
def base(link) -> dict:
    """Ping metrics of the link without impairment: the floor delays are measured from."""
    link.set()
    return link.ping(50)[0]


def test_delay_both_directions(link, base):
    link.set("delay 10ms", "delay 10ms")
    metrics, _ = link.ping(100)
    assert_delay_added(metrics, base, 20)


def robust_sd(samples: list[float]) -> float:
    """The standard deviation a normal distribution with these quartiles has: a few samples
    held up by the scheduler move it little (stdev squares them)."""
    q1, _, q3 = statistics.quantiles(samples, n=4)
    return (q3 - q1) / 1.349


def test_jitter_normal(link, base):
    link.set("delay 20ms 5ms distribution normal")
    _, samples = link.ping(300, 0.005)
    sd = robust_sd(samples)
    assert 3.5 < sd < 6.5 + (SLOWNESS - 1), sd  # the configured 5 ms, one direction
    # noise only adds delay: the median cannot fall below 20 ms over the floor, less sampling error
    added = statistics.median(samples) - base["rtt_min_ms"]
    assert 17 < added < 20 + 3 + P50_SLACK_MS * SLOWNESS, added


# Loss and corruption are counted with ping, which has no control connection: iperf3's
# end-of-test exchange runs over the impaired link too and can stall for its whole timeout.
def lost_of_1000(link) -> int:
    metrics, _ = link.ping(1000, 0.002)
    return int(metrics["sent"] - metrics["received"])


def within_binomial(lost: int, n: int, percent: float) -> bool:
    p = percent / 100
    return abs(lost - n * p) < 4.5 * (n * p * (1 - p)) ** 0.5 + 3


@pytest.mark.parametrize("percent", [5, 20])
def test_random_loss(link, percent):
    link.set(f"loss {percent}%")  # requests only: egress
    lost = lost_of_1000(link)
    assert within_binomial(lost, 1000, percent), lost


def test_gilbert_elliott_bursts(link):
    link.set("loss gemodel 2% 25%")  # theory: loss p/(p+r) = 7.4 %, mean burst 1/r = 4 packets
    count, leave_bad = 4000, 0.25
    result = Ping(PingParams(count=count, interval=0.002, timeout=3)).run(link.ctx)
    answered = {int(seq) for seq in re.findall(r"icmp_seq=(\d+)", result.raw["ping"])}
    bursts = loss_bursts([seq not in answered for seq in range(1, count + 1)])
    lost = count - len(answered)
    assert 0.03 < lost / count < 0.13, lost
    # A burst's length is geometric (mean 1/r = 4, sd sqrt(1-r)/r = 3.5): the mean of the bursts seen
    # within 4.5 standard errors of 4. With 1 500 pings (~28 bursts) a fixed 2.5-6.5 failed once in
    # the kernel VM (2.39, 29 Nov); 4 000 give ~74 bursts, and the bound still excludes random loss
    # of the same rate (mean burst about 1.08).
    margin = 4.5 * (1 - leave_bad) ** 0.5 / leave_bad / len(bursts) ** 0.5
    assert 1 / leave_bad - margin < statistics.fmean(bursts) < 1 / leave_bad + margin, (len(bursts), bursts)
    assert 1 / leave_bad - margin > 1.08 + 0.5, len(bursts)  # enough bursts to tell bursts from random loss


def test_duplicate(link):
    link.set("duplicate 10%")
    metrics, _ = link.ping(200, 0.005)
    assert 5 <= metrics["duplicates"] <= 40, metrics  # 20 expected
    assert metrics["loss_pct"] == 0


def test_reorder_sends_some_packets_at_once(link, base):
    link.set("delay 10ms reorder 50%")
    _, samples = link.ping(200, 0.02)
    immediate = sum(1 for rtt in samples if rtt < base["rtt_p50_ms"] + 5) / len(samples)
    assert 0.35 < immediate < 0.65, immediate


def test_corrupt_shows_as_checksum_loss(link):
    link.set("corrupt 10%")  # a flipped bit fails the IP or ICMP checksum (or the MAC filter)
    lost = lost_of_1000(link)
    assert within_binomial(lost, 1000, 10), lost


@pytest.mark.parametrize("mbit", [10, 50])
def test_rate(link, mbit):
    link.set()
    unlimited = link.tcp()  # what this host's TCP carries over the same path without the limit
    link.set(f"rate {mbit}mbit")
    bps = link.tcp()
    # Both charge every wire frame (netem once the backend limits GSO on the senders), so TCP
    # goodput tops out at 1448/1514 = 0.956 of the rate.
    # The cap is the exact bound (no host can beat it); a busy host's TCP only falls short of it,
    # and never reaches more than the same path carried without the limit. The floor only tells a
    # shaper that strangles (a unit wrong, a timer per packet) from one that shapes: in a TCG guest
    # with the CPU halved, netem at 50 mbit carried 0.63 of it (stop 70), so there 0.5.
    floor = 0.85 if SLOWNESS == 1 else 0.5
    assert floor * min(mbit * 1e6, unlimited) < bps <= 1.01 * mbit * 1e6, (bps, unlimited)
    assert link.impairer.facts().get("gso_max_segs_1", True)


def test_asymmetric_link(link, base):
    link.set("delay 30ms", "")
    metrics, _ = link.ping(20, 0.05)
    assert_delay_added(metrics, base, 30)


def test_nothing_passes_the_bump_by_the_routers_stack(link):
    """linkem's bridge ends take no part in the router's stack. The router's kernel answers ARP
    for its addresses on any interface, so a server asking for its gateway while linkem dropped the
    router's answers learned a bridge end's MAC, and its frames then went past linkem through the
    router's stack (with the in-kernel pass-through on, they were lost: the stalled path of
    test_external failed 4 of 7 runs)."""
    if link.impairer.name != "linkem":
        pytest.skip("netem sits on a host's own interface: there is no bridge end to go past")
    bump, ends = link.impairer.host, (link.impairer.a, link.impairer.b)
    bridge_macs = {json.loads(bump.run(["ip", "-j", "link", "show", "dev", end]).stdout)[0]["address"] for end in ends}
    server = link.ctx.server
    link.set("loss 100%", "loss 100%")  # a dead path: the server's ARP requests, the router's answers
    try:
        server.run(["ip", "neigh", "flush", "all"])
        reached = server.run(["ping", "-n", "-c", "2", "-i", "0.2", "-W", "1", GATEWAY], check=False).ok
        neighbours = json.loads(server.run(["ip", "-j", "neigh", "show", GATEWAY]).stdout)
    finally:
        link.set()
        server.run(["ip", "neigh", "flush", "all"])
    assert not reached
    assert not {n.get("lladdr") for n in neighbours} & bridge_macs, (neighbours, bridge_macs)
