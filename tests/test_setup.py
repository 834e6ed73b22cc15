"""Set-up time (the technique down and up N times) and rekey impact (rekeys during a flow)."""

import pytest

from bounds import assert_tcp_measured
from conftest import run_campaign, run_cli
from vpnbench.foundation.errors import TechniqueError
from vpnbench.hosts.base import CommandResult
from vpnbench.measure.base import Cycled, CycleFailed, MeasureContext, PortAllocator
from vpnbench.measure.rekey import impact, rekey_metrics
from vpnbench.measure.setup import Setup, SetupParams, censored_percentile
from vpnbench.techniques.base import Tunnel
from vpnbench.techniques.ipsec.strongswan import handshake_seconds, installed_children, retransmits

CAMPAIGN = """
[campaign]
name = "setup"
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
backend = "userspace"
[[technique]]
kind = "ipsec"
backend = "userspace"
[[measurement]]
kind = "setup"
count = 20
[[measurement]]
kind = "rekey"
duration = "5s"
rekey_every = "1.5s"
[[measurement]]
kind = "tcp"
duration = "1s"
[[measurement]]
kind = "setup_rate"
count = 2
"""


@pytest.mark.netns
def test_setup_twenty_times_then_rekeys_during_a_flow(tmp_path, clean_machine):
    _, cells = run_campaign(tmp_path, CAMPAIGN)
    by = {(c["technique"].split()[0], c["measurement"]): c for c in cells}
    assert len(by) == 12 and all(c["status"] == "ok" for c in cells), [(c["technique"], c["error"]) for c in cells]
    import vpnbench
    data = vpnbench.load(str(tmp_path / "c.db"))
    for technique in ("wireguard", "ipsec"):
        setup, rekey, tcp = (by[(technique, kind)] for kind in ("setup", "rekey", "tcp"))
        m = setup["metrics"]
        assert m["cycles"] == 20 and 0 < m["setup_min_s"] <= m["setup_p50_s"] <= m["setup_p95_s"] <= m["setup_max_s"]
        assert 0 < m["first_packet_p50_s"] < m["setup_p50_s"]
        trials = data.trials[data.trials.cell_id == setup["cell_id"]]
        assert sorted(trials.number) == list(range(1, 21))
        assert all(t["setup_s"] == pytest.approx(t["up_s"] + t["first_packet_s"], abs=1e-3) for t in trials.data)
        points = data.series[(data.series.cell_id == setup["cell_id"]) & (data.series.name == "setup_s")]
        assert len(points) == 20
        # the technique came back up and served the next cells without a new bring-up
        assert_tcp_measured(tcp)
        assert tcp["bringup_id"] == setup["bringup_id"]
        events = data.events[(data.events.cell_id == rekey["cell_id"]) & (data.events.kind == "rekey")]
        assert len(events) == 2 and rekey["metrics"]["rekeys"] == 2  # at 1.5 and 3 s; 4.5 s leaves no 2 s of flow
        for detail in events.detail:
            assert detail["throughput_before_bps"] > 0 and detail["throughput_after_min_bps"] >= 0
            assert 0 <= detail["dip_pct"] <= 100 and detail["rtt_max_ms"] > 0
    for technique in ("baseline", "wireguard", "ipsec"):
        assert_setup_rate_of_one_tunnel(by[(technique, "setup_rate")], data)
    assert by[("ipsec", "setup")]["metrics"]["handshake_p50_s"] > 0  # from charon's log
    assert "handshake_p50_s" not in by[("wireguard", "setup")]["metrics"]  # its log counts whole seconds
    spis = data.events[(data.events.cell_id == by[("ipsec", "rekey")]["cell_id"])].detail
    for detail in spis:  # read back from swanctl --list-sas before and after
        assert detail["spi_in_before"] != detail["spi_in_after"] and detail["spi_out_before"] != detail["spi_out_after"]
    first, second = list(spis)
    assert second["spi_in_before"] == first["spi_in_after"]
    # the baseline's flow is the control: the same moments marked, nothing renewed, its wobble measured
    control = by[("baseline", "rekey")]
    marks = data.events[data.events.cell_id == control["cell_id"]]
    assert list(marks.kind) == ["rekey-control"] * 2 and control["metrics"]["rekeys"] == 0
    assert all(d["control"] and d["throughput_before_bps"] > 0 for d in marks.detail)
    assert 0 <= control["metrics"]["dip_max_pct"] <= 100  # the floor the tunnels' dips are read against


