"""The aggregation behind the report (pure functions on hand-made cells)."""

import math

import pytest

from vpnbench.answers.analysis import metric_frame, summarize, t95
from vpnbench.store.records import Bringup, Cell, Run
from vpnbench.views.report import render
from vpnbench.views.report.figures import sweep_axis

BRINGUP = Bringup("r1", "wg", "wireguard", "userspace", "t0", setup_time_s=0.2, wire_check={"verdict": "encrypted"},
                  id=1)


def cell(technique, value, repetition=1, status="ok", impairment="none", delay_us=0.0, label="tcp"):
    spec = {"delay_us": delay_us, "loss_pct": 0.0}
    return Cell("r1", "c", f"{technique}|{impairment}|{label}|{repetition}", technique,
                {"kind": technique, "backend": "userspace"}, impairment, {"egress_spec": spec, "ingress_spec": spec},
                "tcp", label, {"kind": "tcp"}, repetition, "t0", status=status,
                error=None if status == "ok" else "iperf3 refused",
                metrics={"throughput_bps": value, "note": "text is not a metric"},
                hosts={"client": {"cpu_pct": 10.0 * repetition, "cpu_per_core_pct": [10.0 * repetition], "cores": [0]},
                       "server": {"cpu_pct": 5.0}}, bringup_id=1, bringup=BRINGUP)


def test_t95_is_students_t_at_every_df():
    # the printed table's values (three decimals), and past 30 df no switch to the normal 1.960
    assert [round(t95(df), 3) for df in (1, 2, 30, 31, 120)] == [12.706, 4.303, 2.042, 2.040, 1.980]
    assert math.isnan(t95(0))


def test_summary_mean_sd_ci_and_failed_cells_left_out():
    cells = [cell("wg", v, rep) for rep, v in enumerate((1e9, 2e9, 3e9), start=1)]
    cells.append(cell("wg", 100e9, 4, status="failed"))
    summary = summarize(metric_frame(cells)).set_index("metric")
    row = summary.loc["throughput_bps"]
    assert row["n"] == 3 and row["mean"] == 2e9 and row["median"] == 2e9
    assert row["sd"] == pytest.approx(1e9)
    assert row["ci95"] == pytest.approx(4.303 * 1e9 / math.sqrt(3), rel=1e-4)  # t(0.975, 2) = 4.30265
    assert summary.loc["client_cpu_pct"]["mean"] == pytest.approx(20.0)
    assert "note" not in summary.index  # only numbers are metrics
    assert summary.loc["setup_time_s"]["mean"] == pytest.approx(0.2)  # the bring-up's, as the export has it


def test_one_repetition_has_no_interval():
    row = summarize(metric_frame([cell("wg", 1e9)])).set_index("metric").loc["throughput_bps"]
    assert row["n"] == 1 and math.isnan(row["sd"]) and math.isnan(row["ci95"])


def test_sweep_axis_found_only_when_one_field_varies():
    swept = [cell("wg", 1e9, impairment=f"delay {d}ms", delay_us=d * 1000.0) for d in (0, 10, 20)]
    title, values = sweep_axis(swept)
    assert title == "delay (ms)" and values == {"delay 0ms": 0.0, "delay 10ms": 10.0, "delay 20ms": 20.0}
    mixed = swept + [cell("wg", 1e9, impairment="lossy")]
    mixed[-1].impairment_params["egress_spec"] = {"delay_us": 0.0, "loss_pct": 1.0}
    assert sweep_axis(mixed) is None  # two fields vary: drawn as categories


def test_render_escapes_and_lists_failures():
    cells = [cell("wg <b>", 1e9), cell("wg <b>", 2e9, 2, status="failed")]
    run = Run("abc", "c", {"campaign": {}}, {"kernel": "6.1"}, "t0", "t1", "finished")
    html = render(run, cells)
    assert "wg &lt;b&gt;" in html and "wg <b>" not in html
    assert "1 of 2 cells ok" in html and "iperf3 refused" in html
    assert html.count("<svg") >= 2


