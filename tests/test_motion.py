"""The motion kind: its recovery arithmetic as a pure function, bad input refused before anything
runs, and two real campaigns on the local testbed with a router (rehearsal-sized): the client
moving to another network under the baseline (the control), WireGuard (wireguard-go, the pinned
build), strongSwan libipsec with MOBIKE on and off, and OpenVPN with --float; then WireGuard's
path cut and its server restarted. Each cell runs after the one before it changed the path, so its
replies before its own event show that the path was put back."""

import json
import time

import pytest

from conftest import assert_refused, run_cli
from timing import SLOWNESS
from vpnbench.hosts import builds
from vpnbench.measure.motion import Reply, recovery, stamped_replies
from vpnbench.store.database import Store

WINDOW = 2.0 * SLOWNESS  # seconds: a technique that does not follow the move costs this much
PROBE_INTERVAL = 0.02  # the kind's default
WIREGUARD_GO = f'implementation = "wireguard-go"\nversion = "{builds.recipe("wireguard-go").default}"\nkeepalive = 25'

HEAD = """[campaign]
name = "motion"
[testbed]
kind = "local"
router = {router}
"""


def motion(event: str, **more) -> str:
    extra = "".join(f"{key} = {value}\n" for key, value in more.items())
    return f'[[measurement]]\nkind = "motion"\nevent = "{event}"\nbefore = 0.4\nwindow = {WINDOW:g}\nafter = 0.2\n{extra}'


# --- pure parts ---------------------------------------------------------------------------------


def replies(rtt_ms: float, *sent: float) -> list[Reply]:
    """Replies to pings sent every 0.1 s (numbered from 1 at 0 s) at these times."""
    return [Reply(t, rtt_ms, round(t * 10) + 1) for t in sent]


def test_recovery_counts_from_the_event_to_the_first_reply_to_a_ping_sent_after_it():
    # replies until 0.5 s, none for 0.6-0.9, again from 1.0
    got = replies(2.0, 0, .1, .2, .3, .4, .5) + replies(4.0, 1.0, 1.1, 1.2, 1.3)
    metrics, detail = recovery(got, moved=0.55, counted_from=0.55, window=2.0, interval=0.1)
    assert metrics["recovered"] == 1.0
    assert metrics["recovery_s"] == pytest.approx(1.0 + 0.004 - 0.55)  # the reply to the 1.0 s ping
    assert metrics["outage_s"] == pytest.approx(1.004 - 0.502)  # from the 0.5 s ping's reply
    assert metrics["pings_lost"] == 4 and detail["pings_lost"] == 4  # 0.6, 0.7, 0.8, 0.9
    assert metrics["rtt_before_p50_ms"] == 2.0


def test_a_cut_counts_recovery_from_the_restoration_and_the_outage_from_the_cut():
    got = replies(1.0, 0, .1, .2, .3, .4) + replies(1.0, 2.5, 2.6, 2.7)
    metrics, _ = recovery(got, moved=0.45, counted_from=2.45, window=2.0, interval=0.1)
    assert metrics["recovery_s"] == pytest.approx(2.501 - 2.45)
    assert metrics["outage_s"] == pytest.approx(2.501 - 0.401)
    assert metrics["pings_lost"] == 20  # 0.5 .. 2.4


def test_no_reply_within_the_window_is_not_recovered_and_says_so():
    got = replies(1.0, 0, .1, .2, .3, .4, 3.5)  # a reply after the window does not count
    metrics, detail = recovery(got, moved=0.45, counted_from=0.45, window=2.0, interval=0.1)
    assert metrics["recovered"] == 0.0 and "recovery_s" not in metrics and "outage_s" not in metrics
    assert detail["result"] == "not recovered within 2 s"
    assert metrics["pings_lost"] == 20  # 0.5 .. 2.4: every ping the window waited for


