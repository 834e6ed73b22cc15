"""`vpnbench check`: read the run and its reference, judge (answers/check.py), print a short
table, write JUnit XML. Exit 1 on a regression beyond threshold and noise, 0 otherwise, 2 on
bad input (raised as UserError before anything is written)."""

from pathlib import Path

from rich.console import Console
from rich.table import Table

from vpnbench.answers import check, trend
from vpnbench.answers.analysis import metric_frame
from vpnbench.campaign.check_spec import check_spec, parse_threshold
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.terminal_text import plain
from vpnbench.store.database import Store, missing_file

AGAINST = "a run id, 'previous' (the campaign's newest run before it) or 'trend' (its trend's last level)"
SHOWN_RUNS = 5


def cmd_check(db: str, run_id: str | None, against: str, given: list[str], junit: str | None,
              console: Console) -> int:
    limits_given = [parse_threshold(text) for text in given]
    out = Path(junit) if junit else None
    if out and not out.parent.is_dir():
        raise UserError(f"--junit: directory {str(out.parent)!r} does not exist")
    if missing_file(db):
        raise UserError(f"--db: database {db!r} does not exist")
    store = Store(db, read_only=True)
    try:
        runs = store.runs()
        run = _run(runs, run_id or (runs[-1].run_id if runs else None), "--run")
        spec = check_spec(run.spec)
        cells = store.cells(run.run_id)
        frame = metric_frame(cells)
        levels: dict[str, str] = {}
        if against == "trend":
            reference, levels = check.trend_reference(trend.load_history(store, run.campaign), run.run_id)
            reference_kinds = {technique: "" for technique, _, _, _ in reference}
            said = f"the trend's last level of {run.campaign}"
        else:
            if against == "previous":
                earlier = [r for r in runs if r.campaign == run.campaign and r.started_at < run.started_at]
                if not earlier:
                    raise UserError(f"--against previous: no run of {run.campaign!r} before {run.run_id}; "
                                    f"allowed values: {AGAINST}")
                against = earlier[-1].run_id
            other = _run(runs, against, "--against")
            if other.run_id == run.run_id:
                raise UserError(f"--against: {against!r} is the run checked; allowed values: {AGAINST}")
            other_cells = store.cells(other.run_id)
            other_frame = metric_frame(other_cells)
            reference = check.samples(other_frame)
            reference_kinds = {c.technique: c.technique_params.get("kind", "") for c in other_cells}
            said = f"run {other.run_id}"
    finally:
        store.close()
    if frame.empty:
        raise UserError(f"--run: run {run.run_id} has no ok cell to check")
    run_samples = check.samples(frame)
    limits = check.thresholds(run_samples, check.kinds_of(frame), spec, limits_given)
    pairs = check.technique_pairs({c.technique: c.technique_params.get("kind", "") for c in cells}, reference_kinds)
    outcomes = check.check(run_samples, reference, limits, pairs)
    if not any(o.reference_values for o in outcomes):
        raise UserError(f"--against: {said} shares no technique × impairment × measurement × metric checked with "
                        f"run {run.run_id}; allowed values: {AGAINST}")
    _print(outcomes, run.run_id, said, levels, console)
    if out:
        check.junit(outcomes, run.campaign, f"{run.run_id} against {said}").write(out, encoding="utf-8",
                                                                                  xml_declaration=True)
        console.print(f"wrote {len(outcomes)} test cases to {out}")
    return check.exit_code(outcomes)


def _run(runs, run_id: str | None, flag: str):
    found = next((run for run in runs if run.run_id == run_id), None)
    if found is None:
        newest = ", ".join(run.run_id for run in runs[-SHOWN_RUNS:][::-1])
        what = f"run {run_id!r} is not in the database" if run_id else "the database holds no run"
        raise UserError(f"{flag}: {what}; allowed values: " + (f"{AGAINST}; its newest runs: {newest}"
                                                                if flag == "--against" else newest or "none"))
    return found


def _print(outcomes: list[check.Outcome], run_id: str, said: str, levels: dict[str, str], console: Console) -> None:
    table = Table("technique", "impairment", "measurement", "metric", "run", "reference", "change", "allowed",
                  "p (Holm)", "verdict", title=f"check: run {plain(run_id)} against {plain(said)}",
                  title_justify="left")
    for o in outcomes:
        verdict = {"failed": "[red]REGRESSION[/]", "passed": "ok", "skipped": "[yellow]skipped[/]"}[o.status]
        reference = check.value_text(o.metric, o.reference_mean) if o.reference_values else "–"
        if o.technique in levels:
            reference += f" ({levels[o.technique]})"
        table.add_row(*map(plain, (o.technique, o.impairment, o.measurement, o.metric)),
                      check.value_text(o.metric, o.run_mean), reference,
                      f"{o.change:+.1%}" if o.change is not None else "–", o.threshold.allowed,
                      f"{o.p_holm:.2g}" if o.p_holm is not None else "–", verdict)
    console.print(table)
    failed = [o for o in outcomes if o.status == check.FAILED]
    for o in failed:
        console.print(f"[red]regression[/]: {plain(o.name)}: {plain(o.reason)}", highlight=False)
    counts = {status: sum(o.status == status for o in outcomes) for status in (check.PASSED, check.SKIPPED)}
    console.print(f"check: {len(failed)} regression(s), {counts[check.PASSED]} within bounds, "
                  f"{counts[check.SKIPPED]} skipped", highlight=False)
