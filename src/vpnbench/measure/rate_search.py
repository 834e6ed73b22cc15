"""Zero-loss and partial-drop rates (NDR, PDR) as FD.io CSIT reports them, found by CSIT's own
search (the `MLRsearch` package). The search is pure: it only calls `measure(duration, load)`,
which runs one trial through a generator adapter (generators.py: iperf3 UDP now; another
generator plugs in as one function) and stores it as a Trial.

A trial whose generator fell short of what was asked by more than its pacing allows
(pacing.sending_tolerance: 0.2 % and one datagram over 1 s) tells the search it lost the unsent
packets (MLRsearch counts unsent as loss), and the result, when the search's upper bound lies at
or above such a load, says "generator-limited (its name) at X" instead of an NDR: the tunnel was
not what stopped it. NDR and PDR are what the generator actually sent at the search's lower
bound (`{goal}_bps`, never above the load asked, `{goal}_load_bps`). Otherwise each goal says which limit its upper bound met
(`{goal}_limit_{site}`: path, tunnel device, receiving socket), from both ends' interface
counters around the trials there; a search whose lowest load already lost says so the same way.
"""

import math
import threading
import time
from typing import Callable, Literal

from pydantic import Field, model_validator

from vpnbench.foundation.errors import MeasurementError, VpnbenchError
from vpnbench.foundation.params import Duration, Family, Params, Rate, Size
from vpnbench.measure.base import CPU_FIGURES, Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.gen import GEN_MIN_LENGTH, run_gen
from vpnbench.measure.generators import (
    GENERATORS,
    LOSS_SITES,
    SPLIT_NAMES,
    TrialCounts,
    counter_comparison,
    dominant_site,
    interface_counters,
    limit_text,
    loss_site,
    loss_split,
    lost_at,
    units_differ,
)
from vpnbench.measure.pacing import sent_in_full
from vpnbench.store.records import Trial
from vpnbench.techniques import is_reference

# CSIT's latency loads: idle (a trickle whose packets never meet one another in a queue: IDLE_PPS),
# and 10, 50 and 90 % of the PDR the search found.
LATENCY_LOADS = (0.0, 0.1, 0.5, 0.9)
IDLE_PPS = 100


