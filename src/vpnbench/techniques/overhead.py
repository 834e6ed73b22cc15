"""Per-packet overhead and the MTU a technique should leave, from protocol arithmetic alone.

Each technique's class (`Technique.expectation`) gives an `outer_size(inner)` function built
from the sizes here: the bytes one inner IP packet of `inner` bytes takes on the underlay (IP
header included). The largest inner packet that still fits the underlay MTU in one outer
packet is found by counting down, because block-cipher padding (ESP with AES-CBC, OpenVPN
CBC) makes the overhead depend on the packet's alignment: one more inner byte can cost 16 more
outer bytes.

Sizes (RFC 4303 ESP, RFC 4106 GCM, RFC 7634 ChaCha20-Poly1305, RFC 4868 HMAC-SHA-256-128,
the WireGuard paper §5.4, OpenVPN's data channel format, tinc 1.0's UDP packets, n2n 1.x's UDP messages, RFC 2661 L2TPv2 and RFC 1662 PPP in
HDLC-like framing):
"""

import dataclasses
from typing import Callable

IP_HEADER = {"ipv4": 20, "ipv6": 40}
UDP_HEADER = 8
TCP_HEADER = 20 + 12  # Linux sends the timestamp option on every segment
MIN_MTU = 576  # the smallest MTU every IPv4 host must accept (RFC 791); IPv6 needs 1280

# WireGuard transport data message: type 1 + reserved 3 + receiver index 4 + counter 8, then the
# ChaCha20-Poly1305 tag 16. Padding to 16 bytes never grows a packet beyond the interface MTU.
WIREGUARD_HEADER = 16
POLY1305_TAG = 16


@dataclasses.dataclass(frozen=True)
class EspCipher:
    iv: int  # bytes of IV sent with each packet
    icv: int  # integrity check value (tag or truncated HMAC)
    block: int  # the ciphertext's alignment: 4 for stream/AEAD modes (RFC 4303 §2.4), else the block size
    # Each campaign cipher's sizes sit with its other properties (techniques/ipsec/proposals.py).


ESP_HEADER = 8  # SPI 4 + sequence number 4
ESP_TRAILER = 2  # pad length 1 + next header 1

# OpenVPN data channel packets (no compression framing: the technique configures none).
OPENVPN_AEAD = {"AES-256-GCM", "AES-128-GCM", "CHACHA20-POLY1305"}
OPENVPN_OPCODE_V2 = 4  # P_DATA_V2: opcode/key id 1 + peer id 3 (2.6 uses it in TLS mode)
OPENVPN_PACKET_ID = 4
OPENVPN_STATIC_PACKET_ID = 8  # static-key mode: packet id + time
OPENVPN_HMAC = {"SHA1": 20, "SHA256": 32, "SHA384": 48, "SHA512": 64}
OPENVPN_TCP_LENGTH = 2  # the TCP transport's packet length prefix


