"""One CLI grammar (issue 45 item 6): the database `run` writes is the one every reading command
reads by default, -o is the output file everywhere, and each command's help names its values
and gives examples. Through the CLI as a process; no namespace is made (the runs are stored by
hand, report_records)."""

import os
import re
import shlex
from pathlib import Path

import pytest

from conftest import run_cli
from report_records import campaign_records, preset, store_records
from vpnbench.campaign.spec import campaign_from_dict
from vpnbench.cli import presets_runnable_line
from vpnbench.impair.profiles import PROFILES
from vpnbench.measure import MEASUREMENTS
from vpnbench.techniques import TECHNIQUES

README = Path(__file__).parent.parent / "README.md"


def no_db_env() -> dict:
    """This environment without $VPNBENCH_DB; a relative PYTHONPATH (PYTHONPATH=src) made absolute,
    as these commands run in another directory."""
    env = {key: value for key, value in os.environ.items() if key != "VPNBENCH_DB"}
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(part) for part in env["PYTHONPATH"].split(os.pathsep))
    return env


@pytest.fixture
def demo_db(tmp_path):
    """A demo run stored as `run` stores it, in vpnbench.db of an otherwise empty directory."""
    run, cells = campaign_records(campaign_from_dict(preset("demo")))
    store_records(tmp_path / "vpnbench.db", run, cells)
    return tmp_path


def test_report_after_run_needs_no_db_and_no_output(demo_db):
    result = run_cli("report", cwd=demo_db, env=no_db_env())
    assert result.returncode == 0, result.stderr
    assert "report: reading vpnbench.db (no database given)" in result.stderr
    assert (demo_db / "vpnbench.html").stat().st_size > 10_000
    named = run_cli("report", "-o", "r.html", cwd=demo_db, env=no_db_env())
    assert named.returncode == 0, named.stderr
    assert (demo_db / "r.html").exists()


def test_export_defaults_to_the_runs_database_and_its_name(demo_db):
    result = run_cli("export", "--format", "csv", cwd=demo_db, env=no_db_env())
    assert result.returncode == 0, result.stderr
    assert "export: reading vpnbench.db" in result.stderr
    lines = (demo_db / "vpnbench.csv").read_text().splitlines()
    assert len(lines) == 1 + 18  # a header, then a row per cell: 2 techniques × 3 measurements × 3 repetitions
    assert "wrote 18 cells to vpnbench.csv" in result.stdout


def test_vpnbench_db_overrides_the_default_and_is_not_announced(demo_db, tmp_path):
    (demo_db / "vpnbench.db").rename(demo_db / "elsewhere.db")
    result = run_cli("report", cwd=demo_db, env={**no_db_env(), "VPNBENCH_DB": str(demo_db / "elsewhere.db")})
    assert result.returncode == 0, result.stderr
    assert "reading" not in result.stderr
    assert (demo_db / "elsewhere.html").exists()


def test_no_database_at_all_is_one_line_naming_the_default(tmp_path):
    result = run_cli("report", cwd=tmp_path, env=no_db_env())
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "vpnbench.db" in result.stderr and "does not exist" in result.stderr and "VPNBENCH_DB" in result.stderr


def test_check_and_trend_read_the_default(demo_db):
    trend = run_cli("trend", "--campaign", "demo", cwd=demo_db, env=no_db_env())
    assert trend.returncode == 0, trend.stderr
    assert "trend: reading vpnbench.db" in trend.stderr and "demo: 1 runs" in trend.stdout
    run, cells = campaign_records(campaign_from_dict(preset("demo")), seed=2, run_id="second")
    store_records(demo_db / "vpnbench.db", run, cells)
    check = run_cli("check", "--run", "second", "--against", "hand", cwd=demo_db, env=no_db_env())
    assert check.returncode == 0, check.stderr
    assert "check: reading vpnbench.db" in check.stderr and "0 regression(s)" in check.stdout


def test_keygen_writes_with_dash_o(tmp_path):
    made = run_cli("keygen", "-o", str(tmp_path / "key"))
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "key").exists() and (tmp_path / "key.pub").exists()
    again = run_cli("keygen", "--output", str(tmp_path / "key"))
    assert again.returncode == 2 and again.stderr.startswith("vpnbench: error: -o: ")


def test_help_names_values_formats_and_examples():
    top = run_cli("--help").stdout
    assert "parquet" in top and "one grammar:" in top and "examples:" in top
    run_help = re.sub(r"\s+", " ", run_cli("run", "--help").stdout)
    assert ", ".join(TECHNIQUES) in run_help and ", ".join(MEASUREMENTS) in run_help
    assert "--duration" in run_help and "--netem" in run_help
    export_help = re.sub(r"\s+", " ", run_cli("export", "--help").stdout)
    assert all(f"{fmt}:" in export_help for fmt in ("json", "csv", "parquet"))
    for command in ("doctor", "run", "report", "compare", "export", "trend", "check", "keygen", "presets"):
        assert "examples:\n  vpnbench" in run_cli(command, "--help").stdout.replace("sudo ", ""), command


