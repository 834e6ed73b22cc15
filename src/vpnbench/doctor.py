"""`vpnbench doctor`: what this machine can run, and what to install for what it cannot."""

import os
import platform

from vpnbench.errors import VpnbenchError
from vpnbench.impair.backends import linkem_binary
from vpnbench.probe import LocalKernelProbe, NoProbe, RemoteKernelProbe, has_qdisc
from vpnbench.resources import RunResources
from vpnbench.techniques import TECHNIQUES
from vpnbench.techniques.ipsec import capabilities as ipsec_capabilities
from vpnbench.testbeds import make_testbed, plan_pinning
from vpnbench.tools import known_packages, missing_tool_reason, which


def diagnose() -> dict:
    root = os.geteuid() == 0
    report = {
        "root": root,
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "pinning": plan_pinning("auto", os.cpu_count() or 1)[1],
        "tools": [
            {"name": tool, "available": which(tool) is not None, "path": which(tool), "package": package,
             "install": None if which(tool) else missing_tool_reason(tool)}
            for tool, package in known_packages().items()
        ],
    }
    resources = RunResources() if root else None
    try:
        probe = LocalKernelProbe(resources) if root else NoProbe()
        report["kernel_features"] = _kernel_features(resources) if root else {"note": "run as root to probe the kernel"}
        report["impairments"] = _impairment_backends(report["kernel_features"].get("netem") if root else None)
        report["techniques"] = [
            {"technique": kind, "backend": status.name, "available": status.available,
             "needs": cls.kernel_features.get(status.name, ""),
             "reason": status.reason if root or status.available else "run as root to probe"}
            for kind, cls in TECHNIQUES.items()
            for status in cls.backends(probe)
        ]
        report["ipsec"] = ipsec_capabilities(probe) if root else []
    finally:
        if resources:
            resources.close()
    return report


def _impairment_backends(kernel_netem: bool | None) -> list[dict]:
    linkem = linkem_binary()
    rows = [
        {"backend": "netem", "available": bool(kernel_netem),
         "reason": "" if kernel_netem else ("run as root to probe" if kernel_netem is None else "kernel has no sch_netem")},
        {"backend": "linkem", "available": linkem is not None,
         "reason": "" if linkem else "not built: run `make` (cargo build --release --manifest-path linkem/Cargo.toml)"},
    ]
    auto = next((row["backend"] for row in rows if row["available"]), None)
    for row in rows:
        row["auto"] = row["backend"] == auto
    return rows


def _kernel_features(resources: RunResources) -> dict:
    probe = LocalKernelProbe(resources)
    return {
        "wireguard": probe.has_link_type("wireguard"),
        "macsec": probe.has_link_type("macsec"),
        "openvpn_dco": probe.has_link_type("ovpn-dco"),
        "netem": has_qdisc(resources, "netem"),
        "tun": os.path.exists("/dev/net/tun"),
    }


def ipsec_rows(rows: list[dict]) -> list[tuple[str, str, str, str]]:
    """IPsec per backend: what it can run on one line, then what it cannot, grouped by why."""
    out = []
    for backend in dict.fromkeys(row["backend"] for row in rows):
        groups: dict[str, list[str]] = {}
        for row in rows:
            if row["backend"] == backend:
                groups.setdefault("" if row["available"] else row["reason"], []).append(row.get("cipher") or row["feature"])
        out += [(backend, ", ".join(names), "no" if reason else "yes", reason) for reason, names in groups.items()]
    return out


# `vpnbench doctor --testbed FILE`: the same questions, asked of every host of an ssh or vm testbed.
def testbed_tools() -> tuple[str, ...]:
    return tuple(dict.fromkeys(["sysctl", "unshare", *known_packages()]))


def diagnose_testbed(spec) -> dict:
    """Connect to (or boot) the testbed, ask each host, tear it down. host -> capability -> bool."""
    from vpnbench.techniques.ipsec import kernel_has_esp

    resources = RunResources()
    testbed = make_testbed(spec, resources)
    report = {"kind": spec.kind, "hosts": {}, "facts": {}}
    try:
        try:
            testbed.connect()
        except (OSError, VpnbenchError, TimeoutError) as exc:
            report["error"] = str(exc)
            return report
        report["facts"] = testbed.facts
        for role, host in testbed.hosts.items():
            probe = RemoteKernelProbe([host])
            tools = testbed_tools()
            missing = host.missing_commands(list(tools))
            row = {f"tool {tool}": tool not in missing for tool in tools}
            row.update({
                "kernel wireguard": probe.has_link_type("wireguard"),
                "kernel macsec": probe.has_link_type("macsec"),
                "netem": probe.has_qdisc("netem"),
                "esp (xfrm)": kernel_has_esp(probe),
                "tun": host.run(["test", "-c", "/dev/net/tun"], check=False).ok,
            })
            report["hosts"][role] = {"kernel": host.run(["uname", "-r"], check=False).stdout.strip(), **row}
    finally:
        testbed.down()
        resources.close()
    return report
