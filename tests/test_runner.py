"""The runner's logic without root: a whole run through host and testbed doubles
(runner_doubles.py) and a real store. Bring-up failure, restart after a daemon died, adaptive
rounds, resume after an interrupt, settle, a testbed that fails to come up; and the export's
fields against a reference taken from a run of the same campaign before the runner was split."""

import json
from pathlib import Path

import pytest
from rich.console import Console

from runner_doubles import LOCAL, LOST, SSH_INVENTORY, TUNNEL, UNDERLAY, FakeClock, FakeNetwork, FakeVpn, Lab
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.errors import TestbedError
from vpnbench.hosts import resources as resources_module
from vpnbench.run.lifecycle import Interrupted
from vpnbench.run.runner import Runner
from vpnbench.store.database import Store
from vpnbench.techniques import TECHNIQUES
from vpnbench.techniques.ipsec import IPsec
from vpnbench.techniques.ipsec.strongswan import plugin_path
from vpnbench.views.export import records as export_records

VPN = TUNNEL["server"]["ipv4"]
BASE = UNDERLAY["server"]["ipv4"]
REFERENCE = Path(__file__).parent / "data" / "export_fields.json"


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """The doubles, the toy technique registered, the run's files under tmp_path."""
    monkeypatch.setattr(resources_module, "RUN_ROOT", tmp_path / "run")
    TECHNIQUES["fakevpn"] = FakeVpn
    FakeVpn.refuse, FakeVpn.unavailable, FakeVpn.instances = None, None, []
    clock = FakeClock()
    yield Lab(clock, FakeNetwork(clock))
    del TECHNIQUES["fakevpn"]


def campaign(techniques=("baseline", "fakevpn"), repetitions=1, testbed=SSH_INVENTORY, **info):
    return campaign_from_dict({
        "campaign": {"name": "doubles", "repetitions": repetitions, **info},
        "testbed": testbed,
        "technique": [entry if isinstance(entry, dict) else {"kind": entry} for entry in techniques],
        "measurement": [{"kind": "ping", "count": 5, "interval": "0.01s"}]})


def run(lab, tmp_path, spec, resume=False, skip_unavailable=False):
    store = Store(tmp_path / "r.db")
    runner = Runner(spec, store, resume=resume, console=Console(file=open("/dev/null", "w")), make=lab.make,
                    clock=lab.clock, skip_unavailable=skip_unavailable)
    try:
        return runner.run(), store
    except BaseException:
        store.close()
        raise


def test_a_run_brings_each_technique_up_once_and_stores_every_cell(lab, tmp_path):
    lab.network.rtt[VPN] = lambda: 0.5
    outcome, store = run(lab, tmp_path, campaign(repetitions=2))
    assert (outcome.ok, outcome.failed, outcome.interrupted) == (4, 0, False)
    cells = store.cells(outcome.run_id)
    assert [(c.technique, c.repetition) for c in cells] == [("baseline", 1), ("baseline", 2),
                                                            ("fakevpn", 1), ("fakevpn", 2)]
    assert {c.technique: c.metrics["rtt_avg_ms"] for c in cells} == {"baseline": 0.1, "fakevpn": 0.5}
    assert [b.technique for b in store.bringups(outcome.run_id)] == ["baseline", "fakevpn"]
    assert FakeVpn.instances[0].ups == 1 and FakeVpn.instances[0].tunnel is None  # up once, down at the end
    assert lab.testbeds[0].calls == ["connect", "up", "down"]
    assert store.run(outcome.run_id).status == "finished"
    assert cells[2].technique_params["backend"] == "userspace"
    assert store.bringups(outcome.run_id)[1].wire_check["verdict"] == "not-checked"  # no tcpdump on the double
    assert not list((tmp_path / "run").iterdir())  # the run's directory is gone


@pytest.mark.parametrize("testbed", [LOCAL, SSH_INVENTORY], ids=["local", "ssh"])
def test_every_kind_is_prepared_by_one_sequence(lab, tmp_path, testbed):
    """make, connect, probe, resolve, up: a local testbed too is connected and its own probe
    asked (the doubles stand in for it as for any kind), then brought up and torn down."""
    outcome, store = run(lab, tmp_path, campaign(testbed=testbed))
    assert (outcome.ok, outcome.failed) == (2, 0)
    assert lab.testbeds[0].calls == ["connect", "up", "down"]
    assert store.run(outcome.run_id).environment["testbed"] == {"kind": testbed["kind"], "double": True}


