"""S3's scaling axes: how many cores each host may use (`cores`), the underlay MTU (`mtu`), both
in [testbed] as lists that multiply the matrix, and parallel streams (a list on tcp/udp).

`cores = N` confines, for one cell, the processes of the client and the server — the traffic
tools the cell starts and the technique's own daemons already running (wireguard-go, charon,
openvpn, ...) — to the first N cores each host may use (its pinned share, or all cores when the
testbed is not pinned). taskset cannot confine the kernel's own data paths (softirq work of
veth, kernel WireGuard or xfrm): they run wherever the packets are processed, usually the core
that sent them.

`mtu = M` sets every underlay interface to M before a technique is brought up, so the tunnel is
re-created over it; a tunnel device whose MTU would not fit over it is lowered to fit.
"""

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import core_range_error
from vpnbench.hosts.base import Host
from vpnbench.hosts.route import device_mtu, route_device
from vpnbench.techniques import expect

IP_UDP_HEADERS = {"ipv4": 20 + 8, "ipv6": 40 + 8}
SOFTIRQ_NOTE = "taskset confines processes only: the kernel's softirq work (veth, kernel data paths) is not pinned"


def expand_lists(entry: dict, keys: tuple[str, ...]) -> list[dict]:
    """One entry per value of each list among keys (the product, in the order given)."""
    entries = [dict(entry)]
    for key in keys:
        values = entry.get(key)
        if not isinstance(values, list):
            continue
        if not values:
            raise ValueError(f"{key}: an empty list; give at least one value")
        entries = [{**e, key: value} for e in entries for value in values]
    return entries


def cores_for(share: list[int], count: int) -> list[int]:
    """The cores a host uses for a cell with cores = count: the first of those it may use."""
    if count > len(share):
        raise ValueError(f"cores: {count} is more than the {len(share)} core(s) the host may use")
    return share[:count]


def auto_length(mtu: int, family: str) -> int:
    """The largest UDP payload that fits the path's MTU unfragmented."""
    return mtu - IP_UDP_HEADERS[family]


def pin_processes(host: Host, cpus: list[int]) -> int:
    """Move every process already on the host (the technique's daemons) and all their threads to
    cpus; returns how many were moved. A process that ended meanwhile is no error."""
    moved = 0
    spec = ",".join(map(str, cpus))
    for pid in host.pids():
        if host.run(["taskset", "-a", "-p", "-c", spec, str(pid)], timeout=5, check=False).ok:
            moved += 1
    return moved


class CorePinner:
    """Confines the client's and the server's processes to `cores` of their cores, cell by cell,
    and gives them back their whole share when the run is done with the axis."""

    def __init__(self, hosts: list[Host]):
        self.hosts = hosts
        self.shares = {host.role: host.cpus if host.cpus is not None else list(range(_core_count(host)))
                       for host in hosts}
        self.original = {host.role: host.cpus for host in hosts}
        self.current: int | None = None

    def check(self, asked: list[int]) -> None:
        """Every host can give the largest asked count (ssh hosts are only known once connected)."""
        for host in self.hosts:
            error = core_range_error(asked, len(self.shares[host.role]), f"the {host.role}'s cores")
            if error:
                raise UserError(f"testbed.{error}")

    def apply(self, count: int) -> None:
        if count == self.current:
            return
        self.current = count
        for host in self.hosts:
            host.cpus = cores_for(self.shares[host.role], count)  # what the host spawns from now on
            pin_processes(host, host.cpus)  # what already runs: the technique's daemons

    def restore(self) -> None:
        self.current = None
        for host in self.hosts:
            host.cpus = self.original[host.role]


def _core_count(host: Host) -> int:
    text = host.run(["nproc", "--all"], timeout=10, check=False).stdout.strip()
    return int(text) if text.isdigit() else 1


def fit_tunnel(hosts_and_peers: list[tuple[Host, str]], technique: dict, underlay_mtu: int) -> dict[str, int]:
    """Lower each end's tunnel device to what fits one outer packet over the underlay MTU, where
    its MTU is larger (WireGuard's 1420 over a 1280 underlay); returns role -> the MTU set.
    Techniques that fragment the outer packet themselves (OpenVPN) are left as they are."""
    expectation = expect(technique, underlay_mtu)
    if expectation.fragments_outer or not expectation.protocol_mtu:
        return {}
    changed = {}
    for host, peer in hosts_and_peers:
        device = route_device(host, peer)
        current = device_mtu(host, device) if device else None
        if current and current > expectation.protocol_mtu:
            fitted = expectation.protocol_mtu
            host.run(["ip", "link", "set", "dev", device, "mtu", str(fitted)], timeout=10)
            changed[host.role] = fitted
    return changed