def test_reply_times_come_from_pings_own_stamps_not_from_its_sequence_numbers():
    # the third reply came 1.5 s after the first although its number says 0.2 s: ping fell behind
    output = ("[1000.0010] 64 bytes from 10.99.0.2: icmp_seq=1 ttl=64 time=1.00 ms\n"
              "[1000.1010] 64 bytes from 10.99.0.2: icmp_seq=2 ttl=64 time=1.00 ms\n"
              "[1001.5020] 64 bytes from 10.99.0.2: icmp_seq=3 ttl=64 time=2.00 ms\n")
    got = stamped_replies(output, origin=999.9)  # the host's clock read 999.9 at the cell clock's zero
    assert [reply.seq for reply in got] == [1, 2, 3]
    assert [round(reply.sent, 4) for reply in got] == [0.1, 0.2, 1.6]
    assert got[2].arrived == pytest.approx(1.602)


@pytest.mark.netns
def test_a_ping_that_starts_late_is_placed_when_it_ran_not_when_it_was_asked_for(testbed):
    """Over ssh or in a TCG guest ping starts tens of ms after it is asked to. Its replies go on the
    cell's clock by its own stamps and the client's clock (Host.clock_offset), so no ping reads as
    sent before the process that sent it existed: here one asked for at 0 that starts 0.3 s later."""
    late = 0.3
    server = testbed.underlay_map()["server"]["ipv4"]
    offset, uncertainty = testbed.client.clock_offset()
    assert uncertainty == 0.0  # a namespace reads this machine's clock
    asked = time.monotonic()
    proc = testbed.client.spawn(["sh", "-c", f'sleep {late}; exec ping -n -D -i 0.02 -c 10 "$1"', "ping", server],
                                name="ping")
    proc.wait(10)
    got = stamped_replies(proc.output(), offset + asked)
    assert len(got) >= 8, proc.output()
    assert min(reply.sent for reply in got) >= late, got  # counted from the ask, it would read ~0
    assert got[-1].sent - got[0].sent >= 0.02 * (got[-1].seq - got[0].seq) * 0.99  # ping's own spacing


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("router, technique, event, line", [
    ("false", 'kind = "wireguard"', "cut",
     "measurement[1].event: 'cut' changes the path at the router and needs [testbed] router = true; allowed here: restart"),
    ("true", 'kind = "openvpn"\ntunnels = 2', "restart",
     "measurement[1].event: 'restart' cannot run on technique[1] (openvpn: vpnbench restarts the server of one tunnel"),
    ("true", 'kind = "wireguard"\nimplementation = "kernel"', "restart",
     "measurement[1].event: 'restart' cannot run on technique[1] (wireguard: the kernel's WireGuard has no daemon"),
])
def test_a_motion_the_testbed_or_a_technique_cannot_make_is_refused_in_one_line(tmp_path, router, technique, event, line):
    assert_refused(tmp_path, HEAD.format(router=router) + f"[[technique]]\n{technique}\n" + motion(event), line)


# --- real runs ----------------------------------------------------------------------------------


def run_campaign(tmp_path, name: str, text: str) -> list[dict]:
    (tmp_path / f"{name}.toml").write_text(text)
    db = tmp_path / f"{name}.db"
    result = run_cli("run", str(tmp_path / f"{name}.toml"), "--db", str(db))
    assert result.returncode == 0, result.stdout + result.stderr
    out = tmp_path / f"{name}.json"
    assert run_cli("export", str(db), "--format", "json", "-o", str(out)).returncode == 0
    cells = json.loads(out.read_text())
    store = Store(db)
    for cell in cells:
        cell["rtt"] = [(point.t, point.value) for point in store.series(cell["cell_id"], "rtt_ms")]
    assert all(cell["status"] == "ok" for cell in cells), [(c["technique"], c["error"]) for c in cells]
    return cells


def event(cell: dict, kind: str) -> dict:
    [found] = [e for e in cell["events"] if e["kind"] == kind]
    return found


