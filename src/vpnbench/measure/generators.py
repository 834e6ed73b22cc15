"""Trial adapters for searches: one function per traffic generator, each running one UDP trial at
an offered rate and returning what was sent and received. A new generator (vpnbench-gen's
`run_gen`) is one more function and one more GENERATORS entry; rate_search's `tool` names it."""

import dataclasses
from typing import Callable

from vpnbench.errors import MeasurementError
from vpnbench.measure.base import MeasureContext
from vpnbench.measure.gen import run_gen
from vpnbench.measure.iperf import run_iperf
from vpnbench.measure.udp import udp_metrics
from vpnbench.hosts.route import route_device


@dataclasses.dataclass
class TrialCounts:
    sent_packets: int
    received_packets: int
    sent_bps: float
    received_bps: float
    raw: dict[str, str]
    duration: float | None = None  # seconds the generator actually sent, when it knows
    error: str | None = None


def iperf3_trial(ctx: MeasureContext, family: str, offered_bps: float, length: int, seconds: int) -> TrialCounts:
    doc, raw = run_iperf(ctx, family, ["-u", "-b", str(int(offered_bps)), "-l", str(length), "-t", str(seconds)],
                         seconds)
    try:
        m = udp_metrics(doc)
        sent = int(doc["end"]["sum_sent"]["packets"])  # what left the sender; the receiver's count misses tail loss
    except (KeyError, TypeError, ValueError) as exc:
        raise MeasurementError(f"unexpected iperf3 UDP JSON: missing {exc}", raw) from None
    received = int(m.get("received_packets", 0))
    return TrialCounts(sent, min(received, sent), m["sender_throughput_bps"], m["throughput_bps"], raw,
                       duration=doc["end"].get("sum_sent", {}).get("seconds"))


def gen_trial(ctx: MeasureContext, family: str, offered_bps: float, length: int, seconds: int) -> TrialCounts:
    """vpnbench-gen: batched sends, so the search measures the tunnel rather than iperf3's one
    datagram per system call; its per-packet counts (sequence numbers) are the trial's counts."""
    result = run_gen(ctx, family, max(int(offered_bps), 1), length, float(seconds))
    m = result.metrics
    sent = int(m["sent_packets"])
    return TrialCounts(sent, min(int(m["received_packets"]), sent), m["sender_throughput_bps"], m["throughput_bps"],
                       result.raw, duration=float(seconds))


GENERATORS: dict[str, Callable[..., TrialCounts]] = {"iperf3": iperf3_trial, "gen": gen_trial}


def tunnel_devices(ctx: MeasureContext, family: str) -> dict[str, str]:
    """role -> the device each end reaches the other's tunnel address through."""
    devices = {}
    for role, host, peer in (("client", ctx.client, ctx.tunnel.server_addrs), ("server", ctx.server,
                                                                                ctx.tunnel.client_addrs)):
        device = route_device(host, peer[family])
        if device is not None:
            devices[role] = device
    return devices


def interface_counters(ctx: MeasureContext, family: str) -> dict[str, int]:
    """client_tx_packets and server_rx_packets (and the other directions) of the tunnel devices."""
    counters = {}
    for role, dev in tunnel_devices(ctx, family).items():
        host = ctx.client if role == "client" else ctx.server
        for name in ("tx_packets", "rx_packets", "tx_dropped", "rx_dropped"):
            out = host.run(["cat", f"/sys/class/net/{dev}/statistics/{name}"], timeout=5, check=False).stdout.strip()
            if out.isdigit():
                counters[f"{role}_{name}"] = int(out)
    return counters
