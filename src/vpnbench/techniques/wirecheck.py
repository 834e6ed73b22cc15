"""Proof of encryption: watch the underlay while a known marker crosses the tunnel.

A random 16-byte marker is sent as ping padding (ping -p) through the tunnel while
tcpdump records the underlay. If the marker appears in the capture, the payload crossed
in clear. If it does not, and packets of the protocol the technique promises (UDP to the
WireGuard port, ESP, ...) were seen, the payload was protected. A technique that names its
protocol (Tunnel.wire_protocol) has it recognised in the captured payloads too (RECOGNISERS),
or, for one whose packets only their layout tells (tinc 1.0), by its own filter reading that
layout: a port alone does not say what crossed it. The baseline is the
negative control: its marker must be found.

A technique that compresses (IPComp) would hide the marker by compression alone, which
proves nothing about encryption; there the pings are kept below the kernel's IPComp
threshold (90 bytes for deflate), which it sends uncompressed.
"""

import dataclasses
import secrets
import struct
import time
from typing import Callable, Iterator

from vpnbench.foundation.errors import TechniqueError
from vpnbench.hosts.base import Host
from vpnbench.hosts.resources import RunResources
from vpnbench.techniques.base import Tunnel
from vpnbench.techniques.overhead import N2N_V1_HEADER
from vpnbench.testbeds.base import CapturePoint

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
    protocol: str = ""  # the protocol recognised in the capture, where the technique names one


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
    many carried its protocol? The capture file is removed either way."""
    data = _read(host, pcap)  # the capture host may be another machine
    packets = _count(host, pcap, wire_filter) if wire_filter else 0
    host.remove_file(pcap)
    if protocol and protocol not in RECOGNISERS:  # the technique's own filter reads its layout (tinc)
        return marker in data, packets, packets
    return marker in data, packets, recognise(data, protocol) if protocol else 0


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
        raise TechniqueError(f"encryption proof: {protocol_packets} packets matching '{tunnel.wire_filter}' on the "
                             f"underlay, none of them {tunnel.wire_protocol}")
    return WireVerdict("encrypted", False, protocol_packets, f"{detail}, {recognised} of them {tunnel.wire_protocol}",
                       tunnel.wire_protocol)


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


def pcap_records(data: bytes) -> Iterator[bytes]:
    """The frames of the whole packet records in a (possibly still growing) pcap file."""
    if len(data) < 24:
        return
    order = _byte_order(data)
    offset = 24
    while offset + 16 <= len(data):
        (captured,) = struct.unpack_from(order + "I", data, offset + 8)
        if offset + 16 + captured > len(data):
            return
        yield data[offset + 16:offset + 16 + captured]
        offset += 16 + captured


def pcap_packets(data: bytes) -> int:
    """Whole packet records in a (possibly still growing) pcap file."""
    return sum(1 for _ in pcap_records(data))


def _byte_order(data: bytes) -> str:
    """struct's byte order of a pcap file, from its magic (microsecond or nanosecond)."""
    return "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"


def _count(host: Host, pcap, wire_filter: str) -> int:
    result = host.run(["tcpdump", "-n", "-r", str(pcap), wire_filter], check=False)
    return sum(1 for line in result.stdout.splitlines() if line.strip())


def is_wireguard(payload: bytes) -> bool:
    """A WireGuard message: type 1-4, three reserved zero bytes, and that type's size (initiation
    148, response 92, cookie reply 64; transport data: header 16 + ciphertext + tag 16, at least
    32 — the paper pads the plaintext to 16 bytes, and wireguard-go does, but boringtun does not)."""
    if len(payload) < 32 or payload[1:4] != b"\0\0\0":
        return False
    return {1: len(payload) == 148, 2: len(payload) == 92, 3: len(payload) == 64, 4: True}.get(payload[0], False)


def is_tls_record(payload: bytes) -> bool:
    """A segment that starts with a TLS record header: content type 20-23, version 3.1-3.3."""
    return len(payload) >= 5 and 20 <= payload[0] <= 23 and payload[1] == 3 and 1 <= payload[2] <= 3


def is_nebula(payload: bytes) -> bool:
    """Nebula's 16-byte header (slackhq/nebula header/header.go): version 1 in the first byte's
    high nibble, a message type 0-6 (handshake, message, recvError, lightHouse, test, closeTunnel,
    control) in its low one, a subtype byte, two reserved zero bytes, remote index, counter."""
    return len(payload) >= 16 and payload[0] >> 4 == 1 and payload[0] & 0x0F <= 6 and payload[2:4] == b"\0\0"


YGGDRASIL_FRAME_TYPES = range(1, 10)  # ironwood's wire types: keep-alive 1 ... traffic 9 (network/wire.go)


def is_yggdrasil(payload: bytes) -> bool:
    """A TCP segment of a Yggdrasil peering that holds whole ironwood frames, as a small packet's
    does: each a uvarint length, then that many bytes beginning with a type 1-9; the frames end
    exactly where the segment does (a segment in the middle of a large frame is not counted)."""
    offset, frames = 0, 0
    while offset < len(payload):
        length, shift, start = 0, 0, offset
        while offset < len(payload) and offset - start < 3:  # frames are at most 65535 bytes: 3 bytes of uvarint
            byte = payload[offset]
            offset += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        else:
            return False
        if length == 0 or offset + length > len(payload) or payload[offset] not in YGGDRASIL_FRAME_TYPES:
            return False
        offset, frames = offset + length, frames + 1
    return frames > 0


