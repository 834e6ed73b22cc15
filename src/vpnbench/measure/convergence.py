"""Convergence: from the daemons' start, the time until every pair of nodes answers through the
overlay, and each pair's first reply.

A cycle is the technique's own down() and up() (daemons stopped and started, fresh keys), then
on every node one fping in loop mode (`-l`) to every other node's overlay address, until every
pair has answered or the deadline passed. Once half the peers a node's fping asks have answered,
it is started again on the rest (`fewer_peers`): N(N-1) echoes a period at the start would
otherwise load the daemons under test long after most pairs answered (the cycle's
`probe_restarts` counts these). fping prints each reply with its arrival time (`-D`,
the epoch); a pair's first reply is that time less the moment up() returned, plus up()'s own
duration, so it counts from the daemons' start. fping's reply timeout is its period here
(`-t` = `-p`), and a reply later than that is not counted: a pair answers when an echo comes back
within one period. The resolution is the period (each pair is asked once per period); `-i`
spaces the echoes a node sends to its peers.

On a mesh testbed the pairs are its nodes' (Tunnel.overlay, ordered: n0 -> n1 and n1 -> n0 are
two pairs, since a NAT makes them differ); between two hosts, client and server. A pair that
never answered within the deadline is listed; the convergence time is then only known to be
above the deadline (`converged_s_censored`). A cycle whose up() itself returned after the deadline
asked no pair: it is marked (`up_past_deadline`; `cycles_up_past_deadline` counts them) and the
NAT matrix draws its silent pairs as unprobed, not as never. On a mesh testbed each pair's path just after is
recorded with it, as the underlay saw it (Testbed.observed_paths: direct, relay or unseen), and
counted: `pairs_direct`, `pairs_relayed`; with each node's NAT type, so the report draws the NAT
matrix (answers/nat_matrix.py) from the stored cycles.
"""

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Params
from vpnbench.hosts.base import Host, stop_all
from vpnbench.measure.base import Column, CycleFailed, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.patterns import nodes_of
from vpnbench.measure.ping import percentile
from vpnbench.store.records import Trial

# fping -D -l: "[1795938338.66361] 10.77.0.2 : [0], 64 bytes, 0.132 ms (0.132 avg, 0% loss)"
REPLY = re.compile(r"^\[(\d+\.\d+)\]\s+(\S+)\s+: \[\d+\], \d+ bytes", re.MULTILINE)
POLL_S = 0.2  # how often the fpings' output is read while pairs are missing
PARALLEL = 8  # fpings started at once


class ConvergenceParams(Params):
    kind: Literal["convergence"] = "convergence"
    count: int = Field(1, ge=1, le=100)  # down-and-up cycles
    # A pair silent this long after the daemons' start is reported as never answering
    deadline: Duration = Field(60.0, gt=0, le=3600)
    # fping's period per peer (-p) and reply timeout (-t): the resolution of each pair's first reply
    period_ms: int = Field(500, ge=100, le=10_000)