@pytest.mark.parametrize("testbed", [LOCAL, SSH_INVENTORY], ids=["local", "ssh"])
def test_ipsec_is_resolved_on_the_hosts_not_on_the_controller(lab, tmp_path, testbed):
    """The client lacks strongSwan's kernel-libipsec plugin (this machine, the controller, may
    well have it): the userspace backend is unavailable, and the reason names the client."""
    lab.absent = {"client": {plugin_path("kernel-libipsec")}}
    spec = campaign(techniques=("baseline", {"kind": "ipsec", "backend": "userspace"}), testbed=testbed)
    outcome, store = run(lab, tmp_path, spec, skip_unavailable=True)
    assert (outcome.ok, outcome.unavailable) == (1, 1)
    [ipsec] = [b for b in store.bringups(outcome.run_id) if b.technique != "baseline"]
    assert ipsec.error == ("unavailable here: backend 'userspace' is not available: client: strongSwan's "
                           "kernel-libipsec plugin is not installed (apt-get install libcharon-extra-plugins)")
    lab.absent = {}  # a testbed whose hosts both have it: available
    assert IPsec.resolve_backend(spec.techniques[1], lab.make(spec.testbed, None).probe) == "userspace"


def test_a_failed_bring_up_keeps_evidence_fails_its_cells_and_the_run_goes_on(lab, tmp_path):
    FakeVpn.refuse = "handshake refused"
    outcome, store = run(lab, tmp_path, campaign(techniques=("fakevpn", "baseline"), repetitions=2))
    assert (outcome.ok, outcome.failed) == (2, 2)
    failed = [c for c in store.cells(outcome.run_id) if c.technique == "fakevpn"]
    assert [c.error for c in failed] == ["bring-up failed: handshake refused"] * 2
    bringups = [b for b in store.bringups(outcome.run_id) if b.technique == "fakevpn"]
    assert len(bringups) == 2  # each cell tries again
    assert bringups[0].evidence == {"client: fakevpn show": "no peer", "client: ip -d link": "c0: <BROADCAST,UP> (fake)"}
    assert bringups[0].ended_at is not None
    assert all(c.ok for c in store.cells(outcome.run_id) if c.technique == "baseline")
    assert lab.testbeds[0].calls[-1] == "down"


def test_a_daemon_dying_fails_its_cell_and_the_next_cell_brings_it_back(lab, tmp_path):
    def die_once(address):
        if address == VPN and not lab.network.script.get("died"):
            lab.network.script["died"] = [0]
            FakeVpn.instances[0].kill_daemons()
            lab.network.script[VPN] = [LOST] * 5
    lab.network.on_measure = die_once
    outcome, store = run(lab, tmp_path, campaign(techniques=("fakevpn",), repetitions=2))
    first, second = store.cells(outcome.run_id)
    assert first.status == "failed" and "no ping replies" in first.error
    assert "fakevpn-daemon exited" in first.error and "killed" in first.error
    assert second.ok and second.bringup_id != first.bringup_id
    assert FakeVpn.instances[0].ups == 2
    restarts = [e for e in store.events(outcome.run_id) if e.kind == "daemon-restart"]
    assert len(restarts) == 1 and restarts[0].bringup_id == first.bringup_id
    assert "fakevpn-daemon exited" in restarts[0].detail["reason"]


def test_adaptive_rounds_interleave_techniques_and_repeat_only_what_has_not_converged(lab, tmp_path):
    noisy = iter([0.2, 0.6, 0.3, 0.9, 0.25, 0.7, 0.4])

    def vary(address):
        if address == VPN:
            lab.network.script[VPN] = [next(noisy)] * 5
    lab.network.on_measure = vary
    spec = campaign(repetitions="auto", min_repetitions=3, max_repetitions=6, ci_target=0.02)
    outcome, store = run(lab, tmp_path, spec)
    order = [(c.technique[0], c.repetition) for c in store.cells(outcome.run_id)]
    assert order == [("b", 1), ("f", 1), ("b", 2), ("f", 2), ("b", 3), ("f", 3), ("f", 4), ("f", 5), ("f", 6)]
    decisions = {e.detail["technique"]: e.detail for e in store.events(outcome.run_id) if e.kind == "repetitions"}
    assert decisions["baseline"]["converged"] and decisions["baseline"]["n"] == 3
    assert not decisions["fakevpn"]["converged"] and decisions["fakevpn"]["reason"] == "max_n reached"
    assert len(FakeVpn.instances) == 6  # one bring-up per round


