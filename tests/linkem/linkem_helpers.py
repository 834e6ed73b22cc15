"""Helpers and fixtures for linkem integration tests: real network namespaces.

(No conftest.py here on purpose: the parent tests/conftest.py is imported
as `conftest` by other tests, and a second one would shadow it.)

Topology (all namespaces are named vpbt-lk<pid><n>{c,l,s}):

    ns c: c0 10.77.N.1/24 fd77:N::1/64
      |  veth
    ns l: la <-> vpnbench-linkem <-> lb      (no addresses, IPv6 off)
      |  veth
    ns s: s0 10.77.N.2/24 fd77:N::2/64
"""
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CRATE = ROOT / "linkem"
BIN = CRATE / "target" / "release" / "vpnbench-linkem"
_counter = itertools.count()


def sh(*args, check=True, timeout=30, **kw):
    return subprocess.run(args, check=check, timeout=timeout, capture_output=True, text=True, **kw)


def _need_root():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 for network namespaces")


@pytest.fixture(scope="session")
def linkem_bin():
    if shutil.which("cargo") is None and not BIN.exists():
        pytest.skip("cargo not found and linkem not built")
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")
    # in the checkout: cargo reads .cargo/config.toml (the vendored sources) where it runs
    subprocess.run([cargo, "build", "--release", "--quiet", "--offline", "--locked", "--manifest-path",
                    str(CRATE / "Cargo.toml")], check=True, timeout=600, cwd=ROOT)
    return str(BIN)


class Topo:
    def __init__(self):
        n = next(_counter)
        tag = f"{os.getpid() % 100000}{n}"
        self.c, self.l, self.s = (f"vpbt-lk{tag}{x}" for x in "cls")
        self.net = 10 + (os.getpid() + n) % 200
        self.c_ip, self.s_ip = f"10.77.{self.net}.1", f"10.77.{self.net}.2"
        self.c_ip6, self.s_ip6 = f"fd77:{self.net}::1", f"fd77:{self.net}::2"
        self.procs = []

    def up(self):
        for ns in (self.c, self.l, self.s):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", "c0", "netns", self.c, "type", "veth", "peer", "name", "la", "netns", self.l)
        sh("ip", "link", "add", "s0", "netns", self.s, "type", "veth", "peer", "name", "lb", "netns", self.l)
        sh("ip", "netns", "exec", self.l, "sysctl", "-qw",
           "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
        for d in ("la", "lb"):
            sh("ip", "-n", self.l, "link", "set", d, "up")
        for ns, ip, ip6, dev in ((self.c, self.c_ip, self.c_ip6, "c0"), (self.s, self.s_ip, self.s_ip6, "s0")):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            sh("ip", "-n", ns, "addr", "add", f"{ip6}/64", "dev", dev, "nodad")
            sh("ip", "-n", ns, "link", "set", dev, "up")

    def down(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    pass
        for ns in (self.c, self.l, self.s):
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def run(self, ns, *args, timeout=30, check=True):
        return sh("ip", "netns", "exec", ns, *args, timeout=timeout, check=check)

    def popen(self, ns, *args, **kw):
        p = subprocess.Popen(["ip", "netns", "exec", ns, *args], **kw)
        self.procs.append(p)
        return p


class Linkem:
    """A running vpnbench-linkem with a line-oriented control channel."""

    def __init__(self, topo, binary, a2b="", b2a="", seed=1, cpu=None):
        self.p = topo.popen(topo.l, binary, "--a", "la", "--b", "lb", "--a2b", a2b, "--b2a", b2a,
                            "--seed", str(seed), *(["--cpu", cpu] if cpu else []), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)
        line = self.p.stdout.readline().strip()
        assert line == "ready", f"linkem did not start: {line!r} {self.p.stderr.read() if self.p.poll() is not None else ''}"

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def stats(self):
        return json.loads(self.cmd("stats"))

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            return self.p.wait(5)
        return self.p.returncode


@pytest.fixture(scope="module")
def topo():
    _need_root()
    t = Topo()
    try:
        t.up()
        yield t
    finally:
        t.down()


@pytest.fixture
def linkem(topo, linkem_bin):
    """Factory: linkem(a2b=..., b2a=...) starts one; stopped at teardown."""
    started = []

    def start(a2b="", b2a="", seed=1, cpu=None):
        lk = Linkem(topo, linkem_bin, a2b, b2a, seed, cpu)
        started.append(lk)
        return lk

    yield start
    for lk in started:
        try:
            lk.stop()
        except Exception:  # noqa: BLE001 - teardown: a linkem that does not stop cleanly is killed
            lk.p.kill()


def ping(topo, n, interval, dst=None, size=56, timeout=None, v6=False):
    """Return (list of (seq, rtt_ms) replies incl. duplicates, summary dict)."""
    dst = dst or (topo.s_ip6 if v6 else topo.s_ip)
    args = ["ping", "-6" if v6 else "-4", "-n", "-c", str(n), "-i", str(interval), "-s", str(size), "-W", "2", dst]
    r = topo.run(topo.c, *args, timeout=timeout or (n * interval + 15), check=False)
    replies = []
    for line in r.stdout.splitlines():
        if "icmp_seq=" in line and "time=" in line:
            seq = int(line.split("icmp_seq=")[1].split()[0])
            rtt = float(line.split("time=")[1].split()[0])
            replies.append((seq, rtt, "DUP!" in line))
    summ = {}
    for line in r.stdout.splitlines():
        if line.startswith("rtt") or line.startswith("round-trip"):
            vals = line.split("=")[1].split()[0].split("/")
            summ = dict(zip(("min", "avg", "max", "mdev"), map(float, vals)))
    return replies, summ


def iperf_udp(topo, seconds, bitrate, length=100, port=5201):
    srv = topo.popen(topo.s, "iperf3", "-s", "-1", "-p", str(port), stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    try:
        r = topo.run(topo.c, "iperf3", "-c", topo.s_ip, "-p", str(port), "-u", "-b", str(bitrate), "-l", str(length),
                     "-t", str(seconds), "-J", "--get-server-output", timeout=seconds + 20)
    except subprocess.TimeoutExpired:
        srv.kill()  # still waiting for its one test: the port is free for the caller's next try
        srv.wait()
        raise
    srv.wait(10)
    d = json.loads(r.stdout)
    s = d["end"]["sum"]
    ooo = 0
    for line in d.get("server_output_text", "").splitlines():
        if "datagrams received out-of-order" in line:
            ooo += int(line.split("datagrams received out-of-order")[0].split()[-1])
    return {"packets": s["packets"], "lost": s["lost_packets"], "out_of_order": ooo}


def iperf_tcp(topo, seconds, port=5201, extra=()):
    return iperf_tcp_received(topo, seconds, port, extra)["bits_per_second"]


def iperf_tcp_received(topo, seconds, port=5201, extra=()):
    """iperf3's summary of what the server received (bytes, seconds, bits_per_second)."""
    srv = topo.popen(topo.s, "iperf3", "-s", "-1", "-p", str(port), stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    r = topo.run(topo.c, "iperf3", "-c", topo.s_ip, "-p", str(port), "-t", str(seconds), "-O", "0.5", "-J",
                 *extra, timeout=seconds + 20)
    srv.wait(10)
    d = json.loads(r.stdout)
    return d["end"]["sum_received"]
