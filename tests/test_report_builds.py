"""One technique's builds side by side (issue 42, item 5): where a run brings one kind up as
several techniques (the wireguard-versions preset), the report says which daemon each ran and
puts every ranked question's means beside the first build's, with the run's own tests' word on
each pair. Stored-shape records (report_records), no traffic."""

from report_records import daemon_build, preset, records
from vpnbench.answers.verdicts import verdicts
from vpnbench.store.records import Bringup
from vpnbench.views.report import render

CURRENT = "0.0.0-20260522210424-ecfc5a8d5446"
BUILT = {
    "wireguard-go debian": daemon_build("wireguard-go", "0.0.20220316"),
    "wireguard-go current": {"implementation": "wireguard-go", "version": CURRENT,
                             "build": {"name": "wireguard-go", "version": CURRENT, "toolchain": "go1.26.8"}},
    "boringtun": {"implementation": "boringtun", "version": "0.7.1",
                  "build": {"name": "boringtun", "version": "0.7.1", "toolchain": "rustc 1.95.0 (abc 2026-04-14)"}},
}
# throughput relative to the hand records' share for kind wireguard: Debian's build as slow as boringtun
SCALE = {"wireguard-go debian": 0.15, "wireguard-go current": 1.0, "boringtun": 0.15, "kernel": 1.0}


def versions_run():
    run, cells = records(preset("wireguard-versions"), repetitions=3)
    for cell in cells:
        kind = cell.technique_params["kind"]
        if kind == "wireguard":
            cell.technique_params["backend"] = "kernel" if cell.technique == "kernel" else "userspace"
            for metric in ("throughput_bps", "sender_throughput_bps"):
                if metric in cell.metrics:
                    cell.metrics[metric] *= SCALE[cell.technique]
        cell.bringup = Bringup(run.run_id, cell.technique, kind, cell.technique_params["backend"], run.started_at,
                               negotiated=BUILT.get(cell.technique, {}))
    return run, cells


def test_each_build_beside_the_first_with_the_daemon_it_ran_and_the_tests_word():
    run, cells = versions_run()
    (table,) = verdicts(cells).builds  # the baseline is one technique of its kind: no table of its own
    assert table.kind == "wireguard"
    assert table.techniques == ("wireguard-go debian", "wireguard-go current", "boringtun", "kernel")
    assert table.ran == ("wireguard-go 0.0.20220316 (debian)", f"wireguard-go {CURRENT} (go1.26.8)",
                         "boringtun 0.7.1 (rustc 1.95.0)", "kernel data path")
    tcp = next(row for row in table.rows if row.measurement_label == "tcp" and row.metric == "throughput_bps")
    debian, current, boringtun, kernel = tcp.means
    assert debian.verdict == "reference" and debian.ratio == 1.0
    assert 5 < current.ratio < 8 and current.verdict == "separated"  # 1 / 0.15, within the records' 3 % noise
    assert 5 < kernel.ratio < 8 and kernel.verdict == "separated"
    assert 0.9 < boringtun.ratio < 1.1 and boringtun.verdict == "not distinguishable"
    assert {row.measurement_label for row in table.rows} == {"tcp", "udp_10G_1300", "ping"}


def test_the_report_gives_the_builds_their_own_section_and_only_where_a_kind_ran_twice():
    run, cells = versions_run()
    html = render(run, cells)
    assert 'id="builds-wireguard"' in html and "wireguard: its builds side by side" in html
    section = html[html.index('<table class="builds" data-kind="wireguard">'):]
    section = section[:section.index("</table>")]
    assert "wireguard-go 0.0.20220316 (debian)" in section and "kernel data path" in section
    assert "Gbit/s" in section and "× n.d." in section  # boringtun beside Debian's wireguard-go: the tests do not tell them apart
    assert "href=\"#builds-wireguard\"" in html  # in the contents
    run, cells = records(preset("smoke"))  # one technique per kind
    assert verdicts(cells).builds == [] and "its builds side by side" not in render(run, cells)
    run, cells = records(preset("s1-impairments"), repetitions=2)  # IPsec six times, one daemon: settings, not builds
    assert len({c.technique for c in cells if c.technique_params["kind"] == "ipsec"}) > 1
    assert verdicts(cells).builds == []
