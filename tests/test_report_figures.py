"""The report's figures, cost and significance tables from hand-made records (no machine touched):
figures chosen by the shape of the data, a line never joining two sweep entries."""

import random
import re

import pytest
from PIL import Image

from report_records import TECHNIQUE_SHARE, preset, records, rtt_points, store_records, udp_trials
from vpnbench.store.records import Event, SeriesPoint
from vpnbench.views.report import render_with_figures, write_report


def campaign(techniques, impairments, measurements, repetitions=3) -> dict:
    return {"campaign": {"name": "hand", "repetitions": repetitions}, "testbed": {"router": True},
            "technique": [{"kind": k} for k in techniques], "impairment": impairments,
            "measurement": measurements}


@pytest.fixture(scope="module")
def s1():
    run, cells = records(preset("s1-impairments"))
    html, figures = render_with_figures(run, cells)
    return cells, html, figures  # how long that takes is bench/report.py's (it depends on the host)


def test_s1_draws_one_line_figure_per_sweep_entry_and_measurement(s1):
    cells, html, figures = s1
    assert len(cells) == 756
    lines = [f for f in figures if f.meta["type"] == "lines"]
    axes = {1: [float(v) for v in range(0, 101, 10)], 2: [float(v) for v in range(11)],
            3: [v / 2 for v in range(11)]}
    per_label = {"tcp": 1, "udp_400m_1300": 2, "ping": 1}  # headline metrics: udp draws sent and received
    for label, metrics in per_label.items():
        for entry, xs in axes.items():
            mine = [f for f in lines if f.caption.startswith(f"{label}:") and f.meta["entry"] == entry]
            assert len(mine) == metrics, (label, entry)
            for figure in mine:
                assert len(figure.meta["lines"]) == 7  # a line per technique
                for points in figure.meta["lines"].values():
                    # every point of a line lies on its own entry's axis: no line joins two entries
                    assert [round(x, 6) for x, _ in points] == pytest.approx(xs)
    assert {f.caption.split(" against ")[1].split(" (")[0] for f in lines} == {"delay", "jitter", "loss"}


def test_s1_named_networks_are_grouped_bars(s1):
    _, html, figures = s1
    bars = [f for f in figures if f.meta["type"] == "bars"]
    assert len(bars) == 4  # tcp, udp sent, udp received, ping
    for figure in bars:
        assert figure.meta["groups"] == ["s1-network-1", "s1-network-2", "s1-network-3"]
        assert len(figure.meta["bars"]) == 7
    # the summary repeats each measurement's headline bars (tcp, udp, ping): every technique under every network
    assert len(figures) == 16 and html.count("<svg") == 16 + 3 and html.count('<figure class="glance"') == 3


def test_s1_renders_with_contents_and_one_repetition_said_in_words(s1):
    _, html, _ = s1
    assert '<nav id="toc">' in html and html.count('<li><a href="#measurement-') == 3
    assert html.count('<section class="measurement"') == 3
    assert "One repetition per point: no test can tell a difference from noise" in html
    assert "<script" not in html and "<img" not in html and "<link" not in html  # self-contained
    # the headline cost at a glance: an impairment per row, a tunnel per column, 36 conditions
    tcp = html[html.index('<table class="glance">'):]
    tcp = tcp[:tcp.index("</table>")]
    assert tcp.count("<tr>") == 1 + 36 and tcp.split("<tr>")[1].count("<th>") == 1 + 6
    assert "throughput_bps against baseline" in tcp and tcp.count(" ×</td>") == 36 * 6


def test_delay_sweep_draws_a_line_per_technique_with_ci_bands():
    spec = campaign(["baseline", "wireguard", "openvpn"], [{"netem": "delay 0..20ms step 5ms"}],
                    [{"kind": "tcp", "duration": "2s"}])
    run, cells = records(spec)
    _, figures = render_with_figures(run, cells)
    (figure,) = [f for f in figures if f.meta["type"] == "lines"]
    assert set(figure.meta["lines"]) == {"baseline", "wireguard", "openvpn"}
    assert figure.meta["bands"] == ["baseline", "wireguard", "openvpn"]  # 3 repetitions: a 95 % CI each
    assert all([x for x, _ in points] == [0, 5, 10, 15, 20] for points in figure.meta["lines"].values())
    assert figure.meta["log"]  # the baseline is over 20 times openvpn: log y
    assert figure.svg.count("opacity: 0.2") >= 3


