"""`vpnbench check`, the CI gate (issue 43 item 1): a run against a named run or the trend's
last level, failing only on a regression beyond its threshold and beyond the noise (the
report's test, Holm-adjusted over the metrics checked), with JUnit XML for CI; exit 2 on bad
input. Synthetic stored runs (report_records) for the statistics and the input, one real run
pair on the local testbed for the whole path."""

import dataclasses
import xml.etree.ElementTree as ET

import pytest

from conftest import run_cli
from report_records import campaign_records, store_records
from vpnbench import cli
from vpnbench.answers import check
from vpnbench.answers.significance import ALPHA
from vpnbench.campaign.check_spec import CheckSpec, Threshold, parse_threshold
from vpnbench.campaign.spec import campaign_from_dict
from vpnbench.foundation.errors import UserError
from vpnbench.testbeds.impair_backends import linkem_binary

SPEC = {"campaign": {"name": "gate", "repetitions": 3},
        "technique": [{"kind": "baseline"}, {"kind": "wireguard"}],
        "measurement": [{"kind": "tcp"}, {"kind": "ping"}]}
RUNS = 20


def stored_pair(db, seed: int, slower: float = 1.0, spec: dict = SPEC) -> tuple[str, str]:
    """Two runs of `spec` drawn from one distribution (report_records: each value × N(1, 3 %)),
    the second's wireguard throughput × `slower`; returns (first, second) run ids."""
    ids = (f"a{seed}", f"b{seed}")
    for number, run_id in enumerate(ids):
        run, cells = campaign_records(campaign_from_dict(spec), seed=2 * seed + number, run_id=run_id)
        run = dataclasses.replace(run, started_at=f"2026-01-{number + 1:02d}T00:00:00")
        for cell in cells:
            cell.run_id = run_id
            if number and cell.technique == "wireguard" and cell.measurement == "tcp":
                cell.metrics["throughput_bps"] *= slower
        store_records(db, run, cells)
    return ids


