"""`vpnbench site` (issue 43 item 4): the archive as a static site that opens from disk. Built
from stored hand-made runs (report_records: two testbeds, eight nights each, OpenVPN upgraded
half-way and slower after it); every link of every page crawled to an existing file and anchor,
every number on a technique page traced to the cells it is the mean of, the index and pages
loaded in headless Chromium with their figures measured, and bad input refused before anything
is written."""

import datetime
import html.parser
import json
import re
import statistics
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import run_cli
from report_browser import chromium_args
from report_records import archived_run, daemon_build, store_versioned
from vpnbench.answers.site import slug
from vpnbench.views.report import write_report

SPEC = {"campaign": {"name": "nightly", "repetitions": 2},
        "technique": [{"kind": "baseline"}, {"kind": "wireguard"}, {"kind": "openvpn"}],
        "measurement": [{"kind": "tcp", "duration": "2s"}, {"kind": "ping"}]}
TESTBEDS = ("lab-a", "lab-b")
NIGHTS = 8
UPGRADE = 4  # from this night on OpenVPN is 2.6.9, and its throughput 0.6 of before
REPORTS = 3


def archive(db: Path) -> None:
    start = datetime.datetime(2026, 1, 1, 2, 0)
    for night in range(NIGHTS):
        for testbed in TESTBEDS:
            upgraded = night >= UPGRADE
            run, cells = archived_run(SPEC, f"{testbed}-n{night}", testbed,
                                      (start + datetime.timedelta(days=night)).isoformat(), seed=night,
                                      throughput_scale=0.6 if upgraded else 1.0)
            for cell in cells:  # only OpenVPN's build changed: the others' numbers stay
                if cell.technique == "wireguard" and "throughput_bps" in cell.metrics:
                    cell.metrics["throughput_bps"] /= 0.6 if upgraded else 1.0
            store_versioned(db, run, cells, {"openvpn": daemon_build("openvpn", "2.6.9" if upgraded else "2.6.3"),
                                             "wireguard": daemon_build("wireguard-go", "0.0.20220316")})


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("site")
    archive(where / "lab.db")
    done = run_cli("site", "--db", str(where / "lab.db"), "-o", str(where / "site"), "--reports", str(REPORTS))
    assert done.returncode == 0, done.stderr
    assert f"wrote the site of {len(TESTBEDS) * NIGHTS} runs" in done.stdout
    return where / "site"


class Links(html.parser.HTMLParser):
    """Every href and src of a page, and every id it holds."""

    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.links.append((tag, value))
            if name == "id" and value:
                self.ids.add(value)


def parsed(page: Path) -> Links:
    links = Links()
    links.feed(page.read_text())
    return links


def test_every_link_of_every_page_resolves_to_a_file_and_anchor(site):
    pages = sorted(site.rglob("*.html"))
    # index, runs, a page a run, the reports, a page a technique version, one trend page
    assert len(pages) == 2 + len(TESTBEDS) * NIGHTS + REPORTS + 4 + 1
    ids = {page.resolve(): parsed(page).ids for page in pages}
    checked = 0
    for page in pages:
        for tag, link in parsed(page).links:
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, f"{page.name}: {link} needs a server or the network"
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            assert target.is_file(), f"{page.relative_to(site)}: {link} names no file"
            if parts.fragment:
                assert parts.fragment in ids[target], f"{page.relative_to(site)}: {link} names no anchor there"
            checked += 1
    assert checked > 500  # the run pages' cell links alone are 16 x 24


def test_each_number_links_to_the_cells_it_is_the_mean_of(site):
    """OpenVPN 2.6.9's page: per testbed, its throughput is the newest night's, and the number's
    link leads to exactly the cells (two repetitions) whose mean it is."""
    index = (site / "index.html").read_text()
    for technique, version in (("openvpn", "openvpn 2.6.3 (debian)"), ("openvpn", "openvpn 2.6.9 (debian)"),
                               ("wireguard", "wireguard-go 0.0.20220316 (debian)"), ("baseline", "")):
        assert f'href="techniques/{slug(f"{technique}|{version}")}.html"' in index
    page = site / "techniques" / f"{slug('openvpn|openvpn 2.6.9 (debian)')}.html"
    text = page.read_text()
    numbers = re.findall(r'<a class="number" href="([^"#]+)#([^"]+)">([^<]+)</a>', text)
    assert len(numbers) == 2 * len(TESTBEDS)  # tcp throughput and ping RTT on each testbed
    for target, group, shown in numbers:
        run_page = (page.parent / target).resolve()
        assert run_page.name.startswith(tuple(f"{t}-n{NIGHTS - 1}-" for t in TESTBEDS))  # the newest night
        body = re.search(rf'<tbody id="{re.escape(group)}">(.*?)</tbody>', run_page.read_text(), re.S).group(1)
        rows = re.findall(r"<tr id=\"cell-\d+\">(.*?)</tr>", body, re.S)
        assert len(rows) == SPEC["campaign"]["repetitions"] and all(">openvpn<" in row for row in rows)
        if shown.endswith("Mbit/s"):
            values = [float(v) for v in re.findall(r"throughput_bps ([\d.]+) Mbit/s", body)]
            assert float(shown.split()[0]) == pytest.approx(statistics.fmean(values), rel=1e-3)
    # 2.6.3 before the upgrade measured faster on each testbed than 2.6.9 after it (0.6 x)
    older = (site / "techniques" / f"{slug('openvpn|openvpn 2.6.3 (debian)')}.html").read_text()
    before = [float(v) for v in re.findall(r'class="number"[^>]*>([\d.]+) Mbit/s', older)]
    after = [float(v) for v in re.findall(r'class="number"[^>]*>([\d.]+) Mbit/s', text)]
    assert len(before) == len(after) == len(TESTBEDS)
    assert all(0.5 < a / b < 0.7 for a, b in zip(after, before))


