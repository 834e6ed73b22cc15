"""Trial adapters for searches: one function per traffic generator, each running one UDP trial at
an offered rate and returning what was sent and received. A new generator (vpnbench-gen's
`run_gen`) is one more function and one more GENERATORS entry; rate_search's `tool` names it."""

import dataclasses
from typing import Callable

from vpnbench.foundation.errors import MeasurementError
from vpnbench.hosts.route import route_device
from vpnbench.measure.base import MeasureContext
from vpnbench.measure.gen import run_gen
from vpnbench.measure.iperf import run_iperf
from vpnbench.measure.udp import udp_metrics


@dataclasses.dataclass
class TrialCounts:
    sent_packets: int
    received_packets: int
    sent_bps: float
    received_bps: float
    raw: dict[str, str]
    duration: float | None = None  # seconds the generator actually sent, when it knows
    error: str | None = None
    trial_s: float | None = None  # the trial's length as run: the asked one rounded up to whole seconds


def iperf3_trial(ctx: MeasureContext, family: str, offered_bps: float, length: int, seconds: int,
                 socket_buffer: int | None = None) -> TrialCounts:
    buffer = ["-w", str(socket_buffer)] if socket_buffer else []  # both ends' (iperf3 tells the server)
    doc, raw = run_iperf(ctx, family, ["-u", "-b", str(int(offered_bps)), "-l", str(length), "-t", str(seconds),
                                       *buffer], seconds)
    try:
        m = udp_metrics(doc)  # counted against what left the sender: the receiver's count misses tail loss
        sent = int(doc["end"]["sum_sent"]["packets"])
    except (KeyError, TypeError, ValueError) as exc:
        raise MeasurementError(f"unexpected iperf3 UDP JSON: missing {exc}", raw) from None
    return TrialCounts(sent, int(m["received_packets"]), m["sender_throughput_bps"], m["throughput_bps"], raw,
                       duration=doc["end"]["sum_sent"].get("seconds"))


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


COUNTER_NAMES = ("tx_packets", "rx_packets", "tx_dropped", "rx_dropped")


def interface_counters(ctx: MeasureContext, family: str) -> dict[str, int]:
    """client_tx_packets and server_rx_packets (and the other directions) of the tunnel devices."""
    counters = {}
    for role, dev in tunnel_devices(ctx, family).items():
        host = ctx.client if role == "client" else ctx.server
        # one read per host, not one per counter (a round trip each over ssh): grep -H prints
        # "path:value" for every file there is, and -s leaves out one that is not
        files = [f"/sys/class/net/{dev}/statistics/{name}" for name in COUNTER_NAMES]
        out = host.run(["grep", "-sH", "", *files], timeout=5, check=False).stdout
        for line in out.splitlines():
            path, _, value = line.rpartition(":")
            if value.strip().isdigit():
                counters[f"{role}_{path.rsplit('/', 1)[-1]}"] = int(value)
    return counters


# Where a trial's packets were lost, as `loss_site` names it; the text says it to a person.
LOSS_SITES = {"generator": "the generator (it could not send the load)",
              "tunnel_device": "a tunnel device (its queue dropped them)",
              "path": "the path between the tunnel devices (the technique or the link)",
              "receiver": "the receiving socket (the receiver could not keep up)",
              "mixed": "several sites (none lost most of the packets)",
              "unknown": "not named: the tunnel devices count GSO/GRO batches, not datagrams (no split in one unit)"}
# loss_split's keys, short; and a sweep step's packets its generator did not send
SPLIT_NAMES = {"tunnel_device": "tunnel device", "path": "path", "receiver": "receiver", "generator": "unsent"}

# A site is named the limit when it lost at least this share of what a trial lost. Then the
# other sites together lost at most a quarter of what it did: removing them would not move the
# limit much, removing it would. Below that the limit is two real ones, and naming either alone
# would send the reader to fix one of them (a device that dropped 1 of 10 001 lost packets is
# not the limit; a 60/40 split between the path and the receiving socket is neither's alone).
DOMINANT_LOSS_SHARE = 0.8


def counter_comparison(before: dict[str, int], after: dict[str, int], sent: int, received: int) -> dict:
    """The tunnel interfaces' packet counters over a trial beside the generator's counts: the
    client's tunnel device should have sent at least what the generator sent, the server's
    received at least what it received (control traffic adds a few)."""
    deltas = {name: after[name] - before[name] for name in after if name in before}
    return {**deltas, "generator_sent": sent, "generator_received": received}