def setup_cell(technique, repetition, metrics, impairment="loss 30%"):
    return Cell("r1", "c", f"{technique}|{impairment}|setup|{repetition}", technique,
                {"kind": technique, "backend": "userspace"}, impairment, {}, "setup", "setup", {"kind": "setup"},
                repetition, "t0", status="ok", metrics={"cycles": 5.0, **metrics}, hosts={}, bringup_id=1,
                bringup=BRINGUP)


def test_a_repetition_whose_median_was_censored_is_counted_never_dropped():
    """3 repetitions of a set-up under loss: the first packet's median known in two (0.1, 0.3 s),
    above the timeout in the third. Averaging the two that finished said 0.2 s (n = 2 of 3); the
    third ranks above both: n = 3, the median is the second-ranked 0.3 s, no mean."""
    cells = [setup_cell("ipsec", 1, {"first_packet_p50_s": 0.1, "setup_p50_s": 0.5}),
             setup_cell("ipsec", 2, {"first_packet_p50_s": 0.3, "setup_p50_s": 0.9}),
             setup_cell("ipsec", 3, {"first_packet_p50_s_censored": 1.0, "setup_p50_s_censored": 1.0}),
             setup_cell("wg", 1, {"first_packet_p50_s": 0.4}), setup_cell("wg", 2, {"first_packet_p50_s": 0.6})]
    summary = summarize(metric_frame(cells)).set_index(["technique", "metric"])
    row = summary.loc[("ipsec", "first_packet_p50_s")]
    assert (row["n"], row["censored"], row["median"]) == (3, 1, 0.3) and math.isnan(row["mean"]), row
    assert math.isnan(row["sd"]) and math.isnan(row["ci95"])
    assert ("ipsec", "first_packet_p50_s_censored") not in summary.index
    wg = summary.loc[("wg", "first_packet_p50_s")]  # nothing censored: as before
    assert (wg["n"], wg["censored"], wg["mean"]) == (2, 0, pytest.approx(0.5))
    # two of four censored: the median falls between a known one and a censored one: not given
    cells = [setup_cell("ipsec", n, {"handshake_p50_s": 0.05 * n}) for n in (1, 2)]
    cells += [setup_cell("ipsec", n, {"handshake_p50_s_censored": 1.0}) for n in (3, 4)]
    row = summarize(metric_frame(cells)).set_index(["technique", "metric"]).loc[("ipsec", "handshake_p50_s")]
    assert (row["n"], row["censored"]) == (4, 2) and math.isnan(row["median"]) and math.isnan(row["mean"])
    # every repetition censored: the group is still there, n = 2, nothing known
    cells = [setup_cell("ipsec", n, {"setup_p50_s_censored": 1.0}) for n in (1, 2)]
    row = summarize(metric_frame(cells)).set_index(["technique", "metric"]).loc[("ipsec", "setup_p50_s")]
    assert (row["n"], row["censored"]) == (2, 2) and math.isnan(row["median"])


def test_a_table_gives_a_censored_group_its_median_and_how_many_were_above():
    from vpnbench.views.tables import format_summary

    cells = [setup_cell("ipsec", 1, {"first_packet_p50_s": 0.1}), setup_cell("ipsec", 2, {"first_packet_p50_s": 0.3}),
             setup_cell("ipsec", 3, {"first_packet_p50_s_censored": 1.0})]
    row = next(summarize(metric_frame(cells)).query("metric == 'first_packet_p50_s'").itertuples())
    assert format_summary(row, 1e3) == "p50 300, 1 of 3 > timeout"
    row = next(summarize(metric_frame(cells[:2])).query("metric == 'first_packet_p50_s'").itertuples())
    assert format_summary(row, 1e3) == "200 ± 141"  # as format_mean_sd gives it
