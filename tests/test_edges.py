"""The statistics and the arithmetic at their edges (issue 22 items 1, 5-8): constant samples,
a baseline at 0, an unbounded ratio, ESP transport mode over IPv6, the t quantile past 30 df and
the E-model's range. Pure functions, then hypothesis properties over constant, tied, zero and
NaN samples: never an exception, never a finite interval from an unbounded ratio."""

import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from report_records import records
from vpnbench.answers.analysis import t95
from vpnbench.answers.distributions import is_constant, mean_var, welch_p
from vpnbench.answers.methodology import ceilings, methodology_warnings
from vpnbench.answers.significance import COLUMNS as COMPARISON_COLUMNS
from vpnbench.answers.significance import compare, compare_all
from vpnbench.answers.stats import fieller_ratio, ratio_interval, relative_cost, relative_ratios, welch_difference
from vpnbench.answers.verdicts import Verdicts
from vpnbench.foundation.errors import MeasurementError
from vpnbench.measure import emodel
from vpnbench.techniques import expect, overhead
from vpnbench.techniques.ipsec.proposals import CIPHERS
from vpnbench.views.report import render_with_figures
from vpnbench.views.report.judgement import cost_rows

COLUMNS = ["measurement_label", "measurement", "technique", "impairment", "repetition", "metric", "value"]
# No example database in the working tree, no deadline on a loaded shared machine.
# derandomize: CI sees the same examples every run; a wider search: more max_examples, or derandomize off.
PROPERTY = settings(max_examples=300, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def long_frame(samples: dict[str, list[float]], metric: str = "throughput_bps") -> pd.DataFrame:
    rows = [("tcp", "tcp", technique, "none", rep, metric, float(v))
            for technique, values in samples.items() for rep, v in enumerate(values, 1)]
    return pd.DataFrame(rows, columns=COLUMNS)


# --- 1: compare on constant samples ---------------------------------------------------------

@pytest.mark.parametrize("a, b", [([1.1] * 6, [1.1] * 2), ([34.8] * 7, [34.8] * 2)])
def test_compare_equal_constants_is_not_distinguishable(a, b):
    """np.var said 5e-29 here, the fsum Welch recomputed said 0: ZeroDivisionError before."""
    result = compare(a, b)
    assert result.test == "welch_t" and result.p_value == 1.0 and result.effect_size == 0.0
    assert result.verdict == "not distinguishable"
    table = compare_all(long_frame({"wg": a, "baseline": b}), pairs=[("wg", "baseline")])
    assert list(table["verdict"]) == ["not distinguishable"] and list(table["p_value"]) == [1.0]


def test_compare_different_constants_is_a_difference():
    result = compare([34.8] * 7, [34.9] * 2, "ipsec", "baseline")
    assert result.p_value == 0.0 and result.effect_size == -math.inf and result.verdict == "baseline higher"


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy's, on the constant side
def test_the_constant_rule_is_the_variance_welch_uses():
    """A mean taken first is an ulp off (6 × 1.1 / 6); centred on the first value it is exact."""
    assert mean_var([1.1] * 6) == (1.1, 0.0) and is_constant([1.1] * 6) and is_constant([34.8] * 7)
    assert not is_constant([1.1] * 5 + [math.nextafter(1.1, 2)])
    assert mean_var([1.0, 2.0, 3.0, 4.0]) == (2.5, pytest.approx(5 / 3))
    # one constant side: Welch is defined (all the variance is the other side's), as scipy has it
    a, b = [1.0, 2.0, 4.0], [3.0, 3.0, 3.0]
    assert welch_p(a, b) == pytest.approx(sps.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-9)


def test_welch_with_variances_whose_squares_underflow():
    """Variances of 1e-303 and 1e-320: their squares underflow to 0 (0 / 0 before); Satterthwaite
    in shares does not, and the answer is scipy's on the same data scaled by 1e150."""
    a, b = [0.0, 1e-160, 2e-160], [1e-150, 1.1e-150, 1.2e-150]
    scaled = sps.ttest_ind([x * 1e150 for x in a], [x * 1e150 for x in b], equal_var=False)
    assert welch_p(a, b) == pytest.approx(scaled.pvalue, rel=1e-9)
    diff, low, high = welch_difference(a, b)
    assert low < diff < high < 0


# --- 5: ESP transport mode over IPv6 --------------------------------------------------------

@pytest.mark.parametrize("cipher, family, expected", [
    # RFC 4303 by hand: the packet keeps its own header (IPv4 20, IPv6 40); ESP 8 + IV + ICV
    # around the payload plus the 2-byte trailer, padded to the cipher's block.
    # aes128-sha256 over IPv6: 40 + 8 + 16 + pad16(payload + 2) + 16 <= 1500 -> payload 1406
    ("aes128-sha256", "ipv6", 1446),
    ("aes128-sha256", "ipv4", 1458),  # 20 + 8 + 16 + pad16(1438 + 2) + 16 = 1500
    ("3des-sha256", "ipv6", 1462),  # 40 + 8 + 8 + pad8(1422 + 2) + 16 = 1496; 1423 pads to 1432
    ("aes256-sha512", "ipv6", 1430),  # 40 + 8 + 16 + pad16(1390 + 2) + 32 = 1488; one more: 1504
    ("aes128gcm16", "ipv6", 1466),  # 40 + 8 + 8 + pad4(1426 + 2) + 16 = 1500: unchanged
])
def test_esp_transport_mode_counts_the_packets_own_header(cipher, family, expected):
    technique = {"kind": "ipsec", "cipher": cipher, "mode": "transport", "family": family, "backend": "kernel"}
    e = expect(technique, 1500)
    assert e.protocol_mtu == expected and e.expected_mtu == expected
    # Linux's own formula (net/xfrm/xfrm_state.c, xfrm_state_mtu), which the kernel data path
    # uses for a don't-fragment send: ((mtu - ESP header and IV - ICV - net_adj) & ~(block - 1))
    # + net_adj - 2, net_adj being the packet's own IP header in transport mode.
    c, net_adj = CIPHERS[cipher].wire, {"ipv4": 20, "ipv6": 40}[family]
    assert ((1500 - (8 + c.iv) - c.icv - net_adj) & ~(c.block - 1)) + net_adj - 2 == expected
    assert overhead.esp_outer(expected, family, c, "transport") <= 1500
    assert overhead.esp_outer(expected + 1, family, c, "transport") > 1500


def test_every_esp_cipher_mode_and_family_agrees_with_the_kernels_formula():
    for cipher, c in ((name, spec.wire) for name, spec in CIPHERS.items()):
        for family, ip in (("ipv4", 20), ("ipv6", 40)):
            for mode in ("tunnel", "transport"):
                header, net_adj = (8 + c.iv + ip, 0) if mode == "tunnel" else (8 + c.iv, ip)
                kernel = ((1500 - header - c.icv - net_adj) & ~(c.block - 1)) + net_adj - 2
                technique = {"kind": "ipsec", "cipher": cipher, "mode": mode, "family": family, "backend": "kernel"}
                assert expect(technique, 1500).protocol_mtu == kernel, (cipher, family, mode)


# --- 6: a baseline that moved nothing --------------------------------------------------------

def tcp_cell(technique, value, repetition):
    return {"technique": technique, "technique_params": {"kind": technique, "backend": "userspace"},
            "impairment": "none", "impairment_params": {}, "measurement": "tcp", "measurement_label": "tcp",
            "measurement_params": {"kind": "tcp", "duration": 10.0, "reverse": False}, "repetition": repetition,
            "status": "ok", "metrics": {"throughput_bps": value, "sender_throughput_bps": value}, "hosts": {},
            "wire_check": "encrypted", "negotiated": {}}


def test_ceilings_with_a_baseline_at_zero():
    cells = [tcp_cell("baseline", 0.0, r) for r in (1, 2, 3)] + [tcp_cell("wireguard", v, r)
                                                                 for r, v in ((1, 5e8), (2, 3e8), (3, 9e8))]
    assert ceilings(cells) == []  # no ceiling to compare with, and no ZeroDivisionError
    assert all(w.code != "same_ceiling_as_baseline" for w in methodology_warnings(cells))
    stalled = cells[:3] + [tcp_cell("wireguard", 0.0, r) for r in (1, 2, 3)]
    assert all(w.code != "same_ceiling_as_baseline" for w in ceilings(stalled))


# --- 7: an unbounded ratio says so ------------------------------------------------------------

def test_unbounded_ratio_gives_no_interval_and_the_difference_instead():
    """Baseline [0, 1, 0] vs [5, 3, 9]: the bootstrap said "17 × (4.5-27)"."""
    ratio, low, high, method = ratio_interval([5, 3, 9], [0, 1, 0])
    assert method == "unbounded" and math.isnan(low) and math.isnan(high)
    diff, d_low, d_high = welch_difference([5, 3, 9], [0, 1, 0])
    assert diff == pytest.approx(16 / 3) and d_low < diff < d_high
    # the same in Mbit/s, as the report and the terminal show it
    frame = long_frame({"baseline": [0, 1e6, 0], "wireguard": [5e6, 3e6, 9e6]})
    (row,) = cost_rows(relative_cost(frame, "baseline"))
    assert row["kind"] == "difference" and row["headline"] == "+5.33 Mbit/s"
    assert row["method"].startswith("unbounded: the baseline's mean is not clearly away from 0")
    assert "×" not in row["headline"] + row["interval"] and "…" in row["interval"]
    answers = Verdicts("baseline", relative_cost(frame, "baseline"), pd.DataFrame(columns=COMPARISON_COLUMNS), [], {})
    assert answers.cost("wireguard", "none", "tcp", "throughput_bps") == "+5.33 Mbit/s (ratio unbounded)"


def test_a_zero_numerator_over_a_baseline_not_clear_of_zero_is_unbounded_and_rendered_so():
    """Retransmits read as a ratio: [0, 0, 0] against a baseline of [0, 0, 12]. The baseline's
    mean is 4 with a standard error of 4 (s = 6.93, over sqrt 3); the numerator being constant, all
    the uncertainty is the baseline's (2 degrees of freedom: t = 4.303), and 4 < 4.303 x 4: its
    mean is not clear of 0, no finite interval is true to the data. The constant numerator made
    Fieller's variance term 0 and gave the interval (0, 0, 0)."""
    ratio, low, high, method = ratio_interval([0, 0, 0], [0, 0, 12])
    assert method == "unbounded" and ratio == 0 and math.isnan(low) and math.isnan(high)
    # a baseline clear of 0 (11 > 4.303 x 0.577): the ratio is 0, and its interval only 0
    assert ratio_interval([0, 0, 0], [10, 11, 12]) == (0.0, 0.0, 0.0, "fieller")
    frame = long_frame({"baseline": [0, 0, 12], "wireguard": [0, 0, 0]}, metric="retransmits")
    relative = relative_cost(frame, "baseline")
    (row,) = cost_rows(relative)  # the report
    assert row["kind"] == "difference" and row["headline"] == "-4.00" and row["method"].startswith("unbounded: ")
    answers = Verdicts("baseline", relative, pd.DataFrame(columns=COMPARISON_COLUMNS), [], {})
    assert answers.cost("wireguard", "none", "tcp", "retransmits") == "-4 (ratio unbounded)"  # the terminal
    assert relative_ratios(frame, "baseline")[("wireguard", "none", "tcp")] == {"retransmits": None}  # the export


def test_unbounded_is_decided_at_the_welch_df_of_both_samples_not_the_baselines_own():
    """Fieller's interval is bounded exactly when mean(b)^2 > t^2 var(mean b) with t at the
    Satterthwaite df of the two samples (the t its endpoints use): here the baseline [1, 2, 3]
    has its own interval 2 +- 4.303 x 0.577, holding 0, yet with 20 noisy values beside it the
    joint df is 20.7 (t = 2.08) and 2 > 2.08 x 0.577: bounded."""
    a = [2 + 10 * ((-1) ** i) * (0.5 + (i % 5) / 5) for i in range(20)]
    b = [1.0, 2.0, 3.0]
    assert 0 > 2 - sps.t.ppf(0.975, 2) * math.sqrt(1 / 3)  # the baseline's own interval holds 0
    ratio, low, high, method = ratio_interval(a, b)
    assert method == "fieller" and low < ratio < high
    va, vb = float(pd.Series(a).var()) / 20, 1 / 3
    w = ratio ** 2 * vb
    df = (va + w) ** 2 / (va ** 2 / 19 + w ** 2 / 2)
    assert 4 > sps.t.ppf(0.975, df) ** 2 * vb  # bounded at the joint df


def test_export_relative_is_null_where_the_ratio_is_unbounded():
    frame = pd.concat([long_frame({"baseline": [0, 1, 0], "wireguard": [5, 3, 9]}),
                       long_frame({"baseline": [10, 11, 12], "wireguard": [5, 6, 7]}, metric="rtt_avg_ms")])
    ratios = relative_ratios(frame, "baseline")
    assert ratios[("wireguard", "none", "tcp")] == {"throughput_bps": None, "rtt_avg_ms": pytest.approx(6 / 11)}
    assert ratios[("baseline", "none", "tcp")] == {"throughput_bps": 1.0, "rtt_avg_ms": 1.0}


def test_report_with_a_zero_baseline_says_unbounded():
    spec = {"campaign": {"name": "hand", "repetitions": 3}, "technique": [{"kind": "baseline"}, {"kind": "wireguard"}],
            "measurement": [{"kind": "tcp", "duration": "2s"}]}
    run, cells = records(spec)
    for cell in cells:
        index = cell.repetition - 1
        cell.metrics["throughput_bps"] = ([0.0, 1e6, 0.0] if cell.technique == "baseline" else [5e6, 3e6, 9e6])[index]
    html, _ = render_with_figures(run, cells)
    assert "unbounded: the baseline&#39;s mean is not clearly away from 0" in html
    assert "17 ×" not in html and "17.0 ×" not in html


# --- 8: t past 30 df, the E-model's range -------------------------------------------------------

@pytest.mark.parametrize("df", [31, 40, 100, 1000])
def test_t95_past_30_degrees_of_freedom_is_students(df):
    assert t95(df) == pytest.approx(sps.t.ppf(0.975, df), rel=1e-9)


def test_mos_stays_within_the_scale():
    """Eq. B-4 gives 0.992 at R = 5: below the scale's floor."""
    assert emodel.mos_from_r(5.0) == 1.0
    assert all(1.0 <= emodel.mos_from_r(r / 10) <= 4.5 for r in range(-100, 1100))


@pytest.mark.parametrize("delay, loss", [(math.nan, 0.0), (-20.0, 0.0), (-5.0, 0.0), (math.inf, 0.0), (None, 0.0),
                                         (20.0, math.nan), (20.0, -1.0), (20.0, 101.0)])
def test_impossible_e_model_inputs_are_errors(delay, loss):
    with pytest.raises(MeasurementError, match="E-model"):
        emodel.rate_call(delay, loss)


# --- properties ---------------------------------------------------------------------------------

FINITE = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)
ODD = st.sampled_from([0.0, -0.0, 1.1, 34.8, 1e-300, math.nan, math.inf, -math.inf])


