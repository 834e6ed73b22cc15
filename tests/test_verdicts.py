"""The answers a run gives in the export and the terminal: cost relative to the run's baseline
(`relative`, the contract), significance marks and the methodology warnings of each cell."""

from pathlib import Path

from vpnbench.answers.verdicts import export_records, verdicts
from vpnbench.store.records import Bringup, Cell
from vpnbench.views.tables import summary_tables


def cell(technique, kind, throughput, repetition, sender=None):
    bringup = Bringup("r", technique, kind, "kernel", "t0", setup_time_s=0.1, id=1 if kind == "baseline" else 2)
    return Cell("r", "c", f"{technique}|none|tcp|{repetition}", technique, {"kind": kind, "backend": "kernel"},
                "none", {}, "tcp", "tcp", {"kind": "tcp"}, repetition, "t0", status="ok",
                metrics={"throughput_bps": throughput, "sender_throughput_bps": sender or throughput},
                hosts={"client": {"cpu_pct": 50.0}}, bringup_id=bringup.id, bringup=bringup, id=repetition)


def run_cells():
    base = [cell("baseline", "baseline", v, i) for i, v in enumerate((10e9, 10.2e9, 9.9e9, 10.1e9), 1)]
    wg = [cell("wireguard", "wireguard", v, i, sender=v * 1.2) for i, v in enumerate((5e8, 5.1e8, 4.9e8, 5.05e8), 1)]
    return base + wg


def test_export_carries_relative_to_the_baseline_and_the_warnings():
    records = export_records(run_cells())
    baseline, wireguard = records[0], records[4]
    assert "relative" not in baseline  # absent for the baseline itself
    assert abs(wireguard["relative"]["throughput_bps"] - 0.0499) < 0.001
    assert {w["code"] for w in wireguard["warnings"]} >= {"sender_receiver_gap"}  # sent 20 % more than received
    assert all(w["code"] != "sender_receiver_gap" for w in baseline["warnings"])


def test_no_baseline_no_relative():
    records = export_records([c for c in run_cells() if c.technique == "wireguard"])
    assert all("relative" not in r for r in records)


def test_terminal_table_shows_the_ratio_with_its_significance():
    from rich.console import Console

    console = Console(record=True, width=200, file=open("/dev/null", "w"))
    cells = run_cells()
    for table in summary_tables(cells, verdicts(cells)):
        console.print(table)
    text = console.export_text()
    assert "Mbit/s vs baseline" in text and "0.05 × *" in text


def test_datagrams_above_the_tunnel_mtu_are_flagged_as_fragmented():
    from vpnbench.answers.methodology import fragmentation

    def udp(technique, length, mtu):
        return {"technique": technique, "measurement_label": f"udp_{length}", "status": "ok",
                "measurement_params": {"kind": "udp", "length": length, "family": "ipv4"},
                "tunnel": {"interface": "wg0", "interface_mtu": mtu}}

    (warning,) = fragmentation([udp("wireguard", 1400, 1420), udp("wireguard", 1300, 1420), udp("baseline", 1400, 1500)])
    assert warning.code == "fragmentation" and "1428-byte packets" in warning.message
    assert "use length = 1392 or less" in warning.message


def test_efficiency_in_the_export_the_ratio_and_the_terminal():
    from rich.console import Console

    cells = run_cells()
    for c in cells:  # 2 s of traffic on a 2-core host half busy: 2 CPU-seconds
        c.measurement_params["duration"] = 2.0
        c.hosts["client"].update(cores=[0, 1], samples=20)
    records = export_records(cells)
    baseline, wireguard = records[0], records[4]
    assert abs(baseline["efficiency"]["client_cpu_s_per_gib"] - 2 / (10e9 * 2 / 8 / 2 ** 30)) < 1e-9
    assert abs(wireguard["efficiency"]["client_cpu_s_per_gib"] - 2 / (5e8 * 2 / 8 / 2 ** 30)) < 1e-9
    assert wireguard["relative"]["client_cpu_s_per_gib"] > 15  # 20 × the CPU per byte, less the noise
    console = Console(record=True, width=250, file=open("/dev/null", "w"))
    for table in summary_tables(cells):
        console.print(table)
    text = console.export_text()
    assert "CPU-s/GiB client/server" in text and "0.855 ± " in text and "17.1 ± " in text