class Convergence(Measurement):
    kind = "convergence"
    Params = ConvergenceParams
    tools = ("fping",)
    packages = {"fping": "fping"}
    columns = (Column("converged_s", "converged s"), Column("first_reply_p50_s", "pair p50 s"),
               Column("pairs", "pairs"), Column("pairs_never", "never"))
    headline = Headline(("converged_s", "first_reply_p50_s"), "convergence (s)", 1.0, names=("all pairs", "pair p50"))
    figures = ("headline", "convergence_ecdf", "nat_matrix", "host_cpu")

    def expected_seconds(self) -> float:
        return self.params.count * 5.0

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"count": 1, "deadline": min(params.deadline, 20.0)})

    def run(self, ctx: MeasureContext) -> MeasureResult:
        if ctx.cycle is None:
            raise MeasurementError("convergence: this runner cannot bring the technique down and up")
        cycles = []
        series: dict[str, list[tuple[float, float]]] = {}
        for number in range(1, self.params.count + 1):
            cycles.append(self._cycle(ctx))
            if number == 1:  # the share of pairs answering against time, for the first cycle
                series["pairs_answered_share"] = share_curve(cycles[0]["first_reply_s"], len(cycles[0]["pairs"]))
        metrics = summary(cycles, self.params.deadline)
        trials = [Trial(n, duration_s=c.get("converged_s") or self.params.deadline, data=c)
                  for n, c in enumerate(cycles, start=1)]
        return MeasureResult(metrics, {"cycles": json.dumps(cycles)}, series=series, trials=trials)

    def _cycle(self, ctx: MeasureContext) -> dict:
        p = self.params
        try:
            cycled = ctx.cycle(p.deadline)
        except CycleFailed as exc:
            raise MeasurementError(f"convergence: up() failed: {str(exc)[:1000]}") from None
        returned = time.time()
        hosts, overlay = nodes_of(ctx, cycled.tunnel)
        pairs = [(a, b) for a in overlay for b in overlay if a != b]
        mesh = cycled.tunnel.negotiated.get("mesh", {})
        # a mesh that dials its direct paths in rounds (EasyTier: every 5 s) may change a path a round on
        hold = float(mesh.get("path_round_s", 0.0))
        first, paths, direct, restarts = self._first_replies(ctx, hosts, overlay, returned,
                                                             max(p.deadline - cycled.up_s, 0.0), hold)
        first = {pair: round(cycled.up_s + seconds, 4) for pair, seconds in first.items()}
        direct = {pair: round(cycled.up_s + seconds, 4) for pair, seconds in direct.items()}
        never = [pair for pair in pairs if pair not in first]
        cycle = {"up_s": round(cycled.up_s, 4), "pairs": [f"{a}>{b}" for a, b in pairs],
                 "first_reply_s": {f"{a}>{b}": seconds for (a, b), seconds in sorted(first.items())},
                 "never": [f"{a}>{b}" for a, b in never], "probe_restarts": restarts}
        if not never:
            cycle["converged_s"] = max(first.values(), default=0.0)
        if cycled.up_s >= p.deadline:  # no pair was asked within the deadline: its never is up()'s, not theirs
            cycle["up_past_deadline"] = True
        if tunnel_nodes := [name for name in overlay if name in ctx.nodes]:
            cycle["nat"] = {name: ctx.nodes[name].nat for name in tunnel_nodes}  # the NAT matrix's rows
        if own := mesh.get("routes"):
            cycle["own_view"] = own  # the mesh's own paths at this up()'s return (EasyTier's routes), beside the underlay's
        if paths:
            cycle["paths"] = {f"{a}>{b}": path for (a, b), path in sorted(paths.items())}
            cycle["direct_s"] = {f"{a}>{b}": seconds for (a, b), seconds in sorted(direct.items())
                                 if paths[(a, b)] == "direct"}
        return cycle

    def _first_replies(self, ctx: MeasureContext, hosts: dict[str, Host], overlay: dict[str, str], since: float,
                       wait: float, hold: float = 0.0):
        """(from, to) -> seconds from `since` to the first reply, for the pairs that answered in
        `wait`; and, on a mesh testbed, the path each pair settled on over the underlay after,
        observed while the pings go on, with when each was first seen direct (_settled_paths)."""
        period = str(self.params.period_ms)
        by_address = {address: name for name, address in overlay.items()}
        first: dict[tuple[str, str], float] = {}

        def start(name: str, peers: list[str]):
            return hosts[name].spawn(["fping", "-D", "-l", "-p", period, "-t", period, "-i", "2",
                                      *(overlay[peer] for peer in peers)], name=f"fping-{name}")

        parsed: dict[object, int] = {}  # per fping, how much of its output is read

        def read(name: str, proc) -> None:
            replies, parsed[proc] = new_replies(proc.output(), parsed.get(proc, 0))
            for stamp, address in replies:
                pair = (name, by_address.get(address, address))
                first[pair] = min(first.get(pair, float("inf")), stamp - since)

        every_peer = {name: [peer for peer in overlay if peer != name] for name in overlay}
        asked = dict(every_peer)  # what each node's running fping asks: fewer as its peers answer
        with ThreadPoolExecutor(PARALLEL) as pool:
            procs = dict(zip(overlay, pool.map(start, overlay, asked.values())))
        wanted = len(overlay) * (len(overlay) - 1)
        deadline = time.monotonic() + wait
        restarts = 0
        try:
            while True:
                for name, proc in procs.items():
                    read(name, proc)
                if len(first) >= wanted or time.monotonic() >= deadline:
                    break
                dead = [name for name, proc in procs.items() if not proc.alive()]
                if dead:
                    raise MeasurementError(f"convergence: fping on {dead[0]} exited: {procs[dead[0]].output()[-300:]}")
                heard: dict[str, set[str]] = {name: set() for name in overlay}
                for a, b in first:
                    heard[a].add(b)
                sparser = {name: left for name in procs if (left := fewer_peers(asked[name], heard[name])) is not None}
                if sparser:
                    stop_all([procs[name] for name in sparser])
                    for name in sparser:
                        read(name, procs.pop(name))  # what it printed before it stopped
                        asked[name] = [peer for peer in sparser[name] if (name, peer) not in first]
                    again = [name for name in sparser if asked[name]]  # a node all of whose peers answered rests
                    with ThreadPoolExecutor(PARALLEL) as pool:
                        procs.update(zip(again, pool.map(start, again, (asked[name] for name in again))))
                    restarts += len(again)
                time.sleep(POLL_S)
        finally:
            stop_all(list(procs.values()))
        paths, direct = {}, {}
        if ctx.observe_paths:  # every pair pings again while the paths settle: the underlay sees each one
            with ThreadPoolExecutor(PARALLEL) as pool:
                procs = dict(zip(overlay, pool.map(start, overlay, every_peer.values())))
            try:
                paths, direct = self._settled_paths(ctx, since, deadline, hold)
            finally:
                stop_all(list(procs.values()))
        return {pair: max(seconds, 0.0) for pair, seconds in first.items()}, paths, direct, restarts

    def _settled_paths(self, ctx: MeasureContext, since: float, deadline: float, hold: float = 0.0):
        """The pairs' paths once they stop changing (a mesh may relay first and go direct when its
        hole punching succeeds): alike over the windows of `hold` seconds after the first (at least
        one window more; hold: the mesh's own round, after which a path may still change), and when
        each pair was first seen direct (seconds from `since`, the end of that window: the
        resolution is the window)."""
        window = max(2 * self.params.period_ms / 1000, 1.0)  # every pair pings twice in it
        direct: dict[tuple[str, str], float] = {}
        previous, alike_since = None, time.monotonic()
        while True:
            paths = ctx.observe_paths(window)
            seen_at = time.time() - since
            for pair, path in paths.items():
                if path == "direct" and pair not in direct:
                    direct[pair] = seen_at
            if paths != previous:
                alike_since = time.monotonic()
            elif time.monotonic() - alike_since >= max(hold, window) * 0.999:
                return paths, direct
            if time.monotonic() >= deadline:
                return paths, direct
            previous = paths


