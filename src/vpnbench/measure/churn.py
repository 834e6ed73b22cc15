"""Churn (issue 41, item 3): on a mesh, one node leaves and a newcomer joins at the same moment;
the time until every node reaches the newcomer, and until the pairs the leave interrupted are
served again.

The newcomer is held out first (Technique.leave: its daemon stopped, its key gone), and the
mesh of the others is pinged until every pair among them that can answer at all (by the mesh's
design and the two NATs: Technique.pair_can_answer) has answered once. Then,
at t0, the leaving node leaves and the newcomer joins (Technique.join: a node the mesh has not
seen, with fresh keys), side by side in two threads, while every node pings every other (fping
in loop mode, one echo a pair a period; the newcomer's own fping starts when its join returns).
From the replies' arrival times (fping -D):

- `newcomer_reached_s`: from t0 until the last of the staying nodes had a reply from the
  newcomer (`newcomer_reaches_s`: the newcomer's own replies from them); `newcomer_unreached`
  counts the staying nodes that had none by the deadline.
- A staying pair that had answered before t0 is interrupted where LOST_IN_A_ROW echoes or more
  in a row went unanswered after t0 (one or two lost echoes are no outage); `served_again_s` is when
  the last such pair answered again, from t0; `pairs_unserved` those that did not by the
  deadline. In a mesh whose pairs talk directly (or through the control node) the leave
  interrupts nothing: this counts the pairs that went through the node that left.
- `leaver_replies_after`: replies from the leaving node more than a period after its leave
  returned: 0 where it really left.

At the end the node that left joins again (fresh keys once more), so the bring-up is whole for the
cells after this one; a churn that failed midway does the same for whatever it took out.
"""

import dataclasses
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError, TechniqueError
from vpnbench.foundation.params import Duration, Params
from vpnbench.hosts.base import Host, stop_all
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.convergence import new_replies
from vpnbench.measure.patterns import nodes_of
from vpnbench.measure.ping import percentile
from vpnbench.techniques import TECHNIQUES
from vpnbench.testbeds.spec import TestbedSpec

POLL_S = 0.2  # how often the fpings' output is read
LOST_IN_A_ROW = 3  # a pair that lost this many echoes in a row after t0 was interrupted
# ... which is a silence between two replies of more than 3.5 periods: two lost echoes make one of
# 3 periods, four of 4. The half period takes the replies' jitter; until stop 66 the bound was 3
# periods, and a jitter of milliseconds made two lost echoes an outage or not (six idle Yggdrasil
# nodes: the pairs with its tree's root lost two as a node joined, silences of 1.500-1.502 s at a
# period of 0.5 s, counted as outages in 11 of 12 cells).
GAP_PERIODS = LOST_IN_A_ROW + 0.5
PARALLEL = 8  # fpings started at once
MIN_NODES = 4  # two that stay, besides the one that leaves and the newcomer


class ChurnParams(Params):
    kind: Literal["churn"] = "churn"
    # The node that leaves and the newcomer (default: the mesh's last two nodes, n(N-2) and n(N-1))
    leaving: str | None = Field(None, pattern=r"^n\d{1,3}$")
    joining: str | None = Field(None, pattern=r"^n\d{1,3}$")
    # How long after t0 the newcomer and the interrupted pairs are waited for (and the mesh
    # without the newcomer before t0)
    deadline: Duration = Field(60.0, gt=0, le=3600)
    # fping's period per peer (-p) and reply timeout (-t): the resolution of every time measured
    period_ms: int = Field(500, ge=100, le=10_000)


def churn_nodes(params: ChurnParams, nodes: int) -> tuple[str, str]:
    """(the node that leaves, the newcomer) of a mesh of `nodes` nodes."""
    return params.leaving or f"n{nodes - 2}", params.joining or f"n{nodes - 1}"


@dataclasses.dataclass
class Replies:
    """Every reply's arrival (fping's epoch stamp) per ordered pair of node names, as read so far."""

    stamps: dict[tuple[str, str], list[float]] = dataclasses.field(default_factory=dict)

    def add(self, pair: tuple[str, str], stamp: float) -> None:
        self.stamps.setdefault(pair, []).append(stamp)

    def first_after(self, pair: tuple[str, str], t: float) -> float | None:
        return min((s for s in self.stamps.get(pair, ()) if s >= t), default=None)


