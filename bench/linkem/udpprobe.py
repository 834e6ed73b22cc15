#!/usr/bin/env python3
"""Tiny UDP probe used by bench/linkem/run.py (runs inside a netns).

  udpprobe.py echo PORT            -- echo server (runs until killed)
  udpprobe.py rtt HOST PORT N GAP  -- send N probes GAP seconds apart,
                                       print one RTT (ms) per line, 'lost' for
                                       missing replies
  udpprobe.py sink PORT SECONDS    -- count datagrams, print seq numbers seen
  udpprobe.py blast HOST PORT N PPS -- send N numbered datagrams at PPS
"""
import select
import socket
import struct
import sys
import time


def echo(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    while True:
        d, a = s.recvfrom(2048)
        s.sendto(d, a)


def rtt(host, port, n, gap):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((host, port))
    s.setblocking(False)
    sent = {}
    got = {}
    t_next = time.perf_counter()
    i = 0
    end = None
    while True:
        now = time.perf_counter()
        if i < n and now >= t_next:
            sent[i] = time.perf_counter_ns()
            s.send(struct.pack("!Q", i) + b"x" * 56)
            i += 1
            t_next += gap
            if i == n:
                end = now + 2.0
        try:
            while True:
                d = s.recv(2048)
                t = time.perf_counter_ns()
                k = struct.unpack("!Q", d[:8])[0]
                if k in sent and k not in got:
                    got[k] = (t - sent[k]) / 1e6
        except BlockingIOError:
            pass
        if end is not None and (time.perf_counter() > end or len(got) == n):
            break
        wait = (t_next - time.perf_counter()) if i < n else 0.05
        if wait > 0:
            select.select([s], [], [], wait)
    for k in range(n):
        print("%.4f" % got[k] if k in got else "lost")


def sink(port, secs):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("0.0.0.0", port))
    s.settimeout(0.2)
    seen = []
    t_end = time.time() + secs
    while time.time() < t_end:
        try:
            d = s.recv(2048)
            seen.append(struct.unpack("!Q", d[:8])[0])
        except socket.timeout:
            pass
    sys.stdout.write("\n".join(map(str, seen)) + "\n")


def blast(host, port, n, pps):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((host, port))
    t0 = time.perf_counter()
    for i in range(n):
        tt = t0 + i / pps
        while time.perf_counter() < tt:
            pass
        s.send(struct.pack("!Q", i) + b"y" * 92)


if __name__ == "__main__":
    m = sys.argv[1]
    if m == "echo":
        echo(int(sys.argv[2]))
    elif m == "rtt":
        rtt(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    elif m == "sink":
        sink(int(sys.argv[2]), float(sys.argv[3]))
    elif m == "blast":
        blast(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
