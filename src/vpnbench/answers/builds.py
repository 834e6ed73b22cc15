"""One technique's builds side by side (issue 42, item 5): the versions story a run tells where it
brings up one kind with more than one daemon (the wireguard-versions preset: Debian's wireguard-go,
the current build, boringtun and the kernel's; a daemon at two pinned versions).

Per kind with two or more daemons: which daemon each technique ran (daemon_version.ran_version, as
the technique table says it; the backend where no built daemon ran, e.g. the kernel's data path),
and per ranked question (a measurement label, an impairment, a headline metric: the run's
rankings) each build's mean beside the kind's first technique as a ratio, and whether the run's
own tests separate the two (they do where the ranking put them in different groups). Nothing is
tested again here: a ratio the tests do not separate from 1 reads as "same", whatever its digits.
Pure functions of the cells and of the rankings.
"""

import dataclasses
import math

from vpnbench.answers.ranking import Ranking
from vpnbench.foundation.daemon_version import last_ran_version
from vpnbench.store.records import Cell


@dataclasses.dataclass(frozen=True)
class BuildMean:
    mean: float | None  # None: no mean (every repetition failed, or ran past its timeout)
    ratio: float | None  # mean / the first build's mean; None where either is missing
    # against the first build: "reference" (it is the first), "separated" (the ranking's tests put
    # it in another group), or the ranking's why_tied for their shared group ("not
    # distinguishable", "not enough repetitions"); "" where either has no mean
    verdict: str


@dataclasses.dataclass(frozen=True)
class BuildsRow:
    measurement_label: str
    impairment: str
    metric: str
    higher_is_better: bool
    means: tuple[BuildMean, ...]  # one per build, in the table's order


@dataclasses.dataclass(frozen=True)
class BuildsTable:
    kind: str
    techniques: tuple[str, ...]  # the kind's techniques in the campaign's order: the first is the reference
    ran: tuple[str, ...]  # per technique, the daemon that ran ("wireguard-go 0.0.20220316 (debian)") or its backend
    rows: tuple[BuildsRow, ...]


def kinds_built_twice(cells: list[Cell]) -> dict[str, list[tuple[str, str]]]:
    """Per technique kind the run brought up with two or more daemons (builds, versions, data
    paths): each of its techniques, in the campaign's order, with the daemon it ran (its last
    bring-up that names one) or its backend. A kind run twice with one daemon (S1's IPsec ciphers)
    is a comparison of settings, which the rankings already are."""
    by_kind: dict[str, dict[str, list[Cell]]] = {}
    for cell in cells:
        by_kind.setdefault(cell.technique_params.get("kind", ""), {}).setdefault(cell.technique, []).append(cell)
    ran = {kind: [(technique, _ran(mine)) for technique, mine in techniques.items()] for kind, techniques in by_kind.items()}
    return {kind: built for kind, built in ran.items() if len({daemon for _, daemon in built}) >= 2}


def builds_side_by_side(kinds: dict[str, list[tuple[str, str]]], rankings: list[Ranking]) -> list[BuildsTable]:
    """A table per kind of kinds_built_twice, with a row per ranking that ranks any of its techniques."""
    tables = []
    for kind, built in kinds.items():
        techniques = [technique for technique, _ in built]
        rows = tuple(row for ranking in rankings if (row := _row(ranking, techniques)) is not None)
        if rows:
            tables.append(BuildsTable(kind, tuple(techniques), tuple(ran for _, ran in built), rows))
    return tables


def _row(ranking: Ranking, techniques: list[str]) -> BuildsRow | None:
    """The ranking's question asked of these techniques, or None where it ranks none of them."""
    group_of = {place.technique: number for number, group in enumerate(ranking.groups) for place in group}
    mean_of = {place.technique: place.mean for group in ranking.groups for place in group}
    if not any(technique in mean_of for technique in techniques):
        return None
    reference = techniques[0]
    first = mean_of.get(reference)
    means = []
    for technique in techniques:
        mean = mean_of.get(technique)
        ratio = mean / first if mean is not None and first and not math.isnan(first) else None
        if technique not in group_of or reference not in group_of:
            verdict = ""
        elif technique == reference:
            verdict = "reference"
        elif group_of[technique] != group_of[reference]:
            verdict = "separated"
        else:
            verdict = ranking.why_tied[group_of[reference]]
        means.append(BuildMean(mean, ratio, verdict))
    return BuildsRow(ranking.measurement_label, ranking.impairment, ranking.metric, ranking.higher_is_better, tuple(means))


def _ran(mine: list[Cell]) -> str:
    """The daemon a technique's last bring-up that names one ran, else its backend."""
    ran = last_ran_version(cell.negotiated for cell in mine)
    if ran is not None:
        return ran.label
    backend = mine[-1].technique_params.get("backend", "")
    return f"{backend} data path" if backend else "no daemon version recorded"
