"""A PMTU black hole (issue 32): the router's link to the server narrowed to `mtu` and, with
icmp = "drop", the ICMP "fragmentation needed" / "packet too big" the router would send dropped.
Then, through the tunnel: does a TCP flow get through (its goodput, and when it first moved more
than an initial window), which don't-fragment datagrams get through, and the effective MTU
(measure/mtu.py's probe and bisection). icmp = "pass" is the same path with ICMP reaching the
sender, the comparison: one cell per condition, so each cell's metrics mean one thing and
repetitions, tables and the report compare the two as two measurements.

How packets got through is counted, not guessed: IP fragments made on each host while the cell ran
(/proc/net/snmp FragCreates: the router fragmenting outer packets whose DF is clear, or a sender's
kernel fragmenting after it learned the path MTU), the ICMP too-big messages the router sent or
dropped (the nft rule's counter), the MSS the TCP flow ran with (a clamp shows as an MSS below the
tunnel device's MTU - 40), and net.ipv4.tcp_mtu_probing on the client (PLPMTUD, RFC 4821) as a fact.

Everything the cell changes is undone at its end, on Ctrl-C too: both MTUs restored, the nft table
removed, the learned path MTUs flushed on client and server (so the next cell does not start with
a narrowed route). The router is a namespace of this machine (local and vm testbeds: ssh
testbeds are refused), so after a kill -9 `vpnbench cleanup` removes it with everything in it.
"""

import functools
from pathlib import Path
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params
from vpnbench.hosts.base import Host
from vpnbench.hosts.route import device_mtu, global_addresses, route_device, route_mtu
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.iperf import first_json_object, interval_series
from vpnbench.measure.mtu import Prober, bisect, expected_metrics
from vpnbench.measure.traffic import Iperf3Load
from vpnbench.techniques import expect
from vpnbench.techniques.base import Cleanup
from vpnbench.techniques.overhead import MIN_MTU
from vpnbench.testbeds.spec import TestbedSpec

IPV6_MIN_MTU = 1280  # below it the kernel drops an interface's IPv6: the narrowed link keeps both families
# RFC 6928's initial window: 10 segments of a 1500-byte path's MSS leave before any ACK comes
# back, so a receiver that got more than this got it because ACKs of full-sized segments flowed.
INITIAL_WINDOW_BYTES = 10 * 1460
IPERF_INTERVAL = 0.1  # iperf3's smallest report interval: the resolution of the time to first progress
TCP_GRACE_S = 5.0  # past the flow's duration, for iperf3's results exchange
# The router's own ICMP errors leave through its output hook: "fragmentation needed" (type 3
# code 4) and ICMPv6 "packet too big" (type 2), counted, and dropped when icmp = "drop".
NFT_RULES = """table inet {table} {{
    chain out {{
        type filter hook output priority 0; policy accept;
        icmp type destination-unreachable icmp code 4 counter {verdict}
        icmpv6 type packet-too-big counter {verdict}
    }}
}}
"""


class BlackholeParams(Params):
    kind: Literal["pmtu_blackhole"] = "pmtu_blackhole"
    mtu: int = Field(1300, ge=IPV6_MIN_MTU, le=9000)  # the narrowed link's MTU (router and server side)
    icmp: Literal["drop", "pass"] = "drop"  # drop: a black hole; pass: the comparison
    family: Family = "ipv4"  # the inner family of the flow and the probes
    duration: Duration = Field(5.0, gt=0, le=3600)  # of the TCP flow
    # Don't-fragment datagrams sent through the tunnel, by the size of the inner IP packet
    sizes: list[int] = Field([1200, 1300, 1400], min_length=1, max_length=20)
    timeout: Duration = Field(1.0, gt=0, le=30)  # a probe's wait for its reply (lost twice: did not get through)


