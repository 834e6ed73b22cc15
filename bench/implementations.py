"""bench/implementations: today's VPNs side by side in one run (issues 31, 42): one TCP stream and
64-byte UDP packets per second through the baseline, each WireGuard implementation (Debian's
wireguard-go, the pinned current wireguard-go, boringtun and, where this kernel has it, kernel
WireGuard), Rosenpass over WireGuard, Tailscale (with its Headscale), Nebula, tinc, Yggdrasil,
VpnCloud, EasyTier, n2n, innernet and NetBird; each as a ratio to the baseline, with the CPU each
spends per Gbit/s.

Campaigns as a user would run them: `[testbed] router = false`, 5 s cells, 3 repetitions, medians.
Two VPNs need another campaign, each with a baseline of its own to be compared with: innernet and
NetBird keep their server on the testbed's router (router = true: one forwarding hop more), and
Yggdrasil carries only IPv6 inside (the measurements' family = "ipv6"). CPU per Gbit/s comes from the stored cells: vpnbench's CPU-seconds per GiB moved
(stats.cpu_seconds_per_gib: each host's busy share of its pinned cores over the cell), client and
server added, in CPU-seconds per Gbit (= cores busy per Gbit/s of throughput).

Run as root, holding the test lock:
    flock /run/vpnbench-tests.lock .venv/bin/python bench/implementations.py   (results go to bench/RESULTS.md)
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import machine, publish, require_root, run_campaign  # noqa: E402
from vpnbench.answers.stats import GIB, cpu_seconds_per_gib  # noqa: E402
from vpnbench.hosts import builds  # noqa: E402
from vpnbench.hosts.resources import RunResources  # noqa: E402
from vpnbench.testbeds.probe import LocalKernelProbe  # noqa: E402

REPETITIONS, SECONDS, UDP_LENGTH = 3, 5, 64
GBIT_IN_GIB = 1e9 / 8 / GIB
CURRENT = builds.recipe("wireguard-go").default
# label -> (its [[technique]] entry, the daemon's process name for its CPU; None: the kernel's)
TECHNIQUES: dict[str, tuple[dict, str | None]] = {
    "wireguard-go debian": ({"kind": "wireguard", "implementation": "wireguard-go", "version": "debian"}, "wireguard-go"),
    "wireguard-go current": ({"kind": "wireguard", "implementation": "wireguard-go", "version": CURRENT}, "wireguard-go"),
    "boringtun": ({"kind": "wireguard", "implementation": "boringtun"}, "boringtun-cli"),
    "kernel": ({"kind": "wireguard", "implementation": "kernel"}, None),
    "rosenpass": ({"kind": "rosenpass"}, "wireguard-go"),  # over WireGuard's default: Debian's wireguard-go here
    "tailscale": ({"kind": "tailscale"}, "tailscaled"),
    "nebula": ({"kind": "nebula"}, "nebula"),
    "tinc": ({"kind": "tinc"}, "tincd"),
    "vpncloud": ({"kind": "vpncloud"}, "vpncloud"),
    "easytier": ({"kind": "easytier"}, "easytier-core"),
    "n2n": ({"kind": "n2n"}, "edge"),
}
# Their control plane runs on the router (innernet-server, NetBird's combined server): a campaign with one
ROUTED: dict[str, tuple[dict, str | None]] = {
    "innernet": ({"kind": "innernet"}, "wireguard-go"),  # innernet's userspace data path: the pinned wireguard-go
    "netbird": ({"kind": "netbird"}, "netbird"),
}
INNER_IPV6: dict[str, tuple[dict, str | None]] = {"yggdrasil": ({"kind": "yggdrasil"}, "yggdrasil")}
# baseline label -> (its techniques, router, the measurements' family)
CAMPAIGNS = {"baseline": (TECHNIQUES, False, "ipv4"), "baseline (router)": (ROUTED, True, "ipv4"),
             "baseline (IPv6 inside)": (INNER_IPV6, False, "ipv6")}


def campaign(baseline: str, kernel: bool) -> str:
    techniques, router, family = CAMPAIGNS[baseline]
    lines = ["[campaign]", 'name = "bench-implementations"', f"repetitions = {REPETITIONS}",
             "[testbed]", f"router = {str(router).lower()}", "[[technique]]", 'kind = "baseline"',
             f'label = "{baseline}"']
    for label, (entry, _) in techniques.items():
        if entry.get("implementation") == "kernel" and not kernel:
            continue
        lines += ["[[technique]]", f'label = "{label}"', *(f'{key} = "{value}"' for key, value in entry.items())]
    lines += ["[[measurement]]", 'kind = "tcp"', f'duration = "{SECONDS}s"', f'family = "{family}"',
              "[[measurement]]", 'kind = "udp"', 'rate = "10G"', f"length = {UDP_LENGTH}", f'duration = "{SECONDS}s"',
              f'family = "{family}"']
    return "\n".join(lines) + "\n"


def cpu_per_gbit(cell: dict) -> float:
    """CPU-seconds per Gbit moved, client and server together (cores busy per Gbit/s): each host's
    busy share of its pinned cores, kernel work included (and anything else that ran there)."""
    return sum(cpu_seconds_per_gib(cell).values()) * GBIT_IN_GIB


def process_cpu_per_gbit(cell: dict) -> float:
    """The same of the processes in the client's and the server's namespaces only (the daemon and
    iperf3, by the monitor's per-process CPU): other work on the machine left out, and with it the
    kernel's softirq work (all of kernel WireGuard's)."""
    cores_busy = sum(cell["hosts"][role]["proc_cpu_pct"] for role in ("client", "server")) / 100
    return cores_busy / (cell["metrics"]["throughput_bps"] / 1e9)


def medians(cells: list[dict]) -> dict[tuple[str, str], dict[str, float]]:
    """(technique, measurement) -> the medians over its repetitions."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for cell in cells:
        if cell["status"] != "ok":
            raise SystemExit(f"{cell['technique']} {cell['measurement']} failed: {cell['error']}")
        groups.setdefault((cell["technique"], cell["measurement"]), []).append(cell)
    out = {}
    for key, group in groups.items():
        daemon = (TECHNIQUES | ROUTED | INNER_IPV6).get(key[0], ({}, None))[1]

        def med(get, group=group):
            return statistics.median(get(c) for c in group)
        out[key] = {"bps": med(lambda c: c["metrics"]["throughput_bps"]),
                    "cpu_per_gbit": med(cpu_per_gbit), "process_cpu_per_gbit": med(process_cpu_per_gbit),
                    "daemon": {role: med(lambda c, role=role: c["hosts"][role]["procs_cpu_pct"].get(daemon, 0.0))
                               for role in ("client", "server")} if daemon else None}
    return out


