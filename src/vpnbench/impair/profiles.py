"""Named impairment profiles from the studies (STUDIES.md), usable as `profile = "NAME"`."""

PROFILES: dict[str, str] = {
    # S1 (Raspberry Pi thesis): three "named networks", applied in both directions.
    "s1-network-1": "delay 40ms 5ms loss 0.5%",
    "s1-network-2": "delay 80ms 10ms loss 1%",
    "s1-network-3": "delay 120ms 15ms loss 1.5%",
    # S4 (unreliable networks report): the router's two impaired cases.
    "s4-delay-400ms": "delay 400ms",
    "s4-loss-1pct": "loss 1%",
    # The peer tool's (Qubasa's vpn-bench) four netem profiles for meshes, in both directions:
    # delay and jitter, random loss, reordering with its correlation.
    "mesh-low": "delay 10ms 2ms loss 0.25% reorder 0.5% 25%",
    "mesh-medium": "delay 25ms 7ms loss 1% reorder 2.5% 50%",
    "mesh-high": "delay 50ms 15ms loss 2.5% reorder 5% 50%",
    "mesh-extreme": "delay 100ms 25ms loss 5% reorder 12.5% 75%",
}

# The studies the profiles and presets name (docs STUDIES.md), spelt out where a report names one.
STUDIES: dict[str, str] = {
    "S1": "S1 = Network encryption techniques on Raspberry Pi 4 (Finnish bachelor thesis, 2021)",
    "S2": "S2 = Impact of IPsec on network throughput (wiki lab notes)",
    "S3": "S3 = Testbed for quantum-safe encryptors up to 100 Gbit/s (Czech bachelor thesis)",
    "S4": "S4 = VPN performance in unreliable network conditions (student report)",
    "S5": "S5 = Performance evaluation of current VPN technologies (Portuguese paper)",
}