class PmtuBlackhole(Measurement):
    kind = "pmtu_blackhole"
    Params = BlackholeParams
    tools = ("iperf3", "ping", "ip")
    server_tools = ("iperf3", "ip")
    packages = {"iperf3": "iperf3", "ping": "iputils-ping", "ip": "iproute2", "nft": "nftables"}
    columns = (Column("mtu_bytes", "MTU found"), Column("tcp_through", "TCP through"),
               Column("tcp_progress_s", "TCP progress s"), Column("tcp_goodput_bps", "TCP Mbit/s", 1e-6),
               Column("datagram_largest_bytes", "largest DF datagram"), Column("icmp_too_big", "ICMP too-big"),
               Column("fragments", "fragments"))
    headline = Headline(("mtu_bytes", "mtu_protocol_bytes"), "MTU through the narrowed path (bytes)",
                        names=("found", "fits one outer packet"))
    figures = ("headline", "time_series")
    captions = ("outcome",)

    @classmethod
    def refused(cls, params: Params, techniques: list[Params], testbed: TestbedSpec) -> str | None:
        if not testbed.router:
            return f"kind: '{cls.kind}' narrows the router's link to the server: it needs [testbed] router = true"
        if testbed.kind == "ssh":
            return (f"kind: '{cls.kind}' changes the router's link, which on an ssh testbed is not vpnbench's to "
                    "change (a kill -9 would leave it narrowed); allowed here: kind = 'local' or 'vm'")
        return None

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        if "mtu_bytes" not in metrics:
            return ""
        tcp = (f"TCP through after {metrics['tcp_progress_s']:.1f} s ({metrics['tcp_goodput_bps'] / 1e6:.1f} Mbit/s)"
               if metrics.get("tcp_through") else "TCP stalled")
        largest = metrics.get("datagram_largest_bytes")
        datagrams = f"DF datagrams up to {largest:.0f} B" if largest else "no DF datagram through"
        return f"MTU {metrics['mtu_bytes']:.0f}, {tcp}, {datagrams}"

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"duration": min(params.duration, seconds),
                                         "timeout": min(params.timeout, 0.3)})

    def expected_seconds(self) -> float:
        # the flow, then every size and a bisection's dozen probes, a lost one waited for twice
        return self.params.duration + 2 * (len(self.params.sizes) + 12) * self.params.timeout

    def default_label(self) -> str:
        return f"pmtu_blackhole_{self.params.icmp}" + ("_v6" if self.params.family == "ipv6" else "")

    def run(self, ctx: MeasureContext) -> MeasureResult:
        if ctx.router is None:  # the campaign refuses it; a caller of the API may not have
            raise MeasurementError("pmtu_blackhole needs a router between client and server", {})
        p = self.params
        raw: dict[str, str] = {}
        path = NarrowedPath(ctx, p, raw)
        undo = Cleanup()
        try:
            path.narrow(undo)
            metrics, series = path.measure()
        finally:
            undo.unwind()
            metrics_after = path.check_restored()
        return MeasureResult({**metrics, **metrics_after}, raw, series=series)


