"""Views render the run's answers (issue 30 item 5): the terminal table, the HTML report and the
export give the same headline numbers of every cell group, all from one `Verdicts`; no view
chooses what to draw or say by a measurement's kind name (each kind declares its figures and
captions, as Flent's tests declare PLOTS beside DATA_SETS)."""

import ast
import html as html_text
import io
import math
import re
import statistics
from pathlib import Path

from rich.console import Console

from report_records import campaign_records, preset, store_records
from vpnbench.answers.analysis import t95
from vpnbench.answers.verdicts import verdicts
from vpnbench.campaign.spec import campaign_from_dict, rehearsal
from vpnbench.measure import MEASUREMENTS
from vpnbench.store.database import Store
from vpnbench.techniques import TECHNIQUES
from vpnbench.views import export
from vpnbench.views.report import render
from vpnbench.views.tables import digits_for, format_mean_sd, summary_tables

SRC = Path(__file__).parent.parent / "src" / "vpnbench"
VIEWS = [*sorted((SRC / "views" / "report").glob("*.py")), SRC / "views" / "tables.py", SRC / "views" / "export.py",
         SRC / "run" / "display.py"]
KIND_NAMES = set(MEASUREMENTS) | set(TECHNIQUES)


def stored_run(tmp_path):
    """The S1 rehearsal (7 techniques, 9 impairments, 3 measurements) with 3 repetitions, written
    to a results file and read back as every view reads it."""
    run, cells = campaign_records(rehearsal(campaign_from_dict(preset("s1-impairments"))), repetitions=3)
    store_records(tmp_path / "s1.db", run, cells)
    store = Store(tmp_path / "s1.db", read_only=True)
    return store, store.run(run.run_id), store.cells(run.run_id)


def headline_metric(kind: str):
    """The column each kind's table leads with (its first), the one the terminal also costs."""
    return MEASUREMENTS[kind].columns[0]


def terminal_values(tables, label: str, title: str) -> dict[tuple[str, str], str]:
    table = next(t for t in tables if t.title == label)
    column = {c.header: list(c._cells) for c in table.columns}
    return {(t, i): v for t, i, v in zip(column["technique"], column["impairment"], column[title])}


def report_values(page: str, label: str, position: int) -> dict[tuple[str, str], tuple[str, str]]:
    """(technique, impairment) -> (mean ± sd, CI text) of the results table of `label`."""
    section = re.search(rf'<section class="measurement" id="measurement-\d+">\s*<h2>{re.escape(label)}</h2>(.*?)'
                        r"</section>", page, re.S).group(1)
    found = {}
    for technique, impairment, values in re.findall(
            r'<tr><td>([^<]*)</td><td>([^<]*)</td>\s*<td class="num [^"]*">[^<]*</td>\s*(.*?)<td class="quality">',
            section, re.S):
        value, ci = re.findall(r'<td class="num[^"]*">([^<]*)(?:<small>([^<]*)</small>)?</td>', values)[position]
        found[html_text.unescape(technique), html_text.unescape(impairment)] = (value, ci)
    return found


def test_terminal_report_and_export_give_the_same_numbers(tmp_path):
    store, run, cells = stored_run(tmp_path)
    try:
        answers = verdicts(cells)  # computed once, as `run --report` does
        tables = summary_tables(cells, answers)
        page = render(run, cells, data=store, answers=answers)
        records = export.records(store)
    finally:
        store.close()
    Console(record=True, width=250, file=open("/dev/null", "w")).print(*tables)  # the tables render
    groups = list(dict.fromkeys((c.measurement_label, c.measurement, c.technique, c.impairment) for c in cells))
    assert len(groups) == 3 * 7 * 9
    for label, kind in dict.fromkeys((label, kind) for label, kind, _, _ in groups):
        column = headline_metric(kind)
        terminal = terminal_values(tables, label, column.title)
        report = report_values(page, label, 0)
        for technique, impairment in [(t, i) for lab, _, t, i in groups if lab == label]:
            row = answers.stat(label, technique, impairment, column.metric)
            said = format_mean_sd(row.mean * column.scale, row.sd * column.scale)
            ci = row.ci95 * column.scale
            assert terminal[technique, impairment] == said, (label, technique, impairment)
            assert report[technique, impairment] == (said, f"95 % CI ± {ci:.{digits_for(ci)}f}")
            # The export's cells give the same mean, sd and interval when summarised by hand.
            values = [r["metrics"][column.metric] * column.scale for r in records
                      if (r["measurement_label"], r["technique"], r["impairment"]) == (label, technique, impairment)
                      and r["status"] == "ok"]
            assert len(values) == row.n == 3
            sd = statistics.stdev(values)
            assert format_mean_sd(statistics.fmean(values), sd) == said
            assert math.isclose(t95(len(values) - 1) * sd / math.sqrt(len(values)), ci, rel_tol=1e-9)


