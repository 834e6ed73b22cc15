"""Trends: every run of one campaign over time, with the points where a result changed.

A team re-runs the same campaign after each kernel, firmware or daemon upgrade. For each
testbed, technique, impairment, measurement and headline metric this lines the runs up in
time and splits them into groups of one mean each with jumpavg, FD.io CSIT's trending
library: the split of least description length (a new group costs bits, so noise alone does
not open one). Each group boundary is a change point, a regression or a progression by the
metric's direction, reported with the host facts and tool versions that changed at that run,
and, where the series' technique ran a built daemon (daemon_version.py), its version change
("wireguard-go 0.0.20220316 (debian) → 0.0.0-20260522210424-ecfc5a8d5446 (go1.27.3)").

A boundary is told as a change point only with support and significance (`shown_levels`): at
least MIN_SUPPORT runs on each side, and a step beyond its own standard error, the runs' noise
× √(1/m₁ + 1/m₂) for levels of m₁ and m₂ runs (widened where runs drift), by Student's t at
ALPHA over the history's boundaries; or beyond a share the user sets (`--min-change`). The
boundaries that are not are joined, weakest first. A level of too few runs is said as such: the
newest runs "too few runs to tell", older ones standing apart (outliers), left out of the levels
while the rest of the series is told. A series the search cannot read says why and the others go on.

The search is pure (`segments`); reading the archive (`load_history`) and drawing
(`render_html`) are apart from it.
"""

import dataclasses
import datetime
import functools
import io
import math
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

from vpnbench.answers.distributions import t_ppf
from vpnbench.answers.stats import headline_kind
from vpnbench.foundation.daemon_version import DaemonVersion, in_turn, ran_version, version_change
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.figure_scale import apply_scale_rule
from vpnbench.store.records import HostFacts, Run

# Host facts that describe the machine and its software, compared between runs. Interface
# names, qdisc handles and firewall sizes change with every run and say nothing of an upgrade.
STABLE_FACTS = ("cpu_model", "cpu_count", "kernel", "os", "governor", "turbo", "smt", "irqbalance",
                "versions", "mitigations", "crypto_drivers", "cpu_crypto_flags", "congestion_control")
RUN_FACTS = ("vpnbench", "kernel", "machine")


@dataclasses.dataclass(frozen=True)
class SeriesKey:
    """One line of a trend: what is compared across runs."""

    testbed: str
    technique: str
    impairment: str
    measurement: str  # the measurement's label
    metric: str

    @property
    def title(self) -> str:
        return f"{self.testbed} · {self.measurement} · {self.impairment} · {self.metric}"


@dataclasses.dataclass
class RunPoint:
    """One run's samples of one series (its repetitions), in time order."""

    run_id: str
    started_at: str
    values: list[float]

    @functools.cached_property
    def mean(self) -> float:  # read some 40 times a run over noise, levels and figures
        return math.fsum(self.values) / len(self.values)


@dataclasses.dataclass(frozen=True)
class Segment:
    """Runs first..last (indexes into the series) that share one mean."""

    first: int
    last: int
    mean: float
    stdev: float


@dataclasses.dataclass
class ChangePoint:
    """Where a series moved to a new mean: at the run `run_id`, from `before` to `after`."""

    key: SeriesKey
    run_id: str
    started_at: str
    before: float
    after: float
    kind: str  # "regression" or "progression"
    changed: list[str]  # the facts that differ from the run before: "server versions.openvpn: 2.6.3 -> 2.6.9"
    version_change: str = ""  # the technique's daemon across the change: "wireguard-go 0.0.20220316 (debian) → …"

    @property
    def relative(self) -> float:
        return self.after / self.before - 1 if self.before else math.inf


@dataclasses.dataclass
class Trend:
    key: SeriesKey
    points: list[RunPoint]
    segments: list[Segment]  # its levels: runs between two change points
    changes: list[ChangePoint]
    note: str = ""  # "too few runs to tell whether the newest …", runs standing apart, drift; or why not searched
    versions: list[DaemonVersion] = dataclasses.field(default_factory=list)  # the daemon versions its runs ran, in turn


@dataclasses.dataclass
class History:
    """What the archive holds of one campaign: its runs in time order, their cells and facts."""

    campaign: str
    runs: list[Run]
    cells: dict[str, list[tuple]]  # run id -> its finished cells, as Store.cell_metrics reads them
    facts: dict[str, dict[str, str]]  # run id -> flattened stable facts of every host
    # (run id, technique) -> the daemon version it ran, for techniques that drive a built daemon
    versions: dict[tuple[str, str], DaemonVersion] = dataclasses.field(default_factory=dict)


class Unsearchable(ValueError):
    """A series the search cannot read; its message says why, in words for the table."""


# jumpavg codes each value in units of the series' largest value / (2^13 - 1): 12 significant
# bits per sample, its default (classify's sbps).
SIGNIFICANT_BITS = 12.0
LN2 = math.log(2)


def segments(runs: list[list[float]]) -> list[Segment]:
    """The runs (each a list of samples) split into groups of one mean, by jumpavg's minimum
    description length. One segment means no change; a series of one value throughout (a
    metric that stays 0, as rekey's worst dip where nothing dipped) is one segment as is.

    jumpavg's own `classify` builds a Python object per candidate start and run, some 10 µs a
    pair, and evaluates every start at every run: quadratic (23 s for 6 series of 1 000 runs).
    This is the same search, start for start and by its formulas (float rounding aside;
    tests/test_trend.py holds the two to the same groups), with the starts in numpy arrays and
    those that provably cannot be the best left out (_search): some 0.25 s of CPU for 10 000
    runs, in a stationary stretch as after a change (bench/trend.py)."""
    if not runs:
        return []
    samples = [value for run in runs for value in run]
    top, bottom = max(samples), min(samples)
    if top == bottom:
        return [Segment(0, len(runs) - 1, top, 0.0)]
    if top <= 0:
        raise Unsearchable("no value above 0: the change-point search measures values as shares of the largest")
    starts, _ = _search([_run_stats(run) for run in runs], top)
    found, last = [], len(runs) - 1
    while last >= 0:
        first = starts[last]
        found.append(Segment(first, last, *mean_stdev([value for run in runs[first:last + 1] for value in run])))
        last = first - 1
    return found[::-1]


