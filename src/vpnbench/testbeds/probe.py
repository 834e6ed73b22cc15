"""What the hosts of a testbed that run a technique can do: their kernels, found by trying it in
a throwaway namespace, their commands and files, and what a fixed command prints there. Asked
of this machine for a local testbed (its namespaces share its kernel, programs and files), of
each remote host for ssh and vm: never of the controller for a host that is not it."""

import abc
import functools
import shlex
import subprocess
from pathlib import Path

from vpnbench.foundation.tools import which
from vpnbench.hosts.base import Host
from vpnbench.hosts.resources import RunResources, delete_netns

THIS_MACHINE = "this machine"  # the host a local probe names: the namespaces share its programs and files


class KernelProbe(abc.ABC):
    """What the hosts that run a technique (client and server) can do. Every capability question
    a technique asks goes here, so it is answered by those hosts, never by the controller unless
    it is one of them (the local testbed)."""

    @abc.abstractmethod
    def has_link_type(self, kind: str, on_ethernet: bool = False) -> bool:
        """Can the kernel create an interface of this type (wireguard, ...)? on_ethernet: the type
        sits on an Ethernet device (MACsec), so it is tried on a veth."""

    def accepts(self, commands: list[list[str]]) -> bool:
        """Do all these commands succeed in a throwaway namespace (e.g. `ip xfrm state add`)?"""
        return False

    @abc.abstractmethod
    def has_qdisc(self, kind: str) -> bool:
        """Can the kernel attach a qdisc of this kind (netem, ...)?"""

    @abc.abstractmethod
    def has_command(self, name: str) -> bool:
        """Is this command on the hosts that run a technique (not the controller, unless it is one)?"""

    @abc.abstractmethod
    def host_lacking(self, path: str) -> str | None:
        """None when every such host has this path (a file, directory or device); otherwise the
        first host that lacks it (its role; "this machine" for namespaces), for the reason to name."""

    @abc.abstractmethod
    def outputs(self, argv: list[str]) -> dict[str, str]:
        """What argv (vpnbench's own fixed command, e.g. a version query) prints on each such host:
        host -> standard output ("" where it cannot run)."""


class ThisMachine:
    """The host-level answers for hosts that are namespaces of this machine: its programs, its files."""

    def has_command(self, name: str) -> bool:
        return which(name) is not None

    def host_lacking(self, path: str) -> str | None:
        return None if Path(path).exists() else THIS_MACHINE

    def outputs(self, argv: list[str]) -> dict[str, str]:
        return {THIS_MACHINE: self._output(tuple(argv))}

    @functools.cache
    def _output(self, argv: tuple[str, ...]) -> str:
        try:
            return subprocess.run(list(argv), capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""


class LocalKernelProbe(ThisMachine, KernelProbe):
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

    def accepts(self, commands: list[list[str]]) -> bool:
        return self._accepts(tuple(tuple(c) for c in commands))

    @functools.cache
    def _accepts(self, commands: tuple[tuple[str, ...], ...]) -> bool:
        return _probe_in_netns(self.resources, [list(c) for c in commands], every=True)

    @functools.cache
    def has_qdisc(self, kind: str) -> bool:
        return has_qdisc(self.resources, kind)


class RemoteKernelProbe(KernelProbe):
    """What the kernels of a remote testbed can do: tried on each host (client and server), each
    in a throwaway network namespace (unshare -n), so nothing is left on the machines."""

    def __init__(self, hosts: list[Host]):
        self.hosts = hosts
        self._cache: dict[str, object] = {}

    def _all(self, key: str, argv: list[str], batch: str | None = None) -> bool:
        if key not in self._cache:
            self._cache[key] = all(h.run(argv, timeout=30, check=False, input=batch).ok for h in self.hosts)
        return self._cache[key]

    def has_link_type(self, kind: str, on_ethernet: bool = False) -> bool:
        batch = (f"link add probe1 type veth\nlink add probe0 link probe1 type {kind}\n" if on_ethernet
                 else f"link add probe0 type {kind}\n")
        return self._all(f"link {kind}", ["unshare", "-n", "ip", "-batch", "-"], batch)

    def has_qdisc(self, kind: str) -> bool:
        return self._all(f"qdisc {kind}", ["unshare", "-n", "tc", "qdisc", "add", "dev", "lo", "root", kind])

    def accepts(self, commands: list[list[str]]) -> bool:
        """Do all these commands (vpnbench's own probes, never config values) succeed in a
        throwaway namespace on every host?"""
        script = " && ".join(shlex.join(argv) for argv in commands)
        return self._all(f"accepts {script}", ["unshare", "-n", "sh", "-c", script])

    def has_command(self, name: str) -> bool:
        key = f"command {name}"
        if key not in self._cache:
            self._cache[key] = not any(h.missing_commands([name]) for h in self.hosts)
        return self._cache[key]

    def host_lacking(self, path: str) -> str | None:
        key = f"file {path}"
        if key not in self._cache:
            self._cache[key] = next((h.role for h in self.hosts if not h.has_file(path)), None)
        return self._cache[key]

    def outputs(self, argv: list[str]) -> dict[str, str]:
        key = f"output {shlex.join(argv)}"
        if key not in self._cache:
            self._cache[key] = {h.role: h.run(argv, timeout=30, check=False).stdout for h in self.hosts}
        return self._cache[key]


class NoProbe(ThisMachine, KernelProbe):
    """Without root nothing can be tried in a namespace; say so instead of guessing. Commands
    and files need no root to be found: this machine's are."""

    def has_link_type(self, kind: str, on_ethernet: bool = False) -> bool:
        return False

    def has_qdisc(self, kind: str) -> bool:
        return False

    def accepts(self, commands) -> bool:
        return False


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
