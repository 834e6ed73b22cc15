"""Motion: the tunnel's path moves or breaks mid-flow, and how long until traffic flows again
(the IPsec benchmarking drafts' failover time; roaming as VPN users meet it).

A ping probe through the tunnel (one every `probe_interval`) runs `before` seconds, then one event:

- address: the client moves to another network: a new subnet on its link (the router's side of it
  .1, the client .2; NEW_SUBNET), the client's new address added, its old one removed and its
  default route moved to the new gateway (the client roams: WireGuard's server follows the
  endpoint its packets come from, IKEv2 MOBIKE updates the SAs, OpenVPN's server floats);
- nat: a NAT rebinding: the router starts rewriting the client's UDP source port (an nft table
  with a source NAT to the same address and a port of NAT_PORTS, made mid-flow: conntrack begins
  tracking the flow then, so its next packet gets the new port), so the server sees the same
  client from a new port;
- cut: the router drops everything to and from the client's link, both families, for `outage`
  seconds, then lets it through again;
- restart: the server's daemon killed and started again (Technique.restart_server).

The recovery time runs from the event (a cut: from the path's restoration) to the arrival of the
first reply to a ping sent after it, every time on one clock: ping's own stamps (-D, the client's
clock) put on the controller's by Host.clock_offset, never counted from when ping was asked to
start. Its resolution (stored as recovery_resolution_s) is the probe's interval plus how well the
two clocks are known (nothing in a namespace, half a round trip over ssh). The outage runs from
the last reply before the event to that first reply. Not recovered within `window` seconds is a
result ("not recovered within T s"), not a failure. On the baseline (the control) the same events
happen to its plain path; a restart there does nothing.

Then the path is put back (the address restored, the nft table removed, also on Ctrl-C; the
table is named after the run, and lives in the router's namespace on the local and VM testbeds,
so `vpnbench cleanup` removes it with the namespace after a kill -9) and the technique brought
down and up again (MeasureContext.cycle): its state followed the move, and the next cell gets it
as it was before. What keeps each technique alive (keepalive, DPD, MOBIKE, float) is in its
bring-up's negotiated record.
"""

import ipaddress
import json
import math
import re
import time
from typing import Literal, NamedTuple

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError, VpnbenchError
from vpnbench.foundation.params import Duration, Params
from vpnbench.hosts.base import Host
from vpnbench.hosts.route import route_device
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.ping import percentile
from vpnbench.measure.traffic import PingProbe, TimeAxis
from vpnbench.techniques import TECHNIQUES, is_reference
from vpnbench.techniques.base import Cleanup
from vpnbench.testbeds.spec import TestbedSpec

ROUTER_EVENTS = ("address", "nat", "cut")  # made on (or with) the router
NEW_SUBNET = 10  # the client's new network after a move: its old one + 10 networks of its size (10.201.1.0/24 -> 10.201.11.0/24)
NAT_PORTS = "40000-40999"  # the client's new source port after a rebinding: one of these
POLL_S = 0.05  # how often the probe's output is read while waiting for the first reply after the event


class MotionParams(Params):
    kind: Literal["motion"] = "motion"
    event: Literal["address", "nat", "cut", "restart"] = "address"
    before: Duration = Field(1.0, gt=0, le=60)  # seconds of probe before the event
    window: Duration = Field(10.0, gt=0, le=600)  # longest wait for traffic after the event (a cut: after restoration)
    outage: Duration = Field(2.0, gt=0, le=600)  # cut only: seconds the path stays cut
    after: Duration = Field(1.0, ge=0, le=60)  # seconds of probe kept after recovery
    probe_interval: Duration = Field(0.02, ge=0.002, le=1)  # seconds between pings