class NarrowedPath:
    """One cell's path: the router's link to the server narrowed, ICMP counted (and dropped),
    then the flow, the datagrams and the MTU search through the tunnel."""

    def __init__(self, ctx: MeasureContext, params: BlackholeParams, raw: dict[str, str]):
        self.ctx, self.p, self.raw = ctx, params, raw
        self.router: Host = ctx.router
        self.table = f"vpnbench_{Path(self.router.workdir).name}_blackhole"  # the run id in its name
        self.ends: list[tuple[Host, str, int]] = []  # (host, interface, its MTU before)

    def narrow(self, undo: Cleanup) -> None:
        self.router.require("nft")  # FileNotFoundError naming nftables: the cell fails before any change
        router_iface, server_iface = self._link()
        for host, iface in ((self.router, router_iface), (self.ctx.server, server_iface)):
            before = device_mtu(host, iface)
            if before is None or before <= self.p.mtu:
                raise MeasurementError(f"mtu: {self.p.mtu} does not narrow the link ({host.role}'s {iface} "
                                       f"has MTU {before}); allowed values: below {before}", self.raw)
            self.ends.append((host, iface, before))
        self.raw["link"] = "".join(f"{host.role} {iface}: MTU {before} -> {self.p.mtu}\n"
                                   for host, iface, before in self.ends)
        for host in (self.ctx.client, self.ctx.server):
            undo.defer(forget_path_mtus, host)  # what the hosts learn from the router's ICMP
        verdict = "drop" if self.p.icmp == "drop" else "accept"
        self.router.run(["nft", "-f", "-"], input=NFT_RULES.format(table=self.table, verdict=verdict), timeout=10)
        undo.defer(self.router.run, ["nft", "delete", "table", "inet", self.table], timeout=10)
        for host, iface, before in self.ends:
            set_mtu(host, iface, self.p.mtu)
            undo.defer(set_mtu, host, iface, before)
        self.fragments_before = {host.role: fragments_created(host) for host in self._hosts()}

    def _link(self) -> tuple[str, str]:
        """The router's interface towards the server and the server's towards the router: the
        router's route to a server address, and the server's route back to the router's address
        on that interface."""
        for address in global_addresses(self.ctx.server):
            router_iface = route_device(self.router, address)
            if router_iface is None:
                continue
            for router_address in global_addresses(self.router, router_iface):
                server_iface = route_device(self.ctx.server, router_address)
                if server_iface is not None:
                    return router_iface, server_iface
        raise MeasurementError("the router has no route to the server's underlay addresses", self.raw)

    def _hosts(self) -> list[Host]:
        return [self.ctx.client, self.router, self.ctx.server]

    def measure(self) -> tuple[dict[str, float], dict[str, list[tuple[float, float]]]]:
        metrics: dict[str, float] = {"link_mtu_bytes": float(self.p.mtu), "icmp_dropped": float(self.p.icmp == "drop")}
        tcp, series = self._tcp()
        metrics.update(tcp)
        metrics.update(self._datagrams_and_mtu())
        metrics.update(self._how_it_got_through())
        return metrics, series

    def _tcp(self) -> tuple[dict[str, float], dict[str, list[tuple[float, float]]]]:
        """A TCP flow client -> server (into the narrowed link) for `duration`, the receiver
        reporting every 0.1 s: when it first got more than an initial window, and how much in all.
        A black hole can stall iperf3's own closing exchange: the client gets a few seconds past
        its duration, then what the receiver reported so far is what counts."""
        p = self.p
        interval = ("-i", f"{IPERF_INTERVAL:g}")
        load = Iperf3Load(self.ctx, p.family, ["-t", f"{p.duration:g}", *interval], p.duration,
                          server_args=("-J", *interval))
        try:
            load.start()
            client_out, server_out = load.finish(grace=TCP_GRACE_S)
        finally:
            load.stop()
            self.raw.update({f"tcp_{name}": text for name, text in load.outputs().items()})
        try:
            received = first_json_object(server_out)
        except ValueError:
            received = {}
        try:
            sent = first_json_object(client_out)
        except ValueError:
            sent = {}
        intervals = received.get("intervals") or []
        progress = first_progress(intervals)
        total = sum((i.get("sum") or {}).get("bytes") or 0 for i in intervals)
        seconds = sum((i.get("sum") or {}).get("seconds") or 0 for i in intervals)
        metrics = {"tcp_through": float(progress is not None), "tcp_bytes_received": float(total),
                   "tcp_goodput_bps": total * 8 / seconds if seconds > 0 else 0.0}
        if progress is not None:
            metrics["tcp_progress_s"] = progress
        if mss := (sent.get("start") or {}).get("tcp_mss_default"):
            metrics["tcp_mss_bytes"] = float(mss)
        return metrics, {"throughput_bps": interval_series(received)} if intervals else {}

    def _datagrams_and_mtu(self) -> dict[str, float]:
        """The don't-fragment probes at each size, then the effective MTU: the largest size up to
        which every probe passes (mtu.py's bisection, between the largest probed size that passed
        with every smaller one and the smallest that did not), and what the arithmetic says fits.
        Bigger sizes can pass again where outer packets are fragmented (a technique that sends
        them DF-clear): the sizes' own verdicts show it."""
        p, ctx = self.p, self.ctx
        target = ctx.target(p.family)
        log: list[str] = []
        prober = Prober(ctx, target, p.family, p.timeout, log)
        passes = functools.cache(prober.passes)  # the bisection asks its two ends again
        metrics: dict[str, float] = {}
        verdicts = {size: passes(size) for size in sorted(set(p.sizes))}
        for size, ok in verdicts.items():
            metrics[f"datagram_{size}_through"] = float(ok)
        through = [size for size, ok in verdicts.items() if ok]
        metrics["datagrams_through"] = float(len(through))
        if through:
            metrics["datagram_largest_bytes"] = float(max(through))
        floor = IPV6_MIN_MTU if p.family == "ipv6" else MIN_MTU
        refused = [size for size, ok in verdicts.items() if not ok]
        low = max([floor] + [size for size in through if not refused or size < refused[0]])
        _, route = route_mtu(ctx.client, target)
        high = refused[0] - 1 if refused else max(route or 0, low)
        try:
            mtu = bisect(passes, low, high) if low <= high else None
        finally:
            self.raw["probes"] = "\n".join(log) + "\n"
        metrics["probes"] = float(prober.count)
        if mtu is not None:
            metrics["mtu_bytes"] = float(mtu)
            expectation = expect(ctx.technique_params, p.mtu)
            metrics.update(expected_metrics(expectation, mtu))
            self.raw["expected"] = (f"through a {p.mtu}-byte link: {expectation.how}; one outer packet holds "
                                    f"{expectation.protocol_mtu} B inside; found {mtu}\n")
        return metrics

    def _how_it_got_through(self) -> dict[str, float]:
        metrics: dict[str, float] = {}
        total = 0
        for host in self._hosts():
            made = fragments_created(host) - self.fragments_before[host.role]
            metrics[f"fragments_{host.role}"] = float(made)
            total += made
        metrics["fragments"] = float(total)
        listed = self.router.run(["nft", "list", "table", "inet", self.table], timeout=10, check=False).stdout
        self.raw["nft"] = listed
        metrics["icmp_too_big"] = float(sum(counted_packets(listed)))
        probing = self.ctx.client.run(["sysctl", "-n", "net.ipv4.tcp_mtu_probing"], timeout=5, check=False)
        if probing.stdout.strip().isdigit():
            metrics["tcp_mtu_probing"] = float(probing.stdout.strip())
        return metrics

    def check_restored(self) -> dict[str, float]:
        """After the undo: both MTUs back and no table of this cell on the router, read back."""
        if not self.ends:
            return {}
        back = [device_mtu(host, iface) == before for host, iface, before in self.ends]
        tables = self.router.run(["nft", "list", "tables"], timeout=10, check=False).stdout
        self.raw["after"] = "".join(f"{host.role} {iface}: MTU {device_mtu(host, iface)}\n"
                                    for host, iface, _ in self.ends) + f"nft tables: {tables.strip() or 'none'}\n"
        return {"restored": float(all(back) and self.table not in tables)}


