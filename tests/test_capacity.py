"""Capacity measurements through the real netns testbed: the UDP rate sweep, the MTU search,
the PMTU black hole, the zero-loss rate search; and their bad input refused through the CLI
before anything runs."""

import pytest

from bounds import cell_wall_seconds
from conftest import assert_refused, leftovers, run_campaign, run_cli

SWEEP = """
[campaign]
name = "sweep"
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[measurement]]
kind = "udp_sweep"
rate = "100M..400M step 150M"
duration = "1s"
"""

MTU = """
[campaign]
name = "mtu"
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[technique]]
kind = "ipsec"
backend = "userspace"
[[technique]]
kind = "openvpn"
[[measurement]]
kind = "pmtu_blackhole"
icmp = "drop"
mtu = 1300
duration = "1s"
timeout = "0.1s"
[[measurement]]
kind = "pmtu_blackhole"
icmp = "pass"
mtu = 1300
duration = "1s"
timeout = "0.1s"
[[measurement]]
kind = "mtu"
"""


@pytest.mark.netns
def test_udp_sweep_baseline_keeps_up_and_wireguard_shows_its_gap(tmp_path, clean_machine):
    import vpnbench

    _, cells = run_campaign(tmp_path, SWEEP)
    by = {c["technique"]: c for c in cells}
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    base, wg = by["baseline"]["metrics"], by["wireguard"]["metrics"]
    assert by["wireguard"]["measurement_params"]["rate"] == [100_000_000, 250_000_000, 400_000_000]
    # The baseline keeps up at every step (its knee is the top step), unless this host is too
    # slow for 400 Mbit/s: then the sweep says whose limit it met, the host's (the receiving
    # socket, the generator, or both with neither dominant: "mixed"), never the path's: a veth
    # pair loses nothing of its own.
    if base.get("knee_at_top") == 1:
        # kept up by the sweep's own rule (max_loss, 1 %); how close to 400 Mbit/s iperf3's sender
        # came is the host's (the rule counts loss, not a shortfall of the sender)
        assert base["knee_found"] == 1 and base["knee_bps"] == 400e6
        assert base["top_loss_pct"] <= 1.0 and 0 < base["top_received_bps"] <= base["top_sent_bps"] * 1.01, base
    else:
        assert any(base.get(f"knee_limit_{site}") for site in ("receiver", "generator", "mixed")), base
        host_lost = base.get("knee_lost_receiver", 0) + base.get("knee_lost_generator", 0)
        assert base.get("knee_lost_path", 0) < host_lost, base
    # wireguard-go: either it kept up everywhere (then its knee is the top step) or the knee is below.
    assert wg["knee_found"] in (0, 1) and wg["steps"] == 3
    if wg["knee_found"]:
        assert wg["knee_bps"] in (100e6, 250e6, 400e6)
        assert wg["knee_at_top"] == (wg["knee_bps"] == 400e6)
    # The sent-vs-received gap at the top step is in the export, and consistent with its parts.
    assert wg["top_gap_bps"] == pytest.approx(wg["top_sent_bps"] - wg["top_received_bps"])
    data = vpnbench.load(tmp_path / "c.db")
    trials = data.trials
    assert len(trials) == 6 and sorted(trials.offered_bps.unique()) == [100e6, 250e6, 400e6]
    assert (trials.sent_packets >= trials.received_packets).all()
    assert all("sender_bps" in d and "receiver_bps" in d for d in trials.data)
    assert set(data.series.name) >= {"offered_bps", "throughput_bps", "sender_throughput_bps"}


