"""External programs vpnbench drives, and the Debian package that provides each.

The testbed's own tools are listed here; every technique and measurement declares its own
(`packages` on its class), and `known_packages` joins them, so a new kind needs no edit here.
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


def known_packages() -> dict[str, str]:
    """command -> package, for the testbed, every technique and every measurement."""
    from vpnbench.measure import MEASUREMENTS  # noqa: PLC0415 - the registries import hosts, which import this
    from vpnbench.techniques import TECHNIQUES  # noqa: PLC0415

    packages = dict(TESTBED_PACKAGES)
    for kind in [*TECHNIQUES.values(), *MEASUREMENTS.values()]:
        packages.update(kind.packages)
    return packages


def which(command: str) -> str | None:
    return shutil.which(command, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")


def missing_tool_reason(command: str) -> str:
    package = known_packages().get(command, command)
    return f"{command} not found; install the Debian package '{package}' (apt-get install {package})"