def kind_name_comparisons(tree: ast.AST) -> list[tuple[int, str]]:
    """Comparisons (==, !=, in, not in) of anything with a measurement or technique kind's name."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side in [node.left, *node.comparators]:
            names = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            for name in names:
                if isinstance(name, ast.Constant) and name.value in KIND_NAMES:
                    found.append((node.lineno, name.value))
    return found


def test_no_view_branches_on_a_kind_name():
    assert len(VIEWS) >= 6
    found = {f"{path.relative_to(SRC)}:{line}": name
             for path in VIEWS for line, name in kind_name_comparisons(ast.parse(path.read_text()))}
    for template in (SRC / "views" / "report").glob("*.j2"):  # the templates too
        for number, line in enumerate(template.read_text().splitlines(), start=1):
            for name in KIND_NAMES:
                if re.search(rf"""(==|!=|\bin)\s*\(?\s*["']{name}["']""", line):
                    found[f"{template.relative_to(SRC)}:{number}"] = name
    assert not found, f"views that branch on a kind's name: {found}"
    # The check sees one where it is: a comparison with a kind name, alone or among others.
    assert kind_name_comparisons(ast.parse('if kind == "tcp" or k in ("rate_search", "x"): pass')) == [
        (1, "tcp"), (1, "rate_search")]


def test_every_declared_figure_and_caption_is_drawn_by_a_view():
    from vpnbench.answers.verdicts import CAPTIONS  # noqa: PLC0415
    from vpnbench.views.report.figures import FIGURES  # noqa: PLC0415 - a name only the new code has

    for kind, measurement in MEASUREMENTS.items():
        assert measurement.figures and set(measurement.figures) <= set(FIGURES), kind
        assert set(measurement.captions) <= set(CAPTIONS), kind


def demo_like_run(tmp_path):
    """The demo campaign (baseline and WireGuard; tcp, udp, ping) with 3 repetitions, stored and
    read back as the CLI reads it after a run."""
    run, cells = campaign_records(campaign_from_dict(preset("demo")), repetitions=3)
    store_records(tmp_path / "demo.db", run, cells)
    store = Store(tmp_path / "demo.db", read_only=True)
    try:
        return store.cells(run.run_id)
    finally:
        store.close()


def test_a_terminal_table_fits_the_terminal_and_keeps_every_column(tmp_path):
    """Issue 38 item 3: at 100 and 160 columns no line is longer than the terminal; each
    measurement's first table leads with the essential columns (technique, ok/n, the headline,
    its cost against the baseline); every column of the full table is in one of its tables."""
    cells = demo_like_run(tmp_path)
    answers = verdicts(cells)
    full = {table.title: [column.header for column in table.columns] for table in summary_tables(cells, answers)}
    assert max(len(headers) for headers in full.values()) >= 9  # the demo's tcp and udp tables are wide
    for width in (100, 160):
        tables = summary_tables(cells, answers, width=width)
        out = io.StringIO()
        console = Console(file=out, width=width)
        for table in tables:
            console.print(table)
        lines = out.getvalue().splitlines()
        assert max(len(line) for line in lines) <= width, width
        for title, headers in full.items():
            parts = [t for t in tables if t.title in (title, f"{title} (continued)")]
            shown = [column.header for table in parts for column in table.columns]
            assert set(shown) == set(headers), (width, title)
            kind = MEASUREMENTS.get(title.split("_")[0])
            if kind is not None:
                first = [column.header for column in parts[0].columns]
                headline = kind.columns[0].title
                assert first[:4] == ["technique", "ok/n", headline, f"{headline} vs baseline"], first
                assert all(table.columns[0].header == "technique" for table in parts)
    wide = summary_tables(cells, answers, width=200)
    assert [t.title for t in wide] == list(full)  # wide enough: one table each, as before


def test_the_cli_prints_the_tables_to_the_columns_it_is_given(tmp_path):
    """The CLI's console takes COLUMNS where stdout is not a terminal (CI keeps 160 otherwise)."""
    import os
    import subprocess
    import sys
    code = "from vpnbench.cli import console; print(console.width)"
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "100"
    env.pop("COLUMNS")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "160"


def test_host_cpu_columns_are_left_out_where_no_cell_has_a_client_or_server(tmp_path):
    """A mesh's hosts are its nodes (n0, n1, ..., ctl): its tables have no client or server CPU
    column full of dashes; a two-host run keeps both."""
    import dataclasses

    cells = demo_like_run(tmp_path)
    headers = {column.header for table in summary_tables(cells, verdicts(cells)) for column in table.columns}
    assert {"client CPU%", "server CPU%"} <= headers
    mesh = [dataclasses.replace(c, hosts={"n0": c.hosts["client"], "n1": c.hosts["server"]}) for c in cells]
    headers = {column.header for table in summary_tables(mesh, verdicts(mesh)) for column in table.columns}
    assert not {"client CPU%", "server CPU%"} & headers