def first_progress(intervals: list[dict]) -> float | None:
    """The end (seconds into the flow) of the first receiver interval by which more than an initial
    window had arrived; None when it never did."""
    received = 0
    for interval in intervals:
        summed = interval.get("sum") or {}
        received += summed.get("bytes") or 0
        if received > INITIAL_WINDOW_BYTES and summed.get("end") is not None:
            return float(summed["end"])
    return None


def counted_packets(nft_listing: str) -> list[int]:
    """The packet counts of the `counter` statements in `nft list table` output."""
    words = nft_listing.split()
    return [int(words[i + 2]) for i, word in enumerate(words[:-2]) if word == "counter" and words[i + 1] == "packets"]


def fragments_created(host: Host) -> int:
    """IP fragments this host (its network namespace) has made, IPv4 and IPv6."""
    snmp = host.run(["cat", "/proc/net/snmp", "/proc/net/snmp6"], timeout=5, check=False).stdout
    return snmp_counter(snmp, "Ip", "FragCreates") + snmp_counter(snmp, "Ip6FragCreates")


def snmp_counter(text: str, group: str, name: str | None = None) -> int:
    """A counter of /proc/net/snmp (a header line of names, then a line of values, per group) or,
    with name None, of /proc/net/snmp6 (a name and its value per line)."""
    lines = text.splitlines()
    if name is None:
        return next((int(line.split()[1]) for line in lines if line.split()[:1] == [group]), 0)
    rows = [line.split()[1:] for line in lines if line.startswith(f"{group}: ")]
    for names, values in zip(rows[::2], rows[1::2]):
        if name in names:
            return int(values[names.index(name)])
    return 0


def set_mtu(host: Host, iface: str, mtu: int) -> None:
    host.run(["ip", "link", "set", "dev", iface, "mtu", str(mtu)], timeout=10)


def forget_path_mtus(host: Host) -> None:
    """Flush the path MTUs the host learned (both families): the next cell starts from its interfaces'."""
    host.run(["ip", "route", "flush", "cache"], timeout=10, check=False)
    host.run(["ip", "-6", "route", "flush", "cache"], timeout=10, check=False)
