"""`vpnbench compare`: runs side by side, host facts on top, checked in a browser."""

import json

import pytest

from conftest import run_cli
from report_records import records, store_records
from test_report import browse
from test_report_figures import campaign

LINK = """
[campaign]
name = "compare-check"
[testbed]
router = true
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[impairment]]
label = "link"
netem = "{netem}"
[[measurement]]
kind = "tcp"
duration = "1s"
"""


def two_runs(tmp_path):
    spec = campaign(["baseline", "wireguard", "openvpn"], [], [{"kind": "tcp", "duration": "2s"}])
    run, cells = records(spec, run_id="fast")
    store_records(tmp_path / "a.db", run, cells)
    run, cells = records(spec, run_id="slow", seed=7)
    for cell in cells:  # the second machine: wireguard close to the baseline
        if cell.technique == "wireguard":
            cell.metrics["throughput_bps"] *= 10
    store_records(tmp_path / "b.db", run, cells)
    return tmp_path / "a.db", tmp_path / "b.db"


def test_compare_bad_input_is_one_line(tmp_path):
    a, b = two_runs(tmp_path)
    for args, message in (([str(a)], "compare: give at least two results files (FILE.db or FILE.db:RUN)"),
                          ([str(a), str(tmp_path / "no.db")], f"compare: database {str(tmp_path / 'no.db')!r} does not exist"),
                          ([str(a), f"{b}:nope"], f"compare: no run 'nope' in {str(b)!r}; runs there: slow")):
        result = run_cli("compare", *args, "-o", str(tmp_path / "c.html"))
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip() == f"vpnbench: error: {message}"
    assert not (tmp_path / "c.html").exists()


def test_compare_of_two_machines_in_one_line_each(tmp_path):
    a, b = two_runs(tmp_path)
    result = run_cli("compare", f"{a}:fast", str(b), "-o", str(tmp_path / "c.html"))
    assert result.returncode == 0, result.stderr
    assert "wireguard costs 91 % on A and 3 % on B (tcp throughput_bps)" in result.stdout.replace("\n", " ")
    dom = browse(tmp_path / "c.html", tmp_path, "--dump-dom")
    assert dom.returncode == 0
    page = dom.stdout
    assert page.count("<tr>") == 3 + 1 + 9  # runs header + 2 runs, compare header + 3 techniques x 3 metrics
    assert "0.093 ×" in page and "B/A" in page and "openvpn costs 97 % on A and 97 % on B" in page


@pytest.mark.netns
def test_compare_two_real_runs_one_behind_a_50_mbit_link(tmp_path, clean_machine):
    dbs = []
    for name, netem in (("open", "delay 1ms"), ("narrow", "rate 50mbit")):
        (tmp_path / f"{name}.toml").write_text(LINK.format(netem=netem))
        dbs.append(tmp_path / f"{name}.db")
        result = run_cli("run", str(tmp_path / f"{name}.toml"), "--db", str(dbs[-1]))
        assert result.returncode == 0, result.stdout + result.stderr
    result = run_cli("compare", *map(str, dbs), "-o", str(tmp_path / "c.html"))
    assert result.returncode == 0, result.stderr
    page = browse(tmp_path / "c.html", tmp_path, "--dump-dom").stdout
    assert page.count("client: ") == 0 or "CPUs" in page  # host facts on top, when the run recorded them
    rows = [row for row in page.split("<tr>") if row.startswith("<td>tcp</td>") and "throughput_bps" in row]
    assert len(rows) == 2  # baseline and wireguard, side by side
    # behind 50 Mbit/s both runs' baseline is far slower in B than in A
    baseline = next(row for row in rows if "<td>baseline</td>" in row)
    ratio = float(baseline.split('<td class="num">')[3].split(" ×")[0])
    assert ratio < 0.5
    assert "wireguard costs" in page
    # behind the 50 Mbit/s limit the tunnel's figure is the link's: the methodology check says so
    assert run_cli("export", str(dbs[1]), "--format", "json", "-o", str(tmp_path / "narrow.json")).returncode == 0
    codes = {w["code"] for c in json.loads((tmp_path / "narrow.json").read_text())
             if c["technique"] == "wireguard" and c["measurement"] == "tcp" for w in c["warnings"]}
    assert codes & {"rate_limit_reached", "same_ceiling_as_baseline"}, codes
