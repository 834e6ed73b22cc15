"""`vpnbench check`: a run against a reference, as a CI gate.

For each technique × impairment × measurement × metric checked, the run's repetitions are
compared with the reference's (a named run's repetitions, or the values of the campaign's
runs in the trend's last level) by the report's own test (significance.compare: Welch's t,
or Mann-Whitney U where a sample does not look normal), and the p-values are Holm-adjusted
over every comparison of the check (significance.holm). A comparison fails only when
- the mean moved in the bad direction by more than its threshold (relative to the
  reference's mean), and
- the difference is beyond the noise: Holm-adjusted p < significance.ALPHA, the effect's sign
  in the bad direction.
A gate of two runs of one unchanged build then fails with probability at most ALPHA / 2
(Holm bounds the family's two-sided error by ALPHA; only one direction fails), and the
threshold lowers that further. With 3 repetitions a side the rank test cannot go below
p = 0.10, so a sample that fails Shapiro-Wilk makes its comparison unable to fail: 5
repetitions lift that (the smallest p is then 0.008).

What is checked: every measurement's headline metrics (Measurement.headline) at the default
threshold, in the direction the metric's unit says is bad (trend.higher_is_better: rates fall,
times rise), then the campaign's [check] thresholds, then --threshold's (campaign/check_spec.py).

Pure functions over stored cells (analysis.metric_frame) and, for the trend, over a History
(trend.load_history): the command (commands/check.py) reads and prints.
"""

import dataclasses
import math
import xml.etree.ElementTree as ET
from collections import defaultdict

import pandas as pd

from vpnbench.answers import trend
from vpnbench.answers.significance import ALPHA, compare, holm
from vpnbench.answers.stats import finite_values
from vpnbench.campaign.check_spec import CheckSpec, Threshold
from vpnbench.foundation.errors import UserError
from vpnbench.measure import MEASUREMENTS

Key = tuple[str, str, str, str]  # (technique, impairment, measurement label, metric)
PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
TEST_NAMES = {"welch_t": "Welch's t", "mann_whitney_u": "Mann-Whitney U", "none": "no test"}


@dataclasses.dataclass
class Outcome:
    """One technique × impairment × measurement × metric of the check: a JUnit test case."""

    technique: str
    impairment: str
    measurement: str  # label
    metric: str
    threshold: Threshold
    reference_technique: str  # the technique it was compared with (another label where the builds differ)
    run_values: list[float]
    reference_values: list[float]
    status: str = SKIPPED
    reason: str = ""
    change: float | None = None  # run mean / reference mean - 1
    test: str = "none"
    p_value: float | None = None
    p_holm: float | None = None
    effect: float | None = None

    @property
    def name(self) -> str:
        return f"{self.technique} · {self.impairment} · {self.measurement} · {self.metric}"

    @property
    def run_mean(self) -> float:
        return _mean(self.run_values)

    @property
    def reference_mean(self) -> float:
        return _mean(self.reference_values)

    def numbers(self) -> str:
        """'run 47.9 Mbit/s (n 3) vs reference 5,310 Mbit/s (n 3): -99.1 % (allowed -5 %), Welch's t p 1e-06, Holm 2e-06'"""
        said = [f"run {value_text(self.metric, self.run_mean)} (n {len(self.run_values)})",
                f"reference {value_text(self.metric, self.reference_mean)} (n {len(self.reference_values)})"]
        text = " vs ".join(said)
        if self.change is not None:
            text += f": {self.change:+.1%} (allowed {self.threshold.allowed})"
        if self.p_value is not None:
            text += f", {TEST_NAMES[self.test]} p {self.p_value:.2g}, Holm-adjusted {self.p_holm:.2g}"
        if self.reference_technique != self.technique:
            text += f"; compared with {self.reference_technique!r}"
        return text


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def value_text(metric: str, value: float) -> str:
    return trend.fmt_value(metric, value) if math.isfinite(value) else "–"


def samples(frame: pd.DataFrame) -> dict[Key, list[float]]:
    """The values of each (technique, impairment, label, metric) in a metric_frame."""
    out: dict[Key, list[float]] = defaultdict(list)
    for technique, impairment, label, metric, value in zip(frame["technique"], frame["impairment"],
                                                           frame["measurement_label"], frame["metric"],
                                                           frame["value"]):
        out[(technique, impairment, label, metric)].append(float(value))
    return dict(out)