def outage(stamps: list[float], t0: float, gap: float, end: float) -> tuple[float, float | None] | None:
    """A pair's outage after t0, from its reply stamps: None where no two replies from the last
    before t0 on (or the last and `end`) lie more than `gap` apart; else (where the silence began,
    the first reply that ended it, None where it lasted to `end`). The first such silence counts:
    the one the churn caused."""
    before = [s for s in stamps if s < t0]
    after = sorted(s for s in stamps if s >= t0)
    previous = before[-1] if before else t0
    for stamp in after:
        if stamp - previous > gap:
            return previous, stamp
        previous = stamp
    return (previous, None) if end - previous > gap else None


def summary(replies: Replies, t0: float, end: float, staying: list[str], newcomer: str, leaver: str,
            leave_returned: float, period: float, served_before: set[tuple[str, str]]) -> tuple[dict, dict]:
    """The churn's metrics and, per pair, what the cell keeps (reached, outages), from the replies."""
    gap = GAP_PERIODS * period
    reached = {a: replies.first_after((a, newcomer), t0) for a in staying}
    reaches = {b: replies.first_after((newcomer, b), t0) for b in staying}
    outages = {pair: found for pair in sorted(served_before)
               if (found := outage(replies.stamps.get(pair, []), t0, gap, end)) is not None}
    metrics: dict[str, float] = {"staying_nodes": float(len(staying)), "pairs_before": float(len(served_before)),
                                 "newcomer_unreached": float(sum(1 for s in reached.values() if s is None)),
                                 "pairs_interrupted": float(len(outages)),
                                 "pairs_unserved": float(sum(1 for _, back in outages.values() if back is None))}
    got = sorted(s - t0 for s in reached.values() if s is not None)
    if got and len(got) == len(reached):
        metrics["newcomer_reached_s"] = got[-1]
    if got:  # over the nodes that reached it (behind NATs without a relay some never do)
        metrics["newcomer_reached_p50_s"] = percentile(got, 0.5)
        metrics["newcomer_reached_max_s"] = got[-1]
    back = sorted(s - t0 for s in reaches.values() if s is not None)
    if back and len(back) == len(reaches):
        metrics["newcomer_reaches_s"] = back[-1]
    again = [ended - t0 for _, ended in outages.values() if ended is not None]
    if again and not metrics["pairs_unserved"]:
        metrics["served_again_s"] = max(again)
    late = leave_returned + period
    metrics["leaver_replies_after"] = float(sum(1 for a in staying for s in replies.stamps.get((a, leaver), []) if s > late))
    detail = {"t0": t0,
              "reached_s": {a: None if s is None else round(s - t0, 4) for a, s in reached.items()},
              "reaches_s": {b: None if s is None else round(s - t0, 4) for b, s in reaches.items()},
              "interrupted": {f"{a}>{b}": {"silent_from_s": round(start - t0, 4),
                                           "served_again_s": None if ended is None else round(ended - t0, 4)}
                              for (a, b), (start, ended) in outages.items()}}
    return metrics, detail