def test_cost_significance_and_quality_in_the_tables():
    spec = campaign(["baseline", "wireguard"], [], [{"kind": "tcp", "duration": "2s"}, {"kind": "ping", "count": 5}],
                    repetitions=5)
    run, cells = records(spec)
    for cell in cells:
        if cell.measurement == "ping":
            cell.hosts["server"]["samples"] = 1  # a CPU figure without basis
    html, _ = render_with_figures(run, cells)
    assert "0.0" in html and " ×</td>" in html  # wireguard's throughput as a ratio to the baseline
    assert "Fieller" in html and " ms</td>" in html  # the ping RTT as a difference in ms
    assert "welch t" in html or "mann whitney u" in html
    assert "p (Holm)" in html and "hedges g" in html
    assert "baseline higher" in html  # 0.09 × is real
    assert "insufficient basis" in html and "untrusted" in html
    ping = html[html.index('<section class="measurement" id="measurement-2"'):]
    ping = ping[:ping.index("</section>")]
    for table in ("costs", "significance"):  # server CPU of ping: never a number
        body = ping[ping.index(f'<table class="{table}"'):]
        rows = [r for r in body[:body.index("</table>")].split("<tr>") if "server_cpu_pct" in r]
        assert rows and all("insufficient basis" in r and "points" not in r for r in rows), table
    assert html.count('<span class="badge q-ok">ok</span>') >= 2
    tcp = html[html.index('<section class="measurement" id="measurement-1"'):html.index('id="measurement-2"')]
    assert "client CPU-s/GiB" in tcp and "client CPU-s/GiB" not in ping  # efficiency where bytes moved
    assert "client_cpu_s_per_gib" in tcp and "s/GiB</td>" in tcp  # its cost against the baseline


def test_same_ceiling_trips_the_methodology_check_and_a_clean_run_stays_silent():
    spec = campaign(["baseline", "wireguard"], [], [{"kind": "tcp", "duration": "2s"}])
    run, cells = records(spec)
    html, _ = render_with_figures(run, cells)
    assert 'id="no-warnings"' in html
    assert 'data-code="one_direction"' in html  # a note (no reverse tcp), not a warning
    rng = random.Random(3)
    for cell in cells:  # both plateau at 50 Mbit/s: a limit outside the tunnel sets the number
        cell.metrics["throughput_bps"] = 50e6 * rng.gauss(1, 0.002)
    html, _ = render_with_figures(run, cells)
    assert 'data-code="same_ceiling_as_baseline"' in html and 'id="no-warnings"' not in html
    assert html.index('id="methodology"') < html.index('<section class="measurement"')