@st.composite
def samples(draw):
    """Constant, tied (few distinct values), zero-heavy and NaN-carrying samples, and plain ones."""
    kind = draw(st.sampled_from(["constant", "tied", "zeros", "nan", "plain"]))
    n = draw(st.integers(0, 9))
    if kind == "constant":
        return [draw(st.one_of(FINITE, ODD))] * n
    if kind == "tied":
        pool = draw(st.lists(FINITE, min_size=1, max_size=3))
        return draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    if kind == "zeros":
        return draw(st.lists(st.one_of(st.just(0.0), FINITE), min_size=n, max_size=n))
    if kind == "nan":
        return draw(st.lists(st.one_of(FINITE, ODD), min_size=n, max_size=n))
    return draw(st.lists(FINITE, min_size=n, max_size=n))


@PROPERTY
@given(samples(), samples())
def test_compare_never_raises_and_stays_a_probability(a, b):
    result = compare(a, b)
    if result.p_value is not None:
        assert 0.0 <= result.p_value <= 1.0
    assert result.verdict in ("not enough repetitions", "not distinguishable", "A higher", "B higher")


@PROPERTY
@given(samples(), samples())
def test_ratio_interval_is_finite_only_where_fieller_bounds_it(a, b):
    ratio, low, high, method = ratio_interval(a, b)
    assert method in ("fieller", "unbounded", "none")
    if method == "fieller":
        assert fieller_ratio(a, b) is not None and low <= ratio <= high
    else:
        assert math.isnan(low) and math.isnan(high)  # no interval the data cannot support


@PROPERTY
@given(samples(), samples())
def test_relative_cost_and_its_rendering_never_raise(a, b):
    frame = long_frame({"baseline": a, "wireguard": b})
    cost = relative_cost(frame, "baseline")
    for row in cost.itertuples():
        if row.ratio_method != "fieller":
            assert math.isnan(row.ratio_low) and math.isnan(row.ratio_high)
    finite = frame[frame["value"].map(math.isfinite).astype(bool)]  # metric_frame keeps only finite values
    for row in cost_rows(relative_cost(finite, "baseline")):
        assert "×" not in row["headline"] or row["method"] in ("Fieller", "no interval (fewer than 2 repetitions)")
    if not finite.empty:
        compare_all(finite, pairs=[("wireguard", "baseline")])
    for ratios in relative_ratios(finite, "baseline").values():  # the export's: a finite number or null
        assert all(r is None or math.isfinite(r) for r in ratios.values())