def is_vpncloud(payload: bytes) -> bool:
    """A VpnCloud 2 UDP message (crypto/common.rs, core.rs): a handshake (first byte 0xff); a sealed
    message (key id 0-3, the nonce's 7 low bytes, at least the type byte and the 16-byte tag); or,
    with the algorithm "plain", a data message in clear (type 0, then an IPv4 or IPv6 header)."""
    if len(payload) < 2:
        return False
    return (payload[0] == 0xFF or (payload[0] <= 3 and len(payload) >= 8 + 1 + 16)
            or (payload[0] == 0 and payload[1] >> 4 in (4, 6)))


N2N_V1_MESSAGES = range(1, 6)  # REGISTER 1, DEREGISTER 2, PACKET 3, REGISTER_ACK 4, ACK_RESPONSE 5 (n2n.h)
LZO_END_MARKER = b"\x11\x00\x00"  # LZO1X's end of stream: an M4 match of distance 0


def is_n2n(payload: bytes) -> bool:
    """An n2n 1.x UDP message (n2n.c marshall_n2n_packet_header, edge.c, supernode.c): version 1,
    a message type 1-5, a TTL of at most 2 (edges send 0 and the supernode adds 1 per relay), the
    supernode flag 0 or 1, the 84-byte header, then the LZO1X stream every body is compressed
    into (an empty one for a registration), which ends with its end marker 0x11 0 0."""
    return (len(payload) >= N2N_V1_HEADER + len(LZO_END_MARKER) and payload[0] == 1 and payload[1] in N2N_V1_MESSAGES
            and payload[2] <= 2 and payload[3] <= 1 and payload.endswith(LZO_END_MARKER))


def _is_easytier_peer_header(header: bytes) -> bool:
    """EasyTier's peer manager header (packet_def.rs PeerManagerHeader): from and to peer ids,
    a packet type 1-10, flags of which only the low four bits are defined, a forward counter,
    a reserved zero byte and a length."""
    return len(header) >= 16 and 1 <= header[8] <= 10 and header[9] < 16 and header[11] == 0


def is_easytier(payload: bytes) -> bool:
    """An EasyTier 2.0 UDP datagram (tunnel/udp.rs): the UDP tunnel header (connection id 4,
    message type 1-5, padding 0, a little-endian length that is the rest of the datagram's);
    a data message (type 3) then carries a peer manager header."""
    if len(payload) < 8 or not 1 <= payload[4] <= 5 or payload[5] != 0:
        return False
    if struct.unpack_from("<H", payload, 6)[0] != len(payload) - 8:
        return False
    return payload[4] != 3 or _is_easytier_peer_header(payload[8:])


def is_easytier_tcp(payload: bytes) -> bool:
    """An EasyTier 2.0 TCP segment that begins a frame (tunnel/common.rs): a little-endian length
    4 (the peer manager header and what follows it), then the peer manager header."""
    return len(payload) >= 20 and struct.unpack_from("<I", payload)[0] >= 16 and _is_easytier_peer_header(payload[4:])


# The protocols the proof can name: name -> (transport, does this payload carry it).
RECOGNISERS: dict[str, tuple[str, Callable[[bytes], bool]]] = {
    "WireGuard": ("udp", is_wireguard),
    "TLS": ("tcp", is_tls_record),
    "nebula": ("udp", is_nebula),
    "yggdrasil": ("tcp", is_yggdrasil),
    "vpncloud": ("udp", is_vpncloud),
    "easytier": ("udp", is_easytier),
    "easytier-tcp": ("tcp", is_easytier_tcp),
    "n2n": ("udp", is_n2n),
}
# Link-layer header length and where its EtherType sits, by pcap link type: Ethernet, Linux cooked v1.
LINK_TYPES = {1: (14, 12), 113: (16, 14)}


def recognise(pcap: bytes, protocol: str) -> int:
    """How many packets of a capture carry `protocol` (RECOGNISERS)."""
    transport, carries = RECOGNISERS[protocol]
    return sum(1 for proto, payload in transport_payloads(pcap) if proto == transport and carries(payload))


def transport_payloads(pcap: bytes) -> Iterator[tuple[str, bytes]]:
    """("udp" or "tcp", payload) of each IPv4/IPv6 packet in a pcap file (Ethernet or Linux cooked)."""
    if len(pcap) < 24:
        return
    (link_type,) = struct.unpack_from(_byte_order(pcap) + "I", pcap, 20)
    if link_type not in LINK_TYPES:
        return
    header, ethertype_at = LINK_TYPES[link_type]
    for frame in pcap_records(pcap):
        if len(frame) > header:
            found = _ip_payload(frame[ethertype_at:ethertype_at + 2], frame[header:])
            if found:
                yield found


def _ip_payload(ethertype: bytes, packet: bytes) -> tuple[str, bytes] | None:
    if ethertype == b"\x08\x00" and len(packet) >= 20:
        if struct.unpack_from(">H", packet, 6)[0] & 0x1FFF:  # a later fragment: no transport header
            return None
        start, end, proto = (packet[0] & 0x0F) * 4, struct.unpack_from(">H", packet, 2)[0], packet[9]
    elif ethertype == b"\x86\xdd" and len(packet) >= 40:
        start, end, proto = 40, 40 + struct.unpack_from(">H", packet, 4)[0], packet[6]
    else:
        return None
    segment = packet[start:end]  # the IP length leaves out the Ethernet padding of a short frame
    if proto == 17 and len(segment) >= 8:
        return "udp", segment[8:]
    if proto == 6 and len(segment) >= 20:
        return "tcp", segment[(segment[12] >> 4) * 4:]
    return None