def _run_stats(values: list[float]) -> tuple[int, float, float]:
    """(samples, mean, population stdev) of one run, as jumpavg's AvgStdevStats sees it."""
    return len(values), *mean_stdev(values)


def mean_stdev(values: list[float]) -> tuple[float, float]:
    """Mean and population stdev, each by one exactly rounded sum: statistics.pstdev rounds
    exactly too but in fractions, 20 times slower (2 s over 20 series of 10 000 runs)."""
    mean = math.fsum(values) / len(values)
    return mean, math.sqrt(math.fsum((value - mean) ** 2 for value in values) / len(values))


# Float rounding of the bits (~1e-7 nats over 10 000 runs) is far below this: a bound that
# clears it holds for the exact bits too.
ROUNDING = 0.01
# The runs a step over every candidate lets the far ones sit out, at most; and how far above the
# best (beyond the bound for those runs) a candidate must be to sit out (more sit out with less,
# but the window then ends early more often).
WINDOW, HEADROOM = 64, 4.0


def _search(runs: list[tuple[int, float, float]], top: float, prune: bool = True) -> tuple[list[int], int]:
    """jumpavg's classify on runs given as (samples, mean, stdev): for each run t, where the last
    group of the best grouping of runs 0..t starts. Candidate j is "the best grouping of runs
    0..j-1, then one group j..t"; the best at t is the first candidate of fewest bits, the one
    opened at t itself unless an older one is strictly fewer (classify's order). Values are in
    jumpavg's units and bits in nats (a common factor: the order of candidates is the same).

    A step over every candidate merges the run into its group (Welford's merge, as jumpavg) and
    counts its bits (_group_nats), some 25 passes over arrays. Then the candidates far above the
    best sit out the next runs (up to WINDOW) while a bound (_split_saving) shows they stay
    above the best of those that do not; the window ends at the first run where it no longer
    shows it, and they take its runs at once. The oldest candidates that can never be the best
    again are dropped for good (PELT's rule, by the same bound). prune=False evaluates every
    candidate at every run, for the tests. Returns the starts and how many were dropped."""
    import numpy as np  # deferred: only the search needs it

    count = len(runs)
    unit = top / (2.0 ** (SIGNIFICANT_BITS + 1.0) - 1.0)
    scale = top / unit
    sizes = [size for size, _, _ in runs]
    ends = np.cumsum([0, *sizes])
    per_size = np.array(_nats_per_size(int(ends[-1]), scale))
    saving = _split_saving(np, per_size)
    # Every group's mean lies between the least and the largest run mean, so a group's jump term
    # log(|mean − prev| + 1) is at most log(spread + 1), and grows by at most log(1 + shift)
    # while its mean shifts by shift.
    spread = (max(mean for _, mean, _ in runs) - min(mean for _, mean, _ in runs)) / unit
    if len(set(sizes)) == 1:  # runs of one size (the usual): candidates lo..t's k-only nats are a reversed view
        per_run = per_size[::sizes[0]]
        k_nats = lambda lo, t: per_run[t + 1 - lo:0:-1]  # noqa: E731
    else:
        k_nats = lambda lo, t: np.take(per_size, ends[t + 1] - ends[lo:t + 1])  # noqa: E731
    run_units = [(size, run_mean / unit, (run_stdev / unit) ** 2 * size) for size, run_mean, run_stdev in runs]
    # Each candidate's last group (samples, mean, second moment); its fixed bits: the best
    # grouping before it, and the normalisation of its mean's code (the first group's mean is
    # uniform in 0..max, a later one's coded by its jump from the mean before, `prev`).
    samples, mean, moment = np.zeros(count), np.zeros(count), np.zeros(count)
    fixed, prev = np.zeros(count), np.zeros(count)
    scratch = np.empty((3, count))
    fixed[0] = math.log(scale + 1)
    # The candidates that do not sit out a window, in order: their starts, groups and code.
    live = np.empty(count, dtype=np.intp)
    live_samples, live_mean, live_moment, live_fixed, live_prev = (np.empty(count) for _ in range(5))

    def best_of(bits) -> int:
        """The index of the best candidate in bits (the newest last), as classify picks it."""
        oldest_best = int(np.argmin(bits[:-1])) if len(bits) > 1 else 0
        return oldest_best if bits[oldest_best] < bits[-1] else len(bits) - 1

    def open_next(t: int, best: float, best_mean: float) -> float:
        """Candidate t+1's fixed bits (opens_at): the best grouping of runs 0..t, and the code of
        its mean's jump from that grouping's last mean."""
        opens_at = best + math.log(best_mean * best_mean - (best_mean - 1) * scale + scale * scale / 2)
        if t + 1 < count:
            prev[t + 1], fixed[t + 1] = best_mean, opens_at
        return opens_at

    starts, lo = [0] * count, 0  # candidates before lo are out for good
    t, merged = 0, False  # merged: run t is in every candidate's group already (a window ended at it)
    while t < count:
        if not merged:  # every candidate lo..t-1 takes run t; candidate t opens
            run_size, run_mean, run_moment = run_units[t]
            if t > lo:
                _merge(np, run_size, run_mean, run_moment, samples[lo:t], mean[lo:t], moment[lo:t],
                       scratch[:, :t - lo])
            samples[t], mean[t], moment[t] = run_size, run_mean, run_moment
        bits = _group_nats(np, samples[lo:t + 1], mean[lo:t + 1], moment[lo:t + 1], prev[lo:t + 1], k_nats(lo, t),
                           lo == 0, scratch[:, :t + 1 - lo])
        bits += fixed[lo:t + 1]
        winner = best_of(bits)
        best = float(bits[winner])
        starts[t] = lo + winner
        opens_at = open_next(t, best, float(mean[lo + winner]))
        later = int(ends[-1] - ends[t + 1])
        if not prune or not later:
            t, merged = t + 1, False
            continue
        # Out for good: the oldest candidates above opens_at by more than any later runs can save.
        never = saving[later] + math.log(spread + 1) + ROUNDING
        if bits[0] > opens_at + never:
            above = np.flatnonzero(bits <= opens_at + never)
            dropped = int(above[0]) if len(above) else len(bits)
            lo, bits = lo + dropped, bits[dropped:]
        stop = min(count, t + WINDOW)
        if lo > t or stop <= t + 1:
            t, merged = t + 1, False
            continue
        # Candidate j's bits over runs t+1..u stay at least lower_j + h(those runs): the bound,
        # with at most `window` samples taken and its mean shifted by at most shift_j.
        window = int(ends[stop] - ends[t + 1])
        lower = np.divide(window * spread, samples[lo:t + 1] + window)
        np.log1p(lower, out=lower)
        lower += saving[window]
        np.subtract(bits, lower, out=lower)
        sits_out = lower > best + HEADROOM
        least_lower = float(lower[sits_out].min()) if sits_out.any() else math.inf
        chosen = np.flatnonzero(~sits_out) + lo
        n = first_new = len(chosen)
        live[:n] = chosen
        for full, part in ((samples, live_samples), (mean, live_mean), (moment, live_moment), (fixed, live_fixed),
                           (prev, live_prev)):
            np.take(full, chosen, out=part[:n])
        u = t + 1
        while u < stop:
            run_size, run_mean, run_moment = run_units[u]
            if n:
                _merge(np, run_size, run_mean, run_moment, live_samples[:n], live_mean[:n], live_moment[:n],
                       scratch[:, :n])
            live[n], live_samples[n], live_mean[n], live_moment[n] = u, run_size, run_mean, run_moment
            live_fixed[n], live_prev[n] = fixed[u], prev[u]
            n += 1
            bits = _group_nats(np, live_samples[:n], live_mean[:n], live_moment[:n], live_prev[:n],
                               np.take(per_size, live_samples[:n].astype(np.intp)), live[0] == 0, scratch[:, :n])
            bits += live_fixed[:n]
            winner = best_of(bits)
            # h(runs t+1..u): candidate t+1's bits but its fixed part and its jump term.
            runs_alone = (bits[first_new] - opens_at
                          + math.log(abs(live_mean[first_new] - live_prev[first_new]) + 1))
            if least_lower + runs_alone <= bits[winner] + ROUNDING:
                break  # one that sat out may be the best at u: a step over every candidate decides
            starts[u] = int(live[winner])
            open_next(u, float(bits[winner]), float(live_mean[winner]))
            u += 1
        # Those that sat out take runs t+1..u at once (the runs up to where the window ended);
        # the others are as they were.
        last = min(u, stop - 1)
        block_size, block_mean, block_moment = 0, 0.0, 0.0
        for run_size, run_mean, run_moment in run_units[t + 1:last + 1]:
            delta = run_mean - block_mean
            block_size += run_size
            block_mean += delta * run_size / block_size
            block_moment += run_moment + delta * (run_mean - block_mean) * run_size
        _merge(np, block_size, block_mean, block_moment, samples[lo:t + 1], mean[lo:t + 1], moment[lo:t + 1],
               scratch[:, :t + 1 - lo])
        samples[live[:n]], mean[live[:n]], moment[live[:n]] = live_samples[:n], live_mean[:n], live_moment[:n]
        t, merged = (u, True) if u < stop else (stop, False)
    return starts, lo