def _pad(length: int, block: int) -> int:
    return -(-length // block) * block


def wireguard_outer(inner: int, family: str) -> int:
    return inner + IP_HEADER[family] + UDP_HEADER + WIREGUARD_HEADER + POLY1305_TAG


def esp_outer(inner: int, family: str, c: EspCipher, mode: str = "tunnel", natt: bool = False) -> int:
    """Tunnel mode wraps the whole inner packet in a new IP header of `family`; transport mode
    keeps the packet's own header and protects what follows it. A transport-mode packet is one
    packet between the two underlay addresses, so its header is `family`'s (40 bytes for IPv6):
    there is no other inner family to ask for. c: the cipher's sizes (proposals.CIPHERS)."""
    protected = inner if mode == "tunnel" else inner - IP_HEADER[family]
    ip = IP_HEADER[family]
    return ip + (UDP_HEADER if natt else 0) + ESP_HEADER + c.iv + _pad(protected + ESP_TRAILER, c.block) + c.icv


# L2TP/IPsec: the transport-mode SA protects a UDP packet to port 1701 that carries an L2TPv2 data
# message (flags/version 2 + tunnel id 2 + session id 2: xl2tpd sends no length or sequence
# fields on data) holding a PPP frame (address 0xff + control 0x03 + protocol 2) of the inner
# IP packet.
L2TP_DATA_HEADER = 6
PPP_HEADER = 4


def l2tp_esp_outer(inner: int, c: EspCipher, natt: bool = False) -> int:
    """The outer packet of an inner IP packet of `inner` bytes sent over L2TP/IPsec (IPv4 only):
    ESP transport mode over the UDP packet IP 20 + UDP 8 + L2TP 6 + PPP 4 + the whole inner packet."""
    udp_packet = IP_HEADER["ipv4"] + UDP_HEADER + L2TP_DATA_HEADER + PPP_HEADER + inner
    return esp_outer(udp_packet, "ipv4", c, "transport", natt)


def openvpn_outer(inner: int, family: str, cipher: str, auth: str = "SHA256", transport: str = "udp",
                  mode: str = "tls", dev: str = "tun") -> int:
    if dev == "tap":
        inner += 14  # the Ethernet header travels inside
    if cipher in OPENVPN_AEAD:
        body = OPENVPN_OPCODE_V2 + OPENVPN_PACKET_ID + POLY1305_TAG + inner
    else:  # CBC: HMAC + IV + the encrypted packet id and packet, PKCS#7-padded (at least one byte)
        opcode = 0 if mode == "static" else OPENVPN_OPCODE_V2
        packet_id = OPENVPN_STATIC_PACKET_ID if mode == "static" else OPENVPN_PACKET_ID
        body = opcode + OPENVPN_HMAC[auth] + 16 + _pad(packet_id + inner + 1, 16)
    if transport == "tcp":
        return IP_HEADER[family] + TCP_HEADER + OPENVPN_TCP_LENGTH + body
    return IP_HEADER[family] + UDP_HEADER + body


# tinc 1.0's UDP data packet (its legacy protocol, net_packet.c): the sequence number 4 and the
# whole Ethernet frame 14 + inner (router mode too: 1.0 always sends the frame), encrypted
# together in CBC with PKCS#7 padding (at least one byte, no IV on the wire: each packet restarts
# from the key's IV, the sequence number making its first block unique), then the HMAC truncated
# to MACLength bytes. Checked against tcpdump here: ping -s 200 (228-byte IP packet) travels as
# a 272-byte UDP payload with a 16-byte MAC, and tinc answers a larger DF ping with "Frag needed
# (mtu = 1437)", this arithmetic's answer for a 1500-byte IPv4 underlay.
TINC_SEQNO = 4
ETHERNET_HEADER = 14


def tinc_outer(inner: int, family: str, mac_length: int, block: int = 16) -> int:
    return IP_HEADER[family] + UDP_HEADER + _pad(TINC_SEQNO + ETHERNET_HEADER + inner + 1, block) + mac_length


# n2n 1.x's UDP message (Debian 12's n2n 1.3.2; n2n.h, n2n.c, edge.c): the header as its C struct
# lies in memory, 84 bytes (version, message type, TTL and supernode flag 4, community 16, source
# and destination MAC 12, two peer addresses of 20 with their padding, the packet type as an enum 4,
# sequence id 4, CRC 4; marshalled into 81, sent as 84), then the Ethernet frame (TAP: 14 + packet)
# Twofish-CBC-encrypted to its own length (no IV, padding or MAC on the wire), then LZO1X-1
# compressed, always: ciphertext does not compress, so the frame goes out as one literal run (a
# length of 1 byte up to 238 bytes, else a 0 byte, a 0 byte per further 255 and a remainder byte)
# and the 3-byte end-of-stream marker 0x11 0 0. Checked against tcpdump here: ping -s 200 (a
# 228-byte IP packet, a 242-byte frame) is a 331-byte UDP payload (84 + 5 + 242), ping -s 1372
# (1414-byte frame) 1508 (84 + 10 + 1414).
N2N_V1_HEADER = 84
LZO_END_OF_STREAM = 3
LZO_FIRST_RUN_ONE_BYTE = 238  # lzo1x_1's first literal run up to this length: one length byte


def lzo_literal_run(length: int) -> int:
    """Bytes LZO1X-1 makes of `length` incompressible bytes: the literal run's length encoding,
    the bytes, and the end-of-stream marker."""
    if length == 0:
        return LZO_END_OF_STREAM
    if length <= LZO_FIRST_RUN_ONE_BYTE:
        return 1 + length + LZO_END_OF_STREAM
    return 2 + (length - 18 - 1) // 255 + length + LZO_END_OF_STREAM


def n2n_outer(inner: int, family: str = "ipv4") -> int:
    return IP_HEADER[family] + UDP_HEADER + N2N_V1_HEADER + lzo_literal_run(ETHERNET_HEADER + inner)


def max_inner(outer_size: Callable[[int], int], underlay_mtu: int) -> int:
    """The largest inner packet whose outer packet fits underlay_mtu (0 when none does)."""
    size = underlay_mtu
    while size > 0 and outer_size(size) > underlay_mtu:
        size -= 1
    return size


@dataclasses.dataclass(frozen=True)
class Expectation:
    protocol_mtu: int  # the largest inner packet that fits one outer packet
    overhead: int  # outer minus inner bytes at that size
    device_mtu: int | None  # the limit the technique's own settings put on the tunnel device, if any
    fragments_outer: bool  # bigger packets are still carried, the outer packet fragmented (OpenVPN)
    how: str  # the arithmetic in words

    @property
    def expected_mtu(self) -> int:
        """What a don't-fragment ping should find through the tunnel."""
        if self.device_mtu is None:
            return self.protocol_mtu
        if self.fragments_outer:
            return self.device_mtu
        return min(self.device_mtu, self.protocol_mtu)


def expectation_of(outer: Callable[[int], int], underlay_mtu: int, device_mtu: int | None, fragments: bool,
                   how: str) -> Expectation:
    """The expectation of a technique whose outer packet for an inner one is outer(inner)."""
    inner = max_inner(outer, underlay_mtu)
    return Expectation(inner, outer(inner) - inner if inner else 0, device_mtu, fragments, how)
