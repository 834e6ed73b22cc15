"""`vpnbench doctor`: what this machine can run, and what to install for what it cannot."""

import os
import platform

from vpnbench.foundation.errors import VpnbenchError
from vpnbench.foundation.tools import known_packages, missing_tool_reason, which
from vpnbench.hosts.builds_install import build_rows
from vpnbench.hosts.resources import RunResources
from vpnbench.measure import MEASUREMENTS  # noqa: F401 - defining them declares their packages (known_packages)
from vpnbench.techniques import TECHNIQUES
from vpnbench.techniques.ipsec import capabilities as ipsec_capabilities
from vpnbench.testbeds.impair_backends import BACKENDS  # the built-in ones registered with it
from vpnbench.testbeds.make import make_testbed
from vpnbench.testbeds.probe import KernelProbe, LocalKernelProbe, NoProbe, RemoteKernelProbe, ThisMachine
from vpnbench.testbeds.spec import plan_pinning


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
        report["kernel_features"] = _kernel_features(probe) if root else {"note": "run as root to probe the kernel"}
        report["impairments"] = _impairment_backends(probe if root else None)
        report["techniques"] = [
            {"technique": kind, "backend": status.name, "available": status.available,
             "needs": cls.kernel_features.get(status.name, ""),
             "reason": status.reason if root or status.available else "run as root to probe"}
            for kind, cls in TECHNIQUES.items()
            for status in cls.backends(probe)
        ]
        report["ipsec"] = ipsec_capabilities(probe) if root else []
        report["builds"] = build_rows()
    finally:
        if resources:
            resources.close()
    return report


def _impairment_backends(probe: KernelProbe | None) -> list[dict]:
    """Every registered impairment backend on this machine; probe None: not root."""
    rows = []
    for name, cls in BACKENDS.items():
        reason = cls.unavailable(probe or NoProbe())
        if reason and probe is None and cls.unavailable(_Everything()) is None:
            reason = "run as root to probe"  # only a root probe could tell
        rows.append({"backend": name, "available": reason is None, "reason": reason or ""})
    auto = next((row["backend"] for row in rows if row["available"]), None)
    for row in rows:
        row["auto"] = row["backend"] == auto
    return rows


class _Everything(ThisMachine, KernelProbe):
    """A kernel that has every feature: what a backend needs besides the kernel shows through it."""

    def has_link_type(self, kind: str, on_ethernet: bool = False) -> bool:
        return True

    def has_qdisc(self, kind: str) -> bool:
        return True

    def has_command(self, name: str) -> bool:
        return True


def kernel_rows(probe: KernelProbe, technique_prefix: str = "") -> dict[str, bool]:
    """What each technique and impairment backend needs of a kernel, as doctor's rows (each
    declares its own: Technique.kernel_rows, ImpairmentBackend.kernel_rows)."""
    rows = {technique_prefix + name: ok for cls in TECHNIQUES.values() for name, ok in cls.kernel_rows(probe).items()}
    return rows | {name: ok for cls in BACKENDS.values() for name, ok in cls.kernel_rows(probe).items()}


def _kernel_features(probe: KernelProbe) -> dict:
    return {**kernel_rows(probe), "tun": os.path.exists("/dev/net/tun")}


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
            row.update(kernel_rows(probe, technique_prefix="kernel "))
            row["tun"] = host.run(["test", "-c", "/dev/net/tun"], check=False).ok
            report["hosts"][role] = {"kernel": host.run(["uname", "-r"], check=False).stdout.strip(), **row}
    finally:
        testbed.down()
        resources.close()
    return report


def build_step(argv: list[str]) -> str | None:
    """A build command as its progress names it: the tool, its subcommand and what it fetches or
    builds ("go build tailscale.com/cmd/tailscaled", "cargo install rosenpass@0.2.2"), never its
    paths (a private directory says nothing to a reader)."""
    if not argv:
        return None
    words = [os.path.basename(argv[0])]
    for arg in argv[1:3]:
        if arg.startswith("-") or "@" in arg or "/" in arg:
            break
        words.append(arg)
    target = next((arg for arg in argv[1:] if "@" in arg and not arg.startswith("-")), None)
    if target is None and len(argv) > len(words) and not argv[-1].startswith(("-", "/")):
        target = argv[-1]
    return " ".join([*words, target] if target else words)