def test_presets_show_cells_time_and_builds():
    result = run_cli("presets", env={**os.environ, "COLUMNS": "250"})
    assert result.returncode == 0, result.stderr
    rows = {line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:5]]
            for line in result.stdout.splitlines() if line.startswith("│") and line.split("│")[1].strip()}
    demo = campaign_from_dict(preset("demo"))
    assert rows["demo"][0] == str(len(demo.techniques) * len(demo.measurements) * demo.info.repetitions)
    assert rows["demo"][2] == "none"
    assert {"tailscale", "nebula", "boringtun"} <= set(rows["mesh"][2].split())
    assert "warning" not in result.stderr  # a study's weak IKE proposal is the run's warning, not the list's


def test_doctors_first_line_names_the_presets_runnable_now():
    report = {"root": True, "techniques": [{"technique": kind, "available": kind in ("baseline", "wireguard")}
                                           for kind in TECHNIQUES],
              "builds": [{"daemon": "tailscale", "installed": []}]}
    line = presets_runnable_line(report)
    can, _, cannot = line.partition("; in part only")
    assert "demo" in can and "smoke" in can and "mesh" in cannot  # mesh needs the builds and more techniques


@pytest.mark.parametrize(("flags", "line"), [
    (["--netem", "bogus 10ms"], "impairment[1].netem: unknown word 'bogus'"),
    (["--duration", "0"], "--duration: seconds above 0"),
    (["--duration", "1", "--measure", "mtu"], "--duration: none of mtu has a duration"),
])
def test_run_duration_and_netem_are_checked_like_a_campaign(tmp_path, flags, line):
    result = run_cli("run", "--technique", "baseline", "--measure", "tcp", "--rehearse", *flags,
                     "--db", str(tmp_path / "x.db"))
    assert result.returncode == 2
    assert line in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "x.db").exists()


def test_run_netem_takes_a_profile_name_and_duration_reaches_timed_measurements():
    from vpnbench.cli import build_parser, campaign_from_flags

    args = build_parser().parse_args(["run", "--technique", "baseline,wireguard", "--measure", "tcp,ping",
                                      "--duration", "3", "--netem", "mesh-low", "--netem", "delay 10ms"])
    campaign = campaign_from_flags(args)
    assert [m.duration for m in campaign.measurements if m.kind == "tcp"] == [3.0]
    # ping counts at its interval (0.2 s): the count that fills the 3 s
    assert [(m.count, m.interval) for m in campaign.measurements if m.kind == "ping"] == [(15, 0.2)]
    assert [i.profile for i in campaign.impairments] == ["mesh-low", None]
    assert str(campaign.impairments[1].egress) == "delay 10ms"
    assert str(campaign.impairments[0].egress) == PROFILES["mesh-low"].netem
    assert campaign.impairments[0].placement == "endpoints"  # the profile's own, vpn-bench's hosts' egress


def readme_first_comparison() -> list[str]:
    """The `vpnbench run` line of README's first comparison, as a user would paste it."""
    text = README.read_text()
    [line] = [line for line in text.splitlines()[:40] if re.match(r"\s*(sudo )?vpnbench run --technique", line)]
    return shlex.split(line.split("#")[0])


def test_readme_starts_with_a_first_comparison():
    argv = readme_first_comparison()
    assert "--report" in argv and "," in argv[argv.index("--technique") + 1]


@pytest.mark.netns
def test_readme_first_comparison_runs_as_written_with_shorter_flows(tmp_path, clean_machine):
    # Every word of README's line, plus --duration: its 12 cells at each kind's default (tcp
    # 10 s, ping 20 s) took 188 s in a run with the CPU halved, to assert only that the line runs
    # and writes its report; 2 s of each show the same.
    argv = readme_first_comparison()
    argv = argv[argv.index("vpnbench") + 1:]
    assert "--duration" not in argv
    result = run_cli(*argv, "--duration", "2", "--db", str(tmp_path / "first.db"), cwd=tmp_path, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    report = argv[argv.index("--report") + 1]
    assert (tmp_path / report).stat().st_size > 10_000
    assert "0 failed" in result.stdout


def test_config_md_lists_every_profile_with_its_netem_words_and_placement():
    text = (README.parent / "docs" / "config.md").read_text()
    for name, profile in PROFILES.items():
        assert f"| `{name}` | {profile.netem} | {profile.placement} |" in text, name


def test_compare_of_one_file_is_against_the_runs_database(demo_db):
    run, cells = campaign_records(campaign_from_dict(preset("demo")), seed=2, run_id="other")
    store_records(demo_db / "other.db", run, cells)
    result = run_cli("compare", "other.db", cwd=demo_db, env=no_db_env())
    assert result.returncode == 0, result.stderr
    assert "compare: other.db against vpnbench.db (one results file given)" in result.stderr
