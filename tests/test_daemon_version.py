"""The daemon version a cell ran, as every view names it (issue 31 item 2): the label read from a
bring-up's negotiated record (pure), and the report, `compare` and `trend` over results files
that hold such records.

The views' tests write synthesized records through the real Store: cells with plausible numbers
(report_records.py) and bring-ups whose negotiated record carries "implementation", "version" and
"build" as the techniques that drive built daemons store them. They test the views, as parsers of
stored records; the techniques' own tests bring the daemons up for real and check what they record."""

import datetime
import random
import re

import pytest

from conftest import run_cli
from report_browser import check_readable, run_in_page
from report_records import records
from vpnbench.answers import trend
from vpnbench.foundation.daemon_version import DaemonVersion, in_turn, ran_version, version_change
from vpnbench.store.database import Store
from vpnbench.store.records import Bringup, Cell, Run
from vpnbench.views.report import write_report

DEBIAN_VERSION = "0.0.20220316"
CURRENT_VERSION = "0.0.0-20260522210424-ecfc5a8d5446"
DEBIAN = {"implementation": "wireguard-go", "version": DEBIAN_VERSION,
          "build": {"source": "debian", "package": "wireguard-go", "version": "0.0.20220316-1+b6",
                    "architecture": "amd64"}}
CURRENT = {"implementation": "wireguard-go", "version": CURRENT_VERSION,
           "build": {"name": "wireguard-go", "version": CURRENT_VERSION, "language": "go",
                     "source": "golang.zx2c4.com/wireguard", "module_sum": "h1:3ZtsbXc8pbTMxnvWbn2i0b2GD1VzVsE=",
                     "toolchain": "go1.27.3", "arch": "amd64"}}


def negotiated(build: dict) -> dict:
    """A userspace WireGuard bring-up's negotiated record as the wireguard technique stores it."""
    return {"cipher": "chacha20poly1305", "key_exchange": "x25519", **build}


# --- the label (pure) ---------------------------------------------------------------------------

def test_debians_package_and_a_go_build_read_as_their_version_and_how_they_were_built():
    debian, current = ran_version(negotiated(DEBIAN)), ran_version(negotiated(CURRENT))
    assert debian.label == "wireguard-go 0.0.20220316 (debian)"
    assert current.label == f"wireguard-go {CURRENT_VERSION} (go1.27.3)"
    assert "module_sum h1:3ZtsbXc8pbTMxnvWbn2i0b2GD1VzVsE=" in current.details_text
    assert "arch amd64" in current.details_text and "toolchain go1.27.3" in current.details_text
    assert debian != current
    assert version_change(debian, current) == f"wireguard-go 0.0.20220316 (debian) → {CURRENT_VERSION} (go1.27.3)"
    assert version_change(current, ran_version(negotiated(CURRENT))) == ""  # the same build: no change


def test_a_daemon_without_its_build_info_reads_as_the_version_vpnbench_built():
    """tailscale built without its ldflags says "1.102.0-ERR-BuildInfo": the report names the
    1.102.0 BUILD.json recorded (issue 45), and keeps a version the build record does not know."""
    record = {"implementation": "tailscale", "version": "1.102.0-ERR-BuildInfo",
              "build": {"name": "tailscale", "version": "1.102.0", "toolchain": "go1.27.3"}}
    assert ran_version(record).label == "tailscale 1.102.0 (go1.27.3)"
    other = {**record, "version": "1.104.0-ERR-BuildInfo"}  # not the build's: said as it was
    assert ran_version(other).version == "1.104.0-ERR-BuildInfo"


@pytest.mark.parametrize("build, word", [
    ({"toolchain": "go version go1.27.3 linux/amd64"}, "go1.27.3"),
    ({"language": "rust", "toolchain": "rustc 1.85.0 (4d91de4e4 2025-02-17)"}, "rustc 1.85.0"),
    ({"rustc": "1.85.0"}, "1.85.0"),
    ({"language": "go"}, ""),  # a record that does not say its toolchain: nothing made up
])
def test_the_toolchain_is_said_in_its_own_words(build, word):
    found = ran_version({"implementation": "boringtun", "version": "0.7.1", "build": build})
    assert found.build == word
    assert found.label == "boringtun 0.7.1" + (f" ({word})" if word else "")