def _split_saving(np, per_size):
    """K[b]: at most how many nats a group and the next b (or fewer) samples cost more as two
    groups than as one: h(A) + h(B) − h(A ∪ B) ≤ K[b] where B has at most b samples and h is a
    group's bits but its mean's code. What makes it sound to leave a candidate out.

    The bound. Candidate j's bits at t are C_j(t) = fixed_j + h(G) − J, G its group j..t, J ≥ 0
    its jump term log(|mean − prev| + 1). At a later run u it holds G ∪ H, H = runs t+1..u of
    b samples, and J has grown by at most log(1 + shift), shift = how far b samples can move
    G's mean (b·spread/(|G| + b)); so C_j(u) ≥ C_j(t) + h(H) − K[b] − log(1 + shift). Two uses:
    - PELT's rule (Killick et al. 2012): candidate t+1 costs at most opens_at + h(H) at u (its
      jump term only subtracts), and so does the best; C_j(t) > opens_at + K[all later samples]
      + log(spread + 1) puts j above the best at every later run, strictly: it is dropped.
    - A window: with L_j = C_j(t) − K[window's samples] − log(1 + shift_j), j sits out run u as
      long as the least L_j + h(H) is above the best of the others at u, h(H) being candidate
      t+1's bits but its fixed part and jump term. In a stationary stretch all but a few dozen
      candidates sit out 64 runs at a time; the first run where the bound fails ends it.
    Either way a candidate left out is strictly above the best where it is left out: no start,
    and no tie between candidates of equal bits, changes.

    K. h(G) is the k-only nats g(k) (the table) plus k·φ(v) + ψ for a group of k ≥ 2 samples of
    variance v = s², with φ(v) = log(√v + 1) and ψ = log((s+2)/(s+1)) in (0, log 2] (a
    one-sample group has neither; φ(0) = 0). The union's k·v is at least kA·vA + kB·vB (the
    groups' sums of squares add up, and the one between their means is ≥ 0); φ is increasing
    and concave, so k·φ(v) ≥ k·φ((kA·vA + kB·vB)/k) ≥ kA·φ(vA) + kB·φ(vB) (Jensen), and the ψ
    terms lose at most 2·log 2. For g: with L the least step g(k+1) − g(k) up to the series'
    samples, r(k) = g(k) − L·k never decreases, so g(a) + g(b) − g(a+b) = r(a) + r(b) − r(a+b)
    ≤ r(b), and ≤ r(b') for any b' ≥ b. K[b] = r(b) + 2·log 2; tests/test_trend.py holds
    jumpavg's own bits to it.

    K grows as 2·log b (g holds log(k(k+1))), and a stationary stretch's candidates stay closer
    than K[all later samples] to opens_at, so PELT drops none of them there (a series of 10 000
    runs flat throughout keeps all; with one step, all but the last few before it): the windows
    are what make a long stationary series cheap."""
    table = per_size[1:]  # g(1)..g(N)
    least_step = float(np.min(np.diff(table))) if len(table) > 1 else 0.0
    return np.concatenate([[0.0], table - least_step * np.arange(1, len(table) + 1)]) + 2 * LN2


