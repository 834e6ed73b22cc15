"""The report as a person reads it in Chromium (issue 22 item 10), for the demo campaign and the
S1 rehearsal: the records are hand-made in the shape of `run demo --rehearse` and `run
s1-impairments --rehearse` (a real S1 rehearsal brings up 7 techniques under 9 impairments:
too long for a test; test_report.py checks the same on a real demo run), written to a real
results file, rendered by `write_report` and measured inside headless Chromium."""

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from report_browser import check_readable, run_in_page, screenshot
from report_records import campaign_records, preset, store_records
from vpnbench.campaign.spec import campaign_from_dict, rehearsal
from vpnbench.store.database import Store
from vpnbench.store.records import Bringup
from vpnbench.views.report import write_report


def loaded_machine(cells) -> None:
    """Cells as a shared, loaded machine leaves them: some with too few monitor samples, some with
    CPU steal, so that quality verdicts come with reasons (the paragraphs that made tables wide)."""
    for number, cell in enumerate(cells):
        for host in cell.hosts.values():
            if number % 3 == 0:
                host["samples"] = 2
            if number % 4 == 0:
                host["cpu_steal_pct"] = host["steal_pct"] = 9.0


def rehearsed(name: str, tmp_path):
    run, cells = campaign_records(rehearsal(campaign_from_dict(preset(name))), repetitions=3 if name == "demo" else 1)
    run.started_at, run.finished_at = "2026-01-01T10:00:03.123456+00:00", "2026-01-01T10:04:41.654321+00:00"
    run.environment = {"vpnbench": "test", "backends": {"baseline": "kernel", "wireguard": "userspace"},
                       "testbed": {"kind": "local", "router": True, "cores": [0, 1]},
                       "sysctls_applied_at": "2026-01-01T10:00:04.000123+00:00"}
    loaded_machine(cells)
    wireguard = next(c.technique for c in cells if c.technique_params.get("kind") == "wireguard")  # mesh: labelled
    for cell in cells:
        if cell.technique == wireguard and cell.measurement == "tcp":  # wireguard-go beside a fast kernel path
            cell.metrics["throughput_bps"] /= 5
    tcp = next(c for c in cells if c.technique == wireguard and c.measurement == "tcp")
    tcp.metrics["sender_throughput_bps"] = tcp.metrics["throughput_bps"] * 1.3  # one finding of one check
    store_records(tmp_path / f"{name}.db", run, cells)
    html = tmp_path / f"{name}.html"
    write_report(tmp_path / f"{name}.db", html)
    return html


@pytest.mark.parametrize("name", ["demo", "s1-impairments", "mesh"])
def test_rehearsal_report_reads_well_in_chromium(name, tmp_path):
    html = rehearsed(name, tmp_path)
    page = html.read_text()
    sizes = check_readable(html, tmp_path)  # no table wider than the page, every bar >= 3 px tall
    assert len(sizes["tables"]) >= 6 and sizes["page"] == 1280
    throughput = [f for f in sizes["bars"] if f["name"].startswith("tcp-throughput")]
    assert throughput and len(throughput[0]["bars"]) >= 2  # every technique's bar, measured
    assert "throughput (Mbit/s) (log scale)" in page  # wireguard at 1/50 of the baseline: a log axis

    # The quality column: a badge per row; the reasons only inside a closed <details>.
    results = re.findall(r'<table class="results".*?</table>', page, re.S)
    assert results and all("<details open" not in t for t in results)
    # A monitor's sample shortfall is a reason (the CPU figures' basis), never "untrusted" for the row's
    # throughput and RTTs (issue 45); 9 % steal is below the limit, so nothing here is untrusted.
    # (at n = 1 no verdict: "–", its reasons still behind the badge)
    assert re.search(r'<summary class="badge q-(ok|noisy|–)"[^>]*>(ok|noisy|–) \(\d+\)</summary>', page)
    assert "q-untrusted" not in page.split("</style>")[1]
    assert page.count('class="reasons"') == page.count('<td class="quality"><details>')
    # The environment in words: no JSON, no fractions of a second anywhere on the page.
    environment = re.search(r'<table id="environment">.*?</table>', page, re.S).group(0)
    assert "{" not in environment and "kind: local" in environment and "wireguard: userspace" in environment
    assert "cores: 0, 1" in environment
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", page)
    assert "2026-01-01 10:00:03 UTC – 2026-01-01 10:04:41 UTC" in page
    # Every cell was ok: no "Failed cells" section, nor its entry in the contents.
    assert "Failed cells" not in page and 'id="failed-section"' not in page
    # A check with a single finding says it once.
    gap = re.findall(r'data-code="sender_receiver_gap">(.*?)</p>', page, re.S)
    assert len(gap) == 1 and page.count(gap[0].split("</b>: ")[-1]) == 1

    shot = screenshot(html, tmp_path)
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 4000)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # text, tables and bars, not a blank page