def table(m: dict, techniques: list[str]) -> list[str]:
    rows = ["| technique | TCP Mbit/s | ratio | CPU-s per Gbit (hosts / processes) | 64 B UDP kpps | ratio | "
            "CPU-s per Gbit (hosts / processes) | daemon CPU % of a core, TCP (client / server) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for technique in techniques:
        baseline = next(label for label, (group, _, _) in CAMPAIGNS.items() if technique == label or technique in group)
        base_tcp, base_udp = m[(baseline, "tcp")], m[(baseline, "udp")]
        tcp, udp = m[(technique, "tcp")], m[(technique, "udp")]
        pps, base_pps = udp["bps"] / 8 / UDP_LENGTH, base_udp["bps"] / 8 / UDP_LENGTH
        daemon = (f"{tcp['daemon']['client']:.0f} / {tcp['daemon']['server']:.0f}" if tcp["daemon"]
                  else "– (softirq)" if technique == "kernel" else "–")
        rows.append(f"| {technique} | {tcp['bps'] / 1e6:.0f} | {tcp['bps'] / base_tcp['bps']:.3f} | "
                    f"{tcp['cpu_per_gbit']:.2f} / {tcp['process_cpu_per_gbit']:.2f} | {pps / 1e3:.0f} | {pps / base_pps:.3f} | "
                    f"{udp['cpu_per_gbit']:.2f} / {udp['process_cpu_per_gbit']:.2f} | {daemon} |")
        print(rows[-1])
    return rows


def versions(cells: list[dict]) -> str:
    """'wireguard-go debian: 0.0.20220316-1+b4; ...': the exact versions the cells recorded."""
    seen = {c["technique"]: c["negotiated"].get("version") for c in cells if c["negotiated"].get("implementation")}
    return "; ".join(f"{label}: {version}" for label, version in seen.items())


def main() -> None:
    require_root("implementations.py")
    with RunResources() as resources:
        kernel = LocalKernelProbe(resources).has_link_type("wireguard")
    cells = [cell for baseline in CAMPAIGNS for cell in run_campaign(campaign(baseline, kernel))[0]]
    m = medians(cells)
    techniques = list(dict.fromkeys(c["technique"] for c in cells))
    rows = table(m, techniques)
    body = (f"{machine('implementations.py')}. One run: baseline, each WireGuard implementation and today's VPNs "
            f"(versions as recorded: {versions(cells)}), client and server namespaces on one veth "
            f"(router = false, each pinned to its own core), one iperf3 TCP stream and iperf3 UDP at "
            f"{UDP_LENGTH} B as fast as it sends (rate 10G), {SECONDS} s cells, median of {REPETITIONS}. "
            f"{' and '.join(ROUTED)} keep their server on the router: a second campaign with a router "
            "(router = true, client and server pinned, the router not), their ratios to its own baseline "
            "(\"baseline (router)\", one forwarding hop more); Yggdrasil carries only IPv6 inside: a third, "
            "the measurements' family IPv6, against \"baseline (IPv6 inside)\". "
            "CPU-s per Gbit: CPU-seconds client + server per Gbit received (= cores busy per Gbit/s), from each "
            "cell's stored CPU: the hosts' pinned cores (kernel work included, and whatever else ran on this shared "
            "machine) / the processes in the two namespaces only (daemon + iperf3; no softirq). "
            + ("" if kernel else "Kernel WireGuard: not in this kernel (the kernel VM has it; `make test-kernel`). ")
            + "The baseline is a veth pair inside one kernel, so a ratio says how far each falls short of memory "
            "speed, not of a NIC; iperf3's UDP sender is single-threaded, so 64 B rates are bounded by it too.\n\n"
            + "\n".join(rows))
    publish("implementations", body)


if __name__ == "__main__":
    main()