# Alone (exclusive): the 50 Mbit/s step counts as sent in full only within two of iperf3's 1 ms
# pacing ticks of its one second. Beside another machine test and the units, iperf3 was held off
# its core long enough to send 47.5-49.4 of 50 (2 of 15 tries here, and in a fresh clone's make test of 2f6f854, whose CI failed): the sweep then
# rightly names the generator at 50 and finds no knee.
@pytest.mark.netns
@pytest.mark.exclusive
def test_udp_sweep_whose_sender_is_held_back_puts_the_knee_at_what_was_sent(testbed):
    """A generator that cannot send the top rate, and loses nothing: an HTB class of 150 Mbit/s on
    the client's own interface holds iperf3 back (its socket blocks while its datagrams wait in
    the class's queue: some 90 datagrams of 1300 B fill the 208 KiB send buffer long before the
    queue's 1000 packets), so 250 Mbit/s is never sent and nothing is dropped. The knee is 50,
    the rate that was sent in full, and the limit the generator: before, it was 250 Mbit/s,
    a rate never sent."""
    from vpnbench.hosts.route import route_device
    from vpnbench.measure.base import MeasureContext, PortAllocator
    from vpnbench.measure.udp_sweep import UdpSweep, UdpSweepParams
    from vpnbench.techniques.base import TechniqueContext
    from vpnbench.techniques.baseline import Baseline, BaselineParams
    from vpnbench.testbeds.probe import LocalKernelProbe

    probe = LocalKernelProbe(testbed.resources)
    tctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), testbed.resources, probe)
    tunnel = Baseline(BaselineParams(), tctx).up("kernel")
    device = route_device(testbed.client, tunnel.server_addrs["ipv4"])
    testbed.client.run(["tc", "qdisc", "add", "dev", device, "root", "handle", "1:", "htb", "default", "10"])
    testbed.client.run(["tc", "class", "add", "dev", device, "parent", "1:", "classid", "1:10", "htb",
                        "rate", "150mbit", "ceil", "150mbit"])
    sweep = UdpSweep(UdpSweepParams(rate=["50M", "250M"], duration=1.0))
    result = sweep.run(MeasureContext(testbed.client, testbed.server, tunnel, PortAllocator()))
    m = result.metrics
    low, high = result.trials
    assert high.data["sender_bps"] < 0.7 * 250e6, result.raw["sweep"]  # at most 150 of the 250 sent
    assert m.get("knee_bps") == 50e6 and m["knee_at_top"] == 0 and m["knee_limit_generator"] == 1, result.raw["sweep"]
    # 50 Mbit/s went out in full; were a few datagrams lost, the receiver's socket lost them (with
    # the CPU shared by busy loops iperf3's receiver fell behind: 16 of 4 806), never the generator
    assert high.data["loss_site"] == "generator" and low.data.get("loss_site") in (None, "receiver")
    assert "before the generator sent short of the offered rate" in result.raw["sweep"]


@pytest.fixture(scope="module")
def mtu_run(tmp_path_factory):
    """One campaign for the MTU search and the PMTU black hole (its cells first: the MTU search
    after them finds the path as it was, so it shows that each black-hole cell undid its changes).
    Returns (its directory, its exported cells); the machine is clean before and after."""
    tmp_path = tmp_path_factory.mktemp("mtu")
    assert leftovers() == []
    _, cells = run_campaign(tmp_path, MTU)
    assert leftovers() == []
    return tmp_path, cells


@pytest.mark.netns
def test_mtu_equals_expected_or_is_explained(mtu_run):
    import vpnbench

    tmp_path, cells = mtu_run
    cells = [c for c in cells if c["measurement"] == "mtu"]
    by = {c["technique_params"]["kind"]: c for c in cells}
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    for cell in cells:
        assert cell["metrics"]["underlay_mtu_bytes"] == 1500
    assert by["baseline"]["metrics"]["mtu_bytes"] == 1500 and by["baseline"]["metrics"]["overhead_bytes"] == 0
    wg = by["wireguard"]["metrics"]
    assert wg["mtu_bytes"] == 1420 and wg["overhead_bytes"] == 60 and wg["mtu_protocol_bytes"] == 1440
    ipsec = by["ipsec"]["metrics"]  # libipsec: ESP in UDP, its TUN device's MTU is the limit
    assert ipsec["mtu_bytes"] == 1400 and ipsec["mtu_protocol_bytes"] == 1438
    ovpn = by["openvpn"]["metrics"]  # tun-mtu 1500; bigger outer packets are fragmented
    assert ovpn["mtu_bytes"] == 1500 and ovpn["mtu_protocol_bytes"] == 1448
    for cell in cells:
        assert cell["metrics"]["mtu_difference_bytes"] == 0, cell["technique"]
    assert "expected" in (tmp_path / "c.db").read_bytes().decode("latin-1")  # the explanation is stored raw
    assert len(vpnbench.load(tmp_path / "c.db").metrics) > 0


