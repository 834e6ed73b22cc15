"""The archive as a static site (`vpnbench site`): plain files linked by relative paths, so it
opens from disk (file://) as from any web server. It renders answers/site.py's Archive:

    index.html              campaigns, testbeds, technique versions, the newest runs
    runs.html               every run, newest first
    runs/RUN.html           a run's cells, an anchor each (#cell-ID) and one per group (#g-…)
    techniques/TV.html      a technique at a version: its numbers across testbeds, each linked
                            to the cells it is the mean of, and a bar figure per row
    trends/CAMPAIGN.html    the campaign's trend page (answers/trend.render_html), change points
                            linked to their runs
    reports/RUN.html        the full report (views/report) of the newest `reports` runs

Run pages are light on purpose: a full report costs about a second a run (figures drawn by
matplotlib), some three hours for 10 000 runs; a run page costs about a millisecond
(bench/site.py).
"""

import html
from collections import defaultdict
from collections.abc import Callable
from importlib import resources as package_files
from pathlib import Path

import jinja2

from vpnbench.answers import trend
from vpnbench.answers.site import Archive, Number, SiteCell, SiteRun, VersionPage, slug
from vpnbench.views.report import render

REPORTS = 20  # newest runs given a full report by default
TEMPLATES = ("base.html.j2", "index.html.j2", "run_rows.html.j2", "runs.html.j2", "run.html.j2",
             "technique.html.j2")
NEWEST = 20  # runs listed on the index


def environment() -> jinja2.Environment:
    folder = package_files.files("vpnbench.views.site")
    return jinja2.Environment(loader=jinja2.DictLoader({name: folder.joinpath(name).read_text() for name in TEMPLATES}),
                              autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def run_file(run_id: str) -> str:
    return f"runs/{slug(run_id)}.html"


def version_file(technique: str, version: str) -> str:
    return f"techniques/{slug(f'{technique}|{version}')}.html"


def metrics_text(cell: SiteCell) -> str:
    """The cell's numeric metrics, as trend.fmt_value says each."""
    return ", ".join(f"{name} {trend.fmt_value(name, value)}" for name, value in cell.metrics.items()
                     if isinstance(value, (int, float)) and not isinstance(value, bool))


def bars_svg(by_testbed: dict[str, Number]) -> str:
    """One row's numbers across testbeds as horizontal bars from zero, drawn by hand: an SVG of a
    few elements per page instead of matplotlib's second per figure."""
    width, label_width, row = 640, 200, 20
    values = {testbed: number.mean for testbed, number in by_testbed.items()}
    top = max((abs(value) for value in values.values()), default=0.0) or 1.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{row * len(values) + 4}" '
             f'viewBox="0 0 {width} {row * len(values) + 4}" role="img">']
    for number, (testbed, value) in enumerate(values.items()):
        y = number * row + 2
        length = max((width - label_width - 110) * abs(value) / top, 1.0)
        parts.append(f'<text x="{label_width - 6}" y="{y + 14}" text-anchor="end" font-size="12">'
                     f'{html.escape(testbed)}</text>'
                     f'<rect x="{label_width}" y="{y + 3}" width="{length:.1f}" height="{row - 6}" fill="#4878a8"/>'
                     f'<text x="{label_width + length + 4:.1f}" y="{y + 14}" font-size="12">'
                     f'{html.escape(by_testbed[testbed].text)}</text>')
    return "".join(parts) + "</svg>"


def write_site(archive: Archive, out: Path, store, reports: int = REPORTS,
               progress: Callable[[str, int, int], None] | None = None) -> dict[str, int]:
    """Write the site into out (made if missing); returns how many pages of each kind.
    `store` answers the full reports' cells, facts, trials and series. `progress(what, done,
    total)` is told as pages are written."""
    say = progress or (lambda what, done, total: None)
    env = environment()
    for folder in ("runs", "techniques", "trends", "reports"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    common = {"archive_name": archive.name}
    newest_first = archive.runs[::-1]
    reported = newest_first[:max(reports, 0)]
    report_files = {r.run.run_id: f"reports/{slug(r.run.run_id)}.html" for r in reported}

    for done, site_run in enumerate(reported, 1):
        say("reports", done, len(reported))
        run_id = site_run.run.run_id
        (out / report_files[run_id]).write_text(render(site_run.run, store.cells(run_id), store.host_facts(run_id),
                                                       data=store))

    top = {**common, "root": "", "run_href": run_file, "reports": report_files}
    (out / "index.html").write_text(env.get_template("index.html.j2").render(
        **top, runs=archive.runs, campaigns=archive.campaigns, testbeds=archive.testbeds, versions=archive.versions,
        shown=newest_first[:NEWEST]))
    (out / "runs.html").write_text(env.get_template("runs.html.j2").render(**top, shown=newest_first))

    below = {**common, "root": "../", "run_href": lambda run_id: "../" + run_file(run_id)}
    campaign_slugs = {c.name: c.slug for c in archive.campaigns}
    page = env.get_template("run.html.j2")
    for done, site_run in enumerate(archive.runs, 1):
        if done % 500 == 0:
            say("run pages", done, len(archive.runs))
        (out / run_file(site_run.run.run_id)).write_text(page.render(
            **below, r=site_run, groups=cell_groups(site_run), campaign_slug=campaign_slugs[site_run.run.campaign],
            report=("../" + report_files[site_run.run.run_id]) if site_run.run.run_id in report_files else None,
            version_slug=lambda c: slug(f"{c.technique}|{c.version}"), metrics_text=metrics_text))

    page = env.get_template("technique.html.j2")
    for version in archive.versions:
        (out / version_file(version.technique, version.version)).write_text(page.render(
            **below, v=version, testbeds=version.testbeds, rows=version.rows, slugs=campaign_slugs,
            figures=version_figures(version)))

    for done, campaign in enumerate(archive.campaigns, 1):
        say("trend pages", done, len(archive.campaigns))
        (out / "trends" / f"{campaign.slug}.html").write_text(
            trend.render_html(campaign.history, campaign.trends, run_href=below["run_href"], home="../index.html"))
    return {"runs": len(archive.runs), "reports": len(reported), "techniques": len(archive.versions),
            "trends": len(archive.campaigns)}


def cell_groups(site_run: SiteRun) -> list[tuple[str, list[SiteCell]]]:
    """The run's cells by group (technique, impairment, measurement), in the order they ran."""
    groups: dict[str, list[SiteCell]] = defaultdict(list)
    for cell in site_run.cells:
        groups[cell.group].append(cell)
    return list(groups.items())


def version_figures(version: VersionPage) -> list[tuple[str, str]]:
    """A bar figure per row that more than one testbed measured (one bar says no more than the table)."""
    return [(" · ".join(key), bars_svg(by)) for key, by in version.rows.items() if len(by) > 1]
