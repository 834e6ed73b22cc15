"""Impairments wired into real runs: linkem on this kernel, netem's commands checked as text."""

import json

import pytest

from conftest import run_cli
from timing import SLOWNESS, assert_delay_added
from vpnbench.hosts.base import CommandResult
from vpnbench.hosts.resources import RunResources
from vpnbench.impair.model import ImpairmentParams, expand_impairment
from vpnbench.run.bringup import SETUP_TIMEOUT
from vpnbench.testbeds.base import plan_links
from vpnbench.testbeds.impair_backends import NetemBackend, linkem_binary
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbeds.probe import has_qdisc

CAMPAIGN = """
[campaign]
name = "impaired"
[testbed]
router = {router}
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[impairment]]
netem = "delay 0..10ms step 10ms"
[[impairment]]
egress = "loss 20%"
ingress = ""
label = "lossy uplink"
[[measurement]]
kind = "ping"
count = 100
interval = "0.01s"
"""


def kernel_has_netem() -> bool:
    with RunResources() as resources:
        return has_qdisc(resources, "netem")


@pytest.mark.netns
@pytest.mark.vm
@pytest.mark.parametrize("router", ["true", "false"])
def test_impairments_change_in_place_and_are_recorded(tmp_path, clean_machine, router):
    if linkem_binary() is None:
        pytest.fail("linkem is not built: `make` builds it")
    (tmp_path / "c.toml").write_text(CAMPAIGN.format(router=router))
    db = tmp_path / "c.db"
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(db))
    assert result.returncode == 0, result.stdout + result.stderr
    out = tmp_path / "c.json"
    run_cli("export", str(db), "--format", "json", "-o", str(out))
    cells = {(c["technique"], c["impairment"]): c for c in json.loads(out.read_text())}
    assert len(cells) == 6
    backend = "netem" if kernel_has_netem() else "linkem"
    for cell in cells.values():
        assert cell["impairment_params"]["backend"] == backend
    for technique in ("baseline", "wireguard"):
        # Both directions delayed: +20 ms round trip over the same path without delay (minima:
        # a TCG guest's scheduling noise pushed the medians' difference to +28.78 ms once).
        assert_delay_added(cells[(technique, "delay 10ms")]["metrics"], cells[(technique, "delay 0ms")]["metrics"], 20)
        lossy = cells[(technique, "lossy uplink")]["metrics"]
        assert lossy["rtt_min_ms"] < 10 and lossy["rtt_p50_ms"] < 10 * SLOWNESS, lossy  # loss adds no delay
        loss = cells[(technique, "lossy uplink")]["metrics"]["loss_pct"]
        assert 5 <= loss <= 36, loss  # 20 % of 100 pings (sd 4): ±3.75 sd
        assert cells[(technique, "delay 0ms")]["metrics"]["loss_pct"] == 0
        # The wire proof and set-up time were taken without impairment, within the run's own
        # bring-up deadline (SLOWNESS is the testbed's setup_timeout_scale).
        assert 0 < cells[(technique, "delay 10ms")]["metrics"]["setup_time_s"] < SETUP_TIMEOUT * SLOWNESS
    if router == "true":
        procs = cells[("baseline", "delay 10ms")]["hosts"]["router"]["procs_cpu_pct"]
        assert backend != "linkem" or "vpnbench-linkem" in procs


@pytest.mark.netns
def test_netem_backend_asked_where_the_kernel_lacks_it(tmp_path):
    if kernel_has_netem():
        pytest.skip("this kernel has netem; the refusal cannot be shown here (the VM tests cover netem)")
    (tmp_path / "c.toml").write_text(CAMPAIGN.format(router="true").replace(
        'netem = "delay 0..10ms step 10ms"', 'netem = "delay 10ms"\nbackend = "netem"'))
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2
    assert "impairment.backend: 'netem' is not available: the kernel has no sch_netem" in result.stderr


class RecordingHost:
    """Stands in for a host to check the tc commands NetemBackend would run (pure command building)."""

    def __init__(self, role):
        self.role = role
        self.commands = []

    def run(self, argv, timeout=30.0, check=True, input=None):
        self.commands.append(argv)
        return CommandResult(argv, 0, "", "")


def test_netem_backend_commands():
    bed = LocalTestbed.__new__(LocalTestbed)  # only the link plan and the hosts: nothing is built
    bed.links = plan_links(True)
    bed.hosts = {role: RecordingHost(role) for role in ("client", "server", "router")}
    backend = NetemBackend(bed)
    [asym] = expand_impairment(ImpairmentParams(egress="delay 10ms", ingress="loss 1%"))
    backend.apply(asym)
    assert bed.hosts["router"].commands == [
        ["tc", "qdisc", "replace", "dev", "r1", "root", "netem", "delay", "10ms"],
        ["tc", "qdisc", "replace", "dev", "r0", "root", "netem", "loss", "1%"]]
    [endpoints] = expand_impairment(ImpairmentParams(netem="delay 5ms", placement="endpoints"))
    backend.apply(endpoints)
    assert ["tc", "qdisc", "del", "dev", "r1", "root"] in bed.hosts["router"].commands
    assert bed.hosts["client"].commands == [["tc", "qdisc", "replace", "dev", "c0", "root", "netem", "delay", "5ms"]]
    assert bed.hosts["server"].commands == [["tc", "qdisc", "replace", "dev", "s0", "root", "netem", "delay", "5ms"]]
    backend.clear()
    assert bed.hosts["client"].commands[-1] == ["tc", "qdisc", "del", "dev", "c0", "root"]
    assert backend._active == {}