def loss_split(counters: dict) -> dict[str, int] | None:
    """Packets a trial lost at each site (SPLIT_NAMES' keys), from counter_comparison's numbers;
    None when it lost nothing or the counters cannot tell. Packets that reached the server's
    tunnel device but not the receiving program were dropped at its socket (seen here: 91 488
    arrived at the device, iperf3 counted 90 005); of those that never reached the device, the
    ones a device counted as dropped, or the client's device never sent, were lost at a tunnel
    device, the rest between the devices."""
    sent, received, arrived = (counters.get(k) for k in ("generator_sent", "generator_received", "server_rx_packets"))
    if sent is None or received is None or arrived is None or received >= sent or units_differ(counters):
        return None
    before_device = max(sent - arrived, 0)  # control packets in `arrived` make this a little low, never high
    receiver = min(max(arrived - received, 0), sent - received)
    unsent_by_client = max(sent - counters.get("client_tx_packets", sent), counters.get("client_tx_dropped", 0))
    device = min(unsent_by_client + counters.get("server_rx_dropped", 0), before_device)
    split = {"tunnel_device": device, "path": before_device - device, "receiver": receiver}
    # in one unit the sites add up to the loss exactly (the control packets move a few from the
    # path to the receiver, never out of the sum): where they do not, no site is named
    return split if sum(split.values()) == sent - received else None


def units_differ(counters: dict) -> str | None:
    """Why the tunnel devices' packet counters are not in the generator's datagrams, or None. A
    device that counts a GSO batch (gen's `--gso auto`: up to 64 datagrams in one buffer) or a
    GRO-merged one as one packet shows fewer packets than the datagrams that went through it:
    the receiver cannot have got more datagrams than the client's device sent or the server's
    received. Then the split would blame the device for nearly every datagram of every batch."""
    received = counters.get("generator_received")
    if received is None:
        return None
    for name, role in (("client_tx_packets", "the client's"), ("server_rx_packets", "the server's")):
        if counters.get(name) is not None and counters[name] < received:
            return (f"{role} tunnel device counted {counters[name]} packets for {received} datagrams received "
                    "(GSO/GRO batches): no loss site is named")
    return None


def loss_site(counters: dict, generator_limited: bool = False) -> str | None:
    """Where a trial lost what it lost (a LOSS_SITES key): the generator when it could not send
    the load, else the site of loss_split that lost at least DOMINANT_LOSS_SHARE of it, else
    "mixed"; None when it lost nothing or the counters cannot tell."""
    if generator_limited:
        return "generator"
    return dominant_site(loss_split(counters))


def dominant_site(split: dict[str, int] | None) -> str | None:
    """The site of a loss split that lost at least DOMINANT_LOSS_SHARE of it, else "mixed"."""
    total = sum(split.values()) if split else 0
    if not total:
        return None
    site = max(split, key=split.get)
    return site if split[site] >= DOMINANT_LOSS_SHARE * total else "mixed"


def describe_split(split: dict[str, int]) -> str:
    """"path 9 999, tunnel device 1 of 10 000 lost": every site that lost any, most first."""
    def count(n: int) -> str:
        return f"{n:,}".replace(",", " ")
    parts = [f"{SPLIT_NAMES[site]} {count(n)}" for site, n in sorted(split.items(), key=lambda kv: -kv[1]) if n]
    missing = "lost or unsent" if split.get("generator") else "lost"
    return f"{', '.join(parts)} of {count(sum(split.values()))} {missing}"


def lost_at(site: str | None, split: dict[str, int] | None) -> str:
    """A trials table's lost_at cell: the site, and the split when there is one."""
    return f"{site or '-'}" + (f" ({describe_split(split)})" if split and sum(split.values()) else "")


def limit_text(site: str | None, split: dict[str, int] | None) -> str:
    """The headline's " (limit: ...)" for a site and its split of the lost packets."""
    if not site:
        return ""
    lost = f"; {describe_split(split)}" if split and sum(split.values()) else ""
    return f" (limit: {LOSS_SITES[site].split(' (')[0]}{lost})"