class RateSearchParams(Params):
    kind: Literal["rate_search"] = "rate_search"
    tool: Literal["iperf3", "gen"] = "iperf3"  # the traffic generator (trial adapter); gen: vpnbench-gen
    min_rate: Rate = 10_000_000  # the search's range of offered loads (UDP payload bits/s)
    max_rate: Rate = 1_000_000_000
    length: int = Field(1300, ge=16, le=65507)  # datagram payload bytes
    ndr_loss: float = Field(0.0, ge=0.0, lt=1.0)  # loss ratio of the no-drop rate
    pdr_loss: float = Field(0.005, ge=0.0, lt=1.0)  # loss ratio of the partial-drop rate
    relative_width: float = Field(0.005, gt=0.0, lt=1.0)  # how close lower and upper bound must end
    trial_duration: Duration = 1.0  # the search's first trials
    final_trial_duration: Duration = 1.0  # its last, at the final width
    duration_sum: Duration = 3.0  # trial seconds at one load before it counts as a bound (CSIT: 21)
    budget: Duration = 600.0  # the search's time limit
    family: Family = "ipv4"
    # iperf3 -w: both ends' socket buffers; unset: the kernel's default. A small one shows a search
    # meeting the receiving socket's limit (and says so) rather than the technique's.
    socket_buffer: Size | None = Field(None, ge=1024)
    # A rekey (Technique.rekey) forced halfway through every trial, as rekeys land inside trials in
    # long runs (CSIT-1886: WireGuard with 100+ tunnels failing PDR). Its cost is the NDR against
    # the same search without it (caption "rekey_cost"); the baseline runs it without, as the control.
    rekey_in_trials: bool = False
    # One-way latency after the search at these shares of the PDR found (0: idle, IDLE_PPS), as
    # FD.io CSIT reports a data path's latency: at an arbitrary rate it says little. gen only (its
    # timestamps, on the namespaces' one clock). Unset: CSIT's four loads with gen, none with iperf3.
    latency_at_pdr: list[float] | None = None
    latency_trial_duration: Duration = 2.0  # each latency trial's length

    def settings(self) -> dict:
        """As Params.settings, without `rekey_in_trials` when off and the latency loads when left to
        their default: the searches stored before they existed ran without, and their settings
        (what --resume and comparisons match on) stay equal."""
        settings = super().settings()
        if not settings.get("rekey_in_trials"):
            settings.pop("rekey_in_trials", None)
        if settings.get("latency_at_pdr") is None:
            settings.pop("latency_at_pdr", None)
            if settings.get("latency_trial_duration") == 2.0:
                settings.pop("latency_trial_duration", None)
        return settings

    def latency_loads(self) -> tuple[float, ...]:
        if self.latency_at_pdr is not None:
            return tuple(self.latency_at_pdr)
        return LATENCY_LOADS if self.tool == "gen" else ()

    @model_validator(mode="after")
    def _consistent(self):
        if self.latency_at_pdr and self.tool != "gen":
            raise ValueError("latency_at_pdr: one-way latency needs tool = \"gen\" (its timestamps); "
                             "allowed with iperf3: []")
        if any(not 0 <= share < 1 for share in self.latency_at_pdr or ()):
            raise ValueError(f"latency_at_pdr: {self.latency_at_pdr} is not allowed; allowed values: shares "
                             "of the PDR from 0 (idle) to below 1, e.g. [0, 0.1, 0.5, 0.9]")
        if self.tool == "gen" and self.socket_buffer is not None:
            raise ValueError("socket_buffer: only iperf3 sets it (-w); allowed with tool = \"iperf3\"")
        if self.tool == "gen" and self.length < GEN_MIN_LENGTH:
            raise ValueError(f"length: {self.length} is not allowed with tool = \"gen\"; allowed values: "
                             f"{GEN_MIN_LENGTH} to 65507")
        if self.min_rate >= self.max_rate:
            raise ValueError(f"min_rate: {self.min_rate} must be below max_rate {self.max_rate}")
        if self.final_trial_duration < self.trial_duration:
            raise ValueError("final_trial_duration: must be at least trial_duration")
        if self.duration_sum < self.final_trial_duration:
            raise ValueError("duration_sum: must be at least final_trial_duration")
        return self


