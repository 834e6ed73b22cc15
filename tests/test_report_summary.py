"""The report answers first (issue 45): a ranking of every technique under every impairment by
each headline metric, ties grouped by the run's own significance tests, what the run cannot
tell said once at the top, the names it uses spelt out, and figures that fit a 1400 px page.
Stored records shaped like runs (report_records), no traffic; the page as headless Chromium
lays it out."""

import gzip
import json
import re
import subprocess
from pathlib import Path

from report_browser import chromium_args
from report_records import campaign_records, preset, records, store_records
from vpnbench.answers.ranking import SEPARATED, failures
from vpnbench.answers.verdicts import verdicts
from vpnbench.campaign.spec import campaign_from_dict, rehearsal
from vpnbench.views.report import render, write_report

WIDTH, HEIGHT = 1400, 900
MESH_TECHNIQUES = len(preset("mesh")["technique"])  # every one ranked (15 since Yggdrasil joined)
DATA = Path(__file__).parent / "data"
MESH_PROFILES = ["none", "mesh-low", "mesh-medium", "mesh-high"]  # vpn-bench's since 4 Dec 2025
# The stored real rehearsal ran before: 9 techniques (no VpnCloud) under vpn-bench's four profiles of
# 21 Nov 2025, then named mesh-low ... mesh-extreme (now mesh-low-2025-11-21 ...).
STORED_TECHNIQUES = 9
STORED_PROFILES = ["none", "mesh-low", "mesh-medium", "mesh-high", "mesh-extreme"]

FIRST_SCREEN = """<script>
const page = document.documentElement.clientWidth;
const yOf = e => e ? e.getBoundingClientRect().top + window.scrollY : null;
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify({
  page, scroll: document.documentElement.scrollWidth,
  summary: yOf(document.getElementById("summary")),
  firstRanking: yOf(document.querySelector("table.ranking")),
  banner: yOf(document.getElementById("not-for-decisions")),
  figures: [...document.querySelectorAll("figure")].map(f => {
    const box = f.querySelector("svg").getBoundingClientRect();
    return {name: f.dataset.name, left: box.left, right: box.right}; })});
document.body.appendChild(out);
</script>"""