TECHNIQUES_TABLE = """<script>
const rows = [...document.querySelectorAll("#techniques tr")].slice(1);
const colour = e => getComputedStyle(e).color;
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify({
  screen: window.innerHeight,
  table: document.getElementById("techniques").getBoundingClientRect().toJSON(),
  rows: rows.map(r => ({technique: r.cells[0].textContent, height: r.getBoundingClientRect().height,
                        negotiated: r.cells[8].innerText, ok: r.cells[7].textContent, okColour: colour(r.cells[7])})),
  count: [colour(document.getElementById("cell-count")), document.getElementById("cell-count").textContent],
  unavailable: document.getElementById("unavailable-count") && colour(document.getElementById("unavailable-count"))});
document.body.appendChild(out);
</script>"""
BAD = (0xb3, 0x26, 0x1e)  # the report's colour of a failure (.bad)


def s1_with_real_bringups(tmp_path):
    """The S1 rehearsal's 189 cells (hand-made numbers) served by the bring-ups a real `run
    s1-impairments --rehearse` stored here (tests/data: strongSwan's negotiated SAs with every SPI and
    selector, OpenVPN's warning, and MACsec unavailable in this kernel: its 27 cells skipped)."""
    stored = json.loads((Path(__file__).parent / "data" / "s1_rehearsal_bringups.json").read_text())["bringups"]
    run, cells = campaign_records(rehearsal(campaign_from_dict(preset("s1-impairments"))), repetitions=1)
    store = Store(tmp_path / "s1.db")
    try:
        store.start_run(run)
        bringups = {}
        for fields in stored:
            bringup = Bringup(run.run_id, started_at=run.started_at, **fields)
            store.save_bringup(bringup)
            bringups[bringup.technique] = bringup
        for cell in cells:
            bringup = bringups[cell.technique]
            cell.id, cell.bringup_id = None, bringup.id
            cell.technique_params = {**cell.technique_params, "kind": bringup.kind, "backend": bringup.backend}
            if bringup.backend == "none":
                cell.status, cell.error, cell.metrics, cell.hosts = "skipped", bringup.error, {}, {}
            store.save_cell(cell)
    finally:
        store.close()
    html = tmp_path / "s1.html"
    write_report(tmp_path / "s1.db", html)
    return html


def test_s1_techniques_table_reads_on_one_screen(tmp_path):
    html = s1_with_real_bringups(tmp_path)
    page = html.read_text()
    seen = run_in_page(html, tmp_path, TECHNIQUES_TABLE)
    rows = {row["technique"]: row for row in seen["rows"]}
    assert len(rows) == 7
    # The whole table on one screen: each technique one short row, not a paragraph of SPIs.
    assert seen["table"]["height"] <= seen["screen"], seen["rows"]
    assert seen["table"]["right"] <= 1280  # and no wider than the page
    ipsec = rows["ipsec aes128gcm8"]
    assert ipsec["negotiated"].startswith(
        "IKEv2 AES_GCM_8-128 PRF_HMAC_SHA2_256 MODP_1024 · ESP AES_GCM_8-128 · tunnel · in UDP")
    assert "⚠" in ipsec["negotiated"] and "06efc5bf" not in ipsec["negotiated"]  # the SPI: behind the toggle
    assert "spi-in: 06efc5bf" in page and "all negotiated facts" in ipsec["negotiated"]
    # MACsec's 27 cells did not fail: this kernel has no MACsec. Said once, in no failure's colour.
    macsec = rows["macsec keying=mka"]
    assert macsec["ok"] == "unavailable here" and "kernel lacks MACsec" in macsec["negotiated"]
    assert page.count("kernel lacks MACsec") == 1
    assert page.count("uses modp1024") == 6  # each IPsec technique's warning: its badge's tooltip, behind the toggle
    assert seen["count"][1] == "162 of 162 cells ok" and seen["unavailable"]
    for colour in (macsec["okColour"], seen["count"][0], seen["unavailable"]):
        assert colour != f"rgb({BAD[0]}, {BAD[1]}, {BAD[2]})", colour

    # As a person sees it: no pixel of the failure colour anywhere in the table or the run's line.
    table = seen["table"]
    shot = Image.open(screenshot(html, tmp_path, height=int(table["bottom"]) + 50)).convert("RGB")
    assert shot.crop((0, 0, 1280, 150)).getcolors(1 << 20) and shot.crop((
        int(table["left"]), int(table["top"]), int(table["right"]), int(table["bottom"]))).getcolors(1 << 20)
    red = [colour for region in ((0, 0, 1280, 150), (int(table["left"]), int(table["top"]), int(table["right"]),
                                                     int(table["bottom"])))
           for _, colour in shot.crop(region).getcolors(1 << 20) if colour == BAD]
    assert not red