class RateSearch(Measurement):
    kind = "rate_search"
    Params = RateSearchParams
    tools = ("iperf3", "ip")
    packages = {"iperf3": "iperf3", "ip": "iproute2"}
    server_tools = ("iperf3", "ss", "ip")
    columns = (Column("ndr_bps", "NDR Mbit/s", 1e-6), Column("pdr_bps", "PDR Mbit/s", 1e-6),
               Column("ndr_pps", "NDR kpps", 1e-3), Column("generator_limit_bps", "gen. limit Mbit/s", 1e-6),
               Column("trials", "trials"))
    headline = Headline(("ndr_bps", "pdr_bps"), "NDR / PDR (Mbit/s)", 1e-6, log=True, names=("NDR", "PDR"))
    figures = (*Measurement.figures, "latency_at_pdr", *CPU_FIGURES)
    captions = ("outcome", "rekey_cost")

    @classmethod
    def renews_keys(cls, params: Params) -> Literal["control", "required"] | None:
        return "control" if params.rekey_in_trials else None

    def needed_tools(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self.params.tool == "gen":  # run_gen finds its binary itself and says how to build it
            return ("ip",), ("ip",)
        return super().needed_tools()

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        parts = []
        for goal in ("ndr", "pdr"):
            site = goal_limit(metrics, goal)
            at = limit_text(site, {k: int(metrics[f"{goal}_lost_{k}"]) for k in SPLIT_NAMES
                                   if f"{goal}_lost_{k}" in metrics})
            if f"{goal}_bps" in metrics:
                parts.append(f"{goal.upper()} {metrics[f'{goal}_bps'] / 1e6:.1f} Mbit/s{at}")
            elif metrics.get(f"{goal}_generator_limited"):
                tool = next((f" ({tool})" for tool in GENERATORS if metrics.get(f"generator_limited_by_{tool}")), "")
                parts.append(f"{goal.upper()} generator-limited{tool} at {metrics['generator_limit_bps'] / 1e6:.1f} Mbit/s")
            elif f"{goal}_upper_bound_bps" in metrics:
                parts.append(f"{goal.upper()} not found: even {metrics[f'{goal}_upper_bound_bps'] / 1e6:.1f} Mbit/s "
                             f"lost too much{at}")
            else:
                parts.append(f"{goal.upper()} not found")
        return ", ".join(parts) + f" ({metrics.get('trials', 0):.0f} trials)"

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"relative_width": max(params.relative_width, 0.1), "trial_duration": 1.0,
                                         "final_trial_duration": 1.0, "duration_sum": 1.0,
                                         "budget": min(params.budget, 60.0),
                                         "latency_trial_duration": min(params.latency_trial_duration, 1.0)})

    def expected_seconds(self) -> float:
        return self.params.budget

    def run(self, ctx: MeasureContext) -> MeasureResult:
        from vpnbench.measure.search import SearchOutcome, search  # MLRsearch is imported only when searching

        p = self.params
        if p.rekey_in_trials and ctx.rekey is None and not is_reference(ctx.technique_params):
            raise MeasurementError("rate_search: this runner cannot rekey the technique (rekey_in_trials)")
        measurer = TrialRunner(ctx, p)
        started = time.monotonic()
        try:
            outcome: SearchOutcome = search(measurer, p)
        except RuntimeError as exc:  # MLRsearch's own: the time budget ran out
            raise MeasurementError(f"the search did not finish: {exc} ({len(measurer.trials)} trials; "
                                   "raise budget or relative_width)", measurer.raw_with_table()) from None
        metrics = search_metrics(outcome, measurer, p.length)
        metrics["search_seconds"] = time.monotonic() - started
        if measurer.renew is not None:
            metrics["rekeys_in_trials"] = float(sum(1 for t in measurer.trials if t.data["rekey"].get("inside")))
        raw = measurer.raw_with_table()
        if p.latency_loads() and "pdr_bps" in metrics:
            latency, raw_latency = latency_at_loads(ctx, p, metrics["pdr_bps"])
            metrics.update(latency)
            raw.update(raw_latency)
        elif p.latency_loads():  # shares of an unknown PDR are no loads: say so, measure none
            raw["latency"] = ("no latency at shares of the PDR: the search found none ("
                              + self.headline_text(metrics) + ")\n")
        return MeasureResult(metrics, raw, trials=measurer.trials,
                             series={"offered_bps": measurer.offered_series, "throughput_bps": measurer.received_series})

    def default_label(self) -> str:
        return (f"rate_search_{self.params.length}" + ("_v6" if self.params.family == "ipv6" else "")
                + ("_gen" if self.params.tool == "gen" else "") + ("_rekeyed" if self.params.rekey_in_trials else ""))


def load_tag(share: float) -> str:
    """How a latency load is named in the metrics: idle, pdr10, pdr50, pdr90."""
    return "idle" if share == 0 else f"pdr{round(share * 100):d}"