def test_the_report_renders_the_runs_answers_and_recomputes_none():
    # Issue 18 item 6: the report reads the same Verdicts as the terminal and the export. Answers
    # altered after they were computed must appear as altered: nothing in the report recomputed them.
    from vpnbench.answers.methodology import MethodologyWarning
    from vpnbench.store.records import Run
    from vpnbench.views.report import render

    cells = run_cells()
    answers = verdicts(cells)
    throughput = (answers.relative["technique"] == "wireguard") & (answers.relative["metric"] == "throughput_bps")
    assert throughput.sum() == 1
    answers.relative.loc[throughput, "ratio"] = 0.777
    against = (answers.comparisons["a"] == "wireguard") & (answers.comparisons["metric"] == "throughput_bps")
    answers.comparisons.loc[against, "verdict"] = "a verdict only the answers know"
    answers.warnings = [MethodologyWarning("made_up", (), "a warning only the answers know")]
    run = Run("r", "c", {}, {"vpnbench": "test"}, "2026-01-01T00:00:00", "2026-01-01T00:01:00", "finished")
    html = render(run, cells, answers=answers)
    assert "0.78 ×" in html and "0.050 ×" not in html  # the true ratio is 0.050
    assert "a verdict only the answers know" in html
    assert "a warning only the answers know" in html and "sender_receiver_gap" not in html


def test_the_terminal_shows_one_screen_of_findings_and_points_to_the_report_for_the_rest(monkeypatch):
    from rich.console import Console

    from vpnbench import cli
    from vpnbench.answers.methodology import MethodologyWarning

    screen = Console(width=100, record=True)
    monkeypatch.setattr(cli, "console", screen)
    findings = [MethodologyWarning("core_saturated", (), f"finding {n}: " + "a core was busy; " * 8) for n in range(30)]
    cli.print_findings(findings, Path("study.html"), "study.db")
    lines = screen.export_text().splitlines()
    assert len(lines) <= cli.FINDING_LINES and "finding 0:" in lines[0]
    shown = sum(line.startswith("methodology: finding") for line in lines)
    assert lines[-1] == f"methodology: {30 - shown} more finding(s) in study.html"
    screen = Console(width=100, record=True)
    monkeypatch.setattr(cli, "console", screen)
    cli.print_findings(findings[:3], None, "study.db")
    assert screen.export_text().count("methodology:") == 3  # all fit: no pointer


def test_a_tunnel_beating_the_bare_path_by_more_than_one_and_a_half_is_flagged_where_it_shows():
    """The mesh rehearsal's TCP under mesh-medium: the baseline 16.1 Mbit/s, wireguard-go 75.2 (n = 1).
    A tunnel within 1.5x of the bare path is not flagged: a tunnel may match it, never carry far more."""
    slow_bare = [cell("baseline", "baseline", 16.1e6, 1)]
    far_above = [cell("wireguard", "wireguard", 75.2e6, 1)]
    records = export_records(slow_bare + far_above)
    [found] = [w for w in records[1]["warnings"] if w["code"] == "beats_bare_path"]
    assert "wireguard (none) 75.2 Mbit/s vs the baseline's 16.1 Mbit/s, n = 1 and 1" in found["message"]
    assert all(w["code"] != "beats_bare_path" for w in records[0]["warnings"])  # the baseline itself is not
    within = export_records(slow_bare + [cell("wireguard", "wireguard", 1.49 * 16.1e6, 1)])
    assert all(w["code"] != "beats_bare_path" for r in within for w in r["warnings"])
