"""irtt (isochronous round-trip tester): a server of the cell's own, clients sending fixed-size
packets at a fixed interval, and each packet's one-way delays read from the JSON.

irtt stamps every packet with the wall clock at both ends, so its send (client -> server) and
receive (server -> client) delays are true one-way delays where the hosts share a clock (the
namespaces of one machine do; over SSH or in VMs they are only as good as the hosts' NTP)."""

import dataclasses
import json
import time

from vpnbench.foundation.errors import MeasurementError
from vpnbench.hosts.base import Proc
from vpnbench.measure.base import MeasureContext
from vpnbench.servers.base import tail, url_host, wait_listening


@dataclasses.dataclass(frozen=True)
class Packet:
    t: float  # client send time, seconds since the first packet of any call
    up_ms: float | None  # one-way delay client -> server; None when lost
    down_ms: float | None  # server -> client
    rtt_ms: float | None
    lost: str  # irtt's verdict: false, true_up, true_down, true (direction unknown)


class IrttServer:
    def __init__(self, ctx: MeasureContext, family: str):
        self.ctx, self.address, self.port = ctx, ctx.target(family), ctx.ports.next()
        self.proc: Proc | None = None

    def start(self) -> None:
        # -i 0 / -l 0 / -d 0: no limits of the server's own on interval, length or duration
        self.proc = self.ctx.server.spawn(["irtt", "server", "-b", f"{url_host(self.address)}:{self.port}",
                                           "-i", "0", "-l", "0", "-d", "0"], name="irtt-server")
        wait_listening(self.ctx.server, self.proc, self.port, "irtt server", udp=True)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop(1)

    def output(self) -> str:
        return self.proc.output() if self.proc is not None else ""


def start_clients(ctx: MeasureContext, server: IrttServer, count: int, interval: float, length: int,
                  duration: float) -> list[Proc]:
    argv = ["irtt", "client", "-i", f"{interval * 1000:g}ms", "-l", str(length), "-d", f"{duration * 1000:g}ms",
            "-Q", "-o", "-", "--fill=rand", "--wait=3x1s", f"{url_host(server.address)}:{server.port}"]
    return [ctx.client.spawn(argv, name="irtt") for _ in range(count)]


def finish_clients(procs: list[Proc], duration: float, raw: dict[str, str], name: str = "irtt") -> list[dict]:
    """Wait for every client; their JSON documents (raw output kept under name1, name2, ...)."""
    deadline = time.monotonic() + duration + 15
    docs = []
    for i, proc in enumerate(procs, start=1):
        code = proc.wait(max(0.1, deadline - time.monotonic()))
        if code is None:
            proc.stop(1)
        text = proc.output()
        raw[f"{name}{i}"] = text
        try:
            docs.append(json.loads(text[text.index("{"):]))
        except ValueError:
            raise MeasurementError(f"irtt client {i} gave no JSON (exit {code}): {tail(text)}", raw) from None
    return docs


def packets(docs: list[dict]) -> list[Packet]:
    """Every packet of every call, in send order, delays in ms."""
    sends = [rt["timestamps"]["client"]["send"]["wall"] for doc in docs for rt in doc.get("round_trips") or []]
    if not sends:
        return []
    first = min(sends)
    result = []
    for doc in docs:
        for rt in doc.get("round_trips") or []:
            delay = rt.get("delay") or {}
            result.append(Packet((rt["timestamps"]["client"]["send"]["wall"] - first) / 1e9,
                                 _ms(delay.get("send")), _ms(delay.get("receive")), _ms(delay.get("rtt")),
                                 str(rt.get("lost", "false"))))
    return sorted(result, key=lambda p: p.t)


def _ms(ns) -> float | None:
    return ns / 1e6 if isinstance(ns, (int, float)) else None


def percentile(values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def packet_series(pkts: list[Packet]) -> dict[str, list[tuple[float, float]]]:
    """Per-packet delays by send time (lost packets have none)."""
    series: dict[str, list[tuple[float, float]]] = {"owd_up_ms": [], "owd_down_ms": [], "rtt_ms": []}
    for pk in pkts:
        for name, value in (("owd_up_ms", pk.up_ms), ("owd_down_ms", pk.down_ms), ("rtt_ms", pk.rtt_ms)):
            if value is not None:
                series[name].append((pk.t, value))
    return {name: points for name, points in series.items() if points}