def assert_setup_rate_of_one_tunnel(cell: dict, data) -> None:
    """setup_rate with tunnels = 1: the first tunnel is the last, the rate is 1 / its time, and its
    time lies between the technique's own up() and the whole cycle (the arithmetic of a cycle)."""
    m = cell["metrics"]
    assert m["cycles"] == 2 and m["tunnels"] == 1 and m["first_p50_s"] == m["last_p50_s"]
    trials = data.trials[data.trials.cell_id == cell["cell_id"]]
    assert len(trials) == 2
    for cycle in trials.data:
        assert cycle["first_s"] == cycle["last_s"] == cycle["tunnel_s"][0]
        assert cycle["setup_rate"] == pytest.approx(1 / cycle["last_s"])
        # down + up (the baseline's: nothing to do), fping started, its first reply: inside the cycle
        assert 0 <= cycle["up_s"] <= cycle["probe_at_s"] < cycle["last_s"] <= cycle["wall_s"]
    assert m["setup_rate_min"] <= m["setup_rate_p50"] <= m["setup_rate_max"]
    assert m["setup_rate_p50"] > 0


LOSSY = """
[campaign]
name = "lossy-setup"
[[technique]]
kind = "wireguard"
implementation = "wireguard-go"
[[technique]]
kind = "ipsec"
backend = "userspace"
[[impairment]]
netem = "delay 5ms loss 0..30% step 30%"
backend = "linkem"
[[measurement]]
kind = "setup"
count = 3
timeout = "2s"
"""
RTT_S = 2 * 0.005  # the impairment's delay, both ways
# Round trips a set-up takes at least, the first reply's included: WireGuard's 1-RTT handshake;
# IKEv2's IKE_SA_INIT and IKE_AUTH (in up()).
ROUND_TRIPS = {"wireguard": 2, "ipsec": 3}
IKE_RETRANSMIT_TIMEOUT_S = 1.0  # strongswan.conf's retransmit_timeout: each retry waits at least this
WG_REKEY_TIMEOUT_S = 5.0  # wireguard-go sends no initiation sooner than this after the last