class Churn(Measurement):
    kind = "churn"
    Params = ChurnParams
    tools = ("fping",)
    packages = {"fping": "fping"}
    columns = (Column("newcomer_reached_s", "newcomer reached s"), Column("join_s", "join s"),
               Column("pairs_interrupted", "interrupted"), Column("served_again_s", "served again s"))
    headline = Headline(("newcomer_reached_s", "join_s"), "churn (s)", 1.0, names=("every node reaches the newcomer", "join"))
    figures = ("headline", "churn_timeline", "host_cpu")

    def expected_seconds(self) -> float:
        return 10.0

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"deadline": min(params.deadline, 20.0)})

    @classmethod
    def refused(cls, params: ChurnParams, techniques: list[Params], testbed: TestbedSpec) -> str | None:
        if testbed.nodes is None or testbed.nodes < MIN_NODES:
            return (f"kind: churn takes a node out of a mesh and a newcomer in, with two nodes staying; allowed: "
                    f"[testbed] nodes = {MIN_NODES} or more")
        nodes = testbed.nodes
        leaving, joining = churn_nodes(params, nodes)
        for field, name in (("leaving", leaving), ("joining", joining)):
            if int(name[1:]) >= nodes:
                return f"{field}: {name} is not a node of this mesh; allowed: n0 to n{nodes - 1}"
        if leaving == joining:
            return f"joining: {joining} is also the node that leaves; allowed: another node than leaving ({leaving})"
        able = sorted(kind for kind, technique in TECHNIQUES.items() if technique.cannot_churn(None) is None)
        for number, technique in enumerate(techniques, start=1):
            if reason := TECHNIQUES[technique.kind].cannot_churn(technique):
                return (f"kind: churn cannot run on technique[{number}] ({reason}); allowed technique kinds: "
                        f"{', '.join(able)}")
        return None

    def run(self, ctx: MeasureContext) -> MeasureResult:
        if ctx.leave is None or ctx.join is None or not ctx.tunnel.overlay:
            raise MeasurementError("churn: this technique cannot take a node out of its mesh and let one in")
        p = self.params
        hosts, overlay = nodes_of(ctx, ctx.tunnel)
        leaver, newcomer = churn_nodes(p, len(overlay))
        out: list[str] = []  # what this cell took out of the mesh, joined again at the end
        replies = Replies()
        try:
            ctx.leave(newcomer)
            out.append(newcomer)
            return self._measure(ctx, hosts, overlay, leaver, newcomer, out, replies)
        finally:
            for name in out:
                try:
                    ctx.join(name)
                except TechniqueError as exc:  # the cells after this one find the mesh short of it
                    raise MeasurementError(f"churn: {name} could not join again at the end: {exc}") from None
            if out:  # the next cell measures the whole mesh, not the aftermath of this one's churn
                # from the nodes that had answered them, and the newcomer, which never asked them
                # (all, where none had been asked yet)
                asked = {a: {b for (a2, b) in replies.stamps if a2 == a} for a in overlay}
                can = answerable(ctx)
                expect = {a: [b for b in out if b != a and can(a, b)
                              and (b in asked[a] or a == newcomer or not replies.stamps)] for a in overlay}
                wait_answered(hosts, dict(ctx.tunnel.overlay), expect, p.deadline)  # a rejoined node's address may be new

    def _measure(self, ctx: MeasureContext, hosts: dict[str, Host], overlay: dict[str, str], leaver: str,
                 newcomer: str, out: list[str], replies: "Replies") -> MeasureResult:
        p = self.params
        period = p.period_ms / 1000
        staying = [name for name in overlay if name not in (leaver, newcomer)]
        by_address = {address: name for name, address in overlay.items()}
        probes = Probes(hosts, overlay, p.period_ms, replies, by_address)
        can = answerable(ctx)
        try:
            present = [name for name in overlay if name != newcomer]
            probes.start(present)
            # the mesh without the newcomer, until each of its pairs that can answer at all has answered
            # once (or the deadline): behind a udp-blocked mix a mesh without a relay waited it whole
            wanted = {(a, b) for a in present for b in present if a != b and can(a, b)}
            deadline = time.monotonic() + p.deadline
            while not wanted <= set(replies.stamps) and time.monotonic() < deadline:
                probes.read()
                time.sleep(POLL_S)
            time.sleep(2 * period)  # the last replies before t0: an outage is measured from them
            probes.read()
            served_before = {(a, b) for a in staying for b in staying if a != b and (a, b) in replies.stamps}
            t0 = time.time()
            took: dict[str, float] = {}

            def timed(what: str, call: Callable[[str], dict], name: str) -> dict:
                started = time.monotonic()
                done = call(name)
                took[what] = time.monotonic() - started
                return done

            with ThreadPoolExecutor(2) as pool:
                leaving = pool.submit(timed, "leave", ctx.leave, leaver)
                joining = pool.submit(timed, "join", ctx.join, newcomer)
                try:
                    joined = joining.result()
                    out.remove(newcomer)
                    # probed from its join on, whatever the leave still takes (until stop 66 from
                    # when both had returned: NetBird's newcomer, at a new address, was timed from
                    # its leaver's 2-3 s shutdown)
                    self._probe_newcomer(ctx, probes, overlay, by_address, leaver, newcomer)
                finally:
                    left = leaving.result()
                    out.append(leaver)
                    leave_returned = time.time()
            end_by = time.monotonic() + max(p.deadline - (time.time() - t0), 0.0)
            settle = time.monotonic() + (GAP_PERIODS + 1) * period  # an outage shows after GAP_PERIODS
            able = [name for name in staying if can(name, newcomer)]  # the others never hear from it
            while time.monotonic() < end_by:
                probes.read()
                now = time.time()
                if time.monotonic() >= settle:
                    metrics, _ = summary(replies, t0, now, staying, newcomer, leaver, leave_returned, period, served_before)
                    reached = all(replies.first_after(pair, t0) is not None
                                  for name in able for pair in ((name, newcomer), (newcomer, name)))
                    if reached and not metrics["pairs_unserved"]:
                        break
                time.sleep(POLL_S)
            probes.read()
        finally:
            probes.stop()
        metrics, detail = summary(replies, t0, time.time(), staying, newcomer, leaver, leave_returned, period, served_before)
        metrics.update({"leave_s": round(took["leave"], 4), "join_s": round(took["join"], 4), "deadline_s": p.deadline})
        # what the technique said of the leave and the join (Yggdrasil: whether the leaver was its tree's root)
        detail.update({"leaving": leaver, "joining": newcomer, "staying": staying, "leave": left, "join": joined})
        return MeasureResult(metrics, {"churn": json.dumps(detail)})

    @staticmethod
    def _probe_newcomer(ctx: MeasureContext, probes: "Probes", overlay: dict[str, str], by_address: dict[str, str],
                        leaver: str, newcomer: str) -> None:
        """The newcomer's own fping; and where its control plane gave it an address of its own
        (Headscale, NetBird's management), one more fping on each staying node, to the new one:
        the others' running fpings ask the old."""
        if (address := ctx.tunnel.overlay[newcomer]) != overlay[newcomer]:
            overlay[newcomer] = address
            by_address[address] = newcomer
            probes.start_to([name for name in overlay if name not in (leaver, newcomer)], newcomer)
        probes.start([newcomer])


