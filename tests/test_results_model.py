"""What the results model promises a user: series that survive a kill -9, a new measurement
kind that shows up everywhere without touching another module, techniques this machine cannot
run recorded as unavailable instead of refusing the study, and host facts with every run."""

import json
import signal
import sqlite3
import subprocess
import time
from typing import Literal

import pytest
from rich.console import Console

from conftest import VPNBENCH, leftovers, run_cli
from vpnbench.foundation.params import Params
from vpnbench.measure import MEASUREMENTS
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.ping import parse_ping


class PingTwiceParams(Params):
    kind: Literal["pingtwice"] = "pingtwice"
    gap: float = 0.2  # seconds between the two pings


class PingTwice(Measurement):
    """A toy kind written only here: two pings, and what it shows declared on the class."""

    kind = "pingtwice"
    Params = PingTwiceParams
    tools = ("ping",)
    columns = (Column("rtt_avg_ms", "two-ping avg ms"), Column("received", "replies"))
    headline = Headline(("rtt_avg_ms",), "toy RTT (ms)")

    @classmethod
    def rehearsed(cls, params, seconds, pings):
        return params.model_copy(update={"gap": 0.01})

    def expected_seconds(self) -> float:
        return self.params.gap

    def run(self, ctx: MeasureContext) -> MeasureResult:
        result = ctx.client.run(["ping", "-n", "-c", "2", "-i", f"{self.params.gap:g}", ctx.target("ipv4")],
                                timeout=10, check=False)
        return MeasureResult(parse_ping(result.stdout), {"ping": result.stdout},
                             series={"toy_rtt_ms": [(0.0, 1.0), (self.params.gap, 2.0)]})


TOY_CAMPAIGN = {"campaign": {"name": "toy", "repetitions": 2}, "technique": [{"kind": "baseline"}],
                "measurement": [{"kind": "pingtwice", "gap": 0.05}]}


@pytest.fixture
def toy_kind():
    MEASUREMENTS["pingtwice"] = PingTwice
    yield
    del MEASUREMENTS["pingtwice"]


@pytest.mark.netns
def test_a_new_measurement_kind_shows_in_table_report_and_rehearsal(tmp_path, clean_machine, toy_kind):
    from vpnbench.campaign import campaign_from_dict, rehearsal
    from vpnbench.run.runner import Runner
    from vpnbench.store.database import Store
    from vpnbench.views.report import write_report
    from vpnbench.views.tables import summary_tables

    campaign = campaign_from_dict(TOY_CAMPAIGN)
    assert rehearsal(campaign).measurements[0].gap == 0.01  # the kind's own shortening
    store = Store(tmp_path / "toy.db")
    outcome = Runner(campaign, store, console=Console(file=open("/dev/null", "w"))).run()
    assert (outcome.ok, outcome.failed) == (2, 0)
    console = Console(record=True, width=200, file=open("/dev/null", "w"))
    for table in summary_tables(store.cells(outcome.run_id)):
        console.print(table)
    text = console.export_text()
    assert "two-ping avg ms" in text and "replies" in text and "2.00 ± 0.00" in text  # two replies each time
    cell = store.cells(outcome.run_id)[0]
    assert [p.value for p in store.series(cell.id, "toy_rtt_ms")] == [1.0, 2.0]
    store.close()
    write_report(tmp_path / "toy.db", tmp_path / "toy.html")
    html = (tmp_path / "toy.html").read_text()
    assert "two-ping avg ms" in html and "toy RTT (ms)" in html


LONG_TCP = """
[campaign]
name = "long"
[testbed]
monitor_interval = "0.2s"
[[technique]]
kind = "baseline"
[[measurement]]
kind = "tcp"
duration = "60s"
"""


