"""Traffic primitives that measurements compose, as Flent composes its data sets: a load (an
iperf3 test: its own one-off server and a client) and a probe (ping, or irtt calls: the tool's
parts are in measure/irtt.py). Each is a `Traffic`: start() it, stop() it (safe twice; what its
tools wrote stays in outputs()), and series() puts what its tool timed from its own start
(iperf3's interval ends, ping's sequence numbers, irtt's send times) on the measurement's
`TimeAxis`. gen's runs (measure/gen.py) are whole trials of a search, not a background load.
"""

import abc
import dataclasses
import time
from typing import Self

from vpnbench.hosts.base import Proc
from vpnbench.measure.base import MeasureContext
from vpnbench.measure.irtt import IrttServer, Packet, finish_clients, packets, start_clients
from vpnbench.measure.ping import rtt_series
from vpnbench.servers.base import wait_listening

# The TCP control connection: SYN retries go out at 1, 3 and 7 s, so a lossy link (S1 went to 5 %
# each way) still connects; 3 s failed about one cell in a hundred there.
CONNECT_TIMEOUT_MS = 10_000


class TimeAxis:
    """A measurement's time axis: seconds since t0 (by default, when the clock was made)."""

    def __init__(self, t0: float | None = None):
        self.t0 = time.monotonic() if t0 is None else t0

    def now(self) -> float:
        return time.monotonic() - self.t0

    def at(self, monotonic: float) -> float:
        """A time.monotonic() reading on this clock."""
        return monotonic - self.t0


class Traffic(abc.ABC):
    """A load or a probe, the one shape measurements compose."""

    started = 0.0  # time.monotonic() when its traffic started: its tool counts its own times from there

    @abc.abstractmethod
    def start(self) -> Self:
        """Start its traffic (and whatever serves it, unless already started)."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop whatever still runs; safe twice. What the tools wrote stays in outputs()."""

    @abc.abstractmethod
    def outputs(self) -> dict[str, str]:
        """What each of its processes wrote so far, by the raw name a measurement keeps it under."""

    def series(self, axis: TimeAxis, samples: list) -> list:
        """Samples its tool timed from this primitive's start ((seconds, value) pairs; a probe's
        own kind, e.g. irtt's packets) on `axis`."""
        offset = axis.at(self.started)
        return [self._shifted(sample, offset) for sample in samples]

    def _shifted(self, sample, offset: float):
        t, value = sample
        return t + offset, value


class Iperf3Server:
    """A one-off iperf3 server (`-s -1`: it serves one test, then exits) on a fresh port of the
    server host, for a test reaching the tunnel's far end in `family`: every test gets its own
    server, so a lingering one never answers 'server is busy'."""

    def __init__(self, ctx: MeasureContext, family: str, args: tuple[str, ...] = ("-J",),
                 interactive: bool = False):
        self.ctx, self.family, self.args, self.interactive = ctx, family, args, interactive
        self.port = 0
        self.proc: Proc | None = None

    def start(self) -> "Iperf3Server":
        self.port = self.ctx.ports.next()
        # -B: only the address measured, not every interface of a lab machine
        self.proc = self.ctx.server.spawn(["iperf3", "-s", "-1", "-p", str(self.port),
                                           "-B", self.ctx.target(self.family), *self.args],
                                          name="iperf3-server", interactive=self.interactive)
        wait_listening(self.ctx.server, self.proc, self.port, "iperf3 server", key="iperf3_server")
        return self

    def wait(self, timeout: float) -> None:
        if self.proc is not None:
            self.proc.wait(timeout)

    def stop(self, timeout: float = 1.0) -> None:
        """Stop it (if still running); its output stays in output()."""
        if self.proc is not None:
            self.proc.stop(timeout)

    def output(self) -> str:
        return self.proc.output() if self.proc is not None else ""


def iperf3_client_argv(ctx: MeasureContext, family: str, port: int, args: list[str], json: bool = True) -> list[str]:
    """The client of a test against the server on `port`, reaching the tunnel's far end."""
    return ["iperf3", "-c", ctx.target(family), "-p", str(port), *(["-J"] if json else []),
            "--connect-timeout", str(CONNECT_TIMEOUT_MS), *args]