def test_a_rebuild_of_the_same_version_with_another_toolchain_is_a_change():
    older = ran_version({"implementation": "nebula", "version": "1.10.3", "build": {"toolchain": "go1.26.8"}})
    newer = ran_version({"implementation": "nebula", "version": "1.10.3", "build": {"toolchain": "go1.27.3"}})
    assert version_change(older, newer) == "nebula 1.10.3 (go1.26.8) → 1.10.3 (go1.27.3)"


def test_another_implementation_is_named_whole():
    boringtun = DaemonVersion("boringtun", "0.7.1", "rustc 1.85.0")
    assert version_change(ran_version(DEBIAN), boringtun) == \
        "wireguard-go 0.0.20220316 (debian) → boringtun 0.7.1 (rustc 1.85.0)"


@pytest.mark.parametrize("record", [
    {}, None, {"cipher": "chacha20poly1305"},  # the kernel's data path, the baseline, a failed bring-up
    {"implementation": "kernel", "build": "in-tree"},  # no version named
    {"version": 3},  # a protocol's version number is not a daemon's
])
def test_a_record_naming_no_daemon_version_has_none(record):
    assert ran_version(record) is None


def test_the_version_of_the_build_record_when_the_record_itself_names_none():
    found = ran_version({"build": {"name": "tailscale", "version": "1.102.0", "toolchain": "go1.27.3"}})
    assert found.label == "tailscale 1.102.0 (go1.27.3)"


# --- the views over stored records --------------------------------------------------------------

SWEEP = {"campaign": {"name": "wireguard-versions", "repetitions": 3}, "testbed": {"router": True},
         "technique": [{"kind": "baseline"}, {"kind": "wireguard", "label": "wireguard-go version=debian"},
                       {"kind": "wireguard", "label": f"wireguard-go version={CURRENT_VERSION}"}],
         "impairment": [], "measurement": [{"kind": "tcp", "duration": "2s"}]}
RAN = {"wireguard-go version=debian": DEBIAN, f"wireguard-go version={CURRENT_VERSION}": CURRENT}


def store_with_bringups(path, run: Run, cells: list[Cell], ran: dict[str, dict]) -> None:
    """The run and its cells, each technique's cells served by one bring-up that negotiated
    `ran[technique]` (the baseline: nothing)."""
    store = Store(path)
    try:
        store.start_run(run)
        bringups = {}
        for cell in cells:
            if cell.technique not in bringups:
                kind = cell.technique_params["kind"]
                bringups[cell.technique] = Bringup(run.run_id, cell.technique, kind, "userspace", run.started_at,
                                                   negotiated=negotiated(ran[cell.technique]) if cell.technique in ran
                                                   else {}, wire_check={"verdict": "encrypted"})
                store.save_bringup(bringups[cell.technique])
            cell.id, cell.bringup_id = None, bringups[cell.technique].id
            store.save_cell(cell)
    finally:
        store.close()


def version_sweep(path, run_id: str = "sweep", seed: int = 1, ran: dict[str, dict] = RAN) -> None:
    run, cells = records(SWEEP, run_id=run_id, seed=seed)
    for cell in cells:  # Debian's wireguard-go well below the current one
        if cell.technique.endswith("debian"):
            cell.metrics["throughput_bps"] /= 8
    store_with_bringups(path, run, cells, ran)


TECHNIQUES_TABLE = """<script>
document.querySelectorAll("details").forEach(d => { d.open = true; });
const table = document.getElementById("techniques");
const head = [...table.rows[0].cells].map(c => c.textContent);
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify({head, rows: [...table.rows].slice(1).map(r => {
  const daemon = r.cells[head.indexOf("backend and daemon")].querySelector("div.version");
  return {cells: [...r.cells].map(c => c.innerText), daemon: daemon && daemon.innerText,
          title: daemon && daemon.title, daemonWidth: daemon && daemon.getBoundingClientRect().width};
})});
document.body.appendChild(out);
</script>"""


