"""The NAT probe: what a node's NAT does, measured as RFC 5780 measures it, named as RFC 4787 names it.

Two outside addresses A and B on the internet (the testbed's `stun` namespace) listen on UDP.
From the node, one socket sends to A:p, A:q and B:p; each outside socket reads the source it sees,
the node's mapped address:port (RFC 5780 section 4.3, mapping behaviour). The same mapping for all
three is endpoint-independent; the same for A:p and A:q but another for B:p, address-dependent;
another for A:q, address-and-port-dependent. Then (section 4.4, filtering) a fresh socket sends to
A:p only, and B:p sends to its mapping unsolicited: if that arrives, filtering is endpoint-
independent; else another fresh socket sends to A:p and A:q sends to its mapping: if that arrives,
address-dependent; else address-and-port-dependent. A mapped address equal to the node's own is no
NAT. UDP that never arrives at A means UDP does not leave; a TCP connection to A says whether TCP does.

The sockets are this process's, opened inside the namespaces (netns_thread.py): no helper to start,
and the probes of many nodes run side by side, each with outside ports of its own.
"""

import dataclasses
import socket

from vpnbench.testbeds.mesh_spec import ADDRESS_AND_PORT_DEPENDENT, ADDRESS_DEPENDENT, ENDPOINT_INDEPENDENT, NAT_TYPES
from vpnbench.testbeds.netns_thread import run_in_netns

# How long an answer that is not coming is waited for. Not a speed bound: a veth hop takes
# microseconds, so a packet that has not arrived after a second was dropped, on any machine.
SILENCE = 1.0
NO_NAT = "none"

Endpoint = tuple[str, int]


@dataclasses.dataclass(frozen=True)
class NatBehaviour:
    """What the probe saw of one node's NAT."""

    udp: bool  # UDP from the node reaches the outside
    tcp: bool  # a TCP connection from the node to the outside is made
    local: Endpoint | None = None  # the node's socket as it sees itself
    mapped: tuple[Endpoint, ...] = ()  # as A:p, A:q and B:p saw it
    unsolicited_from_other_address: bool = False
    unsolicited_from_other_port: bool = False

    @property
    def mapping(self) -> str | None:
        return mapping_behaviour(self.local, self.mapped) if self.udp else None

    @property
    def filtering(self) -> str | None:
        if not self.udp:
            return None
        return filtering_behaviour(self.unsolicited_from_other_address, self.unsolicited_from_other_port)

    @property
    def name(self) -> str:
        return classify(self)

    def facts(self) -> dict:
        return {"type": self.name, "mapping": self.mapping, "filtering": self.filtering, "udp": self.udp,
                "tcp": self.tcp, "mapped": [f"{a}:{p}" for a, p in self.mapped]}


def mapping_behaviour(local: Endpoint | None, mapped: tuple[Endpoint, ...]) -> str:
    """RFC 4787 section 4.1 from the mappings seen at A:p, A:q, B:p (in that order)."""
    at_a, at_a_other_port, at_b = mapped
    if at_a == local and at_b == local:
        return NO_NAT
    if at_a != at_a_other_port:
        return ADDRESS_AND_PORT_DEPENDENT
    return ENDPOINT_INDEPENDENT if at_a == at_b else ADDRESS_DEPENDENT


def filtering_behaviour(from_other_address: bool, from_other_port: bool) -> str:
    """RFC 4787 section 5 from what was let in unsolicited to a mapping made towards A:p."""
    if from_other_address:
        return ENDPOINT_INDEPENDENT
    return ADDRESS_DEPENDENT if from_other_port else ADDRESS_AND_PORT_DEPENDENT


def classify(seen: NatBehaviour) -> str:
    """The testbed's NAT type name for what was seen; outside the table, what it is in words."""
    if not seen.udp:
        return "udp-blocked" if seen.tcp else "unreachable"
    if seen.mapping == NO_NAT:
        return "none"
    for name, behaviour in NAT_TYPES.items():
        if name != "udp-blocked" and behaviour == (seen.mapping, seen.filtering):
            return name
    return f"{seen.mapping} mapping, {seen.filtering} filtering"


def probe_nat(node_netns: str, node_addr: str, outside_netns: str, outside: tuple[str, str]) -> NatBehaviour:
    """Probe the NAT between the namespace node_netns (whose address is node_addr) and the two
    outside addresses (A, B) of outside_netns."""
    addr_a, addr_b = outside
    opened: list[socket.socket] = []

    def udp(netns: str, bind: Endpoint) -> socket.socket:
        sock = run_in_netns(netns, lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        opened.append(sock)
        sock.bind(bind)
        sock.settimeout(SILENCE)
        return sock

    try:
        at_a = udp(outside_netns, (addr_a, 0))
        port = at_a.getsockname()[1]
        at_a_other_port = udp(outside_netns, (addr_a, 0))
        try:
            at_b = udp(outside_netns, (addr_b, port))
        except OSError:  # that port is taken on B: another one shows address dependence as well
            at_b = udp(outside_netns, (addr_b, 0))
        tcp = _tcp_leaves(node_netns, node_addr, outside_netns, addr_a)

        node = udp(node_netns, (node_addr, 0))
        mapped = [_seen_from(node, server) for server in (at_a, at_a_other_port, at_b)]
        if mapped[0] is None:
            return NatBehaviour(udp=False, tcp=tcp, local=node.getsockname())
        if None in mapped:  # UDP leaves towards A:p, but not towards the others: no type of ours
            raise OSError(f"NAT probe of {node_netns}: UDP reached {addr_a}:{port} but not every outside socket")

        fresh = udp(node_netns, (node_addr, 0))
        mapping = _seen_from(fresh, at_a)
        from_b = mapping is not None and _arrives(at_b, mapping, fresh)
        fresh = udp(node_netns, (node_addr, 0))
        mapping = _seen_from(fresh, at_a)
        from_other_port = mapping is not None and _arrives(at_a_other_port, mapping, fresh)
        return NatBehaviour(True, tcp, node.getsockname(), tuple(mapped), from_b, from_other_port)
    finally:
        for sock in opened:
            sock.close()


def _seen_from(node: socket.socket, server: socket.socket) -> Endpoint | None:
    """Send from node to server; the source address:port server saw, or None (nothing came)."""
    for _ in range(2):  # once more, in case the first was lost in a neighbour lookup
        node.sendto(b"vpnbench nat probe", server.getsockname())
        try:
            _, source = server.recvfrom(2048)
            return source
        except TimeoutError:
            continue
    return None


def _arrives(sender: socket.socket, mapping: Endpoint, node: socket.socket) -> bool:
    """Does a packet sender sends, unsolicited, to the node's mapping reach the node's socket?"""
    sender.sendto(b"vpnbench nat probe: unsolicited", mapping)
    try:
        node.recvfrom(2048)
        return True
    except TimeoutError:
        return False


def _tcp_leaves(node_netns: str, node_addr: str, outside_netns: str, addr_a: str) -> bool:
    listener = run_in_netns(outside_netns, lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    client = run_in_netns(node_netns, lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    with listener, client:
        listener.bind((addr_a, 0))
        listener.listen(1)
        client.bind((node_addr, 0))
        client.settimeout(SILENCE)
        try:
            client.connect(listener.getsockname())
            return True
        except OSError:  # a timeout (dropped) or a refusal on the way
            return False