def latency_at_loads(ctx: MeasureContext, p: RateSearchParams, pdr_bps: float) -> tuple[dict, dict]:
    """One gen trial at each latency load: its one-way delay distribution (min, p50, p90, p99,
    p99.9, max) as latency_<load>_owd_<stat>_ms, the load it offered and what it lost. A load
    whose trial failed keeps its reason in the raw output and no numbers (the search stands)."""
    metrics: dict[str, float] = {}
    raw: dict[str, str] = {}
    for share in p.latency_loads():
        tag = load_tag(share)
        offered = IDLE_PPS * 8 * p.length if share == 0 else share * pdr_bps
        try:
            result = run_gen(ctx, p.family, max(int(offered), 1), p.length, p.latency_trial_duration)
        except MeasurementError as exc:
            raw[f"latency_{tag}"] = f"{exc}\n" + "".join(exc.raw.values())
            continue
        raw[f"latency_{tag}"] = result.raw.get("gen_client", "")
        metrics[f"latency_{tag}_offered_bps"] = offered
        for name, value in result.metrics.items():
            if name == "loss_pct" or name.startswith("owd_"):
                metrics[f"latency_{tag}_{name}"] = value
    return metrics, raw


class TrialRunner:
    """One trial per call: the generator's counts, the tunnel interfaces' counters at both ends
    around it, stored as a Trial. MLRsearch's loads are packets per second."""

    def __init__(self, ctx: MeasureContext, params: RateSearchParams, generator=None, counters=None):
        self.ctx, self.params = ctx, params
        self.generator = generator or GENERATORS[params.tool]  # a simulated one in unit tests
        self.counters = counters or (lambda: interface_counters(ctx, params.family))
        # What renews the keys halfway through each trial; None: no rekeys (the reference's control)
        self.renew = ctx.rekey if params.rekey_in_trials and not is_reference(ctx.technique_params) else None
        self.trials: list[Trial] = []
        self.raw: dict[str, str] = {}
        self.offered_series: list[tuple[float, float]] = []
        self.received_series: list[tuple[float, float]] = []
        self.started = time.monotonic()

    def run_trial(self, duration: float, load_pps: float) -> TrialCounts:
        p = self.params
        offered_bps = load_pps * 8 * p.length
        seconds = max(1, math.ceil(duration - 1e-9))  # iperf3 3.12 takes whole seconds
        before = self.counters()
        rekey = MidTrialRekey(self.renew, seconds / 2) if self.renew else None
        trial_started = time.monotonic()
        if rekey:
            rekey.start()  # its clock starts with the trial's
        try:
            options = {"socket_buffer": p.socket_buffer} if p.socket_buffer else {}
            counts = self.generator(self.ctx, p.family, offered_bps, p.length, seconds, **options)
        except MeasurementError as exc:
            # A trial whose tool failed (e.g. iperf3's control connection lost under overload)
            # forwarded nothing it can prove: all lost, not a generator shortfall.
            counts = TrialCounts(sent_packets=int(load_pps * seconds), received_packets=0, sent_bps=offered_bps,
                                 received_bps=0.0, raw=exc.raw, error=str(exc))
        trial_s = time.monotonic() - trial_started
        if rekey:
            rekey.join()
        after = self.counters()
        counts.trial_s = float(seconds)
        number = len(self.trials) + 1
        self.raw.update({f"trial{number}_{name}": text for name, text in counts.raw.items()})
        # Against the load over the seconds it ran: iperf3's own rate is per its own (rounded-up) seconds
        intended = load_pps * seconds
        limited = not sent_in_full(counts.sent_packets, intended, p.length, seconds)
        interfaces = counter_comparison(before, after, counts.sent_packets, counts.received_packets)
        data = {"sent_bps": counts.sent_bps, "received_bps": counts.received_bps, "generator_limited": limited,
                "intended_duration_s": duration, "interfaces": interfaces}
        if limited:
            data["generator"] = p.tool
            data["unsent_packets"] = int(intended) - counts.sent_packets  # lost, to MLRsearch
        site = None if counts.error else loss_site(interfaces, limited)  # a failed tool tells nothing of where
        split = None if counts.error else loss_split(interfaces)
        if site:
            data["loss_site"] = site
        if split:
            data["loss_split"] = split
        elif not counts.error and (mismatch := units_differ(interfaces)):
            data["loss_site_unknown"] = mismatch
        if counts.error:
            data["error"] = counts.error
        if rekey:
            data["rekey"] = rekey.record(trial_s)
        elif self.params.rekey_in_trials:
            data["rekey"] = {"control": True}
        sent = counts.sent_packets
        self.trials.append(Trial(number, offered_bps=offered_bps, offered_pps=load_pps, length=p.length,
                                 duration_s=float(seconds), sent_packets=float(sent),
                                 received_packets=float(counts.received_packets),
                                 loss_ratio=(sent - counts.received_packets) / sent if sent else None, data=data))
        t = round(time.monotonic() - self.started, 3)
        self.offered_series.append((t, offered_bps))
        self.received_series.append((t, counts.received_bps))
        if rekey and rekey.error:
            raise MeasurementError(f"trial {number}: the rekey inside it failed: {rekey.error}", self.raw_with_table())
        return counts

    def generator_limit(self) -> float | None:
        """The lowest offered load (bits/s) the generator could not send."""
        limited = [t.offered_bps for t in self.trials if t.data.get("generator_limited")]
        return min(limited) if limited else None

    def raw_with_table(self) -> dict[str, str]:
        lines = ["trial offered_Mbps sent_Mbps received_Mbps loss_ratio duration_s generator_limited lost_at"]
        for t in self.trials:
            loss = "nan" if t.loss_ratio is None else f"{t.loss_ratio:.6f}"
            lines.append(f"{t.number:5d} {t.offered_bps / 1e6:12.2f} {t.data['sent_bps'] / 1e6:9.2f} "
                         f"{t.data['received_bps'] / 1e6:13.2f} {loss:>10} {t.duration_s:10g} "
                         f"{'yes' if t.data['generator_limited'] else 'no':>17} "
                         f"{lost_at(t.data.get('loss_site'), t.data.get('loss_split'))}")
        return {**self.raw, "search": "\n".join(lines) + "\n"}


