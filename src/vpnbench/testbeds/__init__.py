"""Testbeds: where a campaign runs. One interface (base.Testbed), three kinds:

- local: a network namespace per host on this machine (local.py);
- ssh: machines of an inventory whose underlay exists already (ssh.py);
- vm: QEMU guests booted for the run, the router a namespace between them (vm.py).

The spec (what a campaign's [testbed] table says) is pure data: testbed_spec.py.
"""

from vpnbench.resources import RunResources
from vpnbench.testbeds.base import BUMP_IFACES, CapturePoint, Link, Testbed, plan_links
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbed_spec import TestbedSpec, VmSettings, plan_pinning
from vpnbench.testbeds.ssh import SshTestbed

__all__ = ["BUMP_IFACES", "CapturePoint", "Link", "LocalTestbed", "SshTestbed", "Testbed", "TestbedSpec", "VmSettings",
           "make_testbed", "plan_links", "plan_pinning"]


def make_testbed(spec: TestbedSpec, resources: RunResources, bump: bool = False) -> Testbed:
    """The testbed spec.kind names; bump (local only): linkem bridges the link next to the server."""
    if spec.kind == "ssh":
        return SshTestbed(spec, resources)
    if spec.kind == "vm":
        from vpnbench.testbeds.vm import VmTestbed  # QEMU's machinery: loaded only when asked for
        return VmTestbed(spec, resources)
    return LocalTestbed(spec, resources, bump)