@pytest.mark.netns
def test_setups_under_loss_are_censored_counted_and_drawn(tmp_path, clean_machine):
    """One run: WireGuard and IPsec set up 3 times at 0 % and 30 % loss (both ways, a 2 s timeout:
    a censored cycle costs 2 s, so the run stays short whatever the loss does)."""
    import vpnbench
    from vpnbench.store.database import Store
    from vpnbench.views.report import render_with_figures

    _, cells = run_campaign(tmp_path, LOSSY)
    by = {(c["technique"].split()[0], c["impairment"]): c for c in cells}
    assert len(by) == 4 and all(c["status"] == "ok" for c in cells), [(c["technique"], c["error"]) for c in cells]
    data = vpnbench.load(str(tmp_path / "c.db"))
    for (technique, impairment), cell in by.items():
        m = cell["metrics"]
        trials = list(data.trials[data.trials.cell_id == cell["cell_id"]].data)
        assert len(trials) == 3 and m["setups_ok"] + m["setups_failed"] == m["cycles"] == 3
        assert m["setups_failed"] == sum(t["censored"] for t in trials) and m["setup_timeout_s"] == 2.0
        counted = "handshake_initiations" if technique == "wireguard" else "ike_retransmits"
        for t in trials:
            assert t[counted] >= 0 and (t["censored"] or t["setup_s"] >= ROUND_TRIPS[technique] * RTT_S)
            if t["censored"]:
                assert t["reason"]
            elif technique == "wireguard":  # a handshake needs an initiation; a second waits 5 s
                assert 1 <= t[counted] <= 1 + t["setup_s"] / WG_REKEY_TIMEOUT_S
            else:
                assert t["handshake_s"] >= 2 * RTT_S and t["setup_s"] >= t[counted] * IKE_RETRANSMIT_TIMEOUT_S
    for technique in ROUND_TRIPS:  # unimpaired but for the delay, a set-up came up to draw
        assert by[(technique, "delay 5ms loss 0%")]["metrics"]["setups_ok"] >= 1
    store = Store(tmp_path / "c.db", read_only=True)
    try:
        run_id = store.latest_run()
        page, figures = render_with_figures(store.run(run_id), store.cells(run_id), data=store)
    finally:
        store.close()
    drawn = {f.meta["technique"].split()[0]: f.meta for f in figures if f.meta.get("type") == "setup_ecdf"}
    assert set(drawn) == {"wireguard", "ipsec"}
    for technique, meta in drawn.items():
        assert meta["lines"] == ["delay 5ms loss 0%", "delay 5ms loss 30%"] and meta["timeouts_s"] == [2.0]
        assert meta["censored"]["delay 5ms loss 30%"] == by[(technique, "delay 5ms loss 30%")]["metrics"]["setups_failed"]
    assert "set-ups not up within 2 s; median per set-up: ike retransmits" in page


class FakeClient:
    """Answers ping with a reply (or none) and records the commands."""

    def __init__(self, reply: bool = True):
        self.reply = reply
        self.commands: list[list[str]] = []

    def run(self, argv, timeout=None, check=True):
        self.commands.append(argv)
        return CommandResult(argv, 0 if self.reply else 1, "", "")


def _context(client, cycle) -> MeasureContext:
    tunnel = Tunnel("userspace", {"ipv4": "10.0.0.2"}, {"ipv4": "10.0.0.1"}, "encrypted", None)
    return MeasureContext(client, client, tunnel, PortAllocator(), cycle=cycle)


def test_setup_cycles_through_the_hook_and_summarises():
    ups = iter([0.3, 0.1, 0.2, 0.4])
    tunnel = Tunnel("userspace", {"ipv4": "10.0.0.9"}, {"ipv4": "10.0.0.8"}, "encrypted", None)
    client = FakeClient()
    result = Setup(SetupParams(count=4)).run(_context(client, lambda timeout: Cycled(tunnel, next(ups), 0.05)))
    m = result.metrics
    assert m["cycles"] == 4 and len(result.trials) == 4 and [t.number for t in result.trials] == [1, 2, 3, 4]
    assert m["setup_min_s"] >= 0.1 and m["setup_max_s"] >= 0.4 and m["setup_p50_s"] <= m["setup_p95_s"]
    assert m["up_p50_s"] == pytest.approx(0.25) and m["handshake_p50_s"] == 0.05
    assert all(t.duration_s == pytest.approx(t.data["up_s"] + t.data["first_packet_s"]) for t in result.trials)
    assert all(argv[-1] == "10.0.0.9" for argv in client.commands)  # pings go to the new tunnel
    assert len(result.series["setup_s"]) == 4