TCP_IP_HEADERS = 20 + 20 + 12  # the IPv4 and TCP headers and the timestamp option around an MSS's payload


@pytest.mark.netns
def test_pmtu_black_hole_with_icmp_dropped_and_passed(mtu_run):
    """The router's link to the server narrowed to 1300 bytes, with ICMP too-big dropped and passed,
    for the baseline and three tunnels. What must hold follows from the sizes alone."""
    _, cells = mtu_run
    cells = [c for c in cells if c["measurement_params"]["kind"] == "pmtu_blackhole"]
    assert len(cells) == 8 and all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    by = {(c["technique_params"]["kind"], c["measurement_params"]["icmp"]): c["metrics"] for c in cells}
    for (kind, icmp), m in by.items():
        assert m["restored"] == 1, (kind, icmp)  # both MTUs back and the nft table gone, read back
        assert m["link_mtu_bytes"] == 1300 and m["icmp_dropped"] == (icmp == "drop")
        # The effective MTU fits one outer packet on the narrowed link, unless outer packets were
        # fragmented (by the router, DF clear, or by a sender that learned the path's MTU).
        assert m["mtu_bytes"] <= m["mtu_protocol_bytes"] or m["fragments"] > 0, (kind, icmp, m)
        assert m["datagram_1200_through"] == 1, (kind, icmp)  # 1200 + any overhead here fits 1300
    for icmp in ("drop", "pass"):
        base = by["baseline", icmp]
        # No overhead: the bisection finds the link itself, and 1400 bytes with DF set never cross it:
        # dropped by the router, which signals it (counted) whether or not its ICMP is let through.
        assert base["mtu_bytes"] == base["mtu_protocol_bytes"] == 1300, base
        assert base["datagram_1400_through"] == 0 and base["icmp_too_big"] >= 1, base
        # TCP crosses anyway: the server's own interface is 1300 bytes, so its SYN's MSS fits.
        assert base["tcp_mss_bytes"] + TCP_IP_HEADERS <= 1300 and base["tcp_through"] == 1, base
        assert 0 < base["tcp_bytes_received"] * 8 / base["tcp_goodput_bps"] <= max(map(cell_wall_seconds, cells))
    for kind in ("wireguard", "ipsec", "openvpn"):
        m = by[kind, "drop"]
        # A full segment's outer packet does not fit 1300 bytes: with nothing fragmented and no
        # PLPMTUD, no segment of full size arrives, so nothing beyond an initial window does.
        if m["fragments"] == 0 and m.get("tcp_mtu_probing") == 0 \
                and m["tcp_mss_bytes"] + TCP_IP_HEADERS > m["mtu_protocol_bytes"]:
            assert m["tcp_through"] == 0 and "tcp_progress_s" not in m, (kind, m)


def test_pmtu_black_hole_without_a_router_is_refused(tmp_path):
    assert_refused(tmp_path, '[testbed]\nrouter = false\n[[technique]]\nkind = "baseline"\n'
                   '[[measurement]]\nkind = "pmtu_blackhole"\n',
                   "measurement[1].kind: 'pmtu_blackhole' narrows the router's link to the server: "
                   "it needs [testbed] router = true")


SEARCH = """
[campaign]
name = "search"
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[measurement]]
kind = "rate_search"
min_rate = "20M"
max_rate = "{max_rate}"
relative_width = 0.05
trial_duration = "1s"
final_trial_duration = "1s"
duration_sum = "1s"
budget = "50s"
"""


def _search_limit(metrics: dict, goal: str) -> float:
    """The rate a goal reached: its NDR/PDR, where the generator stopped it, or (not found) the
    lowest load, which already lost."""
    return metrics.get(f"{goal}_bps") or metrics.get("generator_limit_bps") or metrics[f"{goal}_upper_bound_bps"]


