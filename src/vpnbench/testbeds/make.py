"""The testbed a spec names, made: the one place that knows every kind."""

from vpnbench.hosts.resources import RunResources
from vpnbench.testbeds.base import Testbed
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbeds.spec import TestbedSpec
from vpnbench.testbeds.ssh import SshTestbed


def make_testbed(spec: TestbedSpec, resources: RunResources, bump: bool = False) -> Testbed:
    """The testbed spec.kind names; bump (local only): linkem bridges the link next to the server."""
    if spec.kind == "ssh":
        return SshTestbed(spec, resources)
    if spec.kind == "vm":
        from vpnbench.testbeds.vm import VmTestbed  # QEMU's machinery: loaded only when asked for
        return VmTestbed(spec, resources)
    if spec.nodes is not None:
        from vpnbench.testbeds.mesh import MeshTestbed  # only mesh runs load the NAT machinery
        return MeshTestbed(spec, resources)
    return LocalTestbed(spec, resources, bump)
