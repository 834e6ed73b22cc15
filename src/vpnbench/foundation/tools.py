"""External programs vpnbench drives, and the Debian package that provides each.

The testbed's own tools are listed here; every technique and measurement declares its own
(`packages` on its class, handed over when the class is defined), and `known_packages` joins
them, so a new kind needs no edit here.
"""

import shutil

TESTBED_PACKAGES = {
    "ip": "iproute2",
    "ss": "iproute2",
    "tc": "iproute2",
    "ping": "iputils-ping",
    "tcpdump": "tcpdump",
    "taskset": "util-linux",
    "ethtool": "ethtool",
}


# command -> package, as each technique and measurement class declares it, handed here when the
# registries (vpnbench.techniques, vpnbench.measure) register it: this low module names no higher one.
_DECLARED: dict[str, str] = {}


def declare_packages(packages: dict[str, str]) -> None:
    _DECLARED.update(packages)


def known_packages() -> dict[str, str]:
    """command -> package, for the testbed and every technique and measurement registered
    (vpnbench.techniques and vpnbench.measure register the built-in ones)."""
    return {**TESTBED_PACKAGES, **_DECLARED}


def which(command: str) -> str | None:
    return shutil.which(command, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")


def missing_tool_reason(command: str) -> str:
    package = known_packages().get(command, command)
    return f"{command} not found; install the Debian package '{package}' (apt-get install {package})"
