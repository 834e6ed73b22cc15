"""Proof of encryption: watch the underlay while a known marker crosses the tunnel.

A random 16-byte marker is sent as ping padding (ping -p) through the tunnel while
tcpdump records the underlay. If the marker appears in the capture, the payload crossed
in clear. If it does not, and packets of the protocol the technique promises (UDP to the
WireGuard port, ESP, ...) were seen, the payload was protected. The baseline is the
negative control: its marker must be found. Where the packets' own header says which protocol
they are (RECOGNISERS), the proof names it.

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
    protocol: str | None = None  # what the packets' own headers say they are (RECOGNISERS), if known


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
    marker_seen, matched = False, []
    try:
        # Read while tcpdump exits: -U wrote every packet as it came, and closing its packet
        # socket waits for an RCU grace period (~20 ms), which nothing here needs.
        for point, pcap, _ in captures:
            seen, packets = _read_capture(point.host, pcap, marker, tunnel.wire_filter)
            marker_seen, matched = marker_seen or seen, matched + packets
    finally:
        for _, _, proc in captures:
            proc.wait(3)
            proc.stop(1)
    if not ping.ok:
        raise TechniqueError(f"encryption proof: no reply through the tunnel ({ping.describe_failure()})")
    return judge(tunnel, marker_seen, len(matched), recognise(matched))


def _read_capture(host: Host, pcap, marker: bytes, wire_filter: str | None) -> tuple[bool, list[bytes]]:
    """Was the marker in this capture, and which packets (from their IP header on) matched the
    technique's filter? The capture file is removed either way."""
    data = _read(host, pcap)  # the capture host may be another machine
    packets = _matching(host, pcap, wire_filter) if wire_filter else []
    host.remove_file(pcap)
    return marker in data, packets


def judge(tunnel: Tunnel, marker_seen: bool, protocol_packets: int, protocol: str | None = None) -> WireVerdict:
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
    named = f", recognised as {protocol}" if protocol else ""
    return WireVerdict("encrypted", False, protocol_packets,
                       f"marker absent; {protocol_packets} packets matching '{tunnel.wire_filter}'{named}", protocol)


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


def _matching(host: Host, pcap, wire_filter: str) -> list[bytes]:
    """The packets of the capture that match the filter, each from its IP header on (tcpdump -x
    prints a line per packet, then its bytes in hex on lines that start with a tab)."""
    result = host.run(["tcpdump", "-n", "-x", "-r", str(pcap), wire_filter], check=False)
    packets: list[bytes] = []
    for line in result.stdout.splitlines():
        if line.startswith("\t") and packets:
            packets[-1] += bytes.fromhex("".join(line.split(":", 1)[1].split()))
        elif line.strip():
            packets.append(b"")
    return packets


def _is_nebula(payload: bytes) -> bool:
    """Nebula's 16-byte header (slackhq/nebula header/header.go): version 1 in the first byte's
    high nibble, a message type 0-6 (handshake, message, recvError, lightHouse, test, closeTunnel,
    control) in its low one, a subtype byte, two reserved zero bytes, remote index, counter."""
    return len(payload) >= 16 and payload[0] >> 4 == 1 and payload[0] & 0x0F <= 6 and payload[2:4] == b"\0\0"


# The protocols the proof names from the UDP payload of the packets it saw: name -> test.
RECOGNISERS = {"nebula": _is_nebula}


def udp_payload(packet: bytes) -> bytes | None:
    """The UDP payload of an IPv4 or IPv6 packet (no extension headers), None for anything else
    (another protocol, a later fragment)."""
    if packet[:1] and packet[0] >> 4 == 4 and len(packet) >= 20:
        unfragmented = int.from_bytes(packet[6:8], "big") & 0x1FFF == 0
        return packet[(packet[0] & 0x0F) * 4 + 8:] if packet[9] == 17 and unfragmented else None
    if packet[:1] and packet[0] >> 4 == 6 and len(packet) >= 48:
        return packet[48:] if packet[6] == 17 else None
    return None


def recognise(packets: list[bytes]) -> str | None:
    """The protocol every UDP packet among these is (RECOGNISERS), or None (none, or not one)."""
    payloads = [p for p in map(udp_payload, packets) if p is not None]
    return next((name for name, test in RECOGNISERS.items() if payloads and all(map(test, payloads))), None)