def _one_answer(metrics: dict) -> bool:
    """Exactly one of: an NDR, "generator-limited", or "not found" with the limit the lowest load met."""
    from vpnbench.measure.rate_search import goal_limit

    not_found = metrics.get("ndr_found") == 0 and goal_limit(metrics, "ndr") is not None
    return ("ndr_bps" in metrics) + bool(metrics.get("ndr_generator_limited")) + not_found == 1


@pytest.mark.netns
def test_rate_search_ndr_pdr_and_every_trial_stored(tmp_path, clean_machine):
    import vpnbench

    _, cells = run_campaign(tmp_path, SEARCH.format(max_rate="1G"))
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    by = {c["technique"]: c["metrics"] for c in cells}
    base, wg = by["baseline"], by["wireguard"]
    for m in (base, wg):
        assert _one_answer(m), m
        if "ndr_bps" in m:
            assert m["ndr_pps"] == pytest.approx(m["ndr_bps"] / (8 * 1300))
            assert m["pdr_bps"] >= m["ndr_bps"] * 0.95 if "pdr_bps" in m else True
        assert m["search_seconds"] < 60
    # Which answer each gives is the machine's: with the CPU shared, iperf3 may fall short of even
    # 20 Mbit/s by more than its pacing allows (then "generator-limited", rightly), or wireguard-go's
    # receiving socket may drop at the lowest load ("not found", with the limit it met); that there
    # is exactly one answer, with its numbers consistent, is the product's.
    # No order between the two is asserted: with 1 s trials on this shared 2-core machine the
    # baseline's NDR ranged 187-467 Mbit/s over five runs and its PDR once came out at 254 against
    # wireguard-go's 381 — the receiver's socket, not the path, drops first here. Which technique
    # forwards more is bench/capacity.py's question (longer trials, side by side), not a test's.
    assert _search_limit(base, "pdr") > 0 and _search_limit(wg, "pdr") > 0
    trials = vpnbench.load(tmp_path / "c.db").trials
    for cell in cells:
        stored = trials[trials.cell_id == cell["cell_id"]]
        assert len(stored) == cell["metrics"]["trials"]
        # A search takes several trials, unless its first (at max_rate) already answers it: the
        # generator fell short of the load, or max_rate itself passed (a quiet machine's baseline).
        m = cell["metrics"]
        assert len(stored) >= 3 or m.get("ndr_generator_limited") or m.get("ndr_at_max_rate"), m
        for data in stored.data:  # what iperf3 received came through the server's tunnel device
            counters = data["interfaces"]
            assert counters["server_rx_packets"] >= counters["generator_received"]
            assert "client_tx_packets" in counters and "client_tx_dropped" in counters


@pytest.mark.netns
def test_rate_search_beyond_the_generator_says_so(tmp_path, clean_machine):
    # 64-byte datagrams at up to 100 Gbit/s: 195 M datagrams/s, 5 ns per datagram for one iperf3
    # thread that makes a send call for each: no CPU's system call is that short, on any host.
    text = SEARCH.format(max_rate="100G").replace('[[technique]]\nkind = "wireguard"', "") + "length = 64\n"
    result, cells = run_campaign(tmp_path, text)
    (cell,) = cells
    m = cell["metrics"]
    # The first trial, at 5 Gbit/s, is one the generator could not send: the result says so ...
    assert m["generator_max_sent_bps"] < 0.97 * 100e9 and m["generator_limit_bps"] > 0, m
    import vpnbench

    trials = vpnbench.load(tmp_path / "c.db").trials
    assert trials.data.iloc[0]["generator_limited"] and trials.offered_bps.iloc[0] == 100e9
    # ... and no goal claims a rate at or above where the generator fell short: either the path
    # lost packets below it (a real NDR/PDR), or even the lowest load lost (on a slower host, at
    # the receiving socket: said, with the limit it met), or the goal is reported generator-limited.
    from vpnbench.measure.rate_search import goal_limit

    for goal in ("ndr", "pdr"):
        if m.get(f"{goal}_generator_limited"):
            assert f"{goal}_bps" not in m
        elif m[f"{goal}_found"] == 0:
            assert f"{goal}_bps" not in m and goal_limit(m, goal), m
            said = " ".join((result.stderr + result.stdout).split())  # as read, not as the terminal wrapped it
            assert f"{goal.upper()} not found: even " in said
        else:
            assert m[f"{goal}_bps"] < m["generator_limit_bps"], m


