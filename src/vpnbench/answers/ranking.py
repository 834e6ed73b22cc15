"""Which technique is fastest and cheapest under each impairment, and is the difference real?

Per measurement label, impairment and headline metric: the techniques in order of their mean
(best first), with n, in groups no test separates. The tests are the run's own comparisons
(`significance.compare_all`: each technique against the baseline, then neighbours in the ranking
by mean, Holm-adjusted per family), so a tie here is a "not distinguishable" (or "not enough
repetitions") in the report's significance table: two techniques share a group when the test
between them, as neighbours by mean, did not say one is higher. Pure functions over the summary
and the comparisons frames.
"""

import dataclasses
import math

import pandas as pd

from vpnbench.impair.model import lossy

SEPARATED = " higher"  # significance.verdict's "<A> higher": the only verdict that splits two neighbours


@dataclasses.dataclass(frozen=True)
class Place:
    technique: str
    mean: float
    n: int


@dataclasses.dataclass(frozen=True)
class Ranking:
    """One question answered: `groups`, best first; the techniques of one group are not
    distinguishable by the tests (`why_tied` says which verdict joined them: 'not distinguishable'
    or 'not enough repetitions')."""

    measurement_label: str
    impairment: str
    metric: str
    higher_is_better: bool
    groups: tuple[tuple[Place, ...], ...]
    why_tied: tuple[str, ...]  # per group, '' for a group of one
    collapsed: str = ""  # why this ranking is no finding (the set-up decides it), '' where it is one
    # (technique, censored, n): no mean, since k of its n repetitions ran past their timeout (a
    # set-up not up in time); named after the groups, never left out without a word
    beyond_timeout: tuple[tuple[str, int, int], ...] = ()

    @property
    def techniques(self) -> list[str]:
        return [place.technique for group in self.groups for place in group]

    @property
    def n(self) -> tuple[int, int]:
        """The fewest and the most repetitions behind a place of this ranking."""
        counts = [place.n for group in self.groups for place in group] + [n for _, _, n in self.beyond_timeout]
        return min(counts), max(counts)


def higher_is_better(metric: str) -> bool:
    """Rates are better high; times, latencies, CPU shares and CPU-seconds per GiB low."""
    return metric.endswith(("_bps", "_rate", "_rate_p50", "mos"))


def ranked_metrics(headline_metrics: tuple[str, ...], present: set[str]) -> list[str]:
    """The metrics a measurement is ranked by: its headline's first metric that is not the offered
    rate (a fixed-rate UDP test's sender figure is the setting, not an answer), and the client's
    CPU-seconds per GiB where bytes moved."""
    picked = [m for m in headline_metrics if not m.startswith("sender_") and m in present][:1]
    return picked + [m for m in ("client_cpu_s_per_gib",) if m in present]


def rank(summary: pd.DataFrame, comparisons: pd.DataFrame, label: str, metric: str) -> list[Ranking]:
    """A Ranking per impairment of `label` where the techniques have a mean of `metric`."""
    mine = summary[(summary["measurement_label"] == label) & (summary["metric"] == metric)]
    verdict_of = _neighbour_verdicts(comparisons, label, metric)
    better_high = higher_is_better(metric)
    out = []
    for impairment, rows in mine.groupby("impairment", sort=False):
        places, beyond = [], []
        for r in rows.itertuples():
            if r.mean is not None and math.isfinite(r.mean):
                places.append(Place(r.technique, float(r.mean), int(r.n)))
            elif getattr(r, "censored", 0):
                beyond.append((str(r.technique), int(r.censored), int(r.n)))
        beyond.sort(key=lambda b: b[1] / b[2])  # the fewer repetitions past it, the nearer the places
        if not places and not beyond:
            continue
        places.sort(key=lambda p: -p.mean if better_high else p.mean)
        groups, why = ([[places[0]]], [""]) if places else ([], [])
        for before, place in zip(places, places[1:]):
            said = verdict_of.get((impairment, frozenset((before.technique, place.technique))))
            said = said or "not tested"  # no baseline in the run: no test was taken
            if said.endswith(SEPARATED):
                groups.append([place])
                why.append("")
            else:  # "not distinguishable" or "not enough repetitions": no test tells them apart
                groups[-1].append(place)
                why[-1] = why[-1] or said
        out.append(Ranking(label, str(impairment), metric, better_high, tuple(tuple(g) for g in groups),
                           tuple(why), beyond_timeout=tuple(beyond)))
    return out


def _neighbour_verdicts(comparisons: pd.DataFrame, label: str, metric: str) -> dict:
    if comparisons.empty:
        return {}
    mine = comparisons[(comparisons["measurement_label"] == label) & (comparisons["metric"] == metric)]
    return {(r.impairment, frozenset((r.a, r.b))): r.verdict for r in mine.itertuples()}


def failures(cells) -> list[str]:
    """'tinc: setup failed under 3 of 5 impairments (mesh-high, mesh-extreme, none)', per technique
    and measurement label with a failed cell, counting impairments (a failed cell of any repetition
    counts its impairment once)."""
    impairments: dict[str, list[str]] = {}
    failed: dict[tuple[str, str], list[str]] = {}
    for cell in cells:
        impairments.setdefault(cell.measurement_label, [])
        if cell.impairment not in impairments[cell.measurement_label]:
            impairments[cell.measurement_label].append(cell.impairment)
        if cell.status in ("failed", "running"):
            where = failed.setdefault((cell.technique, cell.measurement_label), [])
            if cell.impairment not in where:
                where.append(cell.impairment)
    out = []
    for (technique, label), where in failed.items():
        total = len(impairments[label])
        under = "the only impairment" if total == 1 else (f"all {total} impairments" if len(where) == total
                                                           else f"{len(where)} of {total} impairments")
        out.append(f"{technique}: {label} failed under {under} ({', '.join(where)})")
    return out


def lossy_impairments(cells) -> list[str]:
    """The impairments whose own spec drops packets: loss measured under them is the set-up's."""
    return list(dict.fromkeys(c.impairment for c in cells if lossy(c.export())))