class MidTrialRekey(threading.Thread):
    """A rekey `delay` s after the trial started, in a thread of its own, so the search's
    measure(duration, load) stays one call and the generator runs untouched meanwhile."""

    def __init__(self, renew: Callable[[], dict], delay: float):
        super().__init__(name="rekey-in-trial", daemon=True)
        self.renew, self.delay = renew, delay
        self.started_at = time.monotonic()  # the trial's start: start() sets it again
        self.at: float | None = None  # seconds since the trial started
        self.took: float | None = None
        self.detail: dict = {}
        self.error: str | None = None

    def start(self) -> None:
        self.started_at = time.monotonic()
        super().start()

    def run(self) -> None:
        time.sleep(self.delay)
        self.at = time.monotonic() - self.started_at
        try:
            self.detail = self.renew()
        except (VpnbenchError, OSError) as exc:
            self.error = str(exc)
        self.took = time.monotonic() - self.started_at - self.at

    def record(self, trial_s: float) -> dict:
        """What the trial stores: when the rekey ran, how long it took, and whether it lay inside
        the trial (it began after the generator started and ended before it returned)."""
        inside = self.error is None and self.at is not None and self.at + self.took <= trial_s
        return {"at_s": round(self.at, 4), "seconds": round(self.took, 4), "trial_s": round(trial_s, 4),
                "inside": inside, "tunnels_rekeyed": self.detail.get("tunnels_rekeyed", 1),
                **({"error": self.error} if self.error else {})}