class Motion(Measurement):
    kind = "motion"
    Params = MotionParams
    tools = ("ping", "ip")
    packages = {"ping": "iputils-ping", "ip": "iproute2", "nft": "nftables"}
    columns = (Column("recovery_s", "recovery ms", 1e3), Column("outage_s", "outage ms", 1e3),
               Column("pings_lost", "pings lost"), Column("recovered", "recovered"))
    headline = Headline(("recovery_s",), "time until traffic flows again (ms)", 1e3)

    @classmethod
    def refused(cls, params: MotionParams, techniques: list[Params], testbed: TestbedSpec) -> str | None:
        router = testbed.router
        allowed = "address, nat, cut, restart" if router else "restart"
        if params.event in ROUTER_EVENTS and not router:
            return (f"event: {params.event!r} changes the path at the router and needs [testbed] router = true; "
                    f"allowed here: {allowed}")
        if params.event in ROUTER_EVENTS and testbed.kind == "ssh":
            return (f"event: {params.event!r} changes the router, which on an ssh testbed is not vpnbench's to change "
                    "(a kill -9 would leave it changed); allowed here: restart")
        if params.event == "restart":
            for number, technique in enumerate(techniques, start=1):
                if TECHNIQUES[technique.kind].is_reference:
                    continue  # the control: nothing to restart, the same probe runs
                reason = TECHNIQUES[technique.kind].cannot_restart_server(technique)
                if reason:
                    return (f"event: 'restart' cannot run on technique[{number}] ({reason}); allowed here: "
                            + ("address, nat, cut" if router else "none (no router)"))
        return None

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        if metrics.get("recovered") == 0:
            return f"not recovered within {metrics.get('window_s', 0):g} s"
        return super().headline_text(metrics)

    def expected_seconds(self) -> float:
        p = self.params
        return p.before + (p.outage if p.event == "cut" else 0) + p.window + p.after + 2  # 2: the cycle after

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"before": min(params.before, 0.5), "outage": min(params.outage, 1.0),
                                         "window": min(params.window, 5.0), "after": min(params.after, 0.5)})

    def default_label(self) -> str:
        return f"motion_{self.params.event}"

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        control = is_reference(ctx.technique_params)
        if p.event in ROUTER_EVENTS:
            if ctx.router is None:
                raise MeasurementError(f"motion: event {p.event!r} needs a router between client and server")
            ctx.router.require("nft")
        if p.event == "restart" and ctx.restart_server is None and not control:
            raise MeasurementError("motion: this runner cannot restart the technique's server")
        family = ctx.tunnel.family
        # whole seconds: ping's -w takes no fraction; the probe is stopped once it has shown the recovery
        seconds = math.ceil(p.before + (p.outage if p.event == "cut" else 0) + p.window + p.after + 1)
        # -D: each reply stamped with its arrival, since ping falls behind its schedule while
        # replies are missing, and sequence number × interval drifts from real time
        probe = PingProbe(ctx, family, p.probe_interval, seconds, flags=("-D",))
        path = Cleanup()  # what the event changed, undone newest first
        events: list[tuple[float, str, dict]] = []
        raw: dict[str, str] = {}
        # the client's clock at the cell clock's zero: ping -D stamps its replies with the host's
        # clock, which this turns into seconds on the cell's clock, wherever ping really started
        offset, clock_uncertainty = ctx.client.clock_offset()
        try:
            probe.start()
            clock = TimeAxis(probe.started)
            origin = offset + clock.t0
            time.sleep(p.before)
            moved, counted_from = self._event(ctx, control, path, clock, events)
            recovered = wait_for_reply(probe, clock, counted_from, p.window, origin)
            if recovered is not None:
                time.sleep(p.after)
            if p.event == "nat":  # conntrack may have known the flow already: then nothing was rewritten
                events.append((round(clock.now(), 3), "nat-rewritten",
                               {"flows": nft_counted(ctx.router, events[0][2]["table"])}))
        except (VpnbenchError, OSError) as exc:
            raise MeasurementError(f"motion {p.event}: {exc}", probe.outputs()) from None
        finally:
            probe.stop()
            raw.update(probe.outputs())
            path.unwind()  # the path as it was (raises its first failure after undoing the rest)
        replies = stamped_replies(raw["ping"], origin)
        if not any(reply.sent < events[0][0] for reply in replies):
            raise MeasurementError("motion: no reply through the tunnel before the event", raw)
        metrics, detail = recovery(replies, moved, counted_from, p.window, p.probe_interval)
        # the first ping after the event left up to one interval after it; the clocks agree to within
        # the uncertainty of reading the client's (0 for a namespace, half a round trip over ssh)
        metrics["recovery_resolution_s"] = round(p.probe_interval + clock_uncertainty, 6)
        detail["resolution_s"] = metrics["recovery_resolution_s"]
        events.append((detail.get("recovered_at_s", round(counted_from + p.window, 3)),
                       "recovered" if metrics["recovered"] else "not-recovered", detail))
        if ctx.cycle is not None and not control:
            try:
                cycled = ctx.cycle()
            except (VpnbenchError, OSError) as exc:
                raise MeasurementError(f"motion {p.event}: the technique did not come back up after the cell: {exc}",
                                       raw, metrics) from None
            events.append((round(clock.now(), 3), "cycled", {"up_s": cycled.up_s, "why": "its state followed the move"}))
        series = {"rtt_ms": [(reply.sent, reply.rtt_ms) for reply in replies]}
        return MeasureResult(metrics, raw, series=series, events=events)

    def _event(self, ctx: MeasureContext, control: bool, path: Cleanup, clock: TimeAxis,
               events: list) -> tuple[float, float]:
        """Make the event happen, its undo registered in path: (when the path moved, when recovery
        starts counting: the same but for a cut, whose count starts at the restoration)."""
        p = self.params
        started = clock.now()
        if p.event == "address":
            detail = move_address(ctx.client, ctx.router, path)
        elif p.event == "restart":
            detail = {"control": True} if control else ctx.restart_server()
        else:
            table = f"vpnbench_{ctx.run_id or 'run'}_motion"
            link = ClientLink.of(ctx.client)
            if p.event == "nat":
                detail = rebind(ctx.router, table, link.address.ip, path)
            else:
                detail = cut(ctx.router, table, link.address.ip, path)
        # rounded as the event is stored, so what counts as after it is the same in both
        moved = round(clock.now() if p.event != "restart" else started, 3)  # a restart counts from the kill
        events.append((moved, f"motion-{p.event}", {**detail, "took_s": round(clock.now() - started, 4)}))
        if p.event != "cut":
            return moved, moved
        time.sleep(max(0.0, moved + p.outage - clock.now()))
        path.unwind()  # the drop rule removed: the path is back
        restored = round(clock.now(), 3)
        events.append((restored, "path-restored", {"cut_s": round(restored - moved, 3)}))
        return moved, restored