def _merge(np, run_size: int, run_mean: float, run_moment: float, samples, mean, moment, scratch) -> None:
    """Welford's merge of one run (its samples, mean and second moment) into every group:
    the moment grows by the run's own and by delta·(run_mean − new mean)·run_size, which is
    delta²·old·run_size/new."""
    delta, step = scratch[0], scratch[1]
    np.subtract(run_mean, mean, out=delta)
    samples += run_size
    np.multiply(delta, run_size, out=step)  # delta·run_size, then over the new samples: the mean's step
    np.divide(step, samples, out=scratch[2])
    mean += scratch[2]
    delta -= scratch[2]  # run_mean − the new mean
    delta *= step
    if run_moment:
        delta += run_moment
    moment += delta


def _group_nats(np, samples, mean, moment, prev, k_nats, first_group: bool, scratch):
    """jumpavg's BitCountingStats bits (in nats) of the candidates' last groups but their fixed
    part: each mean's jump from the group before (jumpavg's opposite triangle; none for the
    first group of a series, candidate 0, there when first_group), its stdev s coded as
    (s+1)(s+2), and its k samples on a (k-2)-sphere of radius ~ s: k·log(s+1) +
    log((s+2)/(s+1)) − log(|jump|+1) and the k-only nats."""
    stdev_1, ratio, jump = scratch
    np.divide(moment, samples, out=stdev_1)
    np.sqrt(stdev_1, out=stdev_1)
    stdev_1 += 1
    np.add(stdev_1, 1, out=ratio)
    ratio /= stdev_1  # (s+2)/(s+1)
    np.log(stdev_1, out=stdev_1)
    stdev_1 *= samples  # k·log(s+1): (k-2) for the sphere's radius, 1 for coding s, 1 folded into ratio
    np.subtract(mean, prev, out=jump)
    np.abs(jump, out=jump)
    jump += 1
    if first_group:
        jump[0] = 1.0
    ratio /= jump
    np.log(ratio, out=ratio)
    nats = np.add(stdev_1, ratio)
    if samples[-1] < 2:  # a one-sample group (only the newest can be one) has no stdev
        nats[-1] = -math.log(jump[-1])
    nats += k_nats
    return nats


def _nats_per_size(samples: int, scale: float) -> list[float]:
    """The bits (in nats) of a group that depend only on its count of samples k (index k): coding
    k, and for k >= 2 the stdev's normalisation and the (k-2)-sphere's area but its radius."""
    table = [0.0]
    for k in range(1, samples + 1):
        nats = math.log(k * (k + 1))
        if k >= 2:
            nats += math.log(1 - 1 / (scale + 2))
            nats += LN2 + math.log(math.pi) * ((k - 1) / 2) - math.lgamma((k - 1) / 2) + math.log(k) * ((k - 2) / 2)
        table.append(nats)
    return table


def higher_is_better(metric: str) -> bool:
    """Rates, MOS and MTU are better higher; latencies, times and shares (CPU, loss) lower."""
    return headline_kind(metric) == "ratio"


def change_kind(before: float, after: float, metric: str) -> str:
    return "progression" if (after > before) == higher_is_better(metric) else "regression"