def kinds_of(frame: pd.DataFrame) -> dict[str, str]:
    """measurement label -> its kind."""
    return dict(zip(frame["measurement_label"], frame["measurement"]))


def headline_metrics(kind: str) -> tuple[str, ...]:
    declared = MEASUREMENTS[kind].headline if kind in MEASUREMENTS else None
    return declared.metrics if declared else ()


def thresholds(run: dict[Key, list[float]], kinds: dict[str, str], spec: CheckSpec,
               given: list[Threshold]) -> dict[tuple[str, str], Threshold]:
    """(measurement label, metric) -> its threshold: each headline metric at the default share in
    its bad direction, then the campaign's [check] thresholds, then the command line's. A
    threshold naming a measurement or metric the run lacks is one line, exit 2."""
    metrics: dict[str, set[str]] = defaultdict(set)
    for _, _, label, metric in run:
        metrics[label].add(metric)
    out: dict[tuple[str, str], Threshold] = {}
    share = spec.default_share
    if share is not None:
        for label, kind in kinds.items():
            for metric in headline_metrics(kind):
                if metric in metrics[label]:
                    limit = -share if trend.higher_is_better(metric) else share
                    out[(label, metric)] = Threshold(label, metric, limit, "default (headline)")
    for threshold in [*spec.thresholds_named(), *given]:
        where = "--threshold" if threshold.source == "--threshold" else "check.thresholds"
        label = threshold.measurement if threshold.measurement in kinds else next(
            (label for label, kind in kinds.items() if kind == threshold.measurement), None)
        if label is None:
            raise UserError(f"{where}: measurement {threshold.measurement!r} is not in the run checked; "
                            f"allowed values: {', '.join(sorted(kinds)) or 'none (the run has no ok cell)'}")
        if threshold.metric not in metrics[label]:
            raise UserError(f"{where}: metric {threshold.metric!r} is not among {label}'s; allowed values: "
                            + ", ".join(sorted(m for m in metrics[label] if not m.endswith("_samples"))))
        out[(label, threshold.metric)] = dataclasses.replace(threshold, measurement=label)
    return {key: threshold for key, threshold in out.items() if threshold.limit is not None}


def technique_pairs(run_kinds: dict[str, str], reference_kinds: dict[str, str]) -> dict[str, str]:
    """Each run technique -> the reference technique it is compared with: the same label, else
    the one technique of its kind on each side (a build's version in an unlabelled technique's
    label, `wireguard version=0.0.2025`, differs between the runs of two builds)."""
    pairs = {label: label for label in run_kinds if label in reference_kinds}
    left = {label: kind for label, kind in run_kinds.items() if label not in pairs}
    unused = {label: kind for label, kind in reference_kinds.items() if label not in pairs.values()}
    for label, kind in left.items():
        mine = [other for other, k in left.items() if k == kind]
        theirs = [other for other, k in unused.items() if k == kind]
        if len(mine) == 1 and len(theirs) == 1:
            pairs[label] = theirs[0]
    return pairs


def check(run: dict[Key, list[float]], reference: dict[Key, list[float]], limits: dict[tuple[str, str], Threshold],
          pairs: dict[str, str]) -> list[Outcome]:
    """An Outcome per (technique, impairment, label, metric) of the run with a threshold, judged
    as the module says; the p-values Holm-adjusted over every comparison that had a test."""
    outcomes = []
    for (technique, impairment, label, metric), values in run.items():
        threshold = limits.get((label, metric))
        if threshold is None:
            continue
        other = pairs.get(technique, technique)
        outcome = Outcome(technique, impairment, label, metric, threshold, other, finite_values(values),
                          finite_values(reference.get((other, impairment, label, metric), [])))
        outcomes.append(outcome)
        if not outcome.reference_values:
            outcome.reason = "not in the reference"
            continue
        compared = compare(outcome.run_values, outcome.reference_values, "run", "reference")
        outcome.test, outcome.p_value, outcome.effect = compared.test, compared.p_value, compared.effect_size
        if outcome.reference_mean != 0 and math.isfinite(outcome.reference_mean):
            outcome.change = outcome.run_mean / outcome.reference_mean - 1
    for outcome, adjusted in zip(outcomes, holm([o.p_value for o in outcomes])):
        outcome.p_holm = adjusted
        if outcome.reference_values:
            outcome.status, outcome.reason = judge(outcome)
    return outcomes


