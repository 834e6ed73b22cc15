"""[testbed] nodes = N: a mesh testbed of N node namespaces on a routed "internet", each optionally
behind a NAT namespace of its own, plus a control node on the open internet for control planes.

    n0 ─ nat0 ─┐                     node behind a NAT: n7 (10.64.7.2) ─ nat7 (10.64.7.1 | 198.18.1.8)
    n1 ────────┤  inet (198.18.0.1)  node without one: n1 (198.18.1.2)
    ctl ───────┤                     control node: ctl (198.18.0.10)
    stun ──────┘                     the NAT probe's two outside addresses: 198.18.0.20 and .21

Why a routed internet namespace with one veth per attachment, not a bridge: the machine's ARP
table is one table for all namespaces, with a hard limit (gc_thresh3, 1024). On a bridge every
node resolves every peer it talks to, N² entries for a full mesh (10 000 at N = 100: overflow,
and "neighbour table overflow" drops). Routed, each namespace resolves only its gateway and the
internet namespace each attachment: 4 entries per NAT'd node, so 250 nodes fit (mesh_spec.MAX_NODES).
It is also a realistic internet (a router hop, TTL decremented), no bridge netfilter of the host
sees the packets, and each node's link is its own place for an impairment later.

Addresses: the public ones from 198.18.0.0/15 (RFC 2544's range for benchmarking), each a /32
"peer" of the internet namespace's 198.18.0.1, which every attachment's veth carries (one address
on many interfaces, as an ISP's unnumbered access links); each NAT's LAN 10.64.i.0/24 of its own.
IPv4 only: NAT traversal is an IPv4 matter, and a global IPv6 address would let every mesh go
around the NATs.

Set-up is batched: one `ip -batch` in the root namespace makes every namespace and veth (each veth
born with its ends in their namespaces, nothing ever in the root namespace), then each namespace
is configured by one `ip -batch` of its own (a NAT namespace also by one `nft -f`), 8 at a time.
Every name is vpb-<run id>-<role>, so `vpnbench cleanup` finds them after a kill -9, and every
veth, route and nft table lives in one of them and goes with it.
"""

import dataclasses
import ipaddress
import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from vpnbench.foundation.errors import HostError, TestbedError
from vpnbench.foundation.sysctls import apply_sysctls, restore_sysctls
from vpnbench.hosts.base import Host
from vpnbench.hosts.netns import NetnsHost
from vpnbench.hosts.reach import wait_reachable
from vpnbench.hosts.resources import RunResources, remove_namespaces
from vpnbench.testbeds.base import CapturePoint, Testbed
from vpnbench.testbeds.local import ip_batch, veth_lines
from vpnbench.testbeds.mesh_spec import nat_per_node
from vpnbench.testbeds.nat import nat_ruleset
from vpnbench.testbeds.nat_probe import NatBehaviour, probe_nat
from vpnbench.testbeds.netns_thread import run_in_netns, write_sysctl
from vpnbench.testbeds.probe import LocalKernelProbe
from vpnbench.testbeds.spec import TestbedSpec

GATEWAY = "198.18.0.1"  # the internet namespace's side of every attachment
CONTROL_ADDR = "198.18.0.10"
OUTSIDE_ADDRS = ("198.18.0.20", "198.18.0.21")  # the NAT probe's A and B
FIRST_NODE_ADDR = ipaddress.IPv4Address("198.18.1.1")
IFACE = "eth0"  # a node's (and the control node's) underlay interface
PARALLEL = 8  # namespaces configured at once: ip and nft wait on the kernel's rtnl lock, not the CPU
ARRIVALS = "vpbpaths"  # the nft table of observed_paths() in each node's namespace


@dataclasses.dataclass(frozen=True)
class MeshNode:
    """One node: its host (a namespace), its NAT, the address it has and the one the internet sees."""

    name: str  # n0, n1, ...
    host: NetnsHost
    nat: str  # a mesh_spec.NAT_TYPES name
    address: str  # on its own eth0: private behind a NAT, else public
    public: str  # its NAT's outside address, or its own
    nat_netns: str | None  # the NAT's namespace, None for nat = "none"