def answerable(ctx: MeasureContext) -> Callable[[str, str], bool]:
    """(node, node) -> whether the two can answer each other at all, from their NATs and the mesh's
    design (MeasureContext.pair_can_answer); every pair where the context cannot say."""
    if ctx.pair_can_answer is None or not ctx.nodes:
        return lambda a, b: True
    return lambda a, b: ctx.pair_can_answer(ctx.nodes[a].nat, ctx.nodes[b].nat)


def wait_answered(hosts: dict[str, Host], overlay: dict[str, str], expect: dict[str, list[str]], wait: float) -> None:
    """Until each node has had an answer from the nodes `expect` names for it (fping -a: the
    targets that answered), or `wait` seconds: a pair that cannot answer is the next cell's to
    report, not this one's."""
    pending = {name: [overlay[peer] for peer in peers] for name, peers in expect.items()}
    deadline = time.monotonic() + wait

    def answered(name: str) -> set[str]:
        result = hosts[name].run(["fping", "-a", "-q", "-r", "0", "-t", "500", *pending[name]], timeout=10, check=False)
        return set(result.stdout.split())
    with ThreadPoolExecutor(PARALLEL) as pool:
        while any(pending.values()) and time.monotonic() < deadline:
            asking = [name for name, targets in pending.items() if targets]
            for name, alive in zip(asking, pool.map(answered, asking)):
                pending[name] = [address for address in pending[name] if address not in alive]


class Probes:
    """fping in loop mode on the nodes, to their peers' overlay addresses, the replies read into
    `replies` by the pair (node, peer)."""

    def __init__(self, hosts: dict[str, Host], overlay: dict[str, str], period_ms: int, replies: Replies,
                 by_address: dict[str, str]):
        self.hosts, self.overlay, self.period, self.replies, self.by_address = hosts, overlay, str(period_ms), replies, by_address
        self.procs: list[tuple[str, object]] = []  # (the node it runs on, the fping)
        self.parsed: dict[int, int] = {}  # per fping (its index), how much of its output is read

    def start(self, names: list[str]) -> None:
        """On each of these nodes, one fping to every other node."""
        self._spawn({name: [address for peer, address in self.overlay.items() if peer != name] for name in names})

    def start_to(self, names: list[str], peer: str) -> None:
        """On each of these nodes, one more fping, to `peer` alone."""
        self._spawn({name: [self.overlay[peer]] for name in names})

    def _spawn(self, targets: dict[str, list[str]]) -> None:
        def spawn(name: str):
            return self.hosts[name].spawn(["fping", "-D", "-l", "-p", self.period, "-t", self.period, "-i", "2",
                                           *targets[name]], name=f"fping-{name}")
        with ThreadPoolExecutor(PARALLEL) as pool:
            self.procs.extend(zip(targets, pool.map(spawn, targets)))

    def read(self) -> None:
        for index, (name, proc) in enumerate(self.procs):
            found, self.parsed[index] = new_replies(proc.output(), self.parsed.get(index, 0))
            for stamp, address in found:
                self.replies.add((name, self.by_address.get(address, address)), stamp)
            if not proc.alive():
                raise MeasurementError(f"churn: fping on {name} exited: {proc.output()[-300:]}")

    def stop(self) -> None:
        stop_all([proc for _, proc in self.procs])