def flatten(prefix: str, value, into: dict[str, str]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            flatten(f"{prefix}.{key}" if prefix else str(key), inner, into)
    elif value is not None:
        into[prefix] = str(value)


def run_facts(run: Run, host_facts: list[HostFacts]) -> dict[str, str]:
    """The run's stable facts, flattened: 'vpnbench', 'server versions.wireguard_go', ..."""
    facts: dict[str, str] = {}
    for name in RUN_FACTS:
        flatten(name, run.environment.get(name), facts)
    for host in host_facts:
        for name in STABLE_FACTS:
            flatten(f"{host.host} {name}", host.facts.get(name), facts)
    return facts


def changed_facts(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The facts that differ. A run records the versions of its own techniques' commands only, so a
    version missing on one side is another campaign's technique, not an upgrade."""
    return [f"{name}: {before.get(name, 'absent')} -> {after.get(name, 'absent')}"
            for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)
            and not (" versions." in name and (name not in before or name not in after))]


def testbed_name(run: Run) -> str:
    """A worker's testbed names itself; a single machine's runs are its host name and testbed kind."""
    testbed = run.environment.get("testbed") or {}
    return testbed.get("name") or f"{run.environment.get('hostname', '?')}/{testbed.get('kind', 'local')}"


def declared_headline(kind: str) -> tuple[str, ...] | None:
    """The metrics a measurement kind declares it is judged by, if it declares them."""
    from vpnbench.measure import MEASUREMENTS  # the kinds (~0.3 s to load) only when a headline is asked

    declared = MEASUREMENTS[kind].headline if kind in MEASUREMENTS else None
    return declared.metrics if declared else None


def first_rate_or_time(metrics: dict) -> tuple[str, ...]:
    """What a kind without a declared headline is judged by: its first rate or time."""
    return tuple(sorted(m for m in metrics if m.endswith(("_bps", "_ms")))[:1])


def series_of(history: History) -> dict[SeriesKey, list[RunPoint]]:
    # Keyed by plain tuples while reading (a frozen dataclass per cell costs ~1 s over 600 000 cells).
    series: dict[tuple, dict[str, list[float]]] = defaultdict(dict)
    declared: dict[str, tuple[str, ...] | None] = {}  # kind -> its declared headline: 600 000 cells, a few kinds
    for run in history.runs:
        testbed = testbed_name(run)
        for _, technique, impairment, kind, label, metrics in history.cells.get(run.run_id, []):
            if kind not in declared:
                declared[kind] = declared_headline(kind)
            for metric in declared[kind] or first_rate_or_time(metrics):
                value = metrics.get(metric)
                if isinstance(value, (int, float)) and math.isfinite(value):
                    key = (testbed, technique, impairment, label, metric)
                    series[key].setdefault(run.run_id, []).append(float(value))
    started = {run.run_id: run.started_at for run in history.runs}
    return {SeriesKey(*key): [RunPoint(run_id, started[run_id], values) for run_id, values in by_run.items()]
            for key, by_run in series.items()}


def trends(history: History, min_change: float | None = None, progress: Callable[[int, int], None] | None = None
           ) -> list[Trend]:
    """Every series of the campaign with its levels and the change points a person can act on
    (shown_levels). A series the search cannot read is kept with a note saying why; the others
    go on. `progress(done, total)` is told as each series' search ends."""
    series = sorted(series_of(history).items(), key=lambda item: dataclasses.astuple(item[0]))
    found = []
    searched = _searched([[p.values for p in points] for _, points in series])
    for done, ((key, points), (groups, unsearchable)) in enumerate(zip(series, searched), 1):
        if progress is not None:
            progress(done, len(series))
        if unsearchable:
            found.append(Trend(key, points, [], [], unsearchable))
            continue
        levels, note = shown_levels(points, groups, min_change)
        ran = [history.versions.get((point.run_id, key.technique)) for point in points] if history.versions else []
        changes = [ChangePoint(key, points[seg.first].run_id, points[seg.first].started_at, prev.mean, seg.mean,
                               change_kind(prev.mean, seg.mean, key.metric),
                               changed_facts(history.facts.get(points[prev.last].run_id, {}),
                                             history.facts.get(points[seg.first].run_id, {})),
                               version_across(ran, seg.first) if ran else "")
                   for prev, seg in zip(levels, levels[1:])]
        found.append(Trend(key, points, levels, changes, note, versions_in_turn(ran)))
    return found


def version_across(ran: list[DaemonVersion | None], first: int) -> str:
    """The version change at a change point (the run `first`), or '': the version most of the
    MIN_SUPPORT runs before it ran against the one most of the MIN_SUPPORT runs from it ran, so
    that a step the search places a run off the upgrade is still named, and an upgrade long before
    the step is not."""
    before = Counter(r for r in ran[max(0, first - MIN_SUPPORT):first] if r is not None).most_common(1)
    after = Counter(r for r in ran[first:first + MIN_SUPPORT] if r is not None).most_common(1)
    return version_change(before[0][0], after[0][0]) if before and after else ""


def versions_in_turn(ran: list[DaemonVersion | None]) -> list[DaemonVersion]:
    """The versions a series' runs ran, each where it began (a run without one left out)."""
    turns: list[DaemonVersion] = []
    for version in ran:
        if version is not None and (not turns or turns[-1] != version):
            turns.append(version)
    return turns


# A long history's searches go to one process per core: they are independent, some 25 µs of
# CPU a run (see segments), and a pool costs some 0.3 s to start (numpy imported in each).
PARALLEL_RUNS = 40_000  # runs over all series, below which a pool costs more than it saves


def _searched(series: list[list[list[float]]]) -> Iterator[tuple[list[Segment], str]]:
    """(groups, "") of each series, or ([], why) for one the search cannot read, in order, each
    as its search ends (so the caller can count them)."""
    if sum(len(runs) for runs in series) < PARALLEL_RUNS or (os.cpu_count() or 1) < 2:
        yield from map(_search_one, series)
        return
    with ProcessPoolExecutor() as pool:
        yield from pool.map(_search_one, series)


NOT_SEARCHED = "not searched"


def _search_one(runs: list[list[float]]) -> tuple[list[Segment], str]:
    try:
        return segments(runs), ""
    except (Unsearchable, ArithmeticError) as exc:
        return [], f"{NOT_SEARCHED}: {exc}"


MIN_SUPPORT = 3  # runs on each side of a change point before it is told
# The chance that a history of noise alone shows a change point at all: each boundary is tested
# at ALPHA / (runs - 1), Bonferroni over every place a boundary could be (jumpavg chose where).
ALPHA = 0.01
# Lag-1 autocorrelation of the runs is said to be drift beyond this many standard errors of its
# estimate under white noise (1/√pairs): 2 leaves white noise unsaid in 97.7 % of histories.
# Below that it still widens the steps' errors: counting it only beyond, 14 % of flat histories
# of 60 runs drifting at 0.5 showed a change point, against 2 % (300 seeded; bench/trend.py: 3.4 %).
DRIFT_SE = 2.0
TOO_FEW = "too few runs to tell"


@dataclasses.dataclass(frozen=True)
class RunNoise:
    """How far one run's mean strays by itself (sigma), how much runs in a row stray together
    (rho, the lag-1 autocorrelation, its estimate's bias undone, at least 0), and whether that
    is drift beyond what white noise shows (the measured autocorrelation beyond DRIFT_SE)."""

    sigma: float
    rho: float
    drifting: bool

    @property
    def inflation(self) -> float:
        """The variance of a mean of m runs is sigma² / m times this (AR(1): (1 + ρ) / (1 − ρ))."""
        return (1 + self.rho) / (1 - self.rho)


def run_noise(means, levels: list[tuple[int, int]], kept) -> RunNoise:
    """The runs' noise around their levels (index ranges first..last): sigma the larger of the
    consecutive runs' differences (median absolute difference / 0.6745 / √2, which steps barely
    move but drift shrinks: neighbours stray together) and the residuals around the levels'
    means (their median absolute value / 0.6745, which an outlier barely moves and drift widens);
    rho from the residuals of neighbours in one level. Runs not kept (standing apart) are left out."""
    import numpy as np  # loaded by the search already

    level_of = np.empty(len(means), dtype=np.int64)
    for number, (first, last) in enumerate(levels):
        level_of[first:last + 1] = number
    used = np.flatnonzero(kept)
    x, level = means[used], level_of[used]
    if len(x) < 2:
        return RunNoise(0.0, 0.0, False)
    counts = np.bincount(level, minlength=len(levels))
    level_mean = np.bincount(level, weights=x, minlength=len(levels)) / np.maximum(counts, 1)
    residual = x - level_mean[level]
    by_differences = float(np.median(np.abs(np.diff(x)))) / 0.6745 / math.sqrt(2)
    free = max(len(x) - len(levels), 1)
    by_residuals = float(np.median(np.abs(residual))) / 0.6745 * math.sqrt(len(x) / free)
    sigma = max(by_differences, by_residuals)
    same = (level[1:] == level[:-1]) & (np.diff(used) == 1)  # neighbours in time and in one level
    pairs = int(same.sum())
    tamed = np.clip(residual, -3 * sigma, 3 * sigma)  # an outlier run does not make drift
    square = float((tamed[:-1][same] ** 2).sum())
    if pairs < 2 or square == 0:
        return RunNoise(sigma, 0.0, False)
    measured = float((tamed[:-1] * tamed[1:])[same].sum()) / square
    # Residuals around a level's own mean are less alike than the runs were: the estimate falls
    # short by about (1 + 3ρ) / m in a level of m runs (Marriott and Pope, 1954).
    rho = min(max(measured + (1 + 3 * measured) * len(levels) / pairs, 0.0), 0.9)
    return RunNoise(sigma, rho, measured > DRIFT_SE / math.sqrt(pairs))


def step_critical(runs: int, free: int) -> float:
    """The t a step over its standard error must exceed: Student's t at ALPHA / (runs − 1) two-sided."""
    return t_ppf(1 - ALPHA / 2 / max(runs - 1, 1), max(free, 1))


def _ranges(starts: list[int], runs: int) -> list[tuple[int, int]]:
    return [(first, end - 1) for first, end in zip(starts, [*starts[1:], runs])]


def _eliminate(means, starts: list[int], kept, min_change: float | None) -> tuple[list[int], RunNoise]:
    """Backward elimination: the weakest boundary joined while one is not a change, then the
    levels and noise again. A boundary is a change where its step over its standard error,
    sigma · √((1/m₁ + 1/m₂) · inflation) for levels of m₁ and m₂ runs, exceeds step_critical
    (or with min_change, where the step is at least that share of the level before)."""
    import numpy as np

    while True:
        levels = _ranges(starts, len(means))
        noise = run_noise(means, levels, kept)
        if len(starts) == 1:
            return starts, noise
        counts = np.add.reduceat(kept.astype(np.int64), starts)
        level_means = np.add.reduceat(np.where(kept, means, 0.0), starts) / counts
        steps = np.abs(np.diff(level_means))
        if min_change is not None:
            scores = steps / np.maximum(min_change * np.abs(level_means[:-1]), 1e-300)
        else:
            error = noise.sigma * np.sqrt((1 / counts[:-1] + 1 / counts[1:]) * noise.inflation)
            critical = step_critical(int(kept.sum()), int(kept.sum()) - len(levels))
            with np.errstate(divide="ignore", invalid="ignore"):
                scores = np.where(error > 0, steps / error / critical, np.where(steps > 0, np.inf, 0.0))
        weakest = int(np.argmin(scores))
        if scores[weakest] > 1 or (min_change is not None and scores[weakest] >= 1):
            return starts, noise
        del starts[weakest + 1]


def shown_levels(points: list[RunPoint], groups: list[Segment],
                 min_change: float | None = None) -> tuple[list[Segment], str]:
    """The series' levels: jumpavg's groups joined across every boundary that is not a change
    beyond the runs' noise (_eliminate), and a note. A level of fewer than MIN_SUPPORT runs is
    not told as a change: among the newest runs it is TOO_FEW (they may have moved; more will
    say), elsewhere its runs stand apart (outliers, or a change too short to tell) and are left
    out of the levels; the other boundaries are judged as before. A history shorter than
    2 × MIN_SUPPORT runs is TOO_FEW as a whole. Drift (runs in a row straying together) is
    allowed for in each step's standard error, and said."""
    import numpy as np

    if len(points) < 2 * MIN_SUPPORT:
        return [Segment(0, len(points) - 1, *mean_stdev([v for point in points for v in point.values]))], TOO_FEW
    means = np.array([point.mean for point in points])
    kept = np.ones(len(points), dtype=bool)
    starts, notes = [group.first for group in groups], []
    while True:
        starts, noise = _eliminate(means, starts, kept, min_change)
        levels = _ranges(starts, len(points))
        short = next((number for number, (first, last) in enumerate(levels)
                      if kept[first:last + 1].sum() < MIN_SUPPORT), None)
        if short is None or len(levels) == 1:
            break
        first, last = levels[short]
        kept[first:last + 1] = False
        which = f"run {first + 1} stands" if first == last else f"runs {first + 1}–{last + 1} stand"
        if short == len(levels) - 1:
            notes.append(f"{TOO_FEW} whether the newest {last - first + 1} run(s) moved: more runs will say")
        else:
            notes.append(f"{which} apart (too few to tell from outliers; left out of the levels)")
        del starts[short if short else 1]  # joined to the level before it (the first: to the one after)
    if noise.drifting:
        notes.append(f"runs drift (lag-1 autocorrelation {noise.rho:.2f}): each step judged as from "
                     f"{1 / noise.inflation:.0%} as many independent runs")
    found = []
    for first, last in _ranges(starts, len(points)):
        values = [v for point, keep in zip(points[first:last + 1], kept[first:last + 1]) if keep for v in point.values]
        found.append(Segment(first, last, *mean_stdev(values)))
    return found, "; ".join(notes)


def load_history(store, campaign: str) -> History:
    """The campaign's runs, oldest first, with their cells and facts."""
    runs = sorted((run for run in store.runs() if run.campaign == campaign), key=lambda run: run.started_at)
    if not runs:
        names = sorted({run.campaign for run in store.runs()})
        raise UserError(f"--campaign: no run of {campaign!r} in this database; it holds: "
                        + (", ".join(names) or "no runs"))
    cells: dict[str, list[tuple]] = defaultdict(list)
    for cell in store.cell_metrics(campaign):
        cells[cell[0]].append(cell)
    host_facts = store.campaign_host_facts(campaign)
    versions = {(run_id, technique): found for run_id, technique, negotiated in store.versioned_bringups(campaign)
                if (found := ran_version(negotiated)) is not None}
    return History(campaign, runs, cells, {run.run_id: run_facts(run, host_facts.get(run.run_id, [])) for run in runs},
                   versions)


def fmt_value(metric: str, value: float) -> str:
    if metric.endswith("_bps"):
        return f"{value / 1e6:.4g} Mbit/s"
    return f"{value:.4g}"


SUMMARY_COLUMNS = ("testbed", "technique", "version", "measurement", "impairment", "metric", "runs", "latest",
                   "change points")
SHOWN_VERSIONS = 3  # the newest versions a series' row names; older ones as "…"


def summary_rows(found: list[Trend]) -> list[list[str]]:
    """One row per series (SUMMARY_COLUMNS): the versions its daemon ran in turn, runs, the latest
    mean, and its change points, each with the version change and facts that came with it (or why
    there are none)."""
    rows = []
    for trend in found:
        changes = "; ".join(change_text(trend, change) for change in trend.changes)
        said = "; ".join(part for part in (changes, trend.note) if part) or "none"
        rows.append([trend.key.testbed, trend.key.technique, versions_text(trend) or "–", trend.key.measurement,
                     trend.key.impairment, trend.key.metric, str(len(trend.points)),
                     fmt_value(trend.key.metric, trend.points[-1].mean), said])
    return rows


def change_text(trend: Trend, change: ChangePoint) -> str:
    """'progression at run 7 (2026-03-08T02:00, +700.0%): wireguard-go 0.0.20220316 (debian) → …,
    server kernel: …': the version change first, then up to three facts that changed."""
    came_with = ([change.version_change] if change.version_change else []) + change.changed[:3]
    return (f"{change.kind} at run {trend_index(trend, change) + 1} ({change.started_at[:16]}, {change.relative:+.1%})"
            + (f": {', '.join(came_with)}" if came_with else ""))


def versions_text(trend: Trend, most: int = SHOWN_VERSIONS) -> str:
    """The versions a series' runs ran in turn, the newest `most` of them ("… → A → B")."""
    shown = in_turn(trend.versions[-most:])
    return f"… → {shown}" if len(trend.versions) > most else shown


def trend_index(trend: Trend, change: ChangePoint) -> int:
    """The change's run, as its place in the series' runs (0 for the first)."""
    return next(number for number, point in enumerate(trend.points) if point.run_id == change.run_id)


def _when(iso: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(iso)


MARKED_RUNS = 500  # runs up to which a figure marks each run's mean; beyond, the line alone
# A figure 8 in wide is some 800 pixels of plot: a line of more runs than this many buckets is
# drawn as each bucket's lowest and highest mean, in the order they ran, which is what its pixels
# show anyway (no excursion is lost), at a fraction of the drawing (10 000 runs: 2 000 points).
DRAWN_BUCKETS = 1000


def envelope(times: list, values: list[float], buckets: int = DRAWN_BUCKETS) -> tuple[list, list[float]]:
    """The points a line of (times, values) is drawn through: all of them when they are no more
    than 2 × buckets, else each bucket's minimum and maximum (the first of them first)."""
    if len(values) <= 2 * buckets:
        return times, values
    drawn_times, drawn = [], []
    for bucket in range(buckets):
        first, end = bucket * len(values) // buckets, (bucket + 1) * len(values) // buckets
        chunk = range(first, end)
        low = min(chunk, key=values.__getitem__)
        high = max(chunk, key=values.__getitem__)
        for index in sorted({low, high}):
            drawn_times.append(times[index])
            drawn.append(values[index])
    return drawn_times, drawn


def trend_figure(title: str, group: list[Trend]):
    """One metric's runs over time, a line per technique, each segment's mean drawn flat and
    each change point marked (red regression, green progression); the y axis by the scale rule
    of every figure (a 0.8 Gbit/s tunnel beside a 30 Gbit/s baseline is not drawn flat on the axis)."""
    import matplotlib  # (~0.5 s to load) only when a figure is drawn; Agg: no display needed
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.2))
    scale = 1e-6 if group[0].key.metric.endswith("_bps") else 1.0
    for trend in group:
        times = [_when(point.started_at) for point in trend.points]
        marker = "." if len(trend.points) <= MARKED_RUNS else None  # a marker per run: 7 s for 5 figures of 10 000
        line, = ax.plot(*envelope(times, [point.mean * scale for point in trend.points]), marker=marker,
                        linewidth=0.8, label=trend.key.technique)
        for seg in trend.segments:
            ax.hlines(seg.mean * scale, times[seg.first], times[seg.last], colors=line.get_color(), linewidth=2.5,
                      alpha=0.5)
        for change in trend.changes:
            ax.axvline(_when(change.started_at), color="tab:red" if change.kind == "regression" else "tab:green",
                       linestyle="--", linewidth=1)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(group[0].key.metric.removesuffix("_bps") + (" (Mbit/s)" if scale != 1.0 else ""))
    apply_scale_rule(ax, [point.mean for trend in group for point in trend.points])
    # Beside the plot, not over it: "best" searched every line's points for a free corner (0.6 s
    # over 5 figures of 10 000 runs) and could still cover a change point.
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def figure_svg(title: str, group: list[Trend]) -> str:
    from matplotlib import pyplot as plt  # matplotlib (~0.5 s to load) only when a figure is drawn

    fig = trend_figure(title, group)
    out = io.StringIO()
    fig.savefig(out, format="svg")
    plt.close(fig)
    return out.getvalue()[out.getvalue().index("<svg"):]


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ campaign }}: trend</title>
<style>body{font-family:sans-serif;max-width:72rem;margin:1rem auto;padding:0 1rem}
table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #ccc;padding:.2rem .4rem;text-align:left}
.regression{color:#b00}.progression{color:#070}svg{max-width:100%;height:auto}</style></head>
<body>{% if home %}<nav><a href="{{ home }}">index</a></nav>{% endif %}
<h1>{{ campaign }}: {{ runs }} runs, {{ first }} to {{ last }}</h1>
<h2>Change points</h2>
{% if changes %}<table><tr><th>run</th><th>testbed</th><th>technique</th><th>measurement</th><th>impairment</th>
<th>metric</th><th>change</th><th>what changed at that run</th></tr>
{% for c in changes %}<tr class="{{ c.kind }}"><td>{% if run_href %}<a href="{{ run_href(c.run_id) }}">{% endif %}{{ c.started_at[:16] }} ({{ c.run_id }}){% if run_href %}</a>{% endif %}</td><td>{{ c.key.testbed }}</td>
<td>{{ c.key.technique }}</td><td>{{ c.key.measurement }}</td><td>{{ c.key.impairment }}</td><td>{{ c.key.metric }}</td>
<td>{% if run_href %}<a href="{{ run_href(c.run_id) }}">{% endif %}{{ c.kind }} {{ "%+.1f"|format(c.relative * 100) }} %{% if run_href %}</a>{% endif %}</td><td>{% if c.version_change %}<b class="version-change">{{ c.version_change }}</b>{% if c.changed %}; {% endif %}{% endif %}{{ c.changed|join("; ") or ("" if c.version_change else "no recorded fact") }}</td></tr>
{% endfor %}</table>{% else %}<p>No change point: no series moved beyond its runs' noise.</p>{% endif %}
{% if versioned %}<h2>Versions</h2><table id="versions"><tr><th>testbed</th><th>technique</th><th>the versions its runs ran, in turn</th></tr>
{% for t in versioned %}<tr><td>{{ t.key.testbed }}</td><td>{{ t.key.technique }}</td><td>{{ versions_text(t, 20) }}</td></tr>
{% endfor %}</table>{% endif %}
{% if notes %}<ul>{% for t in notes %}<li>{{ t.key.title }} ({{ t.key.technique }}): {{ t.note }}</li>{% endfor %}</ul>{% endif %}
<h2>Figures</h2>{% for title, svg in figures %}<section><h3>{{ title }}</h3>{{ svg|safe }}</section>{% endfor %}
</body></html>"""


def render_html(history: History, found: list[Trend], run_href: Callable[[str], str] | None = None,
                home: str | None = None) -> str:
    """The trend page. In a site (`vpnbench site`), `run_href(run_id)` links each change point to
    the run it was found at, and `home` to the site's index."""
    import jinja2  # only for the HTML page

    by_figure: dict[tuple, list[Trend]] = defaultdict(list)
    for trend in found:
        key = trend.key
        by_figure[(key.testbed, key.measurement, key.impairment, key.metric)].append(trend)
    figures = [(" · ".join(key), figure_svg(" · ".join(key), group)) for key, group in by_figure.items()]
    changes = sorted((change for trend in found for change in trend.changes), key=lambda c: c.started_at)
    return jinja2.Environment(autoescape=True).from_string(PAGE).render(
        campaign=history.campaign, runs=len(history.runs), run_href=run_href, home=home, first=history.runs[0].started_at[:10],
        last=history.runs[-1].started_at[:10], changes=changes, figures=figures,
        notes=[trend for trend in found if trend.note], versions_text=versions_text,
        versioned=list({(t.key.testbed, t.key.technique): t for t in found if t.versions}.values()))
