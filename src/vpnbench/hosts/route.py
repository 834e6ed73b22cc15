"""Which interface a host reaches an address through, that interface's MTU and its MAC: one
reading of `ip route get` and `ip link` for every caller (the MTU measurement, the scaling
axes, the runner's tunnel facts, MACsec's set-up, the traffic generators)."""

import json
import re

from vpnbench.hosts.base import Host


def global_addresses(host: Host, device: str | None = None) -> list[str]:
    """The host's global addresses (both families), of one device or of all."""
    argv = ["ip", "-o", "addr", "show", "scope", "global"] + (["dev", device] if device else [])
    out = host.run(argv, timeout=5, check=False).stdout
    return [w[3].split("/")[0] for w in map(str.split, out.splitlines()) if len(w) > 3 and w[2] in ("inet", "inet6")]


def route_device(host: Host, address: str) -> str | None:
    """The interface the host reaches address through."""
    return route_mtu(host, address, lookup_device=False)[0]


def route_mtu(host: Host, address: str, lookup_device: bool = True) -> tuple[str | None, int | None]:
    """The device the host reaches address through, and the MTU that applies (a route's own
    `mtu` attribute wins over the device's)."""
    words = host.run(["ip", "-o", "route", "get", address], timeout=5, check=False).stdout.split()
    if "dev" not in words:
        return None, None
    dev = words[words.index("dev") + 1]
    if "mtu" in words:
        return dev, int(words[words.index("mtu") + 1])
    return dev, device_mtu(host, dev) if lookup_device else None


def path_mtu(host: Host, address: str) -> int | None:
    """The MTU of the interface the host reaches address through."""
    device = route_device(host, address)
    return None if device is None else device_mtu(host, device)


def device_mtu(host: Host, device: str) -> int | None:
    text = host.run(["cat", f"/sys/class/net/{device}/mtu"], timeout=5, check=False).stdout.strip()
    return int(text) if text.isdigit() else None


def device_mac(host: Host, device: str) -> str:
    return json.loads(host.run(["ip", "-j", "link", "show", "dev", device]).stdout)[0]["address"]


def lower_device(host: Host, device: str) -> str:
    """The device a stacked one sits on (macsec0@c0 -> c0); the device itself otherwise. A veth's
    peer in another namespace (c0@if12) is not a lower device."""
    link = host.run(["ip", "-o", "link", "show", "dev", device], timeout=5, check=False).stdout
    parent = re.search(rf"{re.escape(device)}@([\w.-]+):", link)
    return parent.group(1) if parent and not parent.group(1).startswith("if") else device