def judge(outcome: Outcome) -> tuple[str, str]:
    """(status, reason) of a compared outcome."""
    limit = outcome.threshold.limit
    if outcome.change is None:
        return SKIPPED, "the reference's mean is 0: no relative change to hold to a threshold"
    if outcome.p_value is None:
        return SKIPPED, f"not enough repetitions to tell ({len(outcome.run_values)} and " \
                        f"{len(outcome.reference_values)}; at least 2 a side)"
    bad = -1 if limit < 0 else 1
    moved = "fell" if outcome.change < 0 else "rose"
    beyond_threshold = outcome.change * bad > abs(limit)
    beyond_noise = outcome.p_holm < ALPHA and (outcome.effect or 0) * bad > 0
    if beyond_threshold and beyond_noise:
        return FAILED, (f"{outcome.metric} {moved} {abs(outcome.change):.1%}, beyond the allowed {limit:+.0%}, "
                        f"and beyond the noise (Holm-adjusted p {outcome.p_holm:.2g} < {ALPHA:g})")
    if beyond_threshold:
        return PASSED, (f"{moved} {abs(outcome.change):.1%}, beyond {limit:+.0%} but not beyond the noise "
                        f"(Holm-adjusted p {outcome.p_holm:.2g} ≥ {ALPHA:g})")
    return PASSED, f"within {limit:+.0%}"


def exit_code(outcomes: list[Outcome]) -> int:
    return 1 if any(o.status == FAILED for o in outcomes) else 0


# --- the trend as the reference -----------------------------------------------------------

def trend_reference(history: "trend.History", run_id: str) -> tuple[dict[Key, list[float]], dict[str, str]]:
    """The values of the trend's last level of each series, from the campaign's runs before
    `run_id` on its testbed, keyed as `samples`; and each technique's level in words
    ('runs 4-9 of 9') for the table. The run itself is left out: a regression in it is not yet a
    level of its own (one run has no support), and would pull the last level towards itself."""
    checked = next((run for run in history.runs if run.run_id == run_id), None)
    if checked is None:
        raise UserError(f"--run: {run_id!r} is not a run of campaign {history.campaign!r}")
    before = [run for run in history.runs if run.started_at < checked.started_at and run.run_id != run_id]
    if not before:
        raise UserError(f"--against trend: no run of campaign {history.campaign!r} before {run_id}; "
                        "allowed: a run id, or trend once the campaign has earlier runs")
    kept = {run.run_id for run in before}
    earlier = dataclasses.replace(history, runs=before,
                                  cells={rid: cells for rid, cells in history.cells.items() if rid in kept})
    testbed = trend.testbed_name(checked)
    reference: dict[Key, list[float]] = {}
    levels: dict[str, str] = {}
    for found in trend.trends(earlier):
        key = found.key
        if key.testbed != testbed or not found.segments:
            continue
        last = found.segments[-1]
        reference[(key.technique, key.impairment, key.measurement, key.metric)] = [
            value for point in found.points[last.first:last.last + 1] for value in point.values]
        levels[key.technique] = f"runs {last.first + 1}-{last.last + 1} of {len(found.points)}"
    return reference, levels


# --- JUnit XML --------------------------------------------------------------------------------

def junit(outcomes: list[Outcome], campaign: str, suite: str) -> ET.ElementTree:
    """One <testcase> per outcome (classname the campaign), a <failure> or <skipped> with the
    reason and the numbers: the shape GitLab, Jenkins and GitHub's JUnit readers show as tests."""
    counts = {status: sum(o.status == status for o in outcomes) for status in (FAILED, SKIPPED)}
    root = ET.Element("testsuites", name="vpnbench check", tests=str(len(outcomes)), failures=str(counts[FAILED]),
                      skipped=str(counts[SKIPPED]))
    tests = ET.SubElement(root, "testsuite", name=suite, tests=str(len(outcomes)), failures=str(counts[FAILED]),
                          skipped=str(counts[SKIPPED]), errors="0")
    for outcome in outcomes:
        case = ET.SubElement(tests, "testcase", classname=campaign, name=outcome.name, time="0")
        if outcome.status == FAILED:
            ET.SubElement(case, "failure", message=f"{outcome.reason}: {outcome.numbers()}",
                          type="regression").text = outcome.numbers()
        elif outcome.status == SKIPPED:
            ET.SubElement(case, "skipped", message=outcome.reason)
        ET.SubElement(case, "system-out").text = f"{outcome.reason}; {outcome.numbers()}"
    ET.indent(root)
    return ET.ElementTree(root)