def new_replies(output: str, start: int) -> tuple[list[tuple[float, str]], int]:
    """The replies (fping's arrival stamp, the address) in the whole lines of `output` from `start`
    on, and where the next read starts. Each poll parses only what is new: re-reading every
    fping's whole output each poll grows with the square of the run (at N = 100, 99 lines a
    second a node) and starved the controller of a 100-node mesh (stop 55)."""
    end = max(output.rfind("\n") + 1, start)  # a line fping is still writing waits for the next poll
    return [(float(stamp), address) for stamp, address in REPLY.findall(output, start, end)], end


def fewer_peers(asked: list[str], answered: set[str]) -> list[str] | None:
    """The peers a node's fping should ask instead, once at least half of those it asks have
    answered (None: keep it): the probe's load falls as the mesh converges. Every node asking every
    other each period is N(N-1) echoes a period, 9 900 a second at N = 100 with a 1 s period, each
    through the daemons under test; halving at each restart costs a node about log2(N) restarts."""
    left = [peer for peer in asked if peer not in answered]
    return left if 2 * len(left) <= len(asked) else None


def share_curve(first_reply: dict[str, float], pairs: int) -> list[tuple[float, float]]:
    """(seconds from the daemons' start, share of pairs that have answered by then): the ECDF of
    the pairs' first replies, pairs that never answered keeping it below 1."""
    times = sorted(first_reply.values())
    return [(t, (i + 1) / pairs) for i, t in enumerate(times)] if pairs else []


def summary(cycles: list[dict], deadline: float) -> dict[str, float]:
    """Over the cycles: the median of the convergence times (censored where a cycle did not
    converge), the pairs' first replies pooled, and the pairs that never answered."""
    done = sorted(c["converged_s"] for c in cycles if "converged_s" in c)
    replies = sorted(t for c in cycles for t in c["first_reply_s"].values())
    metrics = {"cycles": float(len(cycles)), "pairs": float(len(cycles[0]["pairs"])),
               "pairs_never": float(max(len(c["never"]) for c in cycles)), "deadline_s": deadline,
               "up_p50_s": percentile(sorted(c["up_s"] for c in cycles), 0.5)}
    if late := sum(1 for c in cycles if c.get("up_past_deadline")):
        metrics["cycles_up_past_deadline"] = float(late)  # their pairs were never asked: see the cell's note
    if len(done) == len(cycles):
        metrics["converged_s"] = percentile(done, 0.5)
        metrics["converged_max_s"] = done[-1]
    else:
        metrics["converged_s_censored"] = 1.0
    last = cycles[-1].get("paths", {})
    if last:
        answered = set(cycles[-1]["first_reply_s"])
        metrics["pairs_direct"] = float(sum(1 for pair, path in last.items() if path == "direct" and pair in answered))
        metrics["pairs_relayed"] = float(sum(1 for pair, path in last.items() if path == "relay" and pair in answered))
        direct = [seconds for c in cycles for seconds in c.get("direct_s", {}).values()]
        if direct:  # by when the pairs that settled direct were seen direct (window resolution)
            metrics["direct_p50_s"] = percentile(sorted(direct), 0.5)
            metrics["direct_max_s"] = max(direct)
    if replies:
        metrics["first_reply_p50_s"] = percentile(replies, 0.5)
        metrics["first_reply_p95_s"] = percentile(replies, 0.95)
    return metrics