def test_a_cycle_not_up_within_the_timeout_is_censored_not_a_failed_cell():
    tunnel = Tunnel("userspace", {"ipv4": "10.0.0.9"}, {"ipv4": "10.0.0.8"}, "encrypted", None)
    asked = []

    def cycle(timeout):  # up() fails, then takes longer than the timeout, then comes up
        asked.append(timeout)
        if len(asked) == 1:
            raise CycleFailed("charon gave up", {"ike_retransmits": 3})
        return Cycled(tunnel, 2.5 if len(asked) == 2 else 0.2, None, lambda: {"ike_retransmits": len(asked) - 2})
    result = Setup(SetupParams(count=3, timeout=2)).run(_context(FakeClient(), cycle))
    m = result.metrics
    assert asked == [2.0, 2.0, 2.0]  # the key exchange is bounded by the timeout
    assert (m["cycles"], m["setups_ok"], m["setups_failed"], m["setup_timeout_s"]) == (3, 1, 2, 2.0)
    # ranked [0.2+, >T, >T]: the median falls on a censored cycle, so it is not given; nor max or mean
    assert "setup_p50_s" not in m and "setup_max_s" not in m and "setup_mean_s" not in m
    assert m["setup_min_s"] >= 0.2 and m["ike_retransmits_p50"] == 1 and m["ike_retransmits_max"] == 3
    first, second, third = (t.data for t in result.trials)
    assert first["censored"] and first["reason"] == "up() failed: charon gave up" and first["ike_retransmits"] == 3
    assert second["censored"] and second["reason"] == "up() took 2.5 s" and second["up_s"] == 2.5
    assert not third["censored"] and third["ike_retransmits"] == 1 and result.trials[2].duration_s == third["setup_s"]
    assert len(result.series["setup_s"]) == 1
    no_reply = Setup(SetupParams(count=2, timeout=1)).run(_context(FakeClient(reply=False), lambda timeout: Cycled(tunnel, 0.1)))
    assert no_reply.metrics["setups_failed"] == 2 and "setup_min_s" not in no_reply.metrics
    assert no_reply.trials[0].data["reason"] == "no reply from 10.0.0.9 within 1 s"


def test_censored_percentile_is_given_only_where_it_falls_on_completed_cycles():
    assert censored_percentile([1.0, 2.0, 3.0], 0, 0.5) == 2.0
    assert censored_percentile([1.0, 2.0], 1, 0.5) == 2.0  # exactly on the second
    assert censored_percentile([1.0, 2.0], 2, 0.5) is None  # between 2 and a censored one
    assert censored_percentile([1.0, 3.0, 5.0, 7.0], 1, 0.5) == 5.0
    assert censored_percentile([1.0, 3.0, 5.0, 7.0], 1, 0.95) is None
    assert censored_percentile([], 2, 0.5) is None


def test_rekey_impact_reads_the_second_before_and_the_two_after():
    throughput = [(1.0, 100.0), (2.0, 100.0), (3.0, 20.0), (4.0, 60.0), (5.0, 90.0), (6.0, 10.0)]
    probe = [(t / 10, 1.0 if t != 25 else 30.0) for t in range(60) if t not in (26, 27)]
    sent = [t / 10 for t in range(60)]
    detail = impact(2.2, 0.1, {"how": "test"}, throughput, probe, sent)
    assert detail["throughput_before_bps"] == 100.0 and detail["throughput_after_min_bps"] == 20.0
    assert detail["dip_pct"] == 80.0 and detail["rtt_max_ms"] == 30.0 and detail["pings_lost"] == 2
    assert detail["how"] == "test"  # 6.0's 10 is 3.8 s after: outside the window
    metrics = rekey_metrics([(2.2, "rekey", detail)], throughput, probe)
    assert metrics["rekeys"] == 1 and metrics["dip_max_pct"] == 80.0 and metrics["rekey_rtt_max_ms"] == 30.0


CHARON_LOG = """23:59:59.990 12[CFG] vici initiate CHILD_SA 'net'
23:59:59.995 15[IKE] initiating IKE_SA vpb[1] to 10.201.2.2
00:00:00.001 11[IKE] IKE_SA vpb[1] established between 10.201.1.2[client@vpnbench]...10.201.2.2[server@vpnbench]
00:00:00.007 11[IKE] CHILD_SA net{1} established with SPIs fc0b23dc_i 8b1682df_o and TS 10.98.0.1/32 === 10.98.0.2/32
"""


