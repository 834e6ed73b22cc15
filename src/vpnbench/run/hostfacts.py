"""What each host was when the run measured it, read on the host itself (netns, ssh or VM).

Published VPN benchmarks were criticised for leaving these unstated: a governor or
irqbalance change moved one machine's WireGuard result from 3.3 to 4.3 Gbit/s. So every run
records, per host: CPU model, count and crypto flags, kernel, distribution, NIC drivers and
offloads, qdiscs, governor, turbo, SMT, mitigations, irqbalance, firewall size, the kernel
crypto driver each cipher resolves to, and the version of every traffic tool and of the run's
techniques' daemons.

One script of fixed commands runs in one round trip per host: no value from a campaign ever
enters it (the campaign's technique kinds, checked against the registry, only choose which
registered version commands are in it);
every part of it may be missing on a given host, and a missing part is recorded as absent.
"""

import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from vpnbench.hosts.base import Host
from vpnbench.store.records import HostFacts
from vpnbench.techniques import TECHNIQUES

# Machine-wide: the same for every network namespace of one machine.
MACHINE_SCRIPT = r"""
s() { echo "### $1"; }
s cpu_model; grep -m1 -E '^(model name|Model|Hardware)' /proc/cpuinfo | cut -d: -f2-
s cpu_flags; grep -m1 -E '^(flags|Features)' /proc/cpuinfo | cut -d: -f2-
s cpu_count; getconf _NPROCESSORS_ONLN
s kernel; uname -r
s os; grep -E '^PRETTY_NAME=' /etc/os-release 2>/dev/null | cut -d= -f2- | tr -d '"'
s governor; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null
s no_turbo; cat /sys/devices/system/cpu/intel_pstate/no_turbo 2>/dev/null
s boost; cat /sys/devices/system/cpu/cpufreq/boost 2>/dev/null
s smt; cat /sys/devices/system/cpu/smt/active 2>/dev/null
s mitigations; grep -H . /sys/devices/system/cpu/vulnerabilities/* 2>/dev/null
s irqbalance; pgrep -x irqbalance >/dev/null 2>&1 && echo running
s crypto; cat /proc/crypto 2>/dev/null
s default_qdisc; cat /proc/sys/net/core/default_qdisc 2>/dev/null || nsenter -t 1 -n cat /proc/sys/net/core/default_qdisc 2>/dev/null
"""
# The traffic tools' versions; each technique declares its own (Technique.versions).
TOOL_VERSIONS = {"iperf3": "iperf3 --version 2>&1 | head -1", "iperf2": "iperf -v 2>&1 | head -1",
                 "openssl": "openssl version 2>&1 | head -1"}
# Per network namespace: its interfaces, offloads, qdiscs and firewall.
NETWORK_SCRIPT = r"""
s() { echo "### $1"; }
s nft_lines; command -v nft >/dev/null && nft list ruleset 2>/dev/null | wc -l
s interfaces; for d in /sys/class/net/*; do n=${d##*/}; [ "$n" = lo ] && continue; drv=$(basename "$(readlink "$d/device/driver" 2>/dev/null)" 2>/dev/null); echo "$n ${drv:--} $(cat "$d/mtu")"; done
s offloads; command -v ethtool >/dev/null && for d in /sys/class/net/*; do n=${d##*/}; [ "$n" = lo ] && continue; ethtool -k "$n" 2>/dev/null | sed -n "s/^\(generic-segmentation-offload\|generic-receive-offload\|tcp-segmentation-offload\|rx-udp-gro-forwarding\|tx-checksumming\|rx-checksumming\): \([a-z]*\).*/$n \1 \2/p"; done
s qdisc; tc qdisc show 2>/dev/null
s tcp_cc; cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null
s tcp_cc_available; cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null
s end
"""


def version_script(kinds: Iterable[str] | None = None) -> str:
    """One section per version command: the tools', then those of the techniques `kinds` (every
    registered one when None). Only the run's own techniques are asked: their versions are the
    ones a reader needs beside its numbers, and the other twenty-odd (Go and Rust daemons
    starting) were over half the facts' CPU (bench/hostfacts.py: 0.16 -> 0.07 s). The commands run side by side, each
    section printed whole in one write when its command is done (sections are read by name, in
    any order): one after another they were ~1.5 s of a run's start in the TCG kernel VM
    (swanctl --help alone ~1 s)."""
    commands = dict(TOOL_VERSIONS)
    for kind in TECHNIQUES if kinds is None else sorted(set(kinds)):
        commands.update(TECHNIQUES[kind].versions)
    return "".join(f"( v=$({command}); printf '### v_{name}\\n%s\\n' \"$v\" ) &\n"
                   for name, command in commands.items()) + "wait\n"


def script(kinds: Iterable[str] | None = None) -> str:
    """The whole script: the machine-wide part with the versions of `kinds`' commands, then
    this namespace's network part."""
    return MACHINE_SCRIPT + version_script(kinds) + NETWORK_SCRIPT


CRYPTO_FLAGS = ("aes", "vaes", "avx", "avx2", "avx512f", "pclmulqdq", "vpclmulqdq", "sha_ni", "pmull", "sha2")
# The algorithms the techniques use, as the kernel names them: whichever driver has the highest
# priority for a name is the one ESP, MACsec or WireGuard's kernel code gets.
CRYPTO_NAMES = ("gcm(aes)", "rfc4106(gcm(aes))", "cbc(aes)", "ctr(aes)", "aes", "chacha20", "poly1305",
                "rfc7539(chacha20,poly1305)", "rfc7539esp(chacha20,poly1305)", "hmac(sha256)", "sha256")
NOT_INSTALLED = re.compile(r"not found|No such file|command not found", re.IGNORECASE)