@pytest.mark.netns
def test_rate_search_whose_loss_is_at_the_receiving_socket_names_the_receiver(tmp_path, clean_machine):
    import html

    import vpnbench

    # A 2 KiB socket buffer (iperf3 -w, both ends) holds one or two datagrams: the server's device
    # gets every packet, the receiving socket drops (measured here: 48 % at 20 Mbit/s, 52 % at 100
    # on loopback). A busy host's iperf3 may also fall short of a load (CI's did, at 0.4 % short of
    # 200 Mbit/s): such a trial is the generator's, and a goal whose bound lies there says so.
    text = SEARCH.format(max_rate="100M").replace('[[technique]]\nkind = "wireguard"', "") + 'socket_buffer = "2K"\n'
    result, (cell,) = run_campaign(tmp_path, text)
    m = cell["metrics"]
    assert cell["measurement_params"]["socket_buffer"] == 2048
    trials = vpnbench.load(tmp_path / "c.db").trials
    lossy = [d for d, loss in zip(trials.data, trials.loss_ratio) if loss and loss > 0.01]
    assert lossy, m  # a 2 KiB socket buffer loses: a search without a lossy trial is wrong, not busy
    assert all(d["loss_site"] == "generator" for d in lossy if d["generator_limited"]), lossy
    kept_up = [d for d in lossy if not d["generator_limited"]]
    goals = [goal for goal in ("ndr", "pdr") if not m.get(f"{goal}_generator_limited")]
    if not kept_up or not goals:
        pytest.skip(f"iperf3 fell short of every load that lost, or of both goals' bounds, on this busy host: {m}")
    assert all(d["loss_site"] == "receiver" for d in kept_up), kept_up
    for d in kept_up:  # what the receiver lost reached the server's device
        assert d["interfaces"]["server_rx_packets"] >= d["interfaces"]["generator_sent"]
    assert all(m.get(f"{goal}_limit_receiver") == 1 for goal in goals), m  # the cell
    terminal = result.stdout + result.stderr
    assert "(limit: the receiving socket; receiver " in terminal, terminal  # the terminal, with the count
    assert run_cli("report", str(tmp_path / "c.db"), "-o", str(tmp_path / "r.html")).returncode == 0
    report = html.unescape((tmp_path / "r.html").read_text())
    assert "(limit: the receiving socket; receiver " in report and "receiver_limited" in report  # the report


@pytest.mark.netns
def test_rate_search_with_gen_counts_every_trial_by_gens_sequence_numbers(tmp_path, clean_machine):
    import sqlite3

    import vpnbench

    # 20 Gbit/s of 1300-byte datagrams (1.9 Mpps): at or beyond what the path or gen itself can do here
    text = SEARCH.format(max_rate="20G").replace('[[technique]]\nkind = "wireguard"', "") + 'tool = "gen"\n'
    _, cells = run_campaign(tmp_path, text)
    (cell,) = cells
    assert cell["status"] == "ok", cell["error"]
    m = cell["metrics"]
    assert cell["measurement_params"]["tool"] == "gen" and cell["measurement_label"] == "rate_search_1300_gen"
    assert _one_answer(m), m
    trials = vpnbench.load(tmp_path / "c.db").trials
    # one trial when 20 Gbit/s already passes (GSO batches on a quiet machine) or gen cannot send it
    # (said, never a false NDR); else a bisection
    assert len(trials) == m["trials"] >= (1 if m.get("ndr_generator_limited") or m.get("ndr_at_max_rate") else 2)
    assert trials.offered_bps.iloc[0] == 20e9
    for trial in trials.itertuples():
        assert trial.data["interfaces"]["generator_sent"] == trial.sent_packets  # gen's own count
        assert trial.received_packets <= trial.sent_packets
    names = {row[0] for row in sqlite3.connect(tmp_path / "c.db").execute("SELECT name FROM raw_outputs")}
    assert "trial1_gen_client" in names and not any("iperf" in name for name in names)