def test_handshake_from_charons_log_across_midnight():
    assert handshake_seconds(CHARON_LOG) == pytest.approx(0.012)
    assert handshake_seconds(CHARON_LOG.splitlines()[1]) is None
    assert retransmits(CHARON_LOG) == 0
    resent = "00:00:01.002 05[IKE] retransmit 1 of request with message ID 0\n"
    assert retransmits(resent + resent.replace("ID 0", "ID 1").replace("mit 1", "mit 2")) == 2


def test_installed_children_are_the_newest_installed_per_child():
    sas = {"list-sa event": [{"vpb": {"state": "ESTABLISHED", "child-sas": {
        "net-1": {"name": "net", "state": "REKEYED", "uniqueid": "1", "spi-in": "aa"},
        "net-2": {"name": "net", "state": "INSTALLED", "uniqueid": "2", "spi-in": "bb"},
        "net-3": {"name": "net", "state": "INSTALLING", "uniqueid": "3", "spi-in": "cc"},
        "net2-4": {"name": "net2", "state": "INSTALLED", "uniqueid": "4", "spi-in": "dd"}}}}]}
    assert {name: child["spi-in"] for name, child in installed_children(sas).items()} == {"net": "bb", "net2": "dd"}
    assert installed_children({}) == {}


@pytest.mark.parametrize("technique, entry, message", [
    ("wireguard", 'kind = "setup"\ncount = 0', "measurement[1].count"),
    ("wireguard", 'kind = "setup"\ncount = 1001', "measurement[1].count"),
    ("wireguard", 'kind = "rekey"\nrekey_every = "0s"', "measurement[1].rekey_every"),
    ("wireguard", 'kind = "rekey"\nduration = "3s"\nrekey_every = "2s"', "measurement[1]: duration: 3 s leaves no rekey"),
    ("openvpn", 'kind = "rekey"', "technique[1]: openvpn has no command to renegotiate"),
    ("macsec", 'kind = "rekey"', "technique[1]: macsec: vpnbench cannot renew its keys on demand"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, technique, entry, message):
    (tmp_path / "c.toml").write_text(f'[[technique]]\nkind = "{technique}"\n[[measurement]]\n{entry}\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "c.db").exists()


class FakeTechnique:
    """Records down/up; up() fails when told to (its daemon dead with last words when given)."""

    def __init__(self, fail: bool = False, died: str | None = None):
        self.fail, self.calls, self.handshake_s, self.exchange_timeout = fail, [], 0.01, None
        self.died, self.tunnel = died, None

    def failure(self):
        return self.died

    def handshake_attempts(self):
        return {"tries": len(self.calls)}

    def down(self):
        self.calls.append("down")

    def up(self, backend):
        self.calls.append(f"up {backend}")
        if self.died:
            self.tunnel = Tunnel(backend, {}, {}, "encrypted", None)  # set before the daemon died, as up() does
        if self.fail:
            raise TechniqueError("daemon did not start")
        return Tunnel(backend, {"ipv4": "10.0.0.2"}, {"ipv4": "10.0.0.1"}, "encrypted", None)


def test_the_runners_cycle_hands_the_new_tunnel_to_the_bringup_and_leaves_a_failure_down():
    from vpnbench.run.bringup import cycler
    from vpnbench.store.records import Bringup

    bringup = Bringup("run", "wg", "wireguard", "userspace", "now")
    technique = FakeTechnique()
    cycled = cycler(technique, bringup)(3.0)
    assert technique.calls == ["down", "up userspace"] and bringup.tunnel is cycled.tunnel
    assert cycled.up_s >= 0 and cycled.handshake_s == 0.01 and cycled.attempts() == {"tries": 2}
    assert technique.exchange_timeout is None  # the bound holds for that up() only
    broken = FakeTechnique(fail=True)
    with pytest.raises(CycleFailed, match="daemon did not start") as failed:
        cycler(broken, bringup)()
    assert failed.value.attempts == {"tries": 2}  # counted before the daemons were stopped
    assert broken.calls == ["down", "up userspace", "down"]  # so the next cell brings it up afresh
    dead = FakeTechnique(fail=True, died="vpncloud exited: Failed to send message")
    with pytest.raises(CycleFailed) as failed:
        cycler(dead, bringup)()
    assert str(failed.value) == "daemon did not start; vpncloud exited: Failed to send message"  # read before down()


def _done(up, first, handshake=None):
    return {"up_s": up, "first_packet_s": first, "setup_s": up + first, "handshake_s": handshake, "censored": False}


def test_the_set_up_parts_rank_censored_cycles_as_the_whole_does():
    from vpnbench.measure.setup import censored, summary

    # 3 cycles up, 3 censored for want of a reply (up() returned after 0.5 s each time)
    cycles = [_done(0.2, 0.1, 0.05), _done(0.3, 0.2, 0.06), _done(0.4, 0.3, 0.07)]
    cycles += [censored("no reply", {}, 0.5) for _ in range(3)]
    m = summary(cycles, 2.0)
    # the medians of the completed cycles alone were 0.2 s and 0.06 s: the median of six falls
    # between the third known one and a censored one, as the whole's does
    assert "first_packet_p50_s" not in m and m["first_packet_p50_s_censored"] == 1, m
    assert "handshake_p50_s" not in m and m["handshake_p50_s_censored"] == 1
    assert "setup_p50_s" not in m and m["setup_p50_s_censored"] == 1
    assert m["up_p50_s"] == pytest.approx(0.45)  # up() returned in every cycle: [0.2, 0.3, 0.4, 0.5 x 3]
    # 4 up and 1 censored (up() failed): the censored one ranks above, the median is the third known
    cycles = [_done(0.1, 0.4, 0.01), _done(0.2, 0.1, 0.02), _done(0.3, 0.3, 0.03), _done(0.4, 0.2, 0.04),
              censored("up() failed: gave up", {})]
    m = summary(cycles, 2.0)
    assert m["first_packet_p50_s"] == pytest.approx(0.3) and m["handshake_p50_s"] == pytest.approx(0.03)  # were 0.25, 0.025
    assert m["up_p50_s"] == pytest.approx(0.3)  # up() has no time in the failed cycle: censored too
    assert [name for name in m if name.endswith("_censored")] == ["setup_p95_s_censored"]  # 3.8 of 0..4: above
    # a daemon whose log does not time the key exchange (WireGuard): no handshake, censored or not
    m = summary([_done(0.1, 0.1), censored("no reply", {}, 0.2)], 2.0)
    assert "handshake_p50_s" not in m and "handshake_p50_s_censored" not in m


@pytest.mark.netns
def test_setup_rate_counts_from_when_fping_ran_not_from_when_it_was_asked_for(testbed):
    """Over ssh or in a TCG guest fping starts tens of ms after it is asked to: a tunnel's time is
    fping's real start (the client's clock as it was exec'd) plus its own seconds to the reply, so a
    fping that starts 0.3 s late cannot make the set-up read shorter than those 0.3 s."""
    from types import SimpleNamespace

    from vpnbench.measure.setup_rate import SetupRate

    late = 0.3
    server = testbed.underlay_map()["server"]["ipv4"]

    class LateStart:
        """The testbed's client, whose programs start `late` s after they are asked to."""

        def __getattr__(self, name):
            return getattr(testbed.client, name)

        def spawn(self, argv, name, **more):
            return testbed.client.spawn(["sh", "-c", f'sleep {late}; exec "$@"', "late", *argv], name=name, **more)

    tunnel = SimpleNamespace(every=lambda: [SimpleNamespace(server={"ipv4": server})])
    ctx = SimpleNamespace(client=LateStart(), cycle=lambda: Cycled(tunnel, up_s=0.001))
    cycle, output = SetupRate(SetupRate.Params(kind="setup_rate", count=1, timeout=5))._cycle(ctx)
    assert cycle["probe_at_s"] >= late, (cycle, output)  # asked for at ~0: it ran 0.3 s later
    assert late <= cycle["first_s"] <= cycle["wall_s"], cycle
