"""Proof of encryption: watch the underlay while a known marker crosses the tunnel.

A random 16-byte marker is sent as ping padding (ping -p) through the tunnel while
tcpdump records the underlay. If the marker appears in the capture, the payload crossed
in clear. If it does not, and packets of the protocol the technique promises (UDP to the
WireGuard port, ESP, ...) were seen, the payload was protected. The baseline is the
negative control: its marker must be found.

A technique that compresses (IPComp) would hide the marker by compression alone, which
proves nothing about encryption; there the pings are kept below the kernel's IPComp
threshold (90 bytes for deflate), which it sends uncompressed.
"""

import dataclasses
import secrets
import struct
import time

from vpnbench.errors import TechniqueError
from vpnbench.hosts.base import Host
from vpnbench.resources import RunResources
from vpnbench.techniques.base import Tunnel
from vpnbench.testbeds import CapturePoint

MARKER_PINGS = 5
PING_INTERVAL = 0.005  # s; root may go below ping's 0.2 s floor, and 5 pings are no load
TAIL_S = 0.05  # s: the most to wait for tcpdump to write the pings' last packets
PING_SIZE = 200
# ICMP data under IPComp: 16 bytes of timestamp, then the pattern (one whole aligned copy at
# 16..31); the packet stays under 90 bytes in both families (IPv6: 40 + 8 + 40).
PING_SIZE_UNCOMPRESSED = 40


@dataclasses.dataclass
class WireVerdict:
    verdict: str  # cleartext | encrypted | integrity-only
    marker_seen: bool
    protocol_packets: int
    detail: str


def check_wire(tunnel: Tunnel, client: Host, points: list[CapturePoint], resources: RunResources,
               family: str = "ipv4") -> WireVerdict:
    """Send the marker pings while every capture point records; judge from all captures."""
    marker = secrets.token_bytes(16)
    captures = []
    try:
        for point in points:
            pcap = resources.path(f"wirecheck-{secrets.token_hex(4)}.pcap")
            # -Z root: Debian's tcpdump otherwise drops to its own user and cannot write in the 0700 run
            # dir. --immediate-mode: without it packets wait in the ring up to a second and are lost on stop.
            proc = point.host.spawn(["tcpdump", "-Z", "root", "--immediate-mode", *point.tcpdump_args(), "-n", "-U",
                                     "-s", "0", "-w", str(pcap)], name="tcpdump")
            captures.append((point, pcap, proc))
        for _, _, proc in captures:  # started together: each takes ~15 ms to open its socket
            _wait_capturing(proc)
        size = PING_SIZE_UNCOMPRESSED if tunnel.compresses else PING_SIZE
        ping = client.run(["ping", "-n", "-c", str(MARKER_PINGS), "-i", str(PING_INTERVAL), "-s", str(size), "-W", "2",
                           "-p", marker.hex(), tunnel.server_addrs[family]], timeout=15, check=False)
        _wait_written(captures)
    finally:
        for _, _, proc in captures:
            proc.interrupt()
    marker_seen, protocol_packets = False, 0
    try:
        # Read while tcpdump exits: -U wrote every packet as it came, and closing its packet
        # socket waits for an RCU grace period (~20 ms), which nothing here needs.
        for point, pcap, _ in captures:
            seen, packets = _read_capture(point.host, pcap, marker, tunnel.wire_filter)
            marker_seen, protocol_packets = marker_seen or seen, protocol_packets + packets
    finally:
        for _, _, proc in captures:
            proc.wait(3)
            proc.stop(1)
    if not ping.ok:
        raise TechniqueError(f"encryption proof: no reply through the tunnel ({ping.describe_failure()})")
    return judge(tunnel, marker_seen, protocol_packets)


def _read_capture(host: Host, pcap, marker: bytes, wire_filter: str | None) -> tuple[bool, int]:
    """Was the marker in this capture, and how many packets matched the technique's filter?
    The capture file is removed either way."""
    data = _read(host, pcap)  # the capture host may be another machine
    packets = _count(host, pcap, wire_filter) if wire_filter else 0
    host.remove_file(pcap)
    return marker in data, packets


def judge(tunnel: Tunnel, marker_seen: bool, protocol_packets: int) -> WireVerdict:
    """Decide from what the capture showed; a protected technique that leaks fails loudly."""
    if tunnel.protection == "none":
        if not marker_seen:
            raise TechniqueError("encryption proof: the marker sent in clear was not seen on the underlay "
                                 "(capture is broken, so no verdict would be trustworthy)")
        return WireVerdict("cleartext", True, protocol_packets, "marker seen in clear on the underlay")
    if tunnel.protection == "integrity-only":
        if not marker_seen:
            raise TechniqueError("integrity-only technique, yet the marker was not visible on the underlay")
        return WireVerdict("integrity-only", True, protocol_packets,
                           "integrity only, payload visible on the underlay")
    if marker_seen:
        raise TechniqueError("encryption proof FAILED: the marker crossed the underlay in clear")
    if protocol_packets == 0:
        raise TechniqueError(f"encryption proof: no packets matching '{tunnel.wire_filter}' on the underlay")
    named = f"{tunnel.wire_protocol} " if tunnel.wire_protocol else ""
    return WireVerdict("encrypted", False, protocol_packets,
                       f"marker absent; {protocol_packets} {named}packets matching '{tunnel.wire_filter}'")


def _wait_capturing(capture, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while "listening on" not in capture.output():
        if not capture.alive() or time.monotonic() > deadline:
            raise TechniqueError(f"tcpdump did not start: {capture.output().strip()[-200:]}")
        time.sleep(0.005)


def _wait_written(captures, timeout: float = TAIL_S) -> None:
    """Every reply crossed the underlay before ping saw it; tcpdump (immediate mode) may still be
    taking the last packets from its socket. Wait until each capture holds at least the packets
    the pings made at its point (a request and a reply per ping both ways, one of them through an
    "out" point), at most `timeout`, before SIGINT ends tcpdump's loop."""
    deadline = time.monotonic() + timeout
    for point, pcap, _ in captures:
        expected = MARKER_PINGS * (1 if point.direction else 2)
        while pcap_packets(_read(point.host, pcap)) < expected and time.monotonic() < deadline:
            time.sleep(0.002)


def _read(host: Host, pcap) -> bytes:
    try:
        return host.read_file(pcap)
    except FileNotFoundError:
        return b""


def pcap_packets(data: bytes) -> int:
    """Whole packet records in a (possibly still growing) pcap file."""
    if len(data) < 24:
        return 0
    order = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    count, offset = 0, 24
    while offset + 16 <= len(data):
        (captured,) = struct.unpack_from(order + "I", data, offset + 8)
        offset += 16 + captured
        if offset > len(data):
            break
        count += 1
    return count


def _count(host: Host, pcap, wire_filter: str) -> int:
    result = host.run(["tcpdump", "-n", "-r", str(pcap), wire_filter], check=False)
    return sum(1 for line in result.stdout.splitlines() if line.strip())