@pytest.mark.netns
def test_kill9_mid_measurement_keeps_the_series_up_to_the_last_flush(tmp_path, clean_machine):
    (tmp_path / "c.toml").write_text(LONG_TCP)
    db = tmp_path / "c.db"
    proc = subprocess.Popen([*VPNBENCH, "run", str(tmp_path / "c.toml"), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.monotonic()
    deadline = started + 40
    flushed = 0
    while flushed < 2 and time.monotonic() < deadline:  # two flushes (~10 s of traffic) are in the file
        time.sleep(0.5)
        try:
            with sqlite3.connect(db, timeout=1) as raw:
                flushed = raw.execute("SELECT count(DISTINCT t0) FROM series WHERE name = 'cpu_pct'").fetchone()[0]
        except sqlite3.Error:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert flushed >= 2, "no series reached the file while the cell ran"
    assert leftovers()
    assert run_cli("cleanup").returncode == 0

    import vpnbench

    results = vpnbench.load(db)
    assert results.cells.iloc[0]["status"] == "failed"  # it never finished
    cpu = results.series.query("name == 'cpu_pct' and host == 'client'")
    assert cpu["t"].max() >= 4.0 and len(cpu) >= 20  # at least one flush of 5 s at 5 samples/s
    assert cpu["t"].max() < 60


def unavailable_technique() -> dict | None:
    """A technique with no backend on this machine (MACsec, kernel WireGuard, ...), if there is one."""
    from vpnbench.campaign import campaign_from_dict
    from vpnbench.hosts.resources import RunResources
    from vpnbench.run.setup import Unavailable, resolve_backends
    from vpnbench.testbeds.probe import LocalKernelProbe

    candidates = [{"kind": "macsec"}, {"kind": "wireguard", "backend": "kernel"}, {"kind": "ipsec", "backend": "kernel"}]
    with RunResources() as resources:
        campaign = campaign_from_dict({"technique": candidates, "measurement": [{"kind": "ping"}]})
        for entry, backend in zip(candidates, resolve_backends(campaign, LocalKernelProbe(resources))):
            if isinstance(backend, Unavailable):
                return entry
    return None


@pytest.mark.netns
def test_a_technique_this_machine_lacks_is_recorded_as_unavailable(tmp_path, clean_machine):
    missing = unavailable_technique()
    if missing is None:
        pytest.skip("this machine runs MACsec, kernel WireGuard and kernel ESP: nothing is unavailable")
    text = ("[campaign]\nname = \"partly\"\n[[technique]]\nkind = \"baseline\"\n[[technique]]\n"
            + "".join(f"{key} = {json.dumps(value)}\n" for key, value in missing.items())
            + "[[measurement]]\nkind = \"ping\"\ncount = 3\ninterval = \"0.05s\"\n")
    (tmp_path / "c.toml").write_text(text)
    refused = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"), stdin=subprocess.DEVNULL)
    assert refused.returncode == 2
    assert "technique[2].backend:" in refused.stderr and "--skip-unavailable" in refused.stderr
    assert 'kind = "vm"' in refused.stderr and not (tmp_path / "c.db").exists()

    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"), "--skip-unavailable",
                     "--report", str(tmp_path / "r.html"))
    assert result.returncode == 0, result.stderr
    assert "1 unavailable here" in result.stdout
    run_cli("export", str(tmp_path / "c.db"), "--format", "json", "-o", str(tmp_path / "c.json"))
    baseline, other = json.loads((tmp_path / "c.json").read_text())
    assert baseline["status"] == "ok"
    assert other["status"] == "skipped" and other["error"].startswith("unavailable here:")
    html = (tmp_path / "r.html").read_text()
    assert "1 of 1 cells ok" in html and '"unavailable-count">1 more unavailable here' in html
    assert html.count('<td class="num unavailable">unavailable here</td>') == 1
    reason = other["error"].removeprefix("unavailable here: ")
    techniques = html[html.index('<table id="techniques">'):]
    assert techniques.count(reason.replace("'", "&#39;")) == 1  # the reason once, in the technique's row


@pytest.mark.netns
def test_host_facts_and_steal_time_are_recorded_and_reported(tmp_path, clean_machine):
    text = "[campaign]\nname = \"facts\"\n[[technique]]\nkind = \"baseline\"\n[[measurement]]\nkind = \"tcp\"\nduration = \"1s\"\n"
    (tmp_path / "c.toml").write_text(text)
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"), "--report", str(tmp_path / "r.html"))
    assert result.returncode == 0, result.stderr
    import vpnbench

    results = vpnbench.load(tmp_path / "c.db")
    facts = {row.host: row.facts for row in results.hosts.itertuples()}
    assert set(facts) == {"client", "server", "router"}
    client = facts["client"]
    assert client["cpu_count"] >= 1 and client["kernel"] and client["versions"]["iperf3"].startswith("iperf 3")
    assert any(name.startswith("veth") or name.startswith("vpb") or name for name in client["interfaces"])
    assert "cpu_steal_pct" in results.cells.iloc[0]["hosts"]["client"]
    assert {"client_cpu_steal_pct", "client_cpu_pct"} <= set(results.metrics["metric"])
    assert {"throughput_bps", "cpu_pct", "cpu_steal_pct"} <= set(results.series["name"])
    bringup = results.bringups.iloc[0]
    assert bringup["facts"]["interface_mtu"] == 1500  # baseline: the underlay's own MTU
    html = (tmp_path / "r.html").read_text()
    assert 'id="hosts"' in html and "CPU steal during the cells" in html and client["kernel"] in html