def search_metrics(outcome, runner: TrialRunner, length: int) -> dict[str, float]:
    """NDR and PDR from the search's bounds, unless the generator stopped the search: its upper
    bound lies at or above a load the generator fell short of (beyond its pacing's tolerance):
    only the unsent packets may have made it bad. Then the goal is "generator-limited at X", never
    a false NDR. A found goal is the rate the generator actually sent at the lower bound's load."""
    metrics: dict[str, float] = {"trials": float(len(runner.trials))}
    short = runner.generator_limit()
    limits = []
    for goal in ("ndr", "pdr"):
        lower, upper = outcome.bounds[goal]  # packets/s, None when absent
        upper_bps = None if upper is None else upper * 8 * length
        if upper_bps is not None:
            metrics[f"{goal}_upper_bound_bps"] = upper_bps
        limit = _generator_stopped(upper_bps, short)
        if limit is not None:
            metrics[f"{goal}_generator_limited"] = 1.0
            limits.append(limit)
            continue
        metrics[f"{goal}_found"] = 0.0 if lower is None else 1.0
        site, split = limit_met(runner.trials, upper, getattr(runner.params, f"{goal}_loss"))
        if site:
            metrics[f"{goal}_limit_{site}"] = 1.0
        metrics.update({f"{goal}_lost_{where}": float(n) for where, n in split.items()})
        if lower is not None:
            sent_pps = sent_rate(runner.trials, lower)
            metrics[f"{goal}_load_bps"] = lower * 8 * length
            metrics[f"{goal}_pps"] = min(lower, sent_pps)
            metrics[f"{goal}_bps"] = metrics[f"{goal}_pps"] * 8 * length
            if upper is None:  # max_rate itself passed: the real rate may be higher
                metrics[f"{goal}_at_max_rate"] = 1.0
    if short is not None or limits:
        metrics["generator_limit_bps"] = min([*limits, *([short] if short is not None else [])])
        metrics["generator_max_sent_bps"] = max(t.data["sent_bps"] for t in runner.trials)
        metrics[f"generator_limited_by_{runner.params.tool}"] = 1.0
    return metrics


def sent_rate(trials: list[Trial], load_pps: float) -> float:
    """Packets per second the generator actually sent over the trials at this load (the load
    itself where none says)."""
    at = [t for t in trials if t.offered_pps is not None and t.sent_packets is not None and t.duration_s
          and math.isclose(t.offered_pps, load_pps, rel_tol=1e-6)]
    seconds = sum(t.duration_s for t in at)
    return sum(t.sent_packets for t in at) / seconds if seconds else load_pps


def _generator_stopped(upper_bps: float | None, short: float | None) -> float | None:
    """Where the generator stopped this goal's search, if it did: the upper bound lies at or above
    the lowest load the generator fell short of (beyond its pacing's tolerance). No upper bound (max_rate
    itself passed) lies above every load: a shortfall anywhere stopped it."""
    if short is None:
        return None
    return short if upper_bps is None or upper_bps >= short * (1 - 1e-9) else None


def limit_met(trials: list[Trial], upper_pps: float | None, goal_loss: float) -> tuple[str | None, dict[str, int]]:
    """Which limit (a LOSS_SITES key) a goal's upper bound met, and the packets each site lost
    there: the trials at that load that lost more than the goal allows, their loss splits
    summed, named by dominant_site (the generator when only it is named)."""
    if upper_pps is None:
        return None, {}
    at_bound = [t.data for t in trials if t.offered_pps is not None
                and math.isclose(t.offered_pps, upper_pps, rel_tol=1e-6) and (t.loss_ratio or 0.0) > goal_loss]
    split: dict[str, int] = {}
    for data in at_bound:
        for where, n in (data.get("loss_split") or {}).items():
            split[where] = split.get(where, 0) + n
    if any(data.get("loss_site") == "generator" for data in at_bound):
        return "generator", split
    if not split and any(data.get("loss_site_unknown") for data in at_bound):
        return "unknown", split  # lost, but the counters cannot say where (GSO batches)
    return dominant_site(split), split


def goal_limit(metrics: dict, goal: str) -> str | None:
    """The limit search_metrics found for a goal, or None."""
    return next((site for site in LOSS_SITES if metrics.get(f"{goal}_limit_{site}")), None)
