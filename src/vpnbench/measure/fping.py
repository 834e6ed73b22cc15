"""fping through every tunnel of a bring-up at once: one process pings all their far ends.

Two uses: when each tunnel first answered (setup_rate: the time to the first and to the last of N
tunnels), and how many pings each tunnel lost while something happened (rekey_rate's probe).

fping's count mode (`-c`) prints every reply as it comes, flushed line by line, and with `-D` the
host's clock (Unix time) before it; the shell prints the same clock just before it execs fping, so
a reply's time since fping started is a difference of one host's clock (no controller/host clock
offset). Its alive mode would stop at each first reply but prints no times (fping 5.1).

The reply timeout (`-t`) is always given. In count mode fping's default timeout is the period
(`-p`, capped at 2 s), and a reply slower than the timeout is discarded (man fping, 5.1): with
`-p 10` alone every reply over a 10 ms round trip was lost, so under every built-in impairment
setup_rate never saw a tunnel answer and rekey_rate counted every ping lost. In count mode fping
keeps each ping's own timeout, so -t may exceed -p (a 20 ms path at -p 10 -t 2000: 50 of 50
replies; without -t: 0 of 50). The timeout is a fixed generous one rather than one derived from
the path: these probes ask "did it answer at all", the measurement does not know the impairment,
and a reply that comes late is not a lost one.
"""

import math
import re
import time

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params
from vpnbench.hosts.base import Host, Proc

PACKAGES = {"fping": "fping"}
# 2 s: fping's own cap for its default, 10x the worst round trip of the built-in profiles
# (mesh-high: 2 x (50 ms + 3 x 15 ms jitter)); a reply later than this counts as lost.
REPLY_TIMEOUT_S = 2.0
POLL_S = 0.02  # how often the output is read while waiting for the last tunnel's first reply
# "[1795722728.46306] 10.0.0.1 : [0], 64 bytes, 0.041 ms (0.041 avg, 0% loss)"
_REPLY = re.compile(r"^\[(?P<at>\d+(?:\.\d+)?)\]\s+(?P<addr>\S+)\s+:\s+\[(?P<seq>\d+)\],\s+\d+\s+bytes,")
# "10.0.0.1 : xmt/rcv/%loss = 3/3/0%, min/avg/max = ..." (the summary of -c, on stderr)
_SUMMARY = re.compile(r"^(?P<addr>\S+)\s+:\s+xmt/rcv/%loss\s+=\s+(?P<sent>\d+)/(?P<received>\d+)/")


class EveryTunnelParams(Params):
    """What the kinds that ping every tunnel of a bring-up at once share."""

    probe_interval: Duration = Field(0.01, ge=0.001, le=1)  # seconds between two pings to one tunnel
    family: Family = "ipv4"  # the inner addresses pinged
    # how long each ping's reply is waited for; a slower one is lost (fping's default: the period)
    reply_timeout: Duration = Field(REPLY_TIMEOUT_S, ge=0.01, le=60)


def fping_argv(addresses: list[str], family: str, period: float, count: int,
               reply_timeout: float = REPLY_TIMEOUT_S) -> list[str]:
    """The shell that prints the host's clock and becomes fping: `count` pings every `period` s to
    each address, each reply waited for `reply_timeout` s; between two addresses' pings a share of
    the period, so a round of N addresses fits into one period (root may send back to back: -i 0)."""
    spacing_ms = min(1.0, period * 1e3 / max(1, len(addresses)))
    return ["sh", "-c", 'date +%s.%N; exec fping "$@"', "fping", "-4" if family == "ipv4" else "-6",
            "-D", "-c", str(count), "-p", f"{period * 1e3:g}", "-t", f"{reply_timeout * 1e3:g}",
            "-i", f"{spacing_ms:.3g}", *addresses]


def parse_first_replies(output: str) -> tuple[float | None, dict[str, float]]:
    """(the host's clock when fping started: the first line, {address: seconds from then to its
    first reply}) from fping_argv's output; addresses without a reply are absent."""
    lines = output.splitlines()
    try:
        started = float(lines[0]) if lines else None
    except ValueError:
        started = None
    first: dict[str, float] = {}
    for line in lines[1:]:
        match = _REPLY.match(line)
        if match and match["addr"] not in first and started is not None:
            first[match["addr"]] = round(float(match["at"]) - started, 6)
    return started, first


def parse_losses(output: str) -> dict[str, tuple[int, int]]:
    """{address: (pings sent, replies)} from fping -c's closing summary."""
    return {m["addr"]: (int(m["sent"]), int(m["received"]))
            for m in map(_SUMMARY.match, output.splitlines()) if m}


def first_replies(host: Host, addresses: list[str], family: str, timeout: float, period: float = 0.01,
                  reply_timeout: float = REPLY_TIMEOUT_S) -> tuple[dict[str, float], str]:
    """Ping every address from `host` every `period` s until each has answered once (at most
    `timeout` s): {address: seconds from fping's start to its first reply}, and fping's output.
    Raises MeasurementError naming the addresses that never answered."""
    count = math.ceil(timeout / period) + 1
    proc = host.spawn(fping_argv(addresses, family, period, count, reply_timeout), name="fping")
    deadline = time.monotonic() + timeout + 1  # + starting it
    try:
        while True:
            output = proc.output()
            _, first = parse_first_replies(output)
            if len(first) == len(addresses) or not proc.alive() or time.monotonic() > deadline:
                break
            time.sleep(POLL_S)
    finally:
        proc.stop(1)
    missing = [address for address in addresses if address not in first]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise MeasurementError(f"no reply through the tunnel from {shown} within {timeout:g} s", {"fping": output})
    return first, output


class FpingProbe:
    """A light probe through every tunnel while something else happens, for at most `seconds`:
    pings every `period` s to each address until finish(); what each lost is in its summary."""

    def __init__(self, host: Host, addresses: list[str], family: str, period: float, seconds: float,
                 reply_timeout: float = REPLY_TIMEOUT_S):
        self.host, self.addresses, self.family, self.period = host, addresses, family, period
        self.reply_timeout = reply_timeout
        self.count = max(1, math.ceil(seconds / period))
        self.proc: Proc | None = None

    def start(self) -> "FpingProbe":
        self.proc = self.host.spawn(fping_argv(self.addresses, self.family, self.period, self.count,
                                                  self.reply_timeout), name="fping")
        return self

    def finish(self, timeout: float = 3.0) -> str:
        """Stop it as it is (SIGINT: fping prints its summary of what it sent so far), then its output."""
        if self.proc is None:
            return ""
        self.proc.interrupt()
        self.proc.wait(timeout)
        return self.proc.output()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop(1)