def test_trend_page_names_the_regression_and_links_its_run(site):
    page = next((site / "trends").glob("*.html")).read_text()
    regressions = re.findall(r'<tr class="regression"><td><a href="([^"]+)">', page)
    # openvpn's throughput on each testbed fell at the upgrade (night UPGRADE)
    assert sorted(Path(link).name.split("-n")[0] for link in regressions) == list(TESTBEDS)
    assert all(f"-n{UPGRADE}-" in link for link in regressions)
    assert "openvpn 2.6.3 (debian) → 2.6.9 (debian)" in page


def test_the_newest_runs_reports_are_the_report_command_s(site, tmp_path):
    """A report in the site is views/report's own, byte for byte; older runs link none."""
    newest = f"{TESTBEDS[-1]}-n{NIGHTS - 1}"
    own = tmp_path / "own.html"
    write_report(site.parent / "lab.db", own, newest)
    assert (site / "reports" / f"{slug(newest)}.html").read_text() == own.read_text()
    assert len(list((site / "reports").iterdir())) == REPORTS
    oldest = (site / "runs" / f"{slug(f'{TESTBEDS[0]}-n0')}.html").read_text()
    assert "full report" not in oldest and 'href="../reports/' in (site / "runs" / f"{slug(newest)}.html").read_text()


FIGURES = """<script>
window.addEventListener("load", () => {
  const size = e => { const b = e.getBoundingClientRect(); return [b.width, b.height]; };
  const out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify({
    title: document.title, links: document.links.length,
    svgs: [...document.querySelectorAll("svg")].map(size),
    imgs: [...document.querySelectorAll("img")].map(i => [i.complete, i.naturalWidth, ...size(i)])});
  document.body.appendChild(out);
});
</script>"""


def in_chromium(page: Path, tmp_path: Path) -> dict:
    """The page as Chromium loads it from disk (file://), beside the page so its relative links
    resolve: its title, links, and the rendered size of every <svg> and <img>."""
    probe = page.with_name(f"probe-{page.name}")
    probe.write_text(page.read_text().replace("</body>", FIGURES + "\n</body>"))
    try:
        dom = subprocess.run([*chromium_args(tmp_path, page.stem), "--dump-dom", probe.as_uri()],
                             capture_output=True, text=True, timeout=180)
    finally:
        probe.unlink()
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.S)
    assert found, "the measuring script did not run"
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def test_index_technique_and_trend_pages_load_with_their_figures_in_chromium(site, tmp_path):
    index = in_chromium(site / "index.html", tmp_path)
    assert index["title"] == "vpnbench: lab.db" and index["links"] > 20
    technique = in_chromium(site / "techniques" / f"{slug('openvpn|openvpn 2.6.9 (debian)')}.html", tmp_path)
    trend = in_chromium(next((site / "trends").glob("*.html")), tmp_path)
    # a bar figure per row measured on both testbeds; a trend figure per testbed, measurement, metric
    assert len(technique["svgs"]) == 2 and len(trend["svgs"]) == len(TESTBEDS) * 2
    for page in (index, technique, trend):
        assert all(width > 0 and height > 0 for width, height in page["svgs"]), page
        assert all(complete and natural > 0 and width > 0 and height > 0
                   for complete, natural, width, height in page["imgs"]), page


def refused(tmp_path: Path, *args: str, says: str) -> None:
    before = sorted(tmp_path.rglob("*"))
    done = run_cli("site", *args)
    assert done.returncode == 2, done
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert sorted(tmp_path.rglob("*")) == before  # nothing written


def test_bad_input_is_one_line_and_writes_nothing(site, tmp_path):
    db = site.parent / "lab.db"
    refused(tmp_path, "--db", str(tmp_path / "missing.db"), "-o", str(tmp_path / "out"), says="does not exist")
    (tmp_path / "a-file").write_text("mine")
    refused(tmp_path, "--db", str(db), "-o", str(tmp_path / "a-file"), says="-o: ")
    assert (tmp_path / "a-file").read_text() == "mine"
    refused(tmp_path, "--db", str(db), "-o", str(tmp_path / "no" / "such"), says="-o: directory")
    refused(tmp_path, "--db", str(db), "-o", str(tmp_path / "out"), "--reports", "-1", says="--reports: ")
    refused(tmp_path, "--db", str(db), "-o", str(tmp_path / "out"), "--min-change", "0", says="--min-change: ")


def test_an_archive_without_runs_is_refused_before_anything_is_written(tmp_path):
    from vpnbench.store.database import Store

    empty = tmp_path / "empty" / "empty.db"
    empty.parent.mkdir()
    Store(empty).close()
    refused(tmp_path, "--db", str(empty), "-o", str(tmp_path / "out"), says="holds no run")