def test_the_report_shows_both_versions_of_a_sweep_side_by_side_in_chromium(tmp_path):
    version_sweep(tmp_path / "v.db")
    html = tmp_path / "v.html"
    write_report(tmp_path / "v.db", html)
    check_readable(html, tmp_path)  # the long Go pseudo-version makes no table wider than the page
    seen = run_in_page(html, tmp_path, TECHNIQUES_TABLE)
    shown = {row["cells"][0]: row for row in seen["rows"]}
    debian, current = shown["wireguard-go version=debian"], shown[f"wireguard-go version={CURRENT_VERSION}"]
    assert debian["daemon"] == "wireguard-go 0.0.20220316 (debian)"
    assert current["daemon"] == f"wireguard-go {CURRENT_VERSION} (go1.27.3)"
    assert current["cells"][seen["head"].index("backend and daemon")].startswith("userspace")
    assert shown["baseline"]["daemon"] is None  # the baseline ran no daemon
    assert 0 < current["daemonWidth"] < 300  # laid out, and wrapped in its column
    # side by side: the two versions' rows follow each other, and their details differ
    assert [row["cells"][0] for row in seen["rows"]].index("wireguard-go version=debian") + 1 == \
        [row["cells"][0] for row in seen["rows"]].index(f"wireguard-go version={CURRENT_VERSION}")
    assert "module_sum h1:3ZtsbXc8pbTMxnvWbn2i0b2GD1VzVsE=" in current["title"] and "package wireguard-go" in debian["title"]
    # the whole build record behind the negotiated facts' toggle, opened
    negotiated_facts = current["cells"][seen["head"].index("negotiated")]
    assert "toolchain: go1.27.3" in negotiated_facts and "arch: amd64" in negotiated_facts
    assert "version: 0.0.20220316-1+b6" in debian["cells"][seen["head"].index("negotiated")]


def test_a_report_without_a_built_daemon_says_nothing_of_daemons(tmp_path):
    run, cells = records({**SWEEP, "technique": [{"kind": "baseline"}, {"kind": "wireguard"}]})
    store_with_bringups(tmp_path / "k.db", run, cells, {})
    write_report(tmp_path / "k.db", tmp_path / "k.html")
    page = (tmp_path / "k.html").read_text()
    assert "and daemon" not in page and "<th>backend</th><th>wire check</th>" in page
    assert 'class="version"' not in page


def test_compare_names_each_runs_version_and_the_change(tmp_path):
    """The same campaign on one machine with Debian's wireguard-go (A), then with the current one (B)
    under the same technique label: compare shows each side's version and says it changed."""
    ran = {"wireguard-go": DEBIAN}
    spec = {**SWEEP, "technique": [{"kind": "baseline"}, {"kind": "wireguard", "label": "wireguard-go"}]}
    run, cells = records(spec, run_id="before")
    for cell in cells:
        if cell.technique == "wireguard-go":
            cell.metrics["throughput_bps"] /= 8
    store_with_bringups(tmp_path / "a.db", run, cells, ran)
    run, cells = records(spec, run_id="after", seed=2)
    store_with_bringups(tmp_path / "b.db", run, cells, {"wireguard-go": CURRENT})
    result = run_cli("compare", str(tmp_path / "a.db"), str(tmp_path / "b.db"), "-o", str(tmp_path / "c.html"))
    assert result.returncode == 0, result.stderr
    change = f"version changed: wireguard-go 0.0.20220316 (debian) → {CURRENT_VERSION} (go1.27.3)"
    lines = result.stdout.splitlines()
    assert lines.count(f"wireguard-go: {change}") == 1  # once, under the table
    assert re.search(r"wireguard-go costs \d+ % on A and \d+ % on B \(tcp throughput_bps\)", result.stdout)
    table = result.stdout.split(change)[0]
    assert "A version" in " ".join(table.split()) or "A   " in table  # the table's version columns
    assert "(debian)" in table and "(go1.27.3)" in table

    sizes = check_readable(tmp_path / "c.html", tmp_path)  # in Chromium: the version columns keep it in the page
    assert any(t["id"] == "compare" for t in sizes["tables"])
    page = (tmp_path / "c.html").read_text()
    assert page.count(f'<li class="version-change">wireguard-go: {change}</li>') == 1
    rows = [row for row in page.split("<tr>") if row.startswith("<td>tcp</td><td>wireguard-go")]
    assert len(rows) == 3  # throughput and the two hosts' CPU, each with both versions beside it
    assert all(f'<td class="version changed" title="{change}">wireguard-go 0.0.20220316 (debian)</td>'
               f'<td class="version changed" title="{change}">wireguard-go {CURRENT_VERSION} (go1.27.3)</td>' in row
               for row in rows)
    baseline = next(row for row in page.split("<tr>") if row.startswith("<td>tcp</td><td>baseline</td>"))
    assert baseline.count('<td class="version">–</td>') == 2 and "changed" not in baseline


