"""vpnbench-gen (gen/): its bad-input handling, its JSON as vpnbench reads it, and its
counts checked against the kernel's interface counters and against linkem's impairments."""

import contextlib
import json
import os
import random
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest

from vpnbench.foundation.errors import MeasurementError, UserError
from vpnbench.foundation.params import validate_model
from vpnbench.hosts.resources import RunResources
from vpnbench.impair.model import Impairment
from vpnbench.impair.spec import parse_netem
from vpnbench.measure.base import MeasureContext, PortAllocator
from vpnbench.measure.gen import gen_binary, gen_metrics, gen_series, parse_gen_json, run_gen
from vpnbench.measure.udp import Udp, UdpParams
from vpnbench.run.impairments import make_impairer
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.baseline import Baseline, BaselineParams
from vpnbench.techniques.wireguard import WireGuard, WireGuardParams
from vpnbench.testbeds.impair_backends import linkem_binary
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbeds.spec import TestbedSpec


@pytest.fixture(scope="module")
def binary() -> str:
    path = gen_binary()
    if path is None:
        pytest.fail("vpnbench-gen is not built: `make` builds it (gen/)")
    return path


# ---- bad input: one line naming the flag, exit 2, before anything is opened ----

CLIENT = ["client", "--target", "127.0.0.1", "--port", "5999"]


@pytest.mark.parametrize("args, flag", [
    (CLIENT + ["--rate", "0"], "--rate"),
    (CLIENT + ["--rate", "1M", "--length", "65508"], "--length"),
    (CLIENT + ["--rate", "1M", "--length", "23"], "--length"),
    (CLIENT + ["--rate", "1M", "--threads", str((os.cpu_count() or 1) + 1)], "--threads"),
    (CLIENT + ["--rate", "1M", "--speed", "9"], "--speed"),
    (["client", "--target", "not-an-address", "--port", "1", "--rate", "1M"], "--target"),
    (["server"], "--port"),
    (["serve", "--port", "1"], "command"),
])
def test_bad_input_is_one_line_and_exit_2(binary, args, flag):
    proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"vpnbench-gen: error: {flag}"), proc.stderr
    assert "allowed" in lines[0] or "unknown flag" in lines[0], lines[0]
    assert proc.stdout == ""


def test_client_without_server_gives_up_in_bounded_time(binary):
    proc = subprocess.run([binary, *CLIENT, "--rate", "1M", "--connect-timeout", "0.5"],
                          capture_output=True, text=True, timeout=10)
    assert proc.returncode == 1 and "cannot connect" in proc.stderr, proc


def free_port() -> int:
    with socket.socket(socket.AF_INET6) as probe:
        probe.bind(("::", 0))
        return probe.getsockname()[1]


def test_server_without_client_gives_up_in_bounded_time(binary):
    proc = subprocess.run([binary, "server", "--port", str(free_port()), "--accept-timeout", "0.3"],
                          capture_output=True, text=True, timeout=10)
    assert proc.returncode == 1 and "no client connected" in proc.stderr, proc


# ---- the data path is untrusted: a flood of made-up stream ids ----

SPOOFED = 30_000
TRACKER_BYTES = 65_536 // 8  # a stream's window of sequence numbers, one bit each (gen/src/track.rs)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def udp_queue_empty(port: int) -> bool:
    """The server's socket (dual-stack: /proc/net/udp6) holds no datagram it has not read."""
    for line in Path("/proc/net/udp6").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port:
            return int(fields[4].split(":")[1], 16) == 0
    raise AssertionError(f"no UDP socket on port {port}")


def connect_when_listening(port: int) -> socket.socket:
    deadline = time.monotonic() + 10
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=10)
        except ConnectionRefusedError:
            assert time.monotonic() < deadline, "the server did not listen within 10 s"
            time.sleep(0.02)