def in_chromium(html, tmp_path) -> dict:
    probe = tmp_path / f"{html.stem}-probe.html"
    probe.write_text(html.read_text().replace("</body>", FIRST_SCREEN + "\n</body>"))
    args = chromium_args(tmp_path, html.stem)
    args[-1] = f"--window-size={WIDTH},{HEIGHT}"
    dom = subprocess.run([*args, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.S)
    assert found, "the measuring script did not run"
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def mesh_report(tmp_path, repetitions: int, rehearse: bool = True):
    campaign = campaign_from_dict(preset("mesh"))
    run, cells = campaign_records(rehearsal(campaign) if rehearse else campaign, repetitions=repetitions)
    store_records(tmp_path / "mesh.db", run, cells)
    html = tmp_path / "mesh.html"
    write_report(tmp_path / "mesh.db", html)
    return html


def stored_mesh_report(tmp_path):
    """The report of a real `vpnbench run mesh --rehearse` (9 VPNs x 5 profiles x tcp, udp, ping,
    set-up; 180 cells, run 316edb on 2026-11-29, 2 cores, linkem), kept as test data."""
    db = tmp_path / "mesh.db"
    db.write_bytes(gzip.decompress((DATA / "mesh-rehearsal.db.gz").read_bytes()))
    html = tmp_path / "mesh.html"
    write_report(db, html)
    return html


def assert_answers_first(html, tmp_path, techniques: int = MESH_TECHNIQUES, profiles: list[str] = MESH_PROFILES,
                         medium: str = "delay 4ms 7ms loss 1% reorder 2.5% 50%") -> str:
    """What a reader of the mesh rehearsal sees at 1400 x 900 (issue 45): the banner, then the
    summary ranking every technique under every profile, no figure wider than the page."""
    page = html.read_text()
    measured = in_chromium(html, tmp_path)
    assert measured["page"] == WIDTH  # --hide-scrollbars: the whole window is the page
    # The summary, its first ranking and the banner are on the first screen at 1400 x 900.
    assert measured["summary"] is not None and measured["firstRanking"] < HEIGHT
    assert measured["banner"] is not None and measured["banner"] < measured["summary"]
    assert "Not for decisions." in page
    # No figure wider than the page, nor the page scrolling sideways.
    assert measured["figures"] and measured["scroll"] <= measured["page"]
    wide = [f for f in measured["figures"] if f["right"] > measured["page"] + 0.5 or f["left"] < -0.5]
    assert not wide, wide
    # Every technique is ranked under every profile (tcp throughput, RTT, CPU-s/GiB).
    for metric in ("throughput_bps", "rtt_avg_ms", "client_cpu_s_per_gib"):
        tables = re.findall(rf'<table class="ranking" data-label="[^"]+" data-metric="{metric}">.*?</table>', page, re.S)
        assert tables, metric
        rows = re.findall(r'<tr data-impairment="([^"]+)">(.*?)</tr>', tables[0], re.S)
        assert [name for name, _ in rows] == profiles
        for _, row in rows:
            assert row.count('<span class="technique">') == techniques and "<td class=\"num\">1</td>" in row
    # The names it uses: each profile's netem spec.
    assert f"<dt>mesh-medium</dt><dd>netem <code>{medium}</code>" in page
    # The profiles' own loss: said once, not a finding about a technique.
    assert f'id="inevitable-loss">Loss under {", ".join(profiles[1:])} ' in page
    # n = 1: no "ok" verdict a reader could take for a judgement.
    assert '<span class="badge q-ok">ok</span>' not in page
    return page


def test_mesh_rehearsal_opens_with_a_ranking_of_every_technique_under_every_profile(tmp_path):
    page = assert_answers_first(mesh_report(tmp_path, repetitions=1), tmp_path)
    # The fixed-rate UDP test every hand-made technique carried: said once, not ranked.
    assert "not ranked: every technique delivered the offered rate" in page


def test_the_stored_real_mesh_rehearsal_answers_first(tmp_path):
    page = assert_answers_first(stored_mesh_report(tmp_path), tmp_path, STORED_TECHNIQUES, STORED_PROFILES,
                                "delay 25ms 7ms loss 1% reorder 2.5% 50%")
    # Real daemons under the lossy profiles fell short of 100 Mbit/s: that UDP test is ranked.
    assert re.search(r'<table class="ranking" data-label="udp_100M_1200" data-metric="throughput_bps">', page)


def test_no_banner_with_three_repetitions(tmp_path):
    spec = {"campaign": {"name": "three", "repetitions": 3}, "technique": [{"kind": "baseline"}, {"kind": "wireguard"}],
            "measurement": [{"kind": "tcp", "duration": "2s"}]}
    run, cells = records(spec)
    assert "not-for-decisions" not in render(run, cells)
    run, cells = records(spec, repetitions=2)
    assert 'id="not-for-decisions"' in render(run, cells) and "rest on n = 2" in render(run, cells)


def test_ties_are_grouped_by_the_significance_verdicts(tmp_path):
    """Three repetitions: wireguard and ipsec indistinguishable (means 1 % apart, spread 1 %),
    openvpn clearly slower (half): the ranking is baseline › wireguard = ipsec › openvpn, and each
    boundary is what the comparisons between those neighbours said."""
    spec = {"campaign": {"name": "ties", "repetitions": 3},
            "technique": [{"kind": k} for k in ("baseline", "wireguard", "ipsec", "openvpn")],
            "measurement": [{"kind": "tcp", "duration": "2s"}]}
    run, cells = records(spec)
    given = {"baseline": [900, 905, 895], "wireguard": [400, 404, 396], "ipsec": [402, 398, 405],
             "openvpn": [200, 203, 197]}
    for cell in cells:
        cell.metrics["throughput_bps"] = given[cell.technique][cell.repetition - 1] * 1e6
    answers = verdicts(cells)
    [ranking] = [r for r in answers.rankings if r.metric == "throughput_bps"]
    groups = [[p.technique for p in g] for g in ranking.groups]
    assert [sorted(g) for g in groups] == [["baseline"], ["ipsec", "wireguard"], ["openvpn"]]
    assert ranking.why_tied == ("", "not distinguishable", "")
    said = {frozenset((r.a, r.b)): r.verdict for r in answers.comparisons.itertuples() if r.metric == "throughput_bps"}
    assert said[frozenset(groups[1])] == "not distinguishable"
    assert said[frozenset((groups[1][-1], "openvpn"))].endswith(" higher")
    html = render(run, cells)
    tied = re.findall(r'<span class="place tied"[^>]*>(.*?)</span></span>', html)
    assert any("wireguard" in t and "ipsec" in t and "openvpn" not in t for t in tied)
    assert "not-for-decisions" not in html


def test_failures_are_counted_per_technique_and_measurement_over_impairments():
    run, cells = campaign_records(rehearsal(campaign_from_dict(preset("mesh"))), repetitions=1)
    for cell in cells:
        if cell.technique == "tinc" and cell.measurement == "setup" and cell.impairment in MESH_PROFILES[2:]:
            cell.status, cell.error = "failed", "no handshake"
    assert failures(cells) == ["tinc: setup failed under 2 of 4 impairments (mesh-medium, mesh-high)"]
    html = render(run, cells)
    assert html.index("tinc: setup failed under 2 of 4 impairments") < html.index('<section id="summary">')


def test_the_impossible_and_the_studies_are_said_at_the_top():
    """A tunnel at 2x the bare path under a profile (beats_bare_path) is flagged above the summary;
    a campaign that names S1 has it spelt out."""
    run, cells = records(preset("s1-impairments"), repetitions=1)
    for cell in cells:
        if cell.technique == "wireguard" and cell.measurement == "tcp" and cell.impairment == "s1-network-2":
            bare = next(c for c in cells if c.technique == "baseline" and c.measurement_label == cell.measurement_label
                        and c.impairment == cell.impairment)
            cell.metrics["throughput_bps"] = 2 * bare.metrics["throughput_bps"]
    html = render(run, cells)
    flagged = re.search(r'<p class="warning impossible" data-code="beats_bare_path"><b>Should be impossible</b>: '
                        r'[^<]*wireguard \(s1-network-2\)', html)
    assert flagged and flagged.start() < html.index('<section id="summary">')
    assert "S1 = Network encryption techniques on Raspberry Pi 4" in html
    assert "<dt>s1-network-2</dt><dd>netem <code>delay 80ms 10ms loss 1%</code>" in html


def test_a_real_three_repetition_run_groups_ties_by_its_own_verdicts(tmp_path, clean_machine):
    """A real run (no records made by hand): baseline and wireguard-go twice under two labels,
    tcp and ping, three repetitions. Each ranking's groups are what the run's comparisons said:
    neighbours in one group were not told apart, neighbours in two were; the report shows them."""
    from conftest import run_campaign

    text = """[campaign]
name = "three"
repetitions = 3
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
label = "wg-a"
[[technique]]
kind = "wireguard"
label = "wg-b"
[[measurement]]
kind = "tcp"
duration = "2s"
[[measurement]]
kind = "ping"
count = 20
interval = "0.02s"
"""
    run_campaign(tmp_path, text)
    from vpnbench.store.database import Store

    store = Store(tmp_path / "c.db", read_only=True)
    [run] = store.runs()
    cells = store.cells(run.run_id)
    store.close()
    answers = verdicts(cells)
    said = {(r.measurement_label, r.metric, frozenset((r.a, r.b))): r.verdict for r in answers.comparisons.itertuples()}
    rankings = [r for r in answers.rankings if r.metric in ("throughput_bps", "rtt_avg_ms")]
    assert {r.metric for r in rankings} == {"throughput_bps", "rtt_avg_ms"}
    for ranking in rankings:
        assert sorted(ranking.techniques) == ["baseline", "wg-a", "wg-b"] and ranking.n == (3, 3)
        groups = [[p.technique for p in group] for group in ranking.groups]
        for group, why in zip(groups, ranking.why_tied):
            for a, b in zip(group, group[1:]):  # joined: their test did not separate them
                verdict = said[(ranking.measurement_label, ranking.metric, frozenset((a, b)))]
                assert not verdict.endswith(SEPARATED) and verdict == why, (groups, verdict)
        for upper, lower in zip(groups, groups[1:]):  # split: their test did
            verdict = said[(ranking.measurement_label, ranking.metric, frozenset((upper[-1], lower[0])))]
            assert verdict.endswith(SEPARATED), (groups, verdict)
    html = render(run, cells)
    assert "not-for-decisions" not in html and html.index('<section id="summary">') < html.index('id="methodology"')


def test_a_technique_past_its_timeout_is_named_after_the_ranking_not_left_out(tmp_path):
    """Set-up under loss: tinc never up within the timeout (every repetition censored), wireguard
    once in three; neither has a mean, so the ranking names them after its places, with how often."""
    spec = {"campaign": {"name": "censored", "repetitions": 3},
            "technique": [{"kind": k} for k in ("baseline", "wireguard", "ipsec", "tinc")],
            "measurement": [{"kind": "setup", "count": 5}]}
    run, cells = records(spec)
    for cell in cells:
        if cell.technique == "tinc" or (cell.technique == "wireguard" and cell.repetition == 2):
            del cell.metrics["setup_p50_s"]
            cell.metrics["setup_p50_s_censored"] = 1
    [ranking] = [r for r in verdicts(cells).rankings if r.metric == "setup_p50_s"]
    assert set(ranking.techniques) == {"baseline", "ipsec"}
    assert ranking.beyond_timeout == (("wireguard", 1, 3), ("tinc", 3, 3))
    row = re.search(r'<table class="ranking" data-label="[^"]+" data-metric="setup_p50_s">.*?</table>',
                    render(run, cells), re.S).group(0)
    assert '<span class="place beyond"' in row
    assert "wireguard (1 of 3 beyond the timeout)" in row and "tinc (never within the timeout)" in row