def test_compare_of_one_sweep_with_itself_shows_the_versions_and_no_change(tmp_path):
    version_sweep(tmp_path / "a.db", "first")
    version_sweep(tmp_path / "b.db", "second", seed=3)
    result = run_cli("compare", str(tmp_path / "a.db"), str(tmp_path / "b.db"), "-o", str(tmp_path / "c.html"))
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "c.html").read_text()
    assert "version changed" not in page and "version changed" not in result.stdout
    assert 'class="version-change"' not in page and 'class="version changed"' not in page
    debian = next(row for row in page.split("<tr>") if row.startswith("<td>tcp</td><td>wireguard-go version=debian"))
    assert debian.count('<td class="version">wireguard-go 0.0.20220316 (debian)</td>') == 2


RUNS, UPGRADE_AT = 12, 6
START = datetime.datetime(2026, 3, 2, 2, 0, tzinfo=datetime.timezone.utc)


def upgrade_history(path, upgrade: bool = True) -> None:
    """RUNS nightly runs of one campaign; the technique "wireguard-go" runs Debian's build until
    UPGRADE_AT, then (with upgrade) the current one, 8 times faster. The baseline stays flat."""
    rng = random.Random(5)
    store = Store(path)
    try:
        for index in range(RUNS):
            run_id = f"n{index:02d}"
            started = (START + datetime.timedelta(days=index)).isoformat()
            store.start_run(Run(run_id, "nightly", {}, {"vpnbench": "0.2.0", "hostname": "lab1",
                                                        "testbed": {"kind": "local"}}, started))
            upgraded = upgrade and index >= UPGRADE_AT
            for technique, level, ran in (("baseline", 9.0e9, {}), ("wireguard-go", 0.3e9, CURRENT if upgraded else DEBIAN)):
                level *= 8 if technique == "wireguard-go" and upgraded else 1
                bringup = Bringup(run_id, technique, technique.split("-")[0], "userspace", started,
                                  negotiated=negotiated(ran) if ran else {})
                store.save_bringup(bringup)
                for repetition in range(3):
                    store.save_cell(Cell(run_id, "nightly", f"{technique}/tcp/{repetition}", technique,
                                         {"kind": bringup.kind}, "none", {}, "tcp", "tcp", {"kind": "tcp"}, repetition,
                                         started, status="ok", metrics={"throughput_bps": rng.gauss(level, level * 0.02)},
                                         finished_at=started, bringup_id=bringup.id))
            store.finish_run(run_id, "finished")
    finally:
        store.close()