class Iperf3Load(Traffic):
    """A load: one iperf3 test (its own server) running in the background for `seconds`."""

    def __init__(self, ctx: MeasureContext, family: str, args: list[str], seconds: float,
                 server_args: tuple[str, ...] = ("-J",), json: bool = True, interactive: bool = False):
        self.ctx, self.family, self.args, self.seconds, self.json = ctx, family, args, seconds, json
        self.server = Iperf3Server(ctx, family, server_args, interactive)
        self.client: Proc | None = None

    def start_server(self) -> "Iperf3Load":
        self.server.start()
        return self

    def start(self) -> "Iperf3Load":
        """Start the client (and the server first, unless start_server() did)."""
        if self.server.proc is None:
            self.server.start()
        self.started = time.monotonic()
        self.client = self.ctx.client.spawn(iperf3_client_argv(self.ctx, self.family, self.server.port, self.args,
                                                               self.json), name="iperf3")
        return self

    def finish(self, grace: float = 15.0) -> tuple[str, str]:
        """Wait for the test to end (the client at most seconds + grace, then the server 3 s);
        (client output, server output)."""
        if self.client is not None and self.client.wait(self.seconds + grace) is None:
            self.client.stop(1)
        self.server.wait(3)
        outputs = self.outputs()
        return outputs["iperf3_client"], outputs["iperf3_server"]

    def stop(self) -> None:
        if self.client is not None:
            self.client.stop(1)
        self.server.stop(1)

    def outputs(self) -> dict[str, str]:
        return {"iperf3_client": self.client.output() if self.client else "", "iperf3_server": self.server.output()}


class PingProbe(Traffic):
    """ping every `interval` s for `seconds` s from the client to the tunnel's far end; its RTTs,
    each at its send time (from its sequence number), on a clock."""

    def __init__(self, ctx: MeasureContext, family: str, interval: float, seconds: float,
                 flags: tuple[str, ...] = (), interactive: bool = False):
        self.ctx, self.family, self.interval, self.seconds = ctx, family, interval, seconds
        self.flags, self.interactive = flags, interactive
        self.proc: Proc | None = None

    def start(self) -> "PingProbe":
        self.started = time.monotonic()
        self.proc = self.ctx.client.spawn(["ping", "-n", *self.flags, "-i", f"{self.interval:g}", "-w", f"{self.seconds:g}",
                                           self.ctx.target(self.family)], name="ping", interactive=self.interactive)
        return self

    def finish(self, timeout: float = 3.0) -> str:
        if self.proc is None:
            return ""
        self.proc.wait(timeout)
        return self.proc.output()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop(1)

    def outputs(self) -> dict[str, str]:
        return {"ping": self.proc.output() if self.proc is not None else ""}

    def rtts(self, output: str) -> list[tuple[float, float]]:
        """(seconds since its start that the ping went out, RTT in ms) of every reply in output."""
        return rtt_series(output, self.interval)

    def sent(self, count: int) -> list[tuple[float, int]]:
        """(seconds since its start, sequence number) of the first `count` pings sent."""
        return [(n * self.interval, n + 1) for n in range(count)]


class IrttProbe(Traffic):
    """`calls` irtt clients (one server of their own) sending `size`-byte packets every `interval`
    s for `seconds`; each packet's delays at its send time, on a clock."""

    def __init__(self, ctx: MeasureContext, family: str, interval: float, size: int, seconds: float,
                 calls: int = 1):
        self.ctx, self.interval, self.size, self.seconds, self.calls = ctx, interval, size, seconds, calls
        self.server = IrttServer(ctx, family)
        self.clients: list[Proc] = []

    def start_server(self) -> "IrttProbe":
        self.server.start()
        return self

    def start(self) -> "IrttProbe":
        """Start the calls (and the server first, unless start_server() did)."""
        if self.server.proc is None:
            self.server.start()
        self.started = time.monotonic()
        self.clients = start_clients(self.ctx, self.server, self.calls, self.interval, self.size, self.seconds)
        return self

    def finish(self, raw: dict[str, str]) -> list[Packet]:
        """Every call's packets in send order, times from the first send (raw outputs kept in raw)."""
        return packets(finish_clients(self.clients, self.seconds, raw))

    def stop(self) -> None:
        """Stop the calls and the server."""
        for proc in self.clients:
            proc.stop(1)
        self.server.stop()

    def outputs(self) -> dict[str, str]:
        """The server's (each call's own output is read by finish())."""
        return {"irtt_server": self.server.output()}

    def _shifted(self, sample: Packet, offset: float) -> Packet:
        return dataclasses.replace(sample, t=sample.t + offset)