def test_the_current_mesh_profile_goes_on_each_hosts_egress_not_the_router():
    """vpn-bench applies its profiles since 4 Dec 2025 on every host's egress: with a router whose
    kernel has netem (where auto would pick the router), mesh-low's qdiscs are the client's c0 and
    the server's s0, the router is left alone; the dated November profile stays on the router."""
    bed = LocalTestbed.__new__(LocalTestbed)
    bed.links = plan_links(True)
    bed.hosts = {role: RecordingHost(role) for role in ("client", "server", "router")}
    backend = NetemBackend(bed)
    [low] = expand_impairment(ImpairmentParams(profile="mesh-low"))
    backend.apply(low)
    words = ["netem", "delay", "2ms", "2ms", "loss", "0.25%", "reorder", "0.5%", "25%"]
    assert backend.placement_of(low) == "endpoints" and bed.hosts["router"].commands == []
    assert bed.hosts["client"].commands == [["tc", "qdisc", "replace", "dev", "c0", "root", *words]]
    assert bed.hosts["server"].commands == [["tc", "qdisc", "replace", "dev", "s0", "root", *words]]
    [old] = expand_impairment(ImpairmentParams(profile="mesh-low-2025-11-21"))
    backend.apply(old)
    assert backend.placement_of(old) == "router"
    assert [argv[4] for argv in bed.hosts["router"].commands] == ["r1", "r0"]


def test_netem_backend_rebuilds_only_when_a_change_would_keep_stale_settings():
    bed = LocalTestbed.__new__(LocalTestbed)
    bed.links = plan_links(True)
    bed.hosts = {role: RecordingHost(role) for role in ("client", "server", "router")}
    backend = NetemBackend(bed)
    router = bed.hosts["router"]
    for spec in ("corrupt 10%", "rate 10mbit", "rate 20mbit delay 5ms", "delay 10ms", "delay 20ms"):
        [imp] = expand_impairment(ImpairmentParams(egress=spec))
        backend.apply(imp)
    deletes = [i for i, argv in enumerate(router.commands) if argv[2] == "del"]
    # corrupt -> rate drops corrupt; rate 10 -> rate 20 changes it; rate -> plain delay drops rate
    assert [router.commands[i + 1][7:] for i in deletes] == [["rate", "10mbit"], ["delay", "10ms"]]
    assert sum(argv[2] == "replace" for argv in router.commands) == 5
    # While a rate is set the endpoints send single-segment packets; afterwards GSO is back.
    client = [argv[4:] for argv in bed.hosts["client"].commands if argv[:3] == ["ip", "link", "set"]]
    assert client == [["c0", "gso_max_segs", "1"], ["c0", "gso_max_segs", "65535"]]
    assert backend.facts() == {"gso_max_segs_1": False}


class CountingHost(RecordingHost):
    """A host whose `tc -s -j qdisc show` prints netem's counters as iproute2 6.1 does."""

    def __init__(self, role, drops):
        super().__init__(role)
        self.drops = drops

    def run(self, argv, timeout=30.0, check=True, input=None):
        self.commands.append(argv)
        if argv[:4] != ["tc", "-s", "-j", "qdisc"]:
            return CommandResult(argv, 0, "", "")
        shown = [{"kind": "netem", "handle": "8001:", "root": True, "refcnt": 2, "options": {"limit": 1000},
                  "bytes": 1300 * 900, "packets": 900, "drops": self.drops, "overlimits": 0, "requeues": 0,
                  "backlog": 0, "qlen": 0}]
        return CommandResult(argv, 0, json.dumps(shown), "")


def test_netem_stats_read_tc_and_count_queue_drops_only_without_a_loss_model():
    bed = LocalTestbed.__new__(LocalTestbed)
    bed.links = plan_links(True)
    bed.hosts = {role: CountingHost(role, 0) for role in ("client", "server", "router")}
    backend = NetemBackend(bed)
    [imp] = expand_impairment(ImpairmentParams(egress="delay 20ms limit 20", ingress="delay 20ms loss 1%"))
    backend.apply(imp)
    before = backend.stats()
    assert before == {"egress": {"packets": 900, "drops": 0, "backlog_packets": 0, "loss_model": False},
                      "ingress": {"packets": 900, "drops": 0, "backlog_packets": 0, "loss_model": True}}
    bed.hosts["router"].drops = 70
    assert backend.queue_drops(before, backend.stats()) == {"egress": 70}  # ingress: its loss model's, too