class ClientLink:
    """The client's underlay as its default route shows it: interface, gateway, its IPv4 address."""

    def __init__(self, dev: str, gateway: str, address: ipaddress.IPv4Interface):
        self.dev, self.gateway, self.address = dev, gateway, address

    @classmethod
    def of(cls, host: Host) -> "ClientLink":
        routes = json.loads(host.run(["ip", "-j", "-4", "route", "show", "default"], timeout=10).stdout or "[]")
        if not routes or "gateway" not in routes[0]:
            raise MeasurementError("motion: the client has no IPv4 default route to move along")
        dev, gateway = routes[0]["dev"], routes[0]["gateway"]
        shown = json.loads(host.run(["ip", "-j", "-4", "addr", "show", "dev", dev], timeout=10).stdout or "[]")
        infos = [a for link in shown for a in link.get("addr_info", []) if a.get("family") == "inet"]
        primary = next((a for a in infos if not a.get("secondary")), None)
        if primary is None:
            raise MeasurementError(f"motion: the client's {dev} has no IPv4 address")
        return cls(dev, gateway, ipaddress.ip_interface(f"{primary['local']}/{primary['prefixlen']}"))


def move_address(client: Host, router: Host, path: Cleanup) -> dict:
    """The client moved to another network: a new subnet on the client's link (the router's side
    of it .1, the client .2), the client's new address added, its old one removed, its default
    route through the new gateway. Each step's undo registered as it succeeds."""
    link = ClientLink.of(client)
    old = link.address
    network = ipaddress.ip_network((int(old.network.network_address) + NEW_SUBNET * old.network.num_addresses,
                                    old.network.prefixlen))
    gateway, new = (ipaddress.ip_interface(f"{network[n]}/{network.prefixlen}") for n in (1, 2))
    router_dev = route_device(router, str(old.ip))
    router.run(["ip", "addr", "add", str(gateway), "dev", router_dev])
    path.defer(router.run, ["ip", "addr", "del", str(gateway), "dev", router_dev], check=False)
    client.run(["ip", "addr", "add", str(new), "dev", link.dev])
    path.defer(client.run, ["ip", "addr", "del", str(new), "dev", link.dev], check=False)
    client.run(["ip", "-batch", "-"], input=f"addr del {old} dev {link.dev}\n"
                                           f"route replace default via {gateway.ip} dev {link.dev}\n")
    path.defer(client.run, ["ip", "-batch", "-"], input=f"addr add {old} dev {link.dev}\n"
                                                        f"route replace default via {link.gateway} dev {link.dev}\n")
    return {"interface": link.dev, "old": str(old.ip), "new": str(new.ip), "new_gateway": str(gateway.ip)}


def rebind(router: Host, table: str, client: ipaddress.IPv4Address, path: Cleanup) -> dict:
    """A NAT rebinding on the router: the client's UDP flows leave with a port of NAT_PORTS."""
    nft(router, f"table ip {table} {{\n chain rebind {{\n  type nat hook postrouting priority srcnat; policy accept;\n"
                f"  ip saddr {client} meta l4proto udp counter snat to {client}:{NAT_PORTS}\n }}\n}}\n")
    path.defer(nft, router, f"delete table ip {table}\n")
    return {"table": table, "client": str(client), "new_ports": NAT_PORTS}