def test_latency_loads_default_to_csits_four_with_gen_and_none_with_iperf3():
    from vpnbench.measure.rate_search import LATENCY_LOADS, RateSearchParams, load_tag

    assert RateSearchParams(tool="gen").latency_loads() == LATENCY_LOADS == (0.0, 0.1, 0.5, 0.9)
    assert RateSearchParams().latency_loads() == ()  # iperf3 gives no one-way delay
    assert [load_tag(share) for share in LATENCY_LOADS] == ["idle", "pdr10", "pdr50", "pdr90"]
    # a search stored before the loads existed keeps its settings (--resume and comparisons match on them)
    assert "latency_at_pdr" not in RateSearchParams(tool="gen").settings()
    assert RateSearchParams(tool="gen", latency_at_pdr=[0.5]).settings()["latency_at_pdr"] == [0.5]


# The rise from 10 to 90 % of the PDR is queueing at the tunnel: it follows where the tunnel's own
# service rate sets the PDR, well below what gen reaches on this host. Where gen itself reaches
# little more (the CPU halved: gen 45 Mbit/s, wireguard-go's PDR 35, stop 55), both share starved
# cores, the PDR is set by losses while the daemon waits for a core (286 of 331 at the tun device),
# and the delays fell with load (p50 170 → 137 µs): the wake-up of a sleeping daemon, not a queue.
QUEUE_MARGIN = 0.5


@pytest.mark.netns
def test_latency_at_fractions_of_the_pdr_rises_from_ten_to_ninety_percent(tmp_path, clean_machine):
    """CSIT's latency: after the search, one-way delay at idle and at 10, 50 and 90 % of the PDR
    found, from gen's histograms. Where the search found the path's limit (a tunnel's PDR, below
    max_rate), the queues towards it fill as the load nears it: the median at 90 % lies above the
    one at 10 %. Idle is not asserted to be the lowest: over the kernel's sockets a trickle pays the
    wake-up of a sleeping receiver (and tunnel daemon) for every packet, which a loaded one does not
    (here: baseline 41.6 µs idle vs 11.6 µs at 10 %; wireguard-go 429 vs 245 µs; bench/RESULTS.md);
    CSIT's forwarders busy-poll, so their idle figure is their lowest.
    Where the generator stopped the search (the bare path outran gen on a busy host, as on CI),
    there is no PDR to take shares of: the cell says so and holds no latency figures. wireguard-go
    does gen's work plus a TUN read, a seal and a send per packet on the same host, so its limit
    usually lies below gen's and below max_rate (10G); where it does not (the CPU halved by busy
    loops: gen stopped at ~130 Mbit/s), the test skips with the reason, after checking the cells
    said so."""
    text = SEARCH.format(max_rate="10G") + 'tool = "gen"\nlatency_trial_duration = "2s"\n'
    _, cells = run_campaign(tmp_path, text)
    from vpnbench.store.database import Store

    store = Store(tmp_path / "c.db", read_only=True)
    raw = {cell["cell_id"]: store.raw_outputs(cell["cell_id"]) for cell in cells}
    store.close()
    host_bound = []
    # gen's own limit is the host's: where one cell's search found it (the bare path's, as a rule),
    # it bounds every cell's. A tunnel cell that gen outran records only max_rate there (stop 58's
    # halved run: the baseline's gen limit 20 Mbit/s, wireguard-go's PDR 30 Mbit/s with "10G").
    gen_limit = min(cell["metrics"].get("generator_limit_bps", float("inf")) for cell in cells)
    for cell in cells:
        m = cell["metrics"]
        assert cell["status"] == "ok", (cell["technique"], cell["error"])
        if "pdr_bps" not in m:
            # no PDR: gen stopped the search, or even the lowest rate lost more than the PDR's
            # share (halved CPU, stop 59: wireguard-go lost 0.5 % at 20 Mbit/s, in its TUN device)
            assert m.get("pdr_generator_limited") or m.get("pdr_found") == 0, m
            assert not any(k.startswith("latency_") for k in m), m
            assert "no latency at shares of the PDR" in raw[cell["cell_id"]]["latency"]
            continue
        for tag, share in (("idle", 0.0), ("pdr10", 0.1), ("pdr50", 0.5), ("pdr90", 0.9)):
            offered = m[f"latency_{tag}_offered_bps"]
            assert offered == (100 * 8 * 1300 if share == 0 else pytest.approx(share * m["pdr_bps"]))
            owd = [m[f"latency_{tag}_owd_{stat}_ms"] for stat in ("min", "p50", "p90", "p99", "p999", "max")]
            assert owd == sorted(owd) and owd[0] > 0, (tag, owd)  # a distribution, each figure above the last
        if m.get("pdr_at_max_rate"):
            continue
        if m["pdr_bps"] > QUEUE_MARGIN * gen_limit:
            host_bound.append(f"{cell['technique']}'s PDR {m['pdr_bps'] / 1e6:.0f} Mbit/s against gen's own "
                              f"{gen_limit / 1e6:.0f} Mbit/s")
            continue
        # the tunnel's own limit was found: 90 % of it queues more than 10 %
        assert m["latency_pdr90_owd_p50_ms"] > m["latency_pdr10_owd_p50_ms"], (cell["technique"], m)
    tunnel = next(c["metrics"] for c in cells if c["technique"].startswith("wireguard"))
    if "pdr_bps" not in tunnel:
        # With the CPU halved (a busy loop per core) gen fell short of wireguard-go too (at ~130
        # Mbit/s it stopped the search), or wireguard-go lost packets at every rate tried; the cell
        # said so (asserted above). Which happens depends on how the host shares its cores, not on
        # arithmetic.
        why = ("gen could not outrun wireguard-go on this host" if tunnel.get("pdr_generator_limited")
               else "wireguard-go lost packets at every rate tried on this host")
        pytest.skip(f"{why} (its search stopped at {tunnel.get('pdr_upper_bound_bps', 0) / 1e6:.0f} Mbit/s): "
                    "no PDR to take shares of")
    assert not tunnel.get("pdr_at_max_rate"), tunnel
    assert run_cli("report", str(tmp_path / "c.db"), "-o", str(tmp_path / "r.html")).returncode == 0
    page = (tmp_path / "r.html").read_text()
    assert "one-way latency of wireguard under none" in page
    if host_bound:
        pytest.skip(f"the limit found is the host's, not a queue at the tunnel ({'; '.join(host_bound)}): "
                    "no rise from 10 to 90 % to assert (the rest was)")


