"""The archive as a site's answers, read once: every run with its testbed and cells, every
campaign with its trends (trend.py's, as `vpnbench trend` tells them), and for each technique and
daemon version its numbers on each testbed. views/site renders them; nothing there recomputes.

A technique's number on a testbed is its headline metric (the one `trend` follows: the kind's
declared headline, else its first rate or time) as the newest run of that version on that testbed
measured it: the mean of that run's ok cells, with the ids of those cells, so a page can link the
number to each of them. Older runs of the same version stay in the trend, one click away.
"""

import dataclasses
import hashlib
import math
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from vpnbench.answers import trend
from vpnbench.foundation.daemon_version import ran_version
from vpnbench.foundation.errors import UserError
from vpnbench.store.database import is_url
from vpnbench.store.records import Run

UNVERSIONED = ""  # a technique whose bring-ups name no built daemon (the kernel's path, the baseline)
UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """A file or anchor name for any text: its safe characters (at most 48), and 8 hex digits of
    its hash, so two names that differ only in what was dropped (or in case, on a file system that
    ignores it) never share a file."""
    readable = UNSAFE.sub("-", text).strip("-.")[:48] or "x"
    return f"{readable}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"


@dataclasses.dataclass(frozen=True)
class SiteCell:
    """One stored cell, as a run's page lists it (metrics decoded, nothing else)."""

    id: int
    run_id: str
    technique: str
    version: str  # the daemon version its bring-up ran (DaemonVersion.label), or UNVERSIONED
    impairment: str
    measurement: str  # kind
    label: str  # the measurement's label
    repetition: int
    status: str
    metrics: dict

    @property
    def group(self) -> str:
        """The anchor of this cell's group on its run's page: the cells one number is the mean of."""
        return "g-" + slug(f"{self.technique}|{self.impairment}|{self.label}")


@dataclasses.dataclass
class SiteRun:
    run: Run
    testbed: str
    cells: list[SiteCell]


@dataclasses.dataclass(frozen=True)
class Number:
    """A technique version's headline metric on one testbed: the newest run's mean, its cells."""

    testbed: str
    campaign: str
    measurement: str  # label
    impairment: str
    metric: str
    mean: float
    run_id: str
    cell_ids: tuple[int, ...]
    group: str  # the cells' anchor on the run's page (SiteCell.group)
    runs: int  # runs of this version on this testbed that measured it

    @property
    def text(self) -> str:
        return trend.fmt_value(self.metric, self.mean)


@dataclasses.dataclass
class VersionPage:
    """One technique at one daemon version (or its unversioned path): its numbers across testbeds."""

    technique: str
    version: str
    numbers: list[Number]

    @property
    def slug(self) -> str:
        return slug(f"{self.technique}|{self.version}")

    @property
    def testbeds(self) -> list[str]:
        return sorted({number.testbed for number in self.numbers})

    @property
    def rows(self) -> dict[tuple[str, str, str, str], dict[str, Number]]:
        """(campaign, measurement, impairment, metric) -> testbed -> its number: a table's rows."""
        table: dict[tuple[str, str, str, str], dict[str, Number]] = {}
        for number in self.numbers:
            key = (number.campaign, number.measurement, number.impairment, number.metric)
            table.setdefault(key, {})[number.testbed] = number
        return dict(sorted(table.items()))


@dataclasses.dataclass
class CampaignSummary:
    name: str
    runs: list[Run]  # oldest first
    testbeds: list[str]
    history: trend.History
    trends: list[trend.Trend]

    @property
    def slug(self) -> str:
        return slug(self.name)

    @property
    def changes(self) -> int:
        return sum(len(t.changes) for t in self.trends)


@dataclasses.dataclass
class Archive:
    name: str
    runs: list[SiteRun]  # oldest first
    campaigns: list[CampaignSummary]
    testbeds: dict[str, list[SiteRun]]  # testbed -> its runs, oldest first
    versions: list[VersionPage]