class MeshTestbed(Testbed):
    """The namespaces and the routed internet of one mesh run. A technique takes `nodes` (each a
    MeshNode, .host to run on) and `control` (the host for its control plane, relay or hub)."""

    netem_on_router = False  # no router between a client and a server here

    def __init__(self, spec: TestbedSpec, resources: RunResources):
        self.spec = spec
        self.resources = resources
        self.pin_note = f"not pinned: {spec.nodes} nodes share this machine's {os.cpu_count()} cores"
        self.links = []
        self.sysctls = {}
        self._probe = LocalKernelProbe(resources)
        self.nat_observed: dict[str, NatBehaviour] = {}
        self.timings: dict[str, float] = {}
        self._made: list[str] = []  # namespaces that may exist: down() deletes those that do
        self.inet = resources.netns_name("inet")
        self.outside = resources.netns_name("stun")
        self.nodes = [self._plan_node(i, nat) for i, nat in enumerate(nat_per_node(spec.nat, spec.nodes))]
        self.control = NetnsHost("ctl", resources.netns_name("ctl"), resources.dir)
        self.hosts = {node.name: node.host for node in self.nodes} | {"ctl": self.control}

    def _plan_node(self, i: int, nat: str) -> MeshNode:
        name = f"n{i}"
        public = str(FIRST_NODE_ADDR + i)
        host = NetnsHost(name, self.resources.netns_name(name), self.resources.dir)
        if nat == "none":
            return MeshNode(name, host, nat, public, public, None)
        return MeshNode(name, host, nat, f"10.64.{i}.2", public, self.resources.netns_name(f"nat{i}"))

    # -- what a technique and the runner ask -----------------------------------------------------
    @property
    def probe(self) -> LocalKernelProbe:
        return self._probe

    @property
    def connect_note(self) -> str:
        return ""

    @property
    def client(self) -> Host:
        """The pair a two-host measurement uses: the first two nodes."""
        return self.nodes[0].host

    @property
    def server(self) -> Host:
        return self.nodes[1].host

    @property
    def router(self) -> Host | None:
        return None

    def families(self) -> tuple[str, ...]:
        return ("ipv4",)

    def underlay_addr(self, role: str, family: str) -> str:
        if family != "ipv4":
            raise KeyError(family)
        if role == "ctl":
            return CONTROL_ADDR
        role = {"client": "n0", "server": "n1"}.get(role, role)
        return next(node.address for node in self.nodes if node.name == role)

    def node(self, name: str) -> MeshNode:
        return next(node for node in self.nodes if node.name == name)

    @property
    def facts(self) -> dict:
        facts = {"nodes": len(self.nodes), "underlay": "routed internet namespace, IPv4, 198.18.0.0/15",
                 "control": CONTROL_ADDR, "nat": {node.name: node.nat for node in self.nodes},
                 "nat_assignment": ("per node" if isinstance(self.spec.nat, list) else
                                    "one type" if isinstance(self.spec.nat, str) else
                                    f"mix {self.spec.nat} by largest remainder, in the mix's order")}
        if self.nat_observed:
            facts["nat_observed"] = {name: seen.facts() for name, seen in self.nat_observed.items()}
        if self.timings:
            facts["bring_up_s"] = dict(self.timings)
        return facts

    def capture_points(self, near: str = "client") -> list[CapturePoint]:
        """The wire next to n0 (near = "server": n1): the internet namespace's end of its
        attachment, both directions, as the packets travel the internet (after its NAT)."""
        node = self.nodes[0 if near == "client" else 1]
        return [CapturePoint(NetnsHost("inet", self.inet, self.resources.dir), node.name)]

    # -- bring-up ----------------------------------------------------------------------------------
    def connect(self) -> None:
        """Namespaces need no connection: they are made by up()."""

    def up(self) -> None:
        started = time.monotonic()
        self._make_namespaces_and_veths()
        made = time.monotonic()
        # (namespace, its ip batch, whether it forwards, its nft ruleset)
        jobs = [(self.inet, self._inet_lines(), True, None),
                (self.outside, self._attached_lines(*OUTSIDE_ADDRS), False, None),
                (self.control.netns, self._attached_lines(CONTROL_ADDR), False, None)]
        for node in self.nodes:
            if node.nat_netns is None:
                jobs.append((node.host.netns, self._attached_lines(node.public), False, None))
            else:
                jobs.append((node.host.netns, self._lan_node_lines(node), False, None))
                jobs.append((node.nat_netns, self._nat_lines(node), True,
                             nat_ruleset(node.nat, node.public, node.address)))
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(lambda job: _configure(*job), jobs))
        if self.spec.sysctls:
            self.sysctls = apply_sysctls(self.spec.sysctls, [node.host.netns for node in self.nodes], self.resources.dir)
        configured = time.monotonic()
        self.wait_ready()
        self.timings = {"namespaces_and_veths": round(made - started, 3),
                        "configure": round(configured - made, 3),
                        "ready": round(time.monotonic() - configured, 3)}

    def _make_namespaces_and_veths(self) -> None:
        names = [self.inet, self.outside, self.control.netns]
        for node in self.nodes:
            names += [node.host.netns] + ([node.nat_netns] if node.nat_netns else [])
        self._made += names
        veths = [(self.inet, "stun", self.outside, IFACE), (self.inet, "ctl", self.control.netns, IFACE)]
        for node in self.nodes:
            if node.nat_netns is None:
                veths.append((self.inet, node.name, node.host.netns, IFACE))
            else:
                veths += [(self.inet, node.name, node.nat_netns, "wan"), (node.nat_netns, "lan", node.host.netns, IFACE)]
        ip_batch(None, [f"netns add {name}" for name in names] + veth_lines(veths))

    def _inet_lines(self) -> list[str]:
        """The internet: the gateway address on every attachment, a /32 route to each address behind it."""
        attached = [("stun", OUTSIDE_ADDRS), ("ctl", (CONTROL_ADDR,))]
        attached += [(node.name, (node.public,)) for node in self.nodes]
        lines = ["link set lo up"]
        for iface, addresses in attached:
            lines += [f"addr add {GATEWAY}/32 dev {iface}", f"link set {iface} up"]
            lines += [f"route add {address}/32 dev {iface} src {GATEWAY}" for address in addresses]
        return lines

    @staticmethod
    def _attached_lines(address: str, *more: str, iface: str = IFACE) -> list[str]:
        """A namespace on the internet: its address(es), the gateway on the link, the default route."""
        return (["link set lo up", f"addr add {address} peer {GATEWAY}/32 dev {iface}"]
                + [f"addr add {extra}/32 dev {iface}" for extra in more]
                + [f"link set {iface} up", f"route add default via {GATEWAY} dev {iface}"])

    @staticmethod
    def _lan_node_lines(node: MeshNode) -> list[str]:
        gateway = node.address.rsplit(".", 1)[0] + ".1"
        return ["link set lo up", f"addr add {node.address}/24 dev {IFACE}", f"link set {IFACE} up",
                f"route add default via {gateway}"]

    def _nat_lines(self, node: MeshNode) -> list[str]:
        gateway = node.address.rsplit(".", 1)[0] + ".1"
        return (self._attached_lines(node.public, iface="wan")
                + [f"addr add {gateway}/24 dev lan", "link set lan up"])

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Ready when every node reaches the control node (ICMP passes every NAT type), 8 pings at once."""
        def reaches(node: MeshNode) -> bool:
            return wait_reachable(node.host, CONTROL_ADDR, timeout) is not None
        with ThreadPoolExecutor(PARALLEL) as pool:
            missing = [node.name for node, ok in zip(self.nodes, pool.map(reaches, self.nodes)) if not ok]
        if missing:
            raise TestbedError(f"testbed: {', '.join(missing)} cannot reach the control node {CONTROL_ADDR} "
                               f"within {timeout:g} s")

    # -- the NAT probe -------------------------------------------------------------------------------
    def nat_behaviour(self, name: str) -> NatBehaviour:
        """What node `name`'s NAT does, measured now (nat_probe.py); kept for the run's facts."""
        node = self.node(name)
        seen = probe_nat(node.host.netns, node.address, self.outside, OUTSIDE_ADDRS)
        self.nat_observed[name] = seen
        return seen

    def nat_behaviours(self) -> dict[str, NatBehaviour]:
        """Every node's, probed side by side (each probe has outside ports of its own)."""
        with ThreadPoolExecutor(PARALLEL) as pool:
            return dict(zip([n.name for n in self.nodes], pool.map(self.nat_behaviour, [n.name for n in self.nodes])))

    # -- the paths pairs take, seen on the underlay ---------------------------------------------------
    def observed_paths(self, window: float) -> dict[tuple[str, str], str]:
        """What went between the nodes over the underlay in the next `window` seconds, per ordered
        pair (a, b): "direct" where each received UDP or TCP from the other's public address (so
        the packets passed both NATs: one-sided hole punching is not a path), "relay" where each
        received from the control node instead, "unseen" otherwise. Counted where the packets
        arrive, in each node's namespace (after its NAT), by an nft set of source addresses made
        at the first call; it goes with the namespace. What is relayed cannot be told per pair
        from outside (the relay's packets all come from the control node): "relay" says both ends
        talked to it in the window."""
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(self._watch_arrivals, self.nodes))
        time.sleep(window)
        with ThreadPoolExecutor(PARALLEL) as pool:
            heard = dict(zip([node.name for node in self.nodes], pool.map(self._arrivals, self.nodes)))
        public = {node.name: node.public for node in self.nodes}
        paths = {}
        for a in public:
            for b in public:
                if a != b:
                    paths[(a, b)] = ("direct" if public[b] in heard[a] and public[a] in heard[b] else
                                     "relay" if CONTROL_ADDR in heard[a] and CONTROL_ADDR in heard[b] else "unseen")
        return paths

    def _watch_arrivals(self, node: MeshNode) -> None:
        """A fresh set of the source addresses of UDP and TCP arriving on the node's eth0."""
        ruleset = (f"table ip {ARRIVALS} {{\n  set heard {{ type ipv4_addr; flags dynamic; }}\n"
                   "  chain input {\n    type filter hook input priority filter; policy accept;\n"
                   f"    iifname \"{IFACE}\" meta l4proto {{ tcp, udp }} update @heard {{ ip saddr }}\n  }}\n}}\n")
        _run(["ip", "netns", "exec", node.host.netns, "nft", "-f", "-"],
             f"add table ip {ARRIVALS}\ndelete table ip {ARRIVALS}\n" + ruleset, f"nft in {node.host.netns}")

    def _arrivals(self, node: MeshNode) -> set[str]:
        out = subprocess.run(["ip", "netns", "exec", node.host.netns, "nft", "-j", "list", "set", "ip", ARRIVALS, "heard"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise HostError(f"nft in {node.host.netns}: {out.stderr.strip()[-300:]}")
        return set(arrival_addresses(out.stdout))

    # -- teardown --------------------------------------------------------------------------------
    def down(self) -> None:
        remove_namespaces(self._made)
        self._made.clear()
        restore_sysctls(self.resources.dir)

    def evidence(self) -> dict[str, str]:
        """The internet namespace's links and routes, and the control node's and the first nodes'
        (a hundred nodes' worth would bury what failed)."""
        from vpnbench.hosts import evidence
        hosts = [("inet", NetnsHost("inet", self.inet, self.resources.dir)), ("ctl", self.control)]
        hosts += [(node.name, node.host) for node in self.nodes[:4]]
        pieces = [(f"{role}: {' '.join(argv)}", lambda host=host, argv=argv: evidence.command(host, argv))
                  for role, host in hosts for argv in (["ip", "-s", "link"], ["ip", "addr"], ["ip", "route"])]
        return evidence.gather(pieces + self.kernel_log_pieces())


def _configure(netns: str, lines: list[str], forwards: bool, ruleset: str | None) -> None:
    """One namespace configured: its ip batch and, for the internet and a NAT, forwarding (and
    a NAT's nft ruleset), from a thread inside it: no `ip netns exec` per command."""
    if not forwards:
        ip_batch(netns, lines)
        return

    def inside() -> None:
        write_sysctl("net.ipv4.ip_forward", "1")
        ip_batch(None, lines)  # born in this thread's namespace
        if ruleset is not None:
            _run(["nft", "-f", "-"], ruleset, f"nft in {netns}")
    run_in_netns(netns, inside)


def _run(argv: list[str], stdin: str, what: str) -> None:
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        raise HostError(f"{what}: {proc.stderr.strip()[-400:]}")


def arrival_addresses(nft_json: str) -> list[str]:
    """The addresses in `nft -j list set`'s output (elements are plain strings, or objects with
    an "elem" when the set counts or times out)."""
    found = []
    for item in json.loads(nft_json).get("nftables", []):
        for element in (item.get("set") or {}).get("elem", []):
            found.append(element["elem"]["val"] if isinstance(element, dict) else element)
    return found