def test_resume_after_an_interrupt_runs_only_the_cells_not_done(lab, tmp_path):
    def interrupt(address):
        if address == VPN:
            raise Interrupted("SIGINT")
    lab.network.on_measure = interrupt
    spec = campaign(repetitions=2)
    outcome, store = run(lab, tmp_path, spec)
    assert outcome.interrupted and outcome.ok == 2
    assert store.run(outcome.run_id).status == "interrupted"
    assert lab.testbeds[0].calls[-1] == "down" and FakeVpn.instances[0].tunnel is None
    store.close()
    lab.network.on_measure = None
    again, store = run(lab, tmp_path, spec, resume=True)
    assert again.run_id == outcome.run_id
    assert (again.skipped, again.ok, again.failed, again.interrupted) == (2, 2, 0, False)
    ok = sorted(c.cell_key for c in store.cells(outcome.run_id) if c.ok)
    assert ok == sorted(f"{t}|none|ping|{r}" for t in ("baseline", "fakevpn") for r in (1, 2))
    assert store.run(outcome.run_id).status == "finished"


def test_settle_waits_out_the_backlog_a_cell_leaves_and_records_the_wait(lab, tmp_path):
    def backlog(address):
        if address == VPN and not lab.network.script.get("once"):
            lab.network.script["once"] = [0]
            lab.network.script[VPN] = [0.1] * 5 + [4.0, 3.0, 2.0]  # the cell, then three late replies
    lab.network.on_measure = backlog
    outcome, store = run(lab, tmp_path, campaign(techniques=("fakevpn",), repetitions=2))
    settles = [e for e in store.events(outcome.run_id) if e.kind == "settle"]
    assert len(settles) == 1
    detail = settles[0].detail
    assert detail["before"] == "fakevpn|none|ping|2" and detail["settled"]
    assert detail["idle_rtt_ms"] == 0.1 and detail["rtt_ms"] == 0.1
    assert detail["waited_s"] == pytest.approx(3 * 0.05 + 0.0091, abs=1e-3)  # three sleeps and the four pings


def test_settle_gives_up_at_settle_max(lab, tmp_path):
    def congest(address):
        if address == VPN:
            lab.network.rtt[VPN] = lambda: 5.0
    lab.network.on_measure = congest
    lab.network.script[VPN] = [0.1]  # the first settle's idle reply
    outcome, store = run(lab, tmp_path, campaign(techniques=("fakevpn",), repetitions=2, settle_max="0.5s"))
    (settle,) = [e.detail for e in store.events(outcome.run_id) if e.kind == "settle"]
    assert not settle["settled"] and 0.5 <= settle["waited_s"] < 0.6
    assert outcome.ok == 2  # the cell runs anyway; the event says it did not settle


def test_a_testbed_that_fails_to_come_up_is_torn_down_and_the_run_marked_failed(lab, tmp_path):
    lab.fail_up = "sysctl net.nonexistent.knob: no such setting"
    with pytest.raises(TestbedError, match="^testbed: sysctl net.nonexistent.knob"):
        run(lab, tmp_path, campaign())
    assert lab.testbeds[0].calls == ["connect", "up", "down"]
    store = Store(tmp_path / "r.db")
    assert [r.status for r in store.runs()] == ["failed"]
    assert store.cells() == []


# Objects keyed by data, not by the schema: which metrics have a ratio to the baseline, which
# processes used CPU, the efficiency of a cell that moved bytes. Their keys become "*".
DATA_KEYED = ("relative", "procs_cpu_pct", "efficiency")


def export_fields(records: list[dict]) -> list[str]:
    """Every field path of the export (metrics.rtt_avg_ms, hosts.client.cpu_pct, relative.*, ...).
    Lists (events, warnings) count as fields, not their entries: which warnings a cell gets
    depends on the CPU the real monitor saw in a few milliseconds."""
    fields = set()

    def walk(prefix: str, value) -> None:
        fields.add(prefix)
        if isinstance(value, dict):
            for key, inner in value.items():
                if prefix.rsplit(".", 1)[-1] in DATA_KEYED:
                    fields.add(f"{prefix}.*")
                else:
                    walk(f"{prefix}.{key}", inner)

    for record in records:
        for key, value in record.items():
            walk(key, value)
    return sorted(fields)