def collect_host_facts(run_id: str, hosts: dict[str, Host], kinds: Iterable[str] | None = None) -> list[HostFacts]:
    """Every host's facts, all at once, one round trip each (~0.1 s whatever the number of hosts).
    Hosts that are namespaces of one machine (`Host.machine`) read its machine-wide part once and
    each its own network part: the three namespaces of a local testbed took 0.25 s of CPU on two
    cores with the whole script each. `kinds`: the techniques whose versions are asked."""
    machines: set[str] = set()
    whole = {}  # role -> runs the whole script (the first host of its machine)
    for role, host in hosts.items():
        whole[role] = host.machine is None or host.machine not in machines
        machines.add(host.machine)
    whole_script = script(kinds)
    with ThreadPoolExecutor(max_workers=len(hosts)) as pool:
        texts = dict(zip(hosts, pool.map(
            lambda role: hosts[role].run(["sh", "-c", whole_script if whole[role] else NETWORK_SCRIPT], timeout=60,
                                         check=False).stdout, hosts)))
    machine_texts = {hosts[role].machine: texts[role] for role in hosts if whole[role]}
    return [HostFacts(run_id, role, parse_facts(texts[role], "" if whole[role] else machine_texts[host.machine]))
            for role, host in hosts.items()]


def sections(text: str) -> dict[str, str]:
    found, name, lines = {}, None, []
    for line in text.splitlines():
        if line.startswith("### "):
            if name:
                found[name] = "\n".join(lines).strip()
            name, lines = line[4:].strip(), []
        else:
            lines.append(line)
    if name and name != "end":
        found[name] = "\n".join(lines).strip()
    return found


def parse_facts(text: str, machine_text: str = "") -> dict:
    """The facts in a script's output; `machine_text`: the machine-wide part read by another
    namespace of the same machine."""
    parts = sections(machine_text) | sections(text)
    flags = set(parts.get("cpu_flags", "").split())
    facts = {
        "cpu_model": parts.get("cpu_model", "").strip() or None,
        "cpu_count": _int(parts.get("cpu_count")),
        "cpu_crypto_flags": {flag: flag in flags for flag in CRYPTO_FLAGS if flags},
        "kernel": parts.get("kernel") or None,
        "os": parts.get("os") or None,
        "governor": parts.get("governor") or None,
        "turbo": _turbo(parts.get("no_turbo"), parts.get("boost")),
        "smt": {"1": True, "0": False}.get(parts.get("smt", "")),
        "mitigations": _mitigations(parts.get("mitigations", "")),
        "irqbalance": parts.get("irqbalance") == "running",
        "firewall_rules_lines": _int(parts.get("nft_lines")),
        "crypto_drivers": crypto_drivers(parts.get("crypto", "")),
        "interfaces": _interfaces(parts.get("interfaces", ""), parts.get("offloads", "")),
        "qdiscs": [line for line in parts.get("qdisc", "").splitlines() if line.strip()],
        # TCP under loss measures the congestion control as much as the technique (bbr barely slows
        # for random loss, cubic falls by an order of magnitude): per namespace, as the kernel keeps it
        "tcp_congestion_control": parts.get("tcp_cc") or None,
        "tcp_available_congestion_control": parts.get("tcp_cc_available", "").split(),
        "default_qdisc": parts.get("default_qdisc") or None,
        "versions": {name[2:]: value for name, value in parts.items()
                     if name.startswith("v_") and value and not NOT_INSTALLED.search(value)},
    }
    return facts


def crypto_drivers(text: str) -> dict[str, str]:
    """name -> the driver with the highest priority among /proc/crypto's entries of that name."""
    best: dict[str, tuple[int, str]] = {}
    for block in text.split("\n\n"):
        fields = dict(line.split(":", 1) for line in block.splitlines() if ":" in line)
        fields = {key.strip(): value.strip() for key, value in fields.items()}
        name, driver, priority = fields.get("name"), fields.get("driver"), _int(fields.get("priority")) or 0
        if name in CRYPTO_NAMES and driver and (name not in best or priority > best[name][0]):
            best[name] = (priority, driver)
    return {name: driver for name, (_, driver) in sorted(best.items())}


def _interfaces(listing: str, offloads: str) -> dict[str, dict]:
    interfaces = {}
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 3:
            interfaces[parts[0]] = {"driver": None if parts[1] == "-" else parts[1], "mtu": _int(parts[2]),
                                    "offloads": {}}
    for line in offloads.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in interfaces:
            interfaces[parts[0]]["offloads"][parts[1]] = parts[2] == "on"
    return interfaces


def _mitigations(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        path, _, state = line.partition(":")
        if state:
            found[path.rsplit("/", 1)[-1]] = state.strip()
    return found


def _turbo(no_turbo: str | None, boost: str | None) -> bool | None:
    if no_turbo in ("0", "1"):
        return no_turbo == "0"
    if boost in ("0", "1"):
        return boost == "1"
    return None


def _int(value: str | None) -> int | None:
    try:
        return int((value or "").strip())
    except ValueError:
        return None


def summary_line(facts: dict) -> str:
    """The facts a reader checks first, as one line for the report's host table."""
    flags = [flag for flag, present in (facts.get("cpu_crypto_flags") or {}).items() if present]
    parts = [facts.get("cpu_model") or "?", f"{facts.get('cpu_count') or '?'} CPUs",
             "crypto flags: " + (", ".join(flags) or "none"), f"kernel {facts.get('kernel') or '?'}",
             f"governor {facts.get('governor') or 'n/a'}", f"irqbalance {'on' if facts.get('irqbalance') else 'off'}",
             f"TCP {facts.get('tcp_congestion_control') or '?'}, qdisc {facts.get('default_qdisc') or '?'}"]
    return "; ".join(parts)
