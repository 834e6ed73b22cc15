#!/usr/bin/env python3
"""Benchmark vpnbench-linkem against its targets, side by side with plain
kernel forwarding (a Linux bridge in the same topology), in one run.

    sudo python3 bench/linkem/run.py [--only throughput,delay,...] [--json out.json]

Sections: throughput tunnel delay jitter loss rate load physics impaired. Needs root,
iproute2, iperf3, wireguard-go and wg (tunnel), python3; builds linkem with cargo if needed. All
namespaces are named vpbt-lkb*, and are removed at the end (also on error
or Ctrl-C). Only per-namespace sysctls (inside the throwaway namespaces)
are changed, so nothing on the host needs restoring.
"""
import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
from vpnbench.impair.bursts import loss_bursts  # noqa: E402

BIN = ROOT / "linkem" / "target" / "release" / "vpnbench-linkem"
PROBE = str(Path(__file__).resolve().parent / "udpprobe.py")
PY = sys.executable

TAG = f"vpbt-lkb{os.getpid() % 100000}"
C, L, S = TAG + "c", TAG + "l", TAG + "s"
CIP, SIP = "10.78.0.1", "10.78.0.2"
PROCS = []


def sh(*a, check=True, timeout=60):
    return subprocess.run(a, check=check, timeout=timeout, capture_output=True, text=True)


def nsx(ns, *a, **kw):
    return sh("ip", "netns", "exec", ns, *a, **kw)


def popen(ns, *a, **kw):
    p = subprocess.Popen(["ip", "netns", "exec", ns, *a], **kw)
    PROCS.append(p)
    return p


