"""The report as a person reads it in Chromium (issue 22 item 10), for the demo campaign and the
S1 rehearsal: the records are hand-made in the shape of `run demo --rehearse` and `run
s1-impairments --rehearse` (a real S1 rehearsal brings up 7 techniques under 9 impairments:
too long for a test; test_report.py checks the same on a real demo run), written to a real
results file, rendered by `write_report` and measured inside headless Chromium."""

import re

import pytest
from PIL import Image

from report_browser import check_readable, screenshot
from report_records import campaign_records, preset, store_records
from vpnbench.campaign.spec import campaign_from_dict, rehearsal
from vpnbench.report import write_report


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
    for cell in cells:
        if cell.technique == "wireguard" and cell.measurement == "tcp":  # wireguard-go beside a fast kernel path
            cell.metrics["throughput_bps"] /= 5
    tcp = next(c for c in cells if c.technique == "wireguard" and c.measurement == "tcp")
    tcp.metrics["sender_throughput_bps"] = tcp.metrics["throughput_bps"] * 1.3  # one finding of one check
    store_records(tmp_path / f"{name}.db", run, cells)
    html = tmp_path / f"{name}.html"
    write_report(tmp_path / f"{name}.db", html)
    return html


@pytest.mark.parametrize("name", ["demo", "s1-impairments"])
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
    assert re.search(r'<summary class="badge q-untrusted"[^>]*>untrusted \(\d+\)</summary>', page)
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