def test_udp_sweep_cdf_and_time_series_from_the_store(tmp_path):
    spec = campaign(["baseline", "wireguard"], [], [{"kind": "tcp", "duration": "30s"}, {"kind": "ping", "count": 50}],
                    repetitions=2)
    run, cells = records(spec)
    rng = random.Random(4)
    sweep = []
    for cell in [c for c in cells if c.measurement == "tcp"]:
        twin = type(cell)(**{**cell.__dict__, "cell_key": cell.cell_key + "s", "measurement": "udp_sweep",
                             "measurement_label": "udp_sweep", "measurement_params": {"kind": "udp_sweep"},
                             "metrics": {"knee_bps": 8e8 * TECHNIQUE_SHARE[cell.technique]}})
        sweep.append(twin)
    trials = {c.cell_key: udp_trials(c.metrics["knee_bps"], rng) for c in sweep}
    series = {c.cell_key: rtt_points(0.1, rng) for c in cells if c.measurement == "ping"}
    series.update({c.cell_key: [SeriesPoint("throughput_bps", t, 9e8 + rng.random()) for t in range(30)]
                   + [SeriesPoint("cpu_pct", t, 40.0, "client") for t in range(30)]
                   for c in cells if c.measurement == "tcp"})
    db = tmp_path / "hand.db"
    store_records(db, run, cells + sweep, trials, series)
    from vpnbench.store.database import Store
    store = Store(db)
    tcp_cell = next(c for c in store.cells(run.run_id) if c.measurement == "tcp")
    store.add_event(Event(run.run_id, "rekey", "2026-01-01T00:00:10", {}, cell_id=tcp_cell.id, t=10.0))
    html, figures = render_with_figures(store.run(run.run_id), store.cells(run.run_id), data=store)
    store.close()

    (curve,) = [f for f in figures if f.meta["type"] == "received_vs_offered"]
    assert curve.meta["lines"] == ["baseline", "wireguard"]
    assert curve.meta["knees"] == {"baseline": 8e8, "wireguard": 8e8 * 0.09}
    assert "knee 800" in curve.svg and "knee 72" in curve.svg
    (rtt,) = [f for f in figures if f.meta["type"] == "cdf"]
    assert rtt.meta["lines"] == ["baseline", "wireguard"]
    timeseries = [f for f in figures if f.meta["type"] == "timeseries"]
    assert len(timeseries) == 2  # 30 s cells: one per technique, not one per cell
    assert timeseries[0].meta["panels"] == ["throughput_bps", "cpu_pct"] and timeseries[0].meta["events"] == ["rekey"]
    assert "rekey" in timeseries[0].svg


def test_measurement_scaling_and_two_swept_axes_as_heatmaps():
    spec = campaign(["baseline", "wireguard"], [{"netem": "delay 0..10ms step 5ms"}],
                    [{"kind": "tcp", "duration": "2s", "streams": n} for n in (1, 2, 4)], repetitions=2)
    run, cells = records(spec)
    html, figures = render_with_figures(run, cells)
    heatmaps = [f for f in figures if f.meta["type"] == "heatmap"]
    assert [f.meta["technique"] for f in heatmaps] == ["baseline", "wireguard"]
    assert heatmaps[0].meta["x"] == [0, 5, 10] and heatmaps[0].meta["y"] == [1, 2, 4]
    assert any(f.meta["type"] == "lines" and "against streams" in f.caption for f in figures)
    assert 'id="scaling"' in html


def test_figures_are_written_as_svg_and_png_for_papers(tmp_path):
    spec = campaign(["baseline", "wireguard"], [{"netem": "delay 0..10ms step 5ms"}, {"profile": "s1-network-2"}],
                    [{"kind": "tcp", "duration": "2s"}])
    run, cells = records(spec)
    store_records(tmp_path / "r.db", run, cells)
    write_report(tmp_path / "r.db", tmp_path / "r.html", figures=tmp_path / "figures")
    svgs, pngs = sorted((tmp_path / "figures").glob("*.svg")), sorted((tmp_path / "figures").glob("*.png"))
    assert len(svgs) == len(pngs) == 2  # the delay sweep's lines, the named network's bars
    assert Image.open(pngs[0]).size[0] > 300
    assert (tmp_path / "r.html").read_text().count("<svg") == 2 + 1  # and the bars again in the summary


def test_figures_directory_in_a_missing_directory_is_one_line(tmp_path):
    from conftest import run_cli

    run, cells = records(campaign(["baseline"], [], [{"kind": "tcp", "duration": "2s"}], repetitions=1))
    store_records(tmp_path / "r.db", run, cells)
    result = run_cli("report", str(tmp_path / "r.db"), "-o", str(tmp_path / "r.html"),
                     "--figures", str(tmp_path / "no" / "figures"))
    assert result.returncode == 2
    assert result.stderr.strip() == f"vpnbench: error: --figures: directory {str(tmp_path / 'no')!r} does not exist"
    assert not (tmp_path / "r.html").exists()


