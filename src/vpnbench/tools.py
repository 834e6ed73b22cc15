"""External programs vpnbench drives, and the Debian package that provides each."""

import shutil

PACKAGES = {
    "ip": "iproute2",
    "ss": "iproute2",
    "tc": "iproute2",
    "iperf3": "iperf3",
    "ping": "iputils-ping",
    "tcpdump": "tcpdump",
    "wg": "wireguard-tools",
    "wireguard-go": "wireguard-go",
    "taskset": "util-linux",
    "swanctl": "strongswan-swanctl",
    "openssl": "openssl",
    "openvpn": "openvpn",
    "wpa_supplicant": "wpasupplicant",
}


def which(command: str) -> str | None:
    return shutil.which(command, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")


def missing_tool_reason(command: str) -> str:
    package = PACKAGES.get(command, command)
    return f"{command} not found; install the Debian package '{package}' (apt-get install {package})"