def test_spoofed_stream_ids_do_not_grow_the_server(binary):
    """Datagrams with our magic but stream ids the client never announced are counted and
    dropped: the server's memory does not grow by a tracker per id (30 000 ids took it from
    3 MB to 249 MB before)."""
    port = free_port()
    server = subprocess.Popen([binary, "server", "--port", str(port), "--bind", "127.0.0.1", "--accept-timeout", "10"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        control = connect_when_listening(port)
        reader = control.makefile("r")
        control.sendall(b"HELLO 1 threads=1 length=24 duration=1 interval=1 boot=\n")
        assert reader.readline().startswith("READY"), server.stderr
        time.sleep(0.2)  # the receiving thread has started
        before = rss_bytes(server.pid)
        control.sendall(b"START\n")
        rng = random.Random(28)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as flood:
            for seq in range(SPOOFED):  # stream 0 is the announced one: every id here is another
                flood.sendto(struct.pack("<IIQQ", 0x4742_5056, rng.randrange(1, 2**32), seq, time.time_ns()),
                             ("127.0.0.1", port))
        deadline = time.monotonic() + 10
        while not udp_queue_empty(port):
            assert time.monotonic() < deadline, "the server did not read the flood within 10 s"
            time.sleep(0.05)
        time.sleep(0.2)  # its last batch accounted
        grown = rss_bytes(server.pid) - before
        control.sendall(b"DONE secs=1 0=0\n")
        result = json.loads(reader.readline().removeprefix("RESULT "))
        control.close()
    finally:
        server.kill()
        server.wait()
    # One tracker per spoofed id would be SPOOFED * TRACKER_BYTES (234 MiB); the announced
    # stream may take one. A tenth of the flood's trackers (23 MiB) leaves the allocator room
    # and still fails at once if ids allocate again.
    assert grown < SPOOFED // 10 * TRACKER_BYTES, f"RSS grew {grown / 2**20:.1f} MiB"
    assert result["unexpected_packets"] > 0.9 * SPOOFED and result["received_packets"] == 0, result


# ---- the JSON, as vpnbench reads it ----

def sample(**receiver) -> dict:
    rx = {"clock_shared": True, "throughput_bps": 8e6, "lost_packets": 10, "unique_packets": 990,
          "duplicate_packets": 3, "reordered_packets": 4, "pps": 495.0, "jitter_ms": 0.02,
          "owd_p50_ms": 1.5, "owd_p99_ms": 2.5,
          "intervals": [{"t": 1, "pps": 500, "throughput_bps": 4e6, "lost": 4, "duplicates": 1,
                         "reordered": 2, "jitter_ms": None, "owd_p50_ms": 1.4, "owd_p99_ms": 2.0}]}
    rx.update(receiver)
    return {"sender": {"sent_packets": 1000, "throughput_bps": 8.1e6, "pps": 500.0,
                       "intervals": [{"t": 1, "pps": 500, "throughput_bps": 4e6}]},
            "receiver": rx, "error": None}


def test_metrics_named_like_udp_metrics():
    m = gen_metrics(sample())
    assert m["loss_pct"] == 1.0 and m["received_packets"] == 990 and m["sent_packets"] == 1000
    assert (m["duplicate_packets"], m["reordered_packets"], m["owd_p50_ms"]) == (3, 4, 1.5)
    assert {"throughput_bps", "sender_throughput_bps", "jitter_ms", "sent_pps", "received_pps", "owd_p99_ms"} <= set(m)


def test_one_way_delay_only_on_a_shared_clock():
    doc = sample(clock_shared=False)
    assert "owd_p50_ms" not in gen_metrics(doc)
    assert "owd_p50_ms" not in gen_series(doc)
    assert gen_series(sample())["owd_p50_ms"] == [(1.0, 1.4)]


def test_series_skip_nulls():
    series = gen_series(sample())
    assert series["sent_pps"] == [(1.0, 500.0)] and series["lost_packets"] == [(1.0, 4.0)]
    assert "jitter_ms" not in series  # the only interval printed null


class PinnedHost:
    role = "client"

    def __init__(self, cpus):
        self.cpus = cpus


def test_defensive_parsing():
    with pytest.raises(ValueError, match="no receiver counts: server gone"):
        gen_metrics({"sender": {}, "receiver": None, "error": "server gone"})
    with pytest.raises(MeasurementError, match="threads: 2 is more than the client's 1 pinned core"):
        run_gen(MeasureContext(PinnedHost([0]), None, None, PortAllocator()), "ipv4", 1, 100, 1, threads=2)
    with pytest.raises(TypeError, match="lost_packets"):
        gen_metrics(sample(lost_packets="ten"))
    with pytest.raises(KeyError):
        gen_metrics(sample(throughput_bps=None))
    with pytest.raises(ValueError):
        parse_gen_json("vpnbench-gen: cannot connect\n")
    assert parse_gen_json('noise\n{"a": 1}\n') == {"a": 1}


def test_udp_tool_and_threads_validation():
    assert Udp(UdpParams(tool="gen")).needed_tools() == ((), ()) and Udp.tools == ("iperf3",)
    assert Udp(UdpParams(tool="gen")).label() == "udp_gen_1M_1300"
    with pytest.raises(UserError, match="threads: only vpnbench-gen"):
        validate_model(UdpParams, {"kind": "udp", "threads": 2}, "measurement[0]")
    with pytest.raises(UserError, match="gso: only vpnbench-gen"):
        validate_model(UdpParams, {"kind": "udp", "gso": False}, "measurement[0]")
    with pytest.raises(UserError, match="reverse: vpnbench-gen sends from the client only"):
        validate_model(UdpParams, {"kind": "udp", "tool": "gen", "reverse": True}, "measurement[0]")
    with pytest.raises(UserError, match="length: 16 is not allowed with tool = \"gen\"; allowed values: 24 to 65507"):
        validate_model(UdpParams, {"kind": "udp", "tool": "gen", "length": 16}, "measurement[0]")
    with pytest.raises(UserError, match=r"measurement\[0\].tool: 'nuttcp' is not allowed; allowed values: 'iperf3', 'iperf2', 'gen'"):
        validate_model(UdpParams, {"kind": "udp", "tool": "nuttcp"}, "measurement[0]")


# ---- on the namespace testbed ----

@contextlib.contextmanager
def namespaces(bump: bool = False, pin: str = "auto"):
    resources = RunResources()
    bed = LocalTestbed(TestbedSpec(pin=pin), resources, bump=bump)
    try:
        bed.up()
        yield bed, resources
    finally:
        bed.down()
        resources.close()


def counters(host, iface: str) -> tuple[int, int, int]:
    """(tx packets, tx dropped, rx packets) of an interface, from the kernel."""
    stats = json.loads(host.run(["ip", "-s", "-j", "link", "show", "dev", iface]).stdout)[0]["stats64"]
    return stats["tx"]["packets"], stats["tx"]["dropped"], stats["rx"]["packets"]


def run_direct(binary, ctx: MeasureContext, *extra: str, rate="20M", length=200, duration=2) -> dict:
    """The binary by hand, for flags vpnbench does not pass (--gso off)."""
    port = ctx.ports.next()
    server = ctx.server.spawn([binary, "server", "--port", str(port), "--accept-timeout", "20"], name="gen-server")
    try:
        out = ctx.client.run([binary, "client", "--target", ctx.target("ipv4"), "--port", str(port),
                              "--rate", rate, "--length", str(length), "--duration", str(duration), *extra],
                             timeout=60)
        assert server.wait(10) == 0, server.output()
    finally:
        server.stop(1)
    return json.loads(out.stdout)


# The TCP control connection (handshake, five lines, acks, close) rides the same
# interfaces; nothing else does on a fresh testbed.
CONTROL_PACKETS = 40


def assert_counts_match(binary, ctx, client_if, server_if) -> tuple[dict, int]:
    """gen's counts against the interfaces': (gen's document, packets the client's device dropped).
    What the generator handed over is what the device sent plus what it dropped: a TUN whose
    reader falls behind (wireguard-go on a busy host) drops at its queue."""
    tx0, dropped0, _ = counters(ctx.client, client_if)
    *_, rx0 = counters(ctx.server, server_if)
    doc = run_direct(binary, ctx, "--gso", "off")
    tx1, dropped1, _ = counters(ctx.client, client_if)
    *_, rx1 = counters(ctx.server, server_if)
    sent, received = doc["sender"]["sent_packets"], doc["receiver"]["received_packets"]
    handed = (tx1 - tx0) + (dropped1 - dropped0)
    assert 0 < sent <= 1.01 * 20e6 * 2 / (200 * 8), sent  # the default pace and duration: never beyond them
    assert 0 <= handed - sent <= CONTROL_PACKETS, (tx1 - tx0, dropped1 - dropped0, sent)
    assert 0 <= (rx1 - rx0) - received <= CONTROL_PACKETS, (rx1 - rx0, received)
    assert doc["receiver"]["lost_packets"] == sent - doc["receiver"]["unique_packets"]
    return doc, dropped1 - dropped0


@pytest.mark.netns
def test_counts_match_interface_counters_baseline(binary, clean_machine):
    with namespaces(pin="off") as (bed, resources):  # unpinned: the client may send from two cores
        bed.wait_ready()
        ctx = TechniqueContext(bed.client, bed.server, bed.underlay_map(), resources, None)
        tunnel = Baseline(BaselineParams(), ctx).up("kernel")
        mctx = MeasureContext(bed.client, bed.server, tunnel, PortAllocator(7100, 7199))
        doc, _ = assert_counts_match(binary, mctx, "c0", "s0")
        assert doc["receiver"]["clock_shared"] is True
        # Through vpnbench, GSO allowed: the same accounting, the series filled in.
        result = run_gen(mctx, "ipv4", 20_000_000, 200, 2)
        assert result.metrics["received_packets"] + result.metrics["lost_packets"] == result.metrics["sent_packets"]
        # never faster than asked; how far slower is the host's (a descheduled sender makes up at most
        # its 5 ms bucket; a shared 2-core host here once read 12 333 pps): the rate is its own count
        # over the 2 s it sent for
        m = result.metrics
        assert 0 < m["sent_pps"] < 1.01 * 12_500 and m["sent_pps"] == pytest.approx(m["sent_packets"] / 2), m
        assert len(result.series["received_pps"]) >= 2 and "owd_p99_ms" in result.series
        # IPv6, two sending threads (two flows, two SO_REUSEPORT sockets), no GSO.
        v6 = run_gen(mctx, "ipv6", 20_000_000, 200, 1, threads=min(2, os.cpu_count() or 1), gso=False)
        assert v6.metrics["received_packets"] + v6.metrics["lost_packets"] == v6.metrics["sent_packets"]
        # 20 Mbit/s of 200-byte datagrams for 1 s at most; how many of them this host sent and received is its own
        assert 0 < v6.metrics["received_packets"] <= v6.metrics["sent_packets"] <= 1.01 * 12_500, v6.metrics
        assert '"family": "ipv6"' in v6.raw["gen_client"] and '"gso": false' in v6.raw["gen_client"]


@pytest.mark.netns
def test_counts_match_interface_counters_wireguard_go(binary, clean_machine):
    with namespaces() as (bed, resources):
        bed.wait_ready()
        ctx = TechniqueContext(bed.client, bed.server, bed.underlay_map(), resources, None)
        technique = WireGuard(WireGuardParams(backend="userspace"), ctx)
        tunnel = technique.up("userspace")
        try:
            mctx = MeasureContext(bed.client, bed.server, tunnel, PortAllocator(7200, 7299))
            doc, dropped = assert_counts_match(binary, mctx, technique.ifaces["client"], technique.ifaces["server"])
            if not dropped:  # wireguard-go kept up
                assert doc["receiver"]["unique_packets"] > 0.9 * doc["sender"]["sent_packets"]
        finally:
            technique.down()


# ---- impairments from linkem, counted exactly ----

LINKEM_EARLY_MS = 0.025


def within_binomial(count: int, n: int, p: float) -> bool:
    return abs(count - n * p) < 4.5 * (n * p * (1 - p)) ** 0.5 + 3


@pytest.fixture(scope="module")
def linkem_ctx():
    if linkem_binary() is None:
        pytest.fail("linkem is not built: `make` builds it")
    with namespaces(bump=True) as (bed, resources):
        impairer = make_impairer("linkem", bed)
        try:
            impairer.start()
            bed.wait_ready()
            ctx = TechniqueContext(bed.client, bed.server, bed.underlay_map(), resources, None)
            tunnel = Baseline(BaselineParams(), ctx).up("kernel")
            yield impairer, MeasureContext(bed.client, bed.server, tunnel, PortAllocator(7300, 7399))
        finally:
            impairer.stop()


def impaired(linkem_ctx, egress: str, rate: str, duration=2, length=200) -> dict:
    impairer, ctx = linkem_ctx
    impairer.apply(Impairment("test", parse_netem(egress), parse_netem(""), "auto", "auto"))
    return run_direct(gen_binary(), ctx, rate=rate, length=length, duration=duration)["receiver"]


@pytest.mark.exclusive  # alone: linkem's counts and delays need a core each
@pytest.mark.netns
def test_loss_counted(linkem_ctx):
    rx = impaired(linkem_ctx, "loss 10%", "4M")  # 2500 pps
    assert within_binomial(rx["lost_packets"], rx["sent_packets"], 0.10), rx
    assert rx["duplicate_packets"] == 0 and rx["reordered_packets"] == 0
    assert sum(i["lost"] for i in rx["intervals"]) <= rx["lost_packets"]


@pytest.mark.exclusive  # alone: linkem's counts and delays need a core each
@pytest.mark.netns
def test_duplicates_counted(linkem_ctx):
    rx = impaired(linkem_ctx, "duplicate 10%", "4M")
    assert rx["lost_packets"] == 0, rx
    assert within_binomial(rx["duplicate_packets"], rx["sent_packets"], 0.10), rx
    assert rx["received_packets"] == rx["unique_packets"] + rx["duplicate_packets"]


@pytest.mark.exclusive  # alone: linkem's counts and delays need a core each
@pytest.mark.netns
def test_reordering_counted(linkem_ctx):
    # 125 packets/s, 8 ms apart, delayed 10 ms unless sent at once (50 %): an immediate packet
    # overtakes exactly its predecessor when that one was delayed, so the late packets are
    # n * p * (1 - p).
    rx = impaired(linkem_ctx, "delay 10ms reorder 50%", "200k", duration=3)  # 125 pps of 200 B
    assert rx["lost_packets"] == 0 and rx["duplicate_packets"] == 0, rx
    assert within_binomial(rx["reordered_packets"], rx["sent_packets"], 0.25), rx


@pytest.mark.exclusive  # alone: linkem's counts and delays need a core each
@pytest.mark.netns
def test_one_way_delay(linkem_ctx):
    rx = impaired(linkem_ctx, "delay 10ms", "4M")
    assert rx["clock_shared"] is True
    # Noise (scheduling, queueing, the send stamp taken before the system call) can only add
    # delay; the one way below 10 ms is linkem sending a frame due within 25 us with the ones
    # already due (EARLY_NS in linkem/src/worker.rs).
    floor = 10.0 - LINKEM_EARLY_MS
    assert rx["owd_min_ms"] >= floor and rx["owd_p5_ms"] >= floor, rx
    assert rx["owd_p50_ms"] < 12.0, rx