def topo_up():
    for ns in (C, L, S):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", "c0", "netns", C, "type", "veth", "peer", "name", "la", "netns", L)
    sh("ip", "link", "add", "s0", "netns", S, "type", "veth", "peer", "name", "lb", "netns", L)
    nsx(L, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
    for d in ("la", "lb"):
        sh("ip", "-n", L, "link", "set", d, "up")
    for ns, ip, dev in ((C, CIP, "c0"), (S, SIP, "s0")):
        sh("ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")


def topo_down():
    for p in PROCS:
        if p.poll() is None:
            p.terminate()  # wireguard-go removes its UAPI socket on SIGTERM
    for p in PROCS:
        try:
            p.wait(3)
        except subprocess.TimeoutExpired:
            p.kill()
    for dev in (WG_C, WG_S):
        Path(f"/var/run/wireguard/{dev}.sock").unlink(missing_ok=True)
    for ns in (C, L, S):
        for pid in subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def set_tcp_bufs(rmem, wmem):
    for ns in (C, S):
        nsx(ns, "sysctl", "-qw", f"net.ipv4.tcp_rmem={rmem}", f"net.ipv4.tcp_wmem={wmem}")


DEFAULT_RMEM = "4096 131072 6291456"
DEFAULT_WMEM = "4096 16384 4194304"


class Fwd:
    """Either linkem (with specs) or a kernel bridge between la and lb."""

    def __init__(self, kind="linkem", a2b="", b2a="", env=None, binary=BIN):
        self.kind = kind
        self.p = None
        if kind == "bridge":
            sh("ip", "-n", L, "link", "add", "br0", "type", "bridge")
            for d in ("la", "lb"):
                sh("ip", "-n", L, "link", "set", d, "master", "br0")
            sh("ip", "-n", L, "link", "set", "br0", "up")
            time.sleep(0.2)
        else:
            e = dict(os.environ, **(env or {}))
            self.p = popen(L, str(binary), "--a", "la", "--b", "lb", "--a2b", a2b, "--b2a", b2a, "--seed", "42",
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=e)
            assert self.p.stdout.readline().strip() == "ready"

    def stats(self):
        self.p.stdin.write("stats\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self):
        if self.kind == "bridge":
            sh("ip", "-n", L, "link", "del", "br0")
        else:
            self.p.send_signal(signal.SIGTERM)
            self.p.wait(10)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def iperf_tcp(secs, omit=0.5, extra=()):
    srv = popen(S, "iperf3", "-s", "-1", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    r = nsx(C, "iperf3", "-c", SIP, "-t", str(secs), "-O", str(omit), "-J", *extra, timeout=secs + 30)
    srv.wait(10)
    d = json.loads(r.stdout)
    return d["end"]["sum_received"]["bits_per_second"], d["end"]["sum_sent"].get("retransmits", 0)


def iperf_udp_count(n, bitrate, length=100):
    srv = popen(S, "iperf3", "-s", "-1", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    r = nsx(C, "iperf3", "-c", SIP, "-u", "-b", bitrate, "-l", str(length), "-k", str(n), "-J", timeout=120)
    srv.wait(10)
    s = json.loads(r.stdout)["end"]["sum"]
    return s["packets"], s["lost_packets"]


def udp_rtts(n, gap):
    echo = popen(S, PY, PROBE, "echo", "9000")
    time.sleep(0.3)
    out = nsx(C, PY, PROBE, "rtt", SIP, "9000", str(n), str(gap), timeout=n * gap + 30).stdout.split()
    echo.kill()
    echo.wait()
    return [float(x) for x in out if x != "lost"]


def pct(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    f = math.floor(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


RES = {}
LINES = []


def out(s=""):
    print(s, flush=True)
    LINES.append(s)


# ------------------------------------------------------------------ sections

def cpu_busy(since=None):
    """The machine's CPU counters (total, idle); given earlier ones, the busy share since."""
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    now = (sum(v), v[3] + v[4])
    if since is None:
        return now
    return 1 - (now[1] - since[1]) / max(now[0] - since[0], 1)


def ab_pairs(arms, pairs, run):
    """Alternate the arms (A, B, ...) `pairs` times in one run; per arm the values, and per
    non-first arm the ratio to the first arm within each round (same minute, same load)."""
    vals = {k: [] for k in arms}
    for i in range(pairs):
        order = arms if i % 2 == 0 else arms[::-1]  # no arm always goes first
        for k in order:
            vals[k].append(run(k))
    ratios = {k: [b / a for a, b in zip(vals[arms[0]], vals[k])] for k in arms[1:]}
    return vals, ratios


def spread(xs):
    return f"{statistics.median(xs):.3f} (min {min(xs):.3f}, max {max(xs):.3f})"


def out_table_vs_bridge(runs, ratios):
    """One row per arm: its Gbit/s per round, median, and its per-round ratio to the bridge."""
    out("| path | Gbit/s (runs, in order) | median | ratio to bridge per round: median (min, max) |")
    out("|---|---|---|---|")
    for k, v in runs.items():
        r = spread(ratios[k]) if k in ratios else "1"
        out(f"| {k} | {' / '.join(f'{x/1e9:.2f}' for x in v)} | {statistics.median(v)/1e9:.2f} | {r} |")


def sec_throughput(pairs=7):
    out(f"### Throughput: one TCP stream, no impairment (3 s runs, {pairs} alternating rounds)")
    arms = ("bridge", "linkem", "linkem-userspace", "linkem-seg")
    env = {"bridge": None, "linkem": {}, "linkem-userspace": {"LINKEM_NO_FASTPATH": "1"},
           "linkem-seg": {"LINKEM_FORCE_SEGMENT": "1"}}

    def run(k):
        with (Fwd("bridge") if k == "bridge" else Fwd(env=env[k])):
            return iperf_tcp(3)[0]

    runs, ratios = ab_pairs(arms, pairs, run)
    out_table_vs_bridge(runs, ratios)
    med = statistics.median(ratios["linkem"])
    RES["throughput"] = {k: statistics.median(v) for k, v in runs.items()}
    RES["throughput_ratio"] = {k: statistics.median(v) for k, v in ratios.items()}
    out(f"target linkem/bridge >= 0.95 (median of the per-round ratios): {'PASS' if med >= 0.95 else 'FAIL'}")
    out()


def sec_delay():
    out("### Delay: UDP echo RTT (µs-resolution probe), `delay D` on both directions")
    with Fwd("bridge"):
        br = udp_rtts(300, 0.005)
    with Fwd():
        base = udp_rtts(300, 0.005)
    b50 = statistics.median(base)
    out(f"base median RTT: bridge {statistics.median(br):.3f} ms, linkem (no impairment) {b50:.3f} ms")
    out("| D | median RTT ms | median - base - 2D (ms) | p99 - p50 (ms) | max late µs a2b/b2a | target |")
    out("|---|---|---|---|---|---|")
    RES["delay"] = {}
    for d in (1, 10, 100):
        with Fwd(a2b=f"delay {d}ms", b2a=f"delay {d}ms") as f:
            r = udp_rtts(300 if d < 100 else 200, 0.005)
            st = f.stats()
        m = statistics.median(r)
        ex = m - b50 - 2 * d
        spread = pct(r, 0.99) - pct(r, 0.5)
        ok = abs(ex) <= 0.2 and spread <= 1.0
        out(f"| {d} ms | {m:.3f} | {ex:+.3f} | {spread:.3f} | {st['a2b']['late_max_us']:.0f}/{st['b2a']['late_max_us']:.0f} | {'PASS' if ok else 'FAIL'} |")
        RES["delay"][d] = {"median": m, "excess": ex, "p99_p50": spread}
    out()


def sec_jitter():
    out("### Jitter: a2b `delay 20ms 5ms distribution normal` (1500 probes)")
    with Fwd():
        base = udp_rtts(300, 0.004)
    with Fwd(a2b="delay 20ms 5ms distribution normal"):
        r = udp_rtts(1500, 0.002)
    sd = statistics.stdev(r)
    sd_base = statistics.stdev(base)
    sd_ow = math.sqrt(max(sd * sd - sd_base * sd_base, 0))
    out(f"RTT mean {statistics.mean(r):.2f} ms (expect 20 + base {statistics.mean(base):.2f}), "
        f"sd {sd:.3f} ms, base sd {sd_base:.3f} ms, one-way sd (base removed) {sd_ow:.3f} ms; "
        f"target 5 ms ±15 %: {'PASS' if abs(sd_ow - 5) <= 0.75 else 'FAIL'}")
    RES["jitter"] = {"sd": sd_ow}
    out()


def binom99(n, p):
    sd = math.sqrt(n * p * (1 - p))
    return n * p - 2.576 * sd, n * p + 2.576 * sd


def sec_loss():
    out("### Loss (a2b), 25 000 UDP datagrams each")
    out("| spec | sent | lost | measured | 99 % interval | target |")
    out("|---|---|---|---|---|---|")
    RES["loss"] = {}
    for p in (1, 5):
        with Fwd(a2b=f"loss {p}%"):
            n, lost = iperf_udp_count(25000, "10M")
        lo, hi = binom99(n, p / 100)
        ok = lo <= lost <= hi
        out(f"| loss {p}% | {n} | {lost} | {100*lost/n:.3f} % | {lo:.0f}–{hi:.0f} | {'PASS' if ok else 'FAIL'} |")
        RES["loss"][p] = lost / n
    # Gilbert-Elliott: loss pattern from sequence numbers
    n = 40000
    for spec, r_ in (("loss gemodel 1% 25%", 0.25), ("loss gemodel 2% 50% 80% 0.1%", None)):
        with Fwd(a2b=spec):
            sink = popen(S, PY, PROBE, "sink", "9001", "7.5", stdout=subprocess.PIPE, text=True)
            time.sleep(0.3)
            nsx(C, PY, PROBE, "blast", SIP, "9001", str(n), "8000", timeout=60)
            seen = set(int(x) for x in sink.communicate(timeout=30)[0].split())
        lost = [i not in seen for i in range(n)]
        bursts = loss_bursts(lost)
        mb = statistics.mean(bursts) if bursts else 0
        rate = sum(lost) / n
        if r_ is not None:
            theory_b = 1 / r_
            theory_l = 0.01 / (0.01 + r_)
            ok = abs(mb - theory_b) <= 0.15 * theory_b
            out(f"| {spec} | {n} | {sum(lost)} | {100*rate:.2f} % (theory {100*theory_l:.2f} %) | mean burst {mb:.2f} (theory {theory_b:.2f}) | {'PASS' if ok else 'FAIL'} |")
            RES["gemodel_burst"] = mb
        else:
            out(f"| {spec} | {n} | {sum(lost)} | {100*rate:.2f} % | mean burst {mb:.2f} | (info) |")
    out()


def sec_rate():
    out("### Rate (a2b), one TCP stream, 4 s (first 1 s omitted)")
    out("| spec | goodput Mbit/s | goodput / rate | target 0.90–1.00 |")
    out("|---|---|---|---|")
    RES["rate"] = {}
    for r in (10, 100, 1000):
        with Fwd(a2b=f"rate {r}mbit"):
            bps, _ = iperf_tcp(4, omit=1)
        ratio = bps / (r * 1e6)
        out(f"| rate {r}mbit | {bps/1e6:.1f} | {ratio:.3f} | {'PASS' if 0.9 <= ratio <= 1.0 else 'FAIL'} |")
        RES["rate"][r] = ratio
    out()


def sec_load():
    out("### Under load: a2b `delay 50ms rate 500mbit`, b2a `delay 50ms` (RTT 100 ms, BDP 6.25 MB)")
    big_r, big_w = "4096 131072 67108864", "4096 65536 67108864"
    set_tcp_bufs(big_r, big_w)
    try:
        with Fwd(a2b="delay 50ms rate 500mbit", b2a="delay 50ms") as f:
            bps, retr = iperf_tcp(10, omit=3)
            st = f.stats()
    finally:
        set_tcp_bufs(DEFAULT_RMEM, DEFAULT_WMEM)
    ratio = bps / 500e6
    out(f"sysctls (only inside the client/server namespaces): net.ipv4.tcp_rmem=\"{big_r}\", "
        f"net.ipv4.tcp_wmem=\"{big_w}\"; restored to the netns defaults afterwards.")
    out(f"goodput {bps/1e6:.1f} Mbit/s = {ratio:.3f} of the rate (target >= 0.90: {'PASS' if ratio >= 0.9 else 'FAIL'}); "
        f"retransmits {retr}; linkem a2b dropped_limit {st['a2b']['dropped_limit']}, late_mean {st['a2b']['late_mean_us']} µs")
    RES["load"] = ratio
    out()


def sec_physics():
    out("### Physics 1: TCP throughput vs RTT, default buffers (tcp_rmem max 6 MiB), delay RTT/2 each way")
    set_tcp_bufs(DEFAULT_RMEM, DEFAULT_WMEM)
    out("| RTT ms | Gbit/s | effective window = thr × RTT (MB) |")
    out("|---|---|---|")
    wins = {}
    for rtt in (2, 10, 20, 50, 100, 200):
        h = rtt / 2
        with Fwd(a2b=f"delay {h}ms", b2a=f"delay {h}ms"):
            bps, _ = iperf_tcp(5 if rtt >= 100 else 3, omit=2 if rtt >= 100 else 1)
        w = bps / 8 * rtt / 1000 / 1e6
        wins[rtt] = w
        out(f"| {rtt} | {bps/1e9:.3f} | {w:.2f} |")
    cc = nsx(C, "sysctl", "-n", "net.ipv4.tcp_congestion_control").stdout.strip()
    out(f"(congestion control: {cc}; once window-limited, the effective window is constant, i.e. throughput = W/RTT)")
    RES["window"] = wins
    out()
    out("### Physics 2: TCP under random loss (a2b), RTT 20 ms, vs Mathis: MSS/RTT × sqrt(3/2)/sqrt(p)")
    out("(Mathis models loss-based AIMD congestion control: reno and cubic are shown; bbr, this machine's default, "
        "does not back off on random loss and is shown for contrast)")
    out("| loss | Mathis Mbit/s | reno Mbit/s (ratio) | cubic Mbit/s (ratio) | bbr Mbit/s | reno within ×2 |")
    out("|---|---|---|---|---|---|")
    RES["mathis"] = {}
    for p in (0.1, 0.5, 1, 2, 5):
        m = 1448 * 8 / 0.020 * math.sqrt(1.5) / math.sqrt(p / 100)
        got = {}
        for cc in ("reno", "cubic", "bbr"):
            with Fwd(a2b=f"delay 10ms loss {p}%", b2a="delay 10ms"):
                got[cc], _ = iperf_tcp(5, omit=1, extra=("-C", cc))
        ratio = got["reno"] / m
        out(f"| {p}% | {m/1e6:.2f} | {got['reno']/1e6:.2f} ({ratio:.2f}) | {got['cubic']/1e6:.2f} ({got['cubic']/m:.2f}) "
            f"| {got['bbr']/1e6:.1f} | {'yes' if 0.5 <= ratio <= 2 else 'NO'} |")
        RES["mathis"][p] = {k: v / m for k, v in got.items()}
    out()


WG_C, WG_S = f"wgc{os.getpid() % 10000}", f"wgs{os.getpid() % 10000}"  # machine-wide names (UAPI socket)
WGIP_C, WGIP_S = "10.79.0.1", "10.79.0.2"


def wg_up():
    """wireguard-go between c and s, across the linkem bump; fresh keys, never on disk."""
    keys = {}
    for side in ("c", "s"):
        priv = sh("wg", "genkey").stdout.strip()
        pub = subprocess.run(["wg", "pubkey"], input=priv, capture_output=True, text=True, check=True).stdout.strip()
        keys[side] = (priv, pub)
    env = dict(os.environ, WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD="1")
    os.makedirs("/var/run/wireguard", exist_ok=True)
    for ns, dev, mine, peer, ip, peer_ep in ((C, WG_C, "c", "s", WGIP_C, SIP), (S, WG_S, "s", "c", WGIP_S, CIP)):
        popen(ns, "wireguard-go", "-f", dev, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if nsx(ns, "wg", "show", dev, check=False).returncode == 0:
                break
            time.sleep(0.02)
        subprocess.run(["ip", "netns", "exec", ns, "wg", "set", dev, "listen-port", "51820", "private-key", "/dev/stdin",
                        "peer", keys[peer][1], "endpoint", f"{peer_ep}:51820", "allowed-ips", "10.79.0.0/24"],
                       input=keys[mine][0], capture_output=True, text=True, check=True)
        nsx(ns, "ip", "addr", "add", ip + "/24", "dev", dev)
        nsx(ns, "ip", "link", "set", dev, "up")
    keys.clear()


def sec_tunnel(pairs=5):
    out("### Tunnel at 80 ms RTT: wireguard-go, `delay 40ms` each way, one TCP stream through the tunnel")
    big_r, big_w = "4096 131072 67108864", "4096 65536 67108864"
    set_tcp_bufs(big_r, big_w)
    wg_up()
    arms = ("limit 100000", "default", "limit 1000")

    def run(k):
        spec = "delay 40ms" + ("" if k == "default" else f" {k}")
        with Fwd(a2b=spec, b2a=spec) as f:
            srv = popen(S, "iperf3", "-s", "-1", "-B", WGIP_S, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
            r = nsx(C, "iperf3", "-c", WGIP_S, "-t", "6", "-O", "2", "-J", timeout=60)
            srv.wait(10)
            st = f.stats()
        bps = json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"]
        drops[k].append(st["a2b"]["dropped_limit"] + st["b2a"]["dropped_limit"])
        return bps

    drops = {k: [] for k in arms}
    try:
        runs, ratios = ab_pairs(arms, pairs, run)
    finally:
        set_tcp_bufs(DEFAULT_RMEM, DEFAULT_WMEM)
    out(f"sysctls (only inside the client/server namespaces): net.ipv4.tcp_rmem=\"{big_r}\", "
        f"net.ipv4.tcp_wmem=\"{big_w}\"; 6 s runs (2 s omitted), {pairs} alternating rounds")
    out("| linkem spec (both ways) | Mbit/s (runs, in order) | median | ratio to `limit 100000` per round: median (min, max) | frames dropped by the limit per run |")
    out("|---|---|---|---|---|")
    for k, v in runs.items():
        r = spread(ratios[k]) if k in ratios else "1"
        out(f"| delay 40ms{'' if k == 'default' else ' ' + k} | {' / '.join(f'{x/1e6:.0f}' for x in v)} "
            f"| {statistics.median(v)/1e6:.0f} | {r} | {' / '.join(map(str, drops[k]))} |")
    med = statistics.median(ratios["default"])
    RES["tunnel"] = {k: statistics.median(v) for k, v in runs.items()}
    out(f"target default/ample >= 0.9 (median of the per-round ratios): {'PASS' if med >= 0.9 else 'FAIL'}")
    out()


def sec_impaired(pairs=int(os.environ.get("LINKEM_ROUNDS", "7"))):
    """Issue 30 item 9: the userspace path under an impairment too small to limit TCP."""
    spec = "delay 100us"
    out(f"### Impaired path: one TCP stream, `{spec}` both ways (3 s runs, {pairs} alternating rounds)")
    # LINKEM_ARMS="before=/path/to/old/binary,..." adds other builds as arms (before/after a change)
    others = dict(a.split("=", 1) for a in os.environ.get("LINKEM_ARMS", "").split(",") if a)
    arms = ("bridge", "linkem-delay") + tuple(f"linkem-delay-{name}" for name in others)

    def run(k):
        binary = others.get(k.removeprefix("linkem-delay-"), BIN)
        with (Fwd("bridge") if k == "bridge" else Fwd(a2b=spec, b2a=spec, binary=binary)) as f:
            busy0 = cpu_busy()
            bps = iperf_tcp(3)[0]
            run.busy.setdefault(k, []).append(cpu_busy(busy0))
            if k != "bridge":
                st = f.stats()
                run.late.setdefault(k, []).append((st["a2b"]["late_mean_us"], st["b2a"]["late_mean_us"]))
                if "awake_below_us" in st["a2b"]:  # the worker's calibrated wake-up latency (older binaries: none)
                    run.awake.setdefault(k, []).append((max(st["a2b"]["awake_below_us"], st["b2a"]["awake_below_us"]),
                                                        st["a2b"].get("contended", 0) + st["b2a"].get("contended", 0)))
                for way in ("a2b", "b2a"):  # the histogram summed over the arm's runs (older binaries have none)
                    pooled = run.hist.setdefault((k, way), [0] * len(st[way].get("late_log2_us", ())))
                    run.hist[(k, way)] = [a + b for a, b in zip(pooled, st[way].get("late_log2_us", ()))]
            if k == "linkem-delay":
                run.frames.append((st["a2b"]["received"], st["a2b"]["received_bytes"]))
            return bps

    run.frames, run.busy, run.late, run.hist, run.awake = [], {}, {}, {}, {}
    runs, ratios = ab_pairs(arms, pairs, run)
    out_table_vs_bridge(runs, ratios)
    out("| path | machine busy during the stream (median, both CPUs) | mean departure lateness a2b / b2a, µs (median over runs) | awake for departures due within, µs (yields lost to other load), runs |")
    out("|---|---|---|---|")
    for k in arms:
        late = run.late.get(k)
        lates = (f"{statistics.median(a for a, _ in late):.0f} / {statistics.median(b for _, b in late):.0f}"
                 if late else "—")
        awake = " / ".join(f"{a:.0f} ({c})" for a, c in run.awake.get(k, ())) or "—"
        out(f"| {k} | {statistics.median(run.busy[k]) * 100:.0f} % | {lates} | {awake} |")
    out_lateness(run.hist)
    sizes = [b / n for n, b in run.frames if n]
    out(f"a2b frames per run: {' / '.join(str(n) for n, _ in run.frames)}; mean frame "
        f"{statistics.median(sizes):.0f} B (median over runs)")
    med = statistics.median(ratios["linkem-delay"])
    RES["impaired_ratio"] = med
    out(f"target linkem-delay/bridge >= 0.9 (median of the per-round ratios): {'PASS' if med >= 0.9 else 'FAIL'}")
    out()


def out_lateness(hist: dict[tuple[str, str], list[int]]) -> None:
    """The departure lateness distribution per arm and direction, from linkem's `late_log2_us`
    histogram (bucket 0: under 1 µs; bucket k: [2^(k-1), 2^k) µs; the last open): the share of
    frames in each bucket, and the bucket each percentile falls in."""
    if not any(hist.values()):
        return
    width = max(len(h) for h in hist.values())
    bounds = ["<1"] + [f"{2 ** (k - 1)}–{2 ** k}" for k in range(1, width - 1)] + [f"≥{2 ** (width - 2)}"]
    out("Departure lateness, share of delayed frames per bucket (µs), all runs of the arm:")
    out("| arm, direction | frames | " + " | ".join(bounds) + " | p50 / p90 / p99 below µs |")
    out("|---|---:|" + "---:|" * width + "---|")
    for (arm, way), counts in hist.items():
        total = sum(counts)
        if not total:
            continue
        cumulative, marks = 0, {}
        for k, count in enumerate(counts):
            cumulative += count
            for q in (0.5, 0.9, 0.99):
                if q not in marks and cumulative >= q * total:
                    marks[q] = "1" if k == 0 else (f"{2 ** k}" if k < width - 1 else "∞")
        shares = " | ".join(f"{count / total * 100:.1f} %" if count else "" for count in counts)
        out(f"| {arm} {way} | {total} | {shares} | {' / '.join(marks[q] for q in (0.5, 0.9, 0.99))} |")


SECTIONS = {"throughput": sec_throughput, "tunnel": sec_tunnel, "delay": sec_delay, "jitter": sec_jitter, "loss": sec_loss,
            "rate": sec_rate, "load": sec_load, "physics": sec_physics, "impaired": sec_impaired}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path", str(ROOT / "linkem/Cargo.toml")],
                   check=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        topo_up()
        set_tcp_bufs(DEFAULT_RMEM, DEFAULT_WMEM)
        out(f"linkem benchmark, kernel {os.uname().release}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}")
        out()
        for name in a.only.split(","):
            SECTIONS[name]()
    finally:
        topo_down()
    if a.json:
        Path(a.json).write_text(json.dumps(RES, indent=1, default=str))


if __name__ == "__main__":
    main()