def cut(router: Host, table: str, client: ipaddress.IPv4Address, path: Cleanup) -> dict:
    """The path cut on the router: everything forwarded to or from the client's link dropped, both families."""
    dev = route_device(router, str(client))
    nft(router, f"table inet {table} {{\n chain cut {{\n  type filter hook forward priority filter - 10; policy accept;\n"
                f"  iifname \"{dev}\" counter drop\n  oifname \"{dev}\" counter drop\n }}\n}}\n")
    path.defer(nft, router, f"delete table inet {table}\n")
    return {"table": table, "router_interface": dev}


def nft(host: Host, script: str) -> None:
    host.run(["nft", "-f", "-"], input=script, timeout=10)


def nft_counted(host: Host, table: str) -> int:
    """The packets the counters of an ip table counted (in a nat chain: the first of each flow)."""
    shown = json.loads(host.run(["nft", "-j", "list", "table", "ip", table], timeout=10).stdout or "{}")
    return sum(expr["counter"]["packets"] for item in shown.get("nftables", []) if "rule" in item
               for expr in item["rule"].get("expr", []) if isinstance(expr, dict) and "counter" in expr)


class Reply(NamedTuple):
    """One ping's reply: when it was sent (its arrival less its RTT) on the cell's clock, its RTT, its number."""

    sent: float
    rtt_ms: float
    seq: int

    @property
    def arrived(self) -> float:
        return self.sent + self.rtt_ms / 1000


STAMPED = re.compile(r"^\[(\d+\.\d+)\].*?icmp_seq=(\d+).*?time=([\d.]+) ms", re.MULTILINE)


def stamped_replies(output: str, origin: float) -> list[Reply]:
    """The replies of `ping -D` on the cell's clock: each arrived at its stamp (the host's own
    clock) less origin, the host's clock at the cell clock's zero (Host.clock_offset). Not from
    the sequence numbers and the probe's start: ping starts some time after it is asked to (tens of
    ms over ssh or in a TCG guest), and falls behind its schedule while replies are missing."""
    return [Reply(float(stamp) - origin - float(rtt) / 1000, float(rtt), int(seq))
            for stamp, seq, rtt in STAMPED.findall(output)]


def wait_for_reply(probe: PingProbe, clock: TimeAxis, since: float, window: float, origin: float) -> float | None:
    """Poll the probe's output until a reply to a ping sent at or after `since` (on clock) came back,
    at most `window` seconds after since: that reply's arrival, or None."""
    while True:
        arrivals = [reply.arrived for reply in stamped_replies(probe.outputs()["ping"], origin)
                    if reply.sent >= since]
        if arrivals:
            return min(arrivals)
        if clock.now() > since + window:
            return None
        time.sleep(POLL_S)


def recovery(replies: list[Reply], moved: float, counted_from: float, window: float,
             interval: float) -> tuple[dict[str, float], dict]:
    """From the probe's replies: recovered or not within window, the recovery time (from
    counted_from to the arrival of the first reply to a ping sent at or after it), the outage
    (from the last reply before moved to that one), the pings lost in between (by their numbers;
    not recovered: the window's worth) and the RTT before the move; and the event's detail."""
    before = [reply for reply in replies if reply.arrived < moved]
    after = [reply for reply in replies if reply.sent >= counted_from and reply.arrived <= counted_from + window]
    metrics: dict[str, float] = {"window_s": window, "recovered": 1.0 if after else 0.0}
    if before:
        metrics["rtt_before_p50_ms"] = percentile(sorted(reply.rtt_ms for reply in before), 0.5)
    last = max(before, key=lambda reply: reply.seq, default=None)
    first = min(after, key=lambda reply: reply.seq, default=None)
    after_last = last.seq if last else 0
    if first is not None:
        unanswered = first.seq - after_last - 1
    else:  # every ping sent until the window closed
        unanswered = math.ceil((counted_from + window - (last.sent if last else moved)) / interval - 1e-9) - 1
    answered = {reply.seq for reply in replies}
    lost = max(0, unanswered - sum(1 for seq in answered if after_last < seq < after_last + 1 + unanswered))
    metrics["pings_lost"] = float(lost)
    detail: dict = {"window_s": window, "pings_lost": lost}
    if first is None:
        detail["result"] = f"not recovered within {window:g} s"
        return metrics, detail
    metrics["recovery_s"] = round(first.arrived - counted_from, 4)
    detail.update(recovery_s=metrics["recovery_s"], recovered_at_s=round(first.arrived, 3))
    if last is not None:
        metrics["outage_s"] = round(first.arrived - last.arrived, 4)
        detail["outage_s"] = metrics["outage_s"]
    return metrics, detail