def test_trend_names_the_version_change_at_the_change_point(tmp_path):
    upgrade_history(tmp_path / "h.db")
    store = Store(tmp_path / "h.db")
    try:
        found = {t.key.technique: t for t in trend.trends(trend.load_history(store, "nightly"))}
    finally:
        store.close()
    assert found["baseline"].changes == [] and found["baseline"].versions == []
    [change] = found["wireguard-go"].changes
    assert change.run_id == f"n{UPGRADE_AT:02d}" and change.kind == "progression"
    assert change.version_change == f"wireguard-go 0.0.20220316 (debian) → {CURRENT_VERSION} (go1.27.3)"
    assert [v.label for v in found["wireguard-go"].versions] == ["wireguard-go 0.0.20220316 (debian)",
                                                                 f"wireguard-go {CURRENT_VERSION} (go1.27.3)"]

    [row] = [row for row in trend.summary_rows(list(found.values())) if row[1] == "wireguard-go"]
    assert row[2] == change.version_change  # the versions its runs ran, in turn
    assert re.fullmatch(rf"progression at run {UPGRADE_AT + 1} \(2026-03-08T02:00, \+7\d\d\.\d%\): "
                        + re.escape(change.version_change), row[-1]), row[-1]

    result = run_cli("trend", "--db", str(tmp_path / "h.db"), "--campaign", "nightly", "-o", str(tmp_path / "t.html"))
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert "1 change point(s) in 2 series" in said and "version" in said and "(go1.27.3)" in said
    page = (tmp_path / "t.html").read_text()
    assert f'<b class="version-change">wireguard-go 0.0.20220316 (debian) → {CURRENT_VERSION} (go1.27.3)</b>' in page
    assert '<table id="versions">' in page and page.count("<svg") == 1
    assert f"<td>wireguard-go</td><td>{row[2]}</td>" in page  # the versions its runs ran, in turn


def test_trend_of_one_version_throughout_names_it_and_no_change(tmp_path):
    upgrade_history(tmp_path / "h.db", upgrade=False)
    result = run_cli("trend", "--db", str(tmp_path / "h.db"), "--campaign", "nightly")
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert "0 change point(s) in 2 series" in said and "(debian)" in said and "→" not in said


def test_an_upgrade_long_before_a_step_is_not_named_at_it():
    ran = [ran_version(DEBIAN)] * 4 + [ran_version(CURRENT)] * 20
    assert trend.version_across(ran, 14) == ""
    assert trend.version_across(ran, 4) == version_change(ran[0], ran[-1])
    assert trend.version_across(ran, 5) == version_change(ran[0], ran[-1])  # the step placed a run late
    assert trend.versions_in_turn([None, *ran[:5], None]) == [ran[0], ran[-1]]


def test_versions_in_turn_name_each_implementation_where_it_begins():
    debian, current, boringtun = ran_version(DEBIAN), ran_version(CURRENT), DaemonVersion("boringtun", "0.7.1", "")
    assert in_turn([debian, current, boringtun, debian]) == (
        f"wireguard-go 0.0.20220316 (debian) → {CURRENT_VERSION} (go1.27.3) → boringtun 0.7.1 → "
        "wireguard-go 0.0.20220316 (debian)")
    history = [debian, current] * 3
    shown = trend.versions_text(trend.Trend(None, [], [], [], versions=history), most=3)
    assert shown == f"… → wireguard-go {CURRENT_VERSION} (go1.27.3) → 0.0.20220316 (debian) → {CURRENT_VERSION} (go1.27.3)"


def test_a_postgresql_archive_names_the_same_versions_as_an_sqlite_file(postgres, tmp_path):
    """Store.versioned_bringups matches the negotiated text before decoding it: the same on both engines."""
    url = postgres.create_database("versions")
    found = []
    for target in (tmp_path / "h.db", url):
        upgrade_history(target)
        store = Store(target)
        try:
            found.append([(t.key.technique, [v.label for v in t.versions], [c.version_change for c in t.changes])
                          for t in trend.trends(trend.load_history(store, "nightly"))])
            assert len(store.versioned_bringups("nightly")) == RUNS  # the baseline's bring-ups name none
        finally:
            store.close()
    assert found[0] == found[1]
    assert found[1][1][2] == [f"wireguard-go 0.0.20220316 (debian) → {CURRENT_VERSION} (go1.27.3)"]
