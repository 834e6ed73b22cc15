"""The scheduler: which cells run in which round. A fixed number of repetitions is one round
(each technique up once, as the studies ran); repetitions = "auto" runs one repetition per round
across all techniques (so a burst of machine noise lands on several techniques, not on one): the
first min_repetitions rounds for every cell, then only for the groups whose interval is still
wider than the target, until max_repetitions."""

import dataclasses
import math
from collections.abc import Iterator

from vpnbench.campaign import PlannedCell, TechniqueBlock, expand
from vpnbench.foundation.terminal_text import plain
from vpnbench.measure import MEASUREMENTS
from vpnbench.run.context import RunContext

Group = tuple[str, str, str]  # (technique, impairment, measurement label): a cell without its repetition


def first_round(ctx: RunContext) -> list[TechniqueBlock]:
    """The cells known to run before any result is in: every cell (fixed), or the first
    min_repetitions repetitions of every cell (adaptive); for the count shown and --resume."""
    info = ctx.campaign.info
    return expand(ctx.campaign, range(1, info.min_repetitions + 1) if info.adaptive else None)


def rounds(ctx: RunContext) -> Iterator[list[TechniqueBlock]]:
    """The blocks of each round; an adaptive round is decided when the previous one is stored."""
    info = ctx.campaign.info
    if not info.adaptive:
        yield expand(ctx.campaign)
        return
    for repetition in range(1, info.max_repetitions + 1):
        blocks = expand(ctx.campaign, range(repetition, repetition + 1))
        if repetition > info.min_repetitions:
            pending = {group for group, decision in convergence(ctx).items() if not decision.done}
            blocks = [dataclasses.replace(b, cells=[c for c in b.cells if group_of(c) in pending]) for b in blocks]
        if not any(block.cells for block in blocks):
            return
        yield blocks


def convergence(ctx: RunContext) -> dict:
    """Each group's stop decision (quality.Decision) on its measurement's deciding metric."""
    from vpnbench.answers.quality import converged  # noqa: PLC0415 - numpy/pandas only for adaptive runs

    info = ctx.campaign.info
    values: dict[Group, list[float]] = {}
    for cell in ctx.store.cells(ctx.run_id):
        metric = deciding_metric(cell.measurement)
        key = (cell.technique, cell.impairment, cell.measurement_label)
        values.setdefault(key, [])
        if cell.ok and metric in cell.metrics:
            values[key].append(float(cell.metrics[metric]))
    return {key: converged(v, info.ci_target, info.min_repetitions, info.max_repetitions)
            for key, v in values.items()}


def record_convergence(ctx: RunContext) -> None:
    """One event per group with how many repetitions it took and whether it converged."""
    for (technique, impairment, label), decision in convergence(ctx).items():
        ctx.event("repetitions", {
            "technique": technique, "impairment": impairment, "measurement_label": label, "n": decision.n,
            "converged": decision.reason == "converged", "reason": decision.reason,
            "rel_halfwidth": decision.rel_halfwidth if math.isfinite(decision.rel_halfwidth) else None})
        if decision.reason != "converged":
            ctx.display.say(f"  [yellow]not converged[/] {plain(technique)} · {plain(label)}"
                            f"{'' if impairment == 'none' else ' · ' + plain(impairment)}: "
                            f"{decision.reason} after {decision.n} repetitions")


def group_of(cell: PlannedCell) -> Group:
    return cell.technique, cell.impairment.label, cell.measurement


def deciding_metric(kind: str) -> str | None:
    """The metric adaptive repetitions judge a measurement by: its first table column."""
    columns = MEASUREMENTS[kind].columns if kind in MEASUREMENTS else ()
    return columns[0].metric if columns else None
