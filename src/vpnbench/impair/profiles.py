"""Named impairment profiles from the studies (STUDIES.md) and the peer mesh benchmark, usable as
`profile = "NAME"`: each its netem words (both directions), where it acts, and what it mirrors."""

import dataclasses
from typing import Literal, get_args

from vpnbench.impair.spec import parse_netem

# Where an impairment acts: an [[impairment]] entry's `placement`, and a profile's own.
#   router     the router's two egresses: towards the server (the egress spec), towards the client
#              (the ingress spec); needs a router whose kernel has netem
#   endpoints  each host's own egress: the client's underlay interface (egress spec), the server's
#              (ingress spec): where vpn-bench puts its profiles since 4 Dec 2025
#   auto       an entry's: its profile's placement; otherwise, and for a profile's own "auto", the
#              router where the testbed has one whose kernel has netem, else the endpoints
# linkem, the userspace backend, acts on the link next to the server whatever is asked (recorded
# as "link"; impair_backends.LinkemBackend says why that is the same one-way delay per direction).
Placement = Literal["auto", "router", "endpoints"]
PLACEMENTS: tuple[str, ...] = get_args(Placement)

PEER_2025_11_21 = "vpn-bench (Qubasa) as of 21 Nov 2025: netem on the router, both directions"
PEER_2025_12_04 = "vpn-bench (Qubasa) since 4 Dec 2025: netem on every host's egress"


@dataclasses.dataclass(frozen=True)
class Profile:
    netem: str  # both directions' spec, in netem's words
    placement: str = "auto"  # one of PLACEMENTS: where the source applies it
    source: str = ""  # what it mirrors, with the version or date of that source

    def __post_init__(self):
        if self.placement not in PLACEMENTS:
            raise ValueError(f"placement {self.placement!r} is not allowed; allowed: {', '.join(PLACEMENTS)}")
        parse_netem(self.netem)  # a profile netem would refuse is a bug here, found at import


PROFILES: dict[str, Profile] = {
    # S1 (Raspberry Pi thesis): three "named networks", applied in both directions.
    "s1-network-1": Profile("delay 40ms 5ms loss 0.5%", source="S1's named networks"),
    "s1-network-2": Profile("delay 80ms 10ms loss 1%", source="S1"),
    "s1-network-3": Profile("delay 120ms 15ms loss 1.5%", source="S1"),
    # S4 (unreliable networks report): the router's two impaired cases.
    "s4-delay-400ms": Profile("delay 400ms", source="S4's router cases"),
    "s4-loss-1pct": Profile("loss 1%", source="S4"),
    # The peer mesh benchmark's current profiles: delay and jitter, random loss, reordering with its
    # correlation, on each host's egress (so a packet between two hosts meets one of them, at its
    # sender). Jitter at or above the delay is as the peer has it: netem and linkem draw the delay
    # uniformly from [delay - jitter, delay + jitter] and send a draw below zero at once, so
    # mesh-medium's one-way delay is 0 for 3/14 of the packets and averages 121/28 = 4.32 ms, not 4.
    # Their reordering with correlation hardly ever fires in netem (nor in linkem, which draws as
    # netem does): a correlated draw is a moving average, rarely as low as 0.5 % (docs/config.md).
    "mesh-low": Profile("delay 2ms 2ms loss 0.25% reorder 0.5% 25%", "endpoints", PEER_2025_12_04),
    "mesh-medium": Profile("delay 4ms 7ms loss 1% reorder 2.5% 50%", "endpoints", PEER_2025_12_04),
    "mesh-high": Profile("delay 6ms 15ms loss 2.5% reorder 5% 50%", "endpoints", PEER_2025_12_04),
    # Its four profiles before, kept for runs that used them; "auto" is where vpnbench applied them
    # then (the router where the testbed has one with netem, as the peer did).
    "mesh-low-2025-11-21": Profile("delay 10ms 2ms loss 0.25% reorder 0.5% 25%", source=PEER_2025_11_21),
    "mesh-medium-2025-11-21": Profile("delay 25ms 7ms loss 1% reorder 2.5% 50%", source=PEER_2025_11_21),
    "mesh-high-2025-11-21": Profile("delay 50ms 15ms loss 2.5% reorder 5% 50%", source=PEER_2025_11_21),
    "mesh-extreme-2025-11-21": Profile("delay 100ms 25ms loss 5% reorder 12.5% 75%", source=PEER_2025_11_21),
}

# The studies the profiles and presets name (docs STUDIES.md), spelt out where a report names one.
STUDIES: dict[str, str] = {
    "S1": "S1 = Network encryption techniques on Raspberry Pi 4 (Finnish bachelor thesis, 2021)",
    "S2": "S2 = Impact of IPsec on network throughput (wiki lab notes)",
    "S3": "S3 = Testbed for quantum-safe encryptors up to 100 Gbit/s (Czech bachelor thesis)",
    "S4": "S4 = VPN performance in unreliable network conditions (student report)",
    "S5": "S5 = Performance evaluation of current VPN technologies (Portuguese paper)",
}