def test_s1_report_opens_in_a_browser(s1, tmp_path):
    from test_report import browse

    _, html, figures = s1
    (tmp_path / "s1.html").write_text(html)
    dom = browse(tmp_path / "s1.html", tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    assert "756 of 756 cells ok" in page
    glance = page.count('<figure class="glance"')  # the summary repeats each measurement's headline bars
    assert page.count("<figure") - glance == len(figures) == 16 and glance == 3
    assert page.count('data-type="lines"') == 12 and page.count('data-type="bars"') == 4 + glance
    assert page.count("<li><a href=") == 5 + 3  # contents: 5 fixed sections (no failed cells) and 3 measurements


def test_bars_go_logarithmic_when_an_error_bar_would_flatten_the_smallest_bar():
    """Means 16 times apart (under LOG_SPREAD), but the slow one's interval reaches 100 times the
    fast one: on a linear axis the fast bar was 1.8 px (a slow host's demo report, issue 22)."""
    import pandas as pd

    from vpnbench.views.report.figures import Canvas, grouped_bars

    def draw(ci):
        rows = pd.DataFrame({"technique": ["baseline", "wireguard"], "impairment": ["none", "none"],
                             "mean": [0.03, 0.5], "ci95": [0.001, ci]})
        return grouped_bars(Canvas(), rows, ["none"], "RTT (ms)", 1.0, "ping", "ping rtt", {}, log=True).meta["log"]

    assert draw(2.5) is True  # the axis reaches 3.0: 100 x the baseline's bar
    assert draw(0.05) is False  # 0.55 / 0.03 = 18: the baseline's bar is a bar on a linear axis


def test_a_bar_with_no_value_is_marked_not_left_empty():
    """A censored p95 (a set-up not up within its timeout) has no mean: among several networks its
    slot was empty, read as 0 or as a bar too small to see (the mesh rehearsal's set-up p95). Now a
    cross in the technique's colour, the caption saying what it means, its name unchanged."""
    import pandas as pd

    from vpnbench.views.report.figures import Canvas, grouped_bars

    def draw(innernet_high):
        rows = pd.DataFrame({"technique": ["baseline", "baseline", "innernet", "innernet"],
                             "impairment": ["none", "mesh-high", "none", "mesh-high"],
                             "mean": [0.007, 0.02, 10.9, innernet_high], "ci95": [None] * 4})
        return grouped_bars(Canvas(), rows, ["none", "mesh-high"], "set-up (ms)", 1e3, "setup",
                            "setup: p95 per technique and network", {}, log=True)

    figure = draw(float("nan"))
    assert figure.meta["no_value"] == [("innernet", "mesh-high")]
    assert 'id="no-value-1-1"' in figure.svg and "no-value-0" not in figure.svg
    assert figure.caption.endswith("×: no value there (failed, or a percentile beyond its timeout: the table says which)")
    complete = draw(12.7)
    assert complete.meta["no_value"] == [] and "no-value" not in complete.svg
    assert complete.caption == "setup: p95 per technique and network"
    assert Canvas()._name(figure.caption) != Canvas()._name(complete.caption)  # hence named before the note
    assert draw(float("nan")).name == complete.name


def test_thirteen_techniques_get_thirteen_colours():
    """The mesh preset's 13 techniques side by side: each bar series its own colour (matplotlib's
    default cycle has ten, and the eleventh series came back in the first one's blue)."""
    spec = campaign(["baseline"], [{"netem": ""}], [{"kind": "tcp", "duration": "2s"}], repetitions=1)
    spec["technique"] += [{"kind": "wireguard", "label": f"wg{n}"} for n in range(12)]
    run, cells = records(spec)
    _, figures = render_with_figures(run, cells)
    (bars,) = [f for f in figures if f.meta["type"] == "bars" and "throughput" in f.name]
    fills = re.findall(r'<path d="M [^"]*"\s+clip-path="[^"]*"\s+style="fill: (#[0-9a-f]{6})', bars.svg)
    assert len(set(fills)) == 13, sorted(set(fills))