BAD = {
    "rate range with a zero step": ('kind = "udp_sweep"\nrate = "100M..400M step 0"',
                                    "measurement[1].rate: '100M..400M step 0': the step '0' is not a positive rate"),
    "negative step": ('kind = "udp_sweep"\nrate = "100M..400M step -50M"', "the step '-50M' is not a positive rate"),
    "loss ratio above 1": ('kind = "udp_sweep"\nmax_loss = 1.5', "max_loss"),
    "MTU below 576": ('kind = "mtu"\nmax_mtu = 500', "max_mtu"),
    "NDR loss ratio above 1": ('kind = "rate_search"\nndr_loss = 1.5', "ndr_loss"),
    "PDR loss ratio below 0": ('kind = "rate_search"\npdr_loss = -0.1', "pdr_loss"),
    "latency loads with iperf3": ('kind = "rate_search"\nlatency_at_pdr = [0.5]',
                                  'latency_at_pdr: one-way latency needs tool = "gen"'),
    "a latency load at the PDR itself": ('kind = "rate_search"\ntool = "gen"\nlatency_at_pdr = [0, 1.0]',
                                         "latency_at_pdr: [0.0, 1.0] is not allowed; allowed values: shares"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_capacity_input_is_one_line_exit_2(tmp_path, case):
    before = leftovers()
    measurement, words = BAD[case]
    (tmp_path / "c.toml").write_text(f'[[technique]]\nkind = "baseline"\n[[measurement]]\n{measurement}\n')
    result = run_cli("run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "c.db").exists() and leftovers() == before