def assert_recovered(cell: dict, counted_from: str) -> None:
    """Recovered within the window, and the probe's series shows it: replies before the event
    (the path the cell before left was put back), then a gap, then replies again from the
    recovery on."""
    metrics, start = cell["metrics"], event(cell, counted_from)["t"]
    assert metrics["recovered"] == 1.0, (cell["technique"], cell["events"])
    assert 0 < metrics["recovery_s"] <= WINDOW
    assert metrics["outage_s"] >= metrics["recovery_s"] > 0
    moved = event(cell, f"motion-{cell['measurement_params']['event']}")["t"]
    times = [t for t, _ in cell["rtt"]]
    assert any(t < moved for t in times) and any(t >= start for t in times)
    # the resolution: one probe interval; a namespace reads this machine's clock exactly
    assert metrics["recovery_resolution_s"] == PROBE_INTERVAL
    # a cut: nothing came through it. The probe's times are the client's stamps and the event's the
    # moment nft returned, so a ping at either edge may sit a little across it.
    slack = 3 * PROBE_INTERVAL
    assert not any(moved + slack < t < start - slack for t in times)
    first_after = min(t + rtt / 1000 for t, rtt in cell["rtt"] if t >= start)
    assert first_after - start == pytest.approx(metrics["recovery_s"], abs=1e-3)


@pytest.mark.netns
def test_clients_that_move_to_another_network_and_wireguard_cut_and_restarted(tmp_path, clean_machine):
    techniques = ['[[technique]]\nkind = "baseline"', f'[[technique]]\nkind = "wireguard"\n{WIREGUARD_GO}',
                  '[[technique]]\nkind = "ipsec"\nbackend = "userspace"\nlabel = "mobike"',
                  '[[technique]]\nkind = "ipsec"\nbackend = "userspace"\nmobike = false\nlabel = "no-mobike"',
                  '[[technique]]\nkind = "openvpn"\nbackend = "userspace"\nfloat = true']
    moved = run_campaign(tmp_path, "address", HEAD.format(router="true") + "\n".join(techniques) + "\n"
                         + motion("address"))
    by_label = {cell["technique"].split()[0]: cell for cell in moved}
    for label in ("baseline", "wireguard", "mobike"):
        assert_recovered(by_label[label], "motion-address")
        assert event(by_label[label], "motion-address")["detail"]["old"] == "10.201.1.2"  # put back after the cell before
    # MOBIKE off and OpenVPN's point-to-point mode do not follow the client within the window:
    # a result, said as such, with every ping of the window lost
    for label in ("no-mobike", "openvpn"):
        cell = by_label[label]
        assert cell["metrics"]["recovered"] == 0.0 and "recovery_s" not in cell["metrics"]
        assert event(cell, "not-recovered")["detail"]["result"] == f"not recovered within {WINDOW:g} s"
        assert cell["metrics"]["pings_lost"] >= WINDOW / PROBE_INTERVAL - 2
    assert "cycled" not in [e["kind"] for e in by_label["baseline"]["events"]]  # the control has nothing to renew
    assert all(event(by_label[label], "cycled")["detail"]["up_s"] > 0 for label in ("wireguard", "no-mobike"))

    failover = run_campaign(tmp_path, "failover", HEAD.format(router="true") + techniques[1] + "\n"
                            + motion("cut", outage=0.5) + motion("restart"))
    cut, restart = sorted(failover, key=lambda cell: cell["cell_id"])
    assert_recovered(cut, "path-restored")
    assert event(cut, "path-restored")["detail"]["cut_s"] >= 0.5
    # ping never sends faster than its interval (here it took ~24 ms for 20), so the cut lost at most
    # one ping per interval of the outage
    assert cut["metrics"]["outage_s"] >= 0.5 and 0 < cut["metrics"]["pings_lost"] <= cut["metrics"]["outage_s"] / PROBE_INTERVAL
    assert_recovered(restart, "motion-restart")  # with keepalive, the restarted server greets the client
    assert event(restart, "motion-restart")["detail"]["persistent_keepalive"] == 25
