"""The nftables ruleset of each RFC 4787 NAT type, for a NAT namespace with one host behind it.

The NAT namespace has two interfaces: `lan` (the node behind it) and `wan` (the internet). Linux
gives the building blocks, not the types, so each type is composed and nat_probe.py proves it:

- Mapping. A plain `snat to P` is endpoint-independent: the kernel's get_unique_tuple first
  looks for a mapping the same inside address:port already has (nf_nat_core's bysource table)
  and reuses it for every new destination, and a first mapping keeps the inside port where it is
  free (one host behind: always). `fully-random` skips both, so every new destination address
  and port (every new conntrack) gets a random port: address-and-port-dependent. Address-
  dependent mapping has no kernel flag: the port is a hash of (destination address, inside
  port), so all ports of one destination share a mapping and another destination gets another.
- Filtering. Conntrack lets in only replies to a mapping's exact remote address:port (address-
  and-port-dependent, Linux's own). The wider filters are a DNAT of unsolicited packets to the
  inside host, allowed by a dynamic map that outgoing packets fill after their SNAT: mapped port
  -> inside port (endpoint-independent: anyone may send to a live mapping, a "full cone"), or
  (mapped port, remote address) -> inside port (address-dependent: any port of an address the
  node has sent to). Entries live MAPPING_TIMEOUT after the node's last packet, as conntrack's
  UDP stream timeout does; ports the node never used stay closed (a full cone, not a DMZ host).
- Unsolicited packets that no filter lets in are dropped without an ICMP answer, as home routers
  do, so hole punching sees silence and not "port unreachable".

UDP only for the wider filters: the mesh daemons punch holes with UDP; TCP always filters per
address and port. IPv4 only: NAT is an IPv4 matter, and the testbed's underlay is IPv4.
"""

from vpnbench.testbeds.mesh_spec import ADDRESS_AND_PORT_DEPENDENT, ADDRESS_DEPENDENT, ENDPOINT_INDEPENDENT, NAT_TYPES

TABLE = "vpbnat"
MAPPING_TIMEOUT = "120s"  # nf_conntrack_udp_timeout_stream's default
HASH_SEED = "0x5eed"  # fixed: the address-dependent mapping is the same in every run


def nat_ruleset(nat: str, public: str, inside: str) -> str:
    """nft -f input for a NAT namespace of type nat, its outside address public, the one host
    behind it at inside."""
    mapping, filtering = NAT_TYPES[nat]
    snat = {ENDPOINT_INDEPENDENT: f"snat to {public}",
            ADDRESS_AND_PORT_DEPENDENT: f"snat to {public} fully-random",
            ADDRESS_DEPENDENT: (f"meta l4proto udp snat to {public} : jhash ip daddr . udp sport mod 64512 "
                                f"seed {HASH_SEED} offset 1024\n    oifname \"wan\" snat to {public}")}[mapping]
    lines = [f"table ip {TABLE} {{",
             "  chain postrouting {", "    type nat hook postrouting priority srcnat; policy accept;",
             f"    oifname \"wan\" {snat}", "  }",
             # what nothing let in dies here, silently (DNAT'd packets are forwarded, not delivered here)
             "  chain input {", "    type filter hook input priority filter; policy accept;",
             "    iifname \"wan\" meta l4proto { tcp, udp } ct state new drop", "  }"]
    if nat == "udp-blocked":
        lines += ["  chain forward {", "    type filter hook forward priority filter; policy accept;",
                  "    meta l4proto udp drop", "  }"]
    if nat != "udp-blocked" and filtering in (ENDPOINT_INDEPENDENT, ADDRESS_DEPENDENT):
        key, key_type = (("udp sport", "inet_service") if filtering == ENDPOINT_INDEPENDENT
                         else ("udp sport . ip daddr", "inet_service . ipv4_addr"))
        lookup = "udp dport" if filtering == ENDPOINT_INDEPENDENT else "udp dport . ip saddr"
        lines += [f"  map open {{ type {key_type} : inet_service; flags dynamic, timeout; timeout {MAPPING_TIMEOUT}; }}",
                  # after the SNAT (srcnat + 10) udp sport is the mapped port; the inside port is the
                  # conntrack's original source (the node's packets) or its reply source (the node's
                  # answers on a connection a DNAT let in)
                  "  chain record {", "    type filter hook postrouting priority srcnat + 10; policy accept;",
                  f"    oifname \"wan\" meta l4proto udp ct direction original update @open {{ {key} : ct original proto-src }}",
                  f"    oifname \"wan\" meta l4proto udp ct direction reply update @open {{ {key} : ct reply proto-src }}",
                  "  }",
                  "  chain prerouting {", "    type nat hook prerouting priority dstnat; policy accept;",
                  f"    iifname \"wan\" meta l4proto udp dnat to {inside} : {lookup} map @open", "  }"]
    return "\n".join(lines + ["}", ""])