def read_archive(store, min_change: float | None = None,
                 progress: Callable[[str], None] | None = None) -> Archive:
    """Everything the site shows, from one read of the archive and one trend search per campaign."""
    say = progress or (lambda _: None)
    runs = store.runs()  # oldest first
    if not runs:
        raise UserError(f"site: {store.name!r} holds no run")
    say("reading the cells")
    ran = {(run_id, technique): found for run_id, technique, negotiated in store.versioned_bringups()
           if (found := ran_version(negotiated)) is not None}
    by_run: dict[str, list[SiteCell]] = defaultdict(list)
    for cell_id, run_id, technique, impairment, kind, label, repetition, status, metrics in store.cell_rows():
        version = ran.get((run_id, technique))
        by_run[run_id].append(SiteCell(cell_id, run_id, technique, version.label if version else UNVERSIONED,
                                       impairment, kind, label, repetition, status, metrics))
    site_runs = [SiteRun(run, trend.testbed_name(run), by_run.get(run.run_id, [])) for run in runs]
    testbeds: dict[str, list[SiteRun]] = defaultdict(list)
    for site_run in site_runs:
        testbeds[site_run.testbed].append(site_run)
    campaigns = []
    for name in dict.fromkeys(run.campaign for run in runs):
        say(f"trend of {name}")
        history = trend.load_history(store, name)
        campaigns.append(CampaignSummary(name, history.runs,
                                         sorted({r.testbed for r in site_runs if r.run.campaign == name}),
                                         history, trend.trends(history, min_change)))
    # A file by its name alone: a published site need not show the path it was built from.
    name = store.name if is_url(store.name) else Path(store.name).name
    return Archive(name, site_runs, campaigns, dict(sorted(testbeds.items())), version_pages(site_runs))


def headline_metrics(kind: str, metrics: dict, declared: dict[str, tuple[str, ...] | None]) -> tuple[str, ...]:
    """The metrics `trend` follows for a kind (declared once per kind, looked up once)."""
    if kind not in declared:
        declared[kind] = trend.declared_headline(kind)
    return declared[kind] or trend.first_rate_or_time(metrics)


def version_pages(runs: list[SiteRun]) -> list[VersionPage]:
    """Each technique version's numbers: per testbed, campaign, measurement, impairment and
    headline metric, the newest run's mean over its ok cells (runs are oldest first, so the last
    run seen of a key is its newest)."""
    declared: dict[str, tuple[str, ...] | None] = {}
    # (technique, version, testbed, campaign, label, impairment, metric) -> run id -> [(cell id, value)]
    found: dict[tuple, dict[str, list[tuple[int, float]]]] = defaultdict(dict)
    groups: dict[tuple, str] = {}
    for site_run in runs:
        for cell in site_run.cells:
            if cell.status != "ok":
                continue
            for metric in headline_metrics(cell.measurement, cell.metrics, declared):
                value = cell.metrics.get(metric)
                if isinstance(value, (int, float)) and math.isfinite(value):
                    key = (cell.technique, cell.version, site_run.testbed, site_run.run.campaign, cell.label,
                           cell.impairment, metric)
                    found[key].setdefault(site_run.run.run_id, []).append((cell.id, float(value)))
                    groups.setdefault(key, cell.group)
    pages: dict[tuple[str, str], VersionPage] = {}
    for key, by_run in found.items():
        technique, version, testbed, campaign, label, impairment, metric = key
        run_id, newest = next(reversed(by_run.items()))
        number = Number(testbed, campaign, label, impairment, metric,
                        math.fsum(value for _, value in newest) / len(newest), run_id,
                        tuple(cell_id for cell_id, _ in newest), groups[key], len(by_run))
        pages.setdefault((technique, version), VersionPage(technique, version, [])).numbers.append(number)
    # By technique, each one's versions in the order they first ran (2.6.9 before 2.6.14, as no sort
    # of the text would put them)
    return sorted(pages.values(), key=lambda page: page.technique)