def run_check(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["check", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_unchanged_runs_pass_in_20_of_20_seeds(tmp_path, capsys):
    """Both runs drawn from the same distribution, 20 seeds: exit 0 every time. Expected false
    alarms: Holm holds the family's two-sided error at ALPHA = 0.05 and only the bad direction
    fails, so at most 2.5 % of checks (0.5 in 20) from the statistics alone; the default 10 %
    threshold lowers it further. Measured over 1 000 seeded pairs of these runs (tcp values
    with a 3 % sd, ping's with 5 %, 3 repetitions): 13 alarms without a threshold (1.3 %), 3
    with the default 10 % (0.3 %, 0.06 expected in 20), all from ping, whose 10 % is 2.4 sds of
    its difference of means (5 % × √(2/3))."""
    codes = []
    for seed in range(RUNS):
        first, second = stored_pair(tmp_path / f"s{seed}.db", seed)
        code, out, _ = run_check(capsys, "--db", str(tmp_path / f"s{seed}.db"), "--run", second, "--against", first)
        codes.append(code)
        assert "0 regression(s)" in out
    assert codes == [0] * RUNS


def test_statistics_alone_false_alarm_rate_is_within_holms_bound():
    """Without the threshold (a 0 % allowed move) only the test guards: over 400 seeded pairs of
    unchanged runs the share of failed checks stays within ALPHA / 2 plus 3 binomial sds."""
    alarms, trials = 0, 400
    campaign = campaign_from_dict(SPEC)
    for seed in range(trials):
        frames = [check.samples(_frame(campaign, 2 * seed + n)) for n in (0, 1)]
        limits = {(label, metric): Threshold(label, metric, -0.0 if metric.endswith("_bps") else 0.0, "test")
                  for label, metric in (("tcp", "throughput_bps"), ("ping", "rtt_avg_ms"))}
        outcomes = check.check(frames[1], frames[0], limits, {"baseline": "baseline", "wireguard": "wireguard"})
        alarms += check.exit_code(outcomes)
    bound = ALPHA / 2 + 3 * (ALPHA / 2 * (1 - ALPHA / 2) / trials) ** 0.5
    assert alarms / trials <= bound, (alarms, trials)


def _frame(campaign, seed):
    from vpnbench.answers.analysis import metric_frame

    return metric_frame(campaign_records(campaign, seed=seed)[1])


def test_a_slower_run_fails_and_its_junit_names_the_metric(tmp_path, capsys):
    first, second = stored_pair(tmp_path / "r.db", 1, slower=0.7)
    junit = tmp_path / "report.xml"
    code, out, _ = run_check(capsys, "--db", str(tmp_path / "r.db"), "--run", second, "--against", first,
                             "--junit", str(junit))
    assert code == 1, out
    cases = ET.parse(junit).getroot().findall(".//testcase")
    # 2 techniques × (tcp's throughput_bps + ping's rtt_avg_ms)
    assert len(cases) == 4 and {case.get("classname") for case in cases} == {"gate"}
    failed = [case for case in cases if case.find("failure") is not None]
    assert [case.get("name") for case in failed] == ["wireguard · none · tcp · throughput_bps"]
    message = failed[0].find("failure").get("message")
    assert "throughput_bps fell" in message and "allowed -10%" in message and "Holm-adjusted" in message


def test_a_fall_within_the_threshold_passes_and_a_tighter_threshold_fails_it(tmp_path, capsys):
    """A 15 % fall: beyond the default 10 %, so exit 1; within a campaign's or the command
    line's 20 %, exit 0; 'off' leaves it unchecked."""
    first, second = stored_pair(tmp_path / "r.db", 3, slower=0.85)
    base = ("--db", str(tmp_path / "r.db"), "--run", second, "--against", first)
    assert run_check(capsys, *base)[0] == 1
    assert run_check(capsys, *base, "--threshold", "tcp.throughput_bps:-20%")[0] == 0
    assert run_check(capsys, *base, "--threshold", "tcp.throughput_bps:off")[0] == 0
    spec = {**SPEC, "campaign": {**SPEC["campaign"], "name": "loose"},
            "check": {"default": "off", "thresholds": {"tcp.throughput_bps": "-20%"}}}
    first, second = stored_pair(tmp_path / "c.db", 3, slower=0.85, spec=spec)
    code, out, _ = run_check(capsys, "--db", str(tmp_path / "c.db"), "--run", second, "--against", first)
    assert code == 0 and "ping" not in out.split("check:")[1].split("\n", 1)[1]  # default off: only tcp
    assert run_check(capsys, "--db", str(tmp_path / "c.db"), "--run", second, "--against", "previous",
                     "--threshold", "tcp.throughput_bps:-5%")[0] == 1


def test_a_metric_missing_on_one_side_is_skipped(tmp_path, capsys):
    first, second = stored_pair(tmp_path / "r.db", 4)
    junit = tmp_path / "j.xml"
    code, _, _ = run_check(capsys, "--db", str(tmp_path / "r.db"), "--run", second, "--against", first,
                           "--threshold", "tcp.retransmits:+50%", "--junit", str(junit))
    assert code == 0
    # retransmits is in both; the reference lacks nothing: all compared
    assert not ET.parse(junit).getroot().findall(".//skipped")
    run = check.samples(_frame(campaign_from_dict(SPEC), 1))
    reference = {key: values for key, values in run.items() if key[0] != "wireguard"}
    limits = check.thresholds(run, {"tcp": "tcp", "ping": "ping"}, CheckSpec(), [])
    outcomes = check.check(run, reference, limits, {"baseline": "baseline"})
    skipped = [o for o in outcomes if o.status == check.SKIPPED]
    assert {o.technique for o in skipped} == {"wireguard"} and all(o.reason == "not in the reference" for o in skipped)
    tree = check.junit(outcomes, "gate", "x")
    assert len(tree.getroot().findall(".//skipped")) == 2


def test_techniques_of_two_builds_are_paired_by_kind():
    assert check.technique_pairs({"baseline": "baseline", "wireguard version=2": "wireguard"},
                                 {"baseline": "baseline", "wireguard version=1": "wireguard"}) == {
        "baseline": "baseline", "wireguard version=2": "wireguard version=1"}
    # two of one kind on a side: no guess
    assert check.technique_pairs({"a": "wireguard", "b": "wireguard"}, {"c": "wireguard"}) == {}


def test_the_trend_s_last_level_is_the_reference(tmp_path, capsys):
    """Six runs at one level, then a run 30 % slower: fails against the trend; the run before it
    (still at the level) passes."""
    db = tmp_path / "t.db"
    campaign = campaign_from_dict(SPEC)
    for number in range(7):
        run, cells = campaign_records(campaign, seed=number, run_id=f"r{number}")
        run = dataclasses.replace(run, started_at=f"2026-01-{number + 1:02d}T00:00:00")
        for cell in cells:
            if number == 6 and cell.technique == "wireguard" and cell.measurement == "tcp":
                cell.metrics["throughput_bps"] *= 0.7
        store_records(db, run, cells)
    code, out, _ = run_check(capsys, "--db", str(db), "--against", "trend")
    assert code == 1 and "runs 1-6 of 6" in out, out
    assert run_check(capsys, "--db", str(db), "--run", "r5", "--against", "trend")[0] == 0


@pytest.mark.parametrize(("args", "field", "allowed"), [
    (("--against", "nosuch"), "--against", "allowed values: a run id, 'previous'"),
    (("--run", "nosuch", "--against", "previous"), "--run", "allowed values: b0"),
    (("--against", "previous", "--threshold", "tcp.throughput_bps:5%"), "--threshold tcp.throughput_bps",
     "allowed values: a signed percentage"),
    (("--against", "previous", "--threshold", "tcp.throughput_bps"), "--threshold", "MEASUREMENT.METRIC:LIMIT"),
    (("--against", "previous", "--threshold", "tcp.goodput:-5%"), "--threshold", "allowed values: client_cpu_pct"),
    (("--against", "previous", "--threshold", "udp.throughput_bps:-5%"), "--threshold", "allowed values: ping, tcp"),
    ((), "--against", "required"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, args, field, allowed):
    stored_pair(tmp_path / "r.db", 0)
    code, out, err = run_check(capsys, "--db", str(tmp_path / "r.db"), *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and field in err and allowed in err, err


@pytest.mark.parametrize(("table", "said"), [
    ({"default": "-10%"}, "check.default: '-10%' is not allowed; allowed values: a percentage"),
    ({"thresholds": {"tcp.throughput_bps": "5"}}, "allowed values: a signed percentage"),
    ({"thresholds": {"throughput": "-5%"}}, "check.thresholds.throughput: 'throughput' is not allowed; allowed "
                                            "values: MEASUREMENT.METRIC"),
    ({"thresholds": {"udp.throughput_bps": "-5%"}}, "measurement 'udp' is not in this campaign; allowed values: "
                                                    "tcp, ping"),
    ({"limit": 5}, "check.limit: unknown key; allowed keys: default, thresholds"),
])
def test_a_bad_check_table_is_refused_with_the_campaign(table, said):
    with pytest.raises(UserError, match=".*") as refused:
        campaign_from_dict({**SPEC, "check": table})
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_threshold_syntax():
    assert parse_threshold("tcp.throughput_bps:-5%") == Threshold("tcp", "throughput_bps", -0.05, "--threshold")
    assert parse_threshold("setup.setup_time_s:+20%").limit == pytest.approx(0.2)
    assert parse_threshold("tcp 4.5 streams.throughput_bps:off") == Threshold("tcp 4.5 streams", "throughput_bps",
                                                                              None, "--threshold")
    assert CheckSpec(default="15%").default_share == pytest.approx(0.15)


# --- the whole path on the local testbed -------------------------------------------------------

REAL = """
[campaign]
name = "gate-real"
repetitions = 5
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
implementation = "wireguard-go"
[[impairment]]
label = "lan"
backend = "linkem"
netem = "{netem}"
[[measurement]]
kind = "tcp"
duration = "1s"
"""


@pytest.mark.netns
def test_a_run_made_slower_by_an_impairment_fails_the_check(tmp_path, clean_machine):
    """Two runs of one campaign, the second's 'lan' limited to 50 Mbit/s by linkem: `check`
    exits 1 and the JUnit file names the metric. 5 repetitions: with 3 a sample that fails
    Shapiro-Wilk sends its pair to Mann-Whitney U, whose p cannot go below 0.10 (significance.py)."""
    if linkem_binary() is None:
        pytest.fail("linkem is not built: `make` builds it")
    db = tmp_path / "gate.db"
    for netem in ("", "rate 50mbit"):
        (tmp_path / "c.toml").write_text(REAL.format(netem=netem))
        result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(db))
        assert result.returncode == 0, result.stdout + result.stderr
    junit = tmp_path / "report.xml"
    result = run_cli("check", "--db", str(db), "--against", "previous", "--junit", str(junit))
    assert result.returncode == 1, result.stdout + result.stderr
    failed = [case.get("name") for case in ET.parse(junit).getroot().iter("testcase")
              if case.find("failure") is not None]
    # the tunnel's label: "wireguard implementation=wireguard-go"
    assert any(name.startswith("wireguard") and name.endswith(" · lan · tcp · throughput_bps") for name in failed), \
        failed
