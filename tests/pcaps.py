"""Captures made up for the wire proof's recognisers (wirecheck.RECOGNISERS): pcap files of
Ethernet frames of IPv4 UDP packets, checksums left 0 (nothing reads them)."""

import struct


def udp_frame(payload: bytes, port: int = 4242, fragment_offset: int = 0) -> bytes:
    """An Ethernet frame of an IPv4 UDP packet carrying payload (fragment_offset in 8-byte units)."""
    udp = struct.pack(">HHHH", port, port, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, fragment_offset, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return bytes(12) + b"\x08\x00" + ip + udp


def pcap_of(frames: list[bytes]) -> bytes:
    """A pcap file (link type Ethernet) holding these frames."""
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    return header + b"".join(struct.pack("<IIII", 0, 0, len(f), len(f)) + f for f in frames)
