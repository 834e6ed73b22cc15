"""Proof of encryption: watch the underlay while a known marker crosses the tunnel.

A random 16-byte marker is sent as ping padding (ping -p) through the tunnel while
tcpdump records the underlay. If the marker appears in the capture, the payload crossed
in clear. If it does not, and packets of the protocol the technique promises (UDP to the
WireGuard port, ESP, ...) were seen, the payload was protected. The baseline is the
negative control: its marker must be found. Where the technique names its protocol
(Tunnel.wire_protocol), the proof also recognises that protocol's messages in those packets
(RECOGNISERS: their own header and sizes, read from the bytes), so "encrypted" is said of
WireGuard seen on the wire, not of whatever used its port.

A technique that compresses (IPComp) would hide the marker by compression alone, which
proves nothing about encryption; there the pings are kept below the kernel's IPComp
threshold (90 bytes for deflate), which it sends uncompressed.
"""

import dataclasses
import secrets
import struct
import time
from collections.abc import Callable

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
    protocol: str | None = None  # the protocol recognised in those packets (Tunnel.wire_protocol)


def wireguard_message(payload: bytes) -> bool:
    """A WireGuard message (the whitepaper's section 5.4): its type (1 handshake initiation, 2
    response, 3 cookie reply, 4 transport data), three reserved zero bytes, and its type's size:
    148, 92 and 64 bytes; data at least its 16-byte header and 16-byte tag (a keepalive)."""
    if len(payload) < 4 or payload[1:4] != b"\0\0\0":
        return False
    sizes = {1: 148, 2: 92, 3: 64}
    if payload[0] in sizes:
        return len(payload) == sizes[payload[0]]
    return payload[0] == 4 and len(payload) >= 32


# protocol -> does this UDP payload hold one of its messages
RECOGNISERS: dict[str, Callable[[bytes], bool]] = {"WireGuard": wireguard_message}


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
    marker_seen, protocol_packets, recognised = False, 0, 0
    try:
        # Read while tcpdump exits: -U wrote every packet as it came, and closing its packet
        # socket waits for an RCU grace period (~20 ms), which nothing here needs.
        for point, pcap, _ in captures:
            seen, packets, known = _read_capture(point.host, pcap, marker, tunnel.wire_filter, tunnel.wire_protocol)
            marker_seen, protocol_packets, recognised = marker_seen or seen, protocol_packets + packets, recognised + known
    finally:
        for _, _, proc in captures:
            proc.wait(3)
            proc.stop(1)
    if not ping.ok:
        raise TechniqueError(f"encryption proof: no reply through the tunnel ({ping.describe_failure()})")
    return judge(tunnel, marker_seen, protocol_packets, recognised)


def _read_capture(host: Host, pcap, marker: bytes, wire_filter: str | None,
                  protocol: str | None) -> tuple[bool, int, int]:
    """Was the marker in this capture, how many packets matched the technique's filter, and how
    many of those were its protocol's messages? The capture file is removed either way."""
    data = _read(host, pcap)  # the capture host may be another machine
    packets, recognised = _count(host, pcap, wire_filter, protocol) if wire_filter else (0, 0)
    host.remove_file(pcap)
    return marker in data, packets, recognised


def judge(tunnel: Tunnel, marker_seen: bool, protocol_packets: int, recognised: int = 0) -> WireVerdict:
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
    detail = f"marker absent; {protocol_packets} packets matching '{tunnel.wire_filter}'"
    if tunnel.wire_protocol is None:
        return WireVerdict("encrypted", False, protocol_packets, detail)
    if recognised == 0:
        raise TechniqueError(f"encryption proof: none of the {protocol_packets} packets matching "
                             f"'{tunnel.wire_filter}' is a {tunnel.wire_protocol} message")
    return WireVerdict("encrypted", False, protocol_packets,
                       f"{detail}, {recognised} of them {tunnel.wire_protocol} messages", tunnel.wire_protocol)


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


def _count(host: Host, pcap, wire_filter: str, protocol: str | None) -> tuple[int, int]:
    """(packets matching wire_filter, those whose UDP payload the protocol's recogniser knows)."""
    result = host.run(["tcpdump", "-n", "-x", "-r", str(pcap), wire_filter], check=False)
    packets = printed_packets(result.stdout)
    recognise = RECOGNISERS[protocol] if protocol else None
    recognised = sum(1 for packet in packets if recognise and recognise(udp_payload(packet) or b""))
    return len(packets), recognised


def printed_packets(text: str) -> list[bytes]:
    """The packets `tcpdump -x` printed: each a summary line, then its bytes from the IP header on
    (the link-level header left out) in hex lines ("\t0x0010:  4500 0054 ...")."""
    packets: list[bytearray] = []
    for line in text.splitlines():
        if line.startswith("\t0x") and packets:
            packets[-1] += bytes.fromhex("".join(line.split(":", 1)[1].split()))
        elif line.strip():
            packets.append(bytearray())
    return [bytes(packet) for packet in packets]


def udp_payload(packet: bytes) -> bytes | None:
    """The payload of a UDP datagram in an IPv4 or IPv6 packet (no IPv6 extension headers), or None."""
    if len(packet) < 20:
        return None
    if packet[0] >> 4 == 4:
        header, protocol = (packet[0] & 0x0F) * 4, packet[9]
    elif packet[0] >> 4 == 6:
        header, protocol = 40, packet[6]
    else:
        return None
    if protocol != 17 or len(packet) < header + 8:
        return None
    length = int.from_bytes(packet[header + 4:header + 6], "big")
    return packet[header + 8:header + length]
