"""What this machine's kernel can do, found by trying it in a throwaway namespace."""

import functools
import subprocess

from vpnbench.resources import RunResources, delete_netns
from vpnbench.techniques.base import KernelProbe


class LocalKernelProbe(KernelProbe):
    """Tries `ip link add ... type KIND` in a private namespace (this also autoloads modules)."""

    def __init__(self, resources: RunResources):
        self.resources = resources

    @functools.cache
    def has_link_type(self, kind: str, on_ethernet: bool = False) -> bool:
        args = ["ip", "link", "add", "probe0"]
        if on_ethernet:
            return _probe_in_netns(self.resources, [["ip", "link", "add", "probe1", "type", "veth"],
                                                    args + ["link", "probe1", "type", kind]])
        return _probe_in_netns(self.resources, [args + ["type", kind]])

    @functools.cache
    def has_qdisc(self, kind: str) -> bool:
        return has_qdisc(self.resources, kind)

    def accepts(self, commands: list[list[str]]) -> bool:
        return self._accepts(tuple(tuple(c) for c in commands))

    @functools.cache
    def _accepts(self, commands: tuple[tuple[str, ...], ...]) -> bool:
        return _probe_in_netns(self.resources, [list(c) for c in commands], every=True)


def _probe_in_netns(resources: RunResources, argv_after_netns: list[list[str]], every: bool = False) -> bool:
    """Run commands in a throwaway namespace; True when the last one (every: each one) succeeds."""
    netns = resources.netns_name("probe")
    subprocess.run(["ip", "netns", "add", netns], capture_output=True)
    try:
        result = None
        for argv in argv_after_netns:
            result = subprocess.run(["ip", "netns", "exec", netns, *argv], capture_output=True)
            if every and result.returncode != 0:
                return False
        return result is not None and result.returncode == 0
    finally:
        delete_netns(netns)


def has_qdisc(resources: RunResources, kind: str) -> bool:
    return _probe_in_netns(resources, [["ip", "link", "set", "lo", "up"],
                                       ["tc", "qdisc", "add", "dev", "lo", "root", kind]])