def test_export_fields_are_those_of_the_reference(lab, tmp_path):
    """tests/data/export_fields.json: the same campaign through the same doubles, run by the
    runner as it was before it was split into stages (main at e46a3ce; export_fields_gen.py)."""
    outcome, store = run(lab, tmp_path, campaign(repetitions=2))
    fields = export_fields(export_records(store))
    assert fields == json.loads(REFERENCE.read_text())


def test_impairments_change_in_place_and_bring_ups_are_taken_unimpaired(lab, tmp_path, monkeypatch):
    spec = campaign_from_dict({
        "campaign": {"name": "impaired", "repetitions": 1},
        "testbed": SSH_INVENTORY,
        "technique": [{"kind": "fakevpn"}],
        "impairment": [{"egress": "delay 10ms"}, {"egress": "loss 1%"}],
        "measurement": [{"kind": "ping", "count": 5, "interval": "0.01s"}]})
    monkeypatch.setattr("runner_doubles.FakeProbe.has_qdisc", lambda self, kind: kind == "netem")
    outcome, store = run(lab, tmp_path, spec)
    assert outcome.ok == 2
    cells = store.cells(outcome.run_id)
    assert [c.impairment_params["backend"] for c in cells] == ["netem", "netem"]
    changes = [e.detail["impairment"] for e in store.events(outcome.run_id) if e.kind == "impairment"]
    assert changes == [cells[0].impairment, cells[1].impairment, "none"]  # in place; cleared at the end
    (bringup,) = store.bringups(outcome.run_id)  # one bring-up serves both impairments
    first = next(e for e in store.events(outcome.run_id) if e.kind == "impairment")
    assert first.bringup_id == bringup.id  # applied once the bring-up was done: it was timed unimpaired
    tc = [argv for argv in lab.testbeds[0].client.ran + lab.testbeds[0].server.ran if argv[0] == "tc"]
    assert any("netem" in argv and "delay" in argv for argv in tc), tc
    assert lab.testbeds[0].calls[-1] == "down"


def test_every_point_of_a_swept_axis_is_stored_on_its_cells_the_default_too(lab, tmp_path, monkeypatch):
    """tunnels = [1, 3]: the export finds tunnels == 1 and tunnels == 3 (1 was left out, as
    unswept cells leave it out); an unswept technique stores none, as before the axis existed."""
    monkeypatch.setattr(FakeVpn, "tunnel_ceiling", classmethod(lambda cls, params: (3, "a test double")))
    spec = campaign_from_dict({
        "campaign": {"name": "axes", "repetitions": 2},
        "testbed": SSH_INVENTORY,
        "technique": [{"kind": "baseline"}, {"kind": "fakevpn", "tunnels": [1, 3]}],
        "measurement": [{"kind": "ping", "count": 5, "interval": "0.01s"}]})
    outcome, store = run(lab, tmp_path, spec)
    cells = export_records(store)
    swept = [c for c in cells if c["technique_params"]["kind"] == "fakevpn"]
    assert sorted(c["technique_params"]["tunnels"] for c in swept) == [1, 1, 3, 3]
    assert len([c for c in cells if c["technique_params"].get("tunnels") == 1]) == 2
    assert all("tunnels" not in c["technique_params"] for c in cells if c["technique_params"]["kind"] == "baseline")


def test_a_stop_during_the_cleanup_is_held_and_still_asked_for_after(monkeypatch, clean_machine):
    """A SIGTERM while a run's resources are removed does not cut the removal short (nothing is
    raised), and is not lost either: stop_requested() says so afterwards, so `worker --follow`
    stops instead of waiting for the next job (it waited forever, with the CPU halved, when the
    cleanup ignored the signal)."""
    import os
    import signal

    from vpnbench.hosts.resources import RunResources
    from vpnbench.run import lifecycle

    monkeypatch.setattr(lifecycle, "_stops", [])
    removed = []
    real_close = RunResources.close

    def close(resources):
        os.kill(os.getpid(), signal.SIGTERM)  # delivered here, in the cleanup
        removed.append(resources.run_id)
        return real_close(resources)  # the run dir in_process made is removed as in a real run
    monkeypatch.setattr(RunResources, "close", close)
    assert lifecycle.in_process(lambda resources: "done") == "done"
    assert removed and lifecycle.stop_requested()
    assert signal.getsignal(signal.SIGTERM) not in (lifecycle._hold,)  # the caller's handler is back
