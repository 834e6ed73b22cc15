"""What the strongSwan and Libreswan tests share: the refusal before a run, and the check
that this kernel has the ESP data path (else the test belongs in the kernel VM)."""

import pytest

from conftest import leftovers
from vpnbench.foundation.errors import UserError
from vpnbench.hosts.resources import RunResources
from vpnbench.run.setup import check_available, resolve_backends
from vpnbench.techniques.base import TechniqueContext
from vpnbench.techniques.ipsec import IPsec
from vpnbench.testbeds.local import LocalTestbed
from vpnbench.testbeds.probe import LocalKernelProbe
from vpnbench.testbeds.spec import TestbedSpec

# A stop's CI-like run with the CPU halved (a busy loop per core) on a host slower that day
# (2026-12-02) lost both kernel-VM IPsec campaigns (8 cells: 4 IKE bring-ups, each a daemon
# start and key exchange in the TCG guest) to run_cli's 300 s: a hang guard, not a speed bound,
# like test_macsec's and test_rosenpass's 600 s. The kernel-VM stage's budget is the speed bound.
KERNEL_VM_CAMPAIGN_TIMEOUT = 900


def local_bed():
    """A local testbed and the context a technique gets on it, for a fixture to yield from;
    the machine must be clean before and is checked clean after."""
    assert leftovers() == [], f"machine not clean before the tests: {leftovers()}"
    resources = RunResources()
    testbed = LocalTestbed(TestbedSpec(), resources)
    try:
        testbed.up()
        yield testbed, TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), resources,
                                        LocalKernelProbe(resources))
    finally:
        testbed.down()
        resources.close()
    assert leftovers() == [], f"left behind: {leftovers()}"


def assert_refused_before_run(campaign, message: str) -> None:
    """Backend resolution (done before any host is touched) refuses the technique with message."""
    with RunResources() as resources, pytest.raises(UserError, match=f"technique\\[1\\].backend: .*{message}"):
        check_available(resolve_backends(campaign, LocalKernelProbe(resources)), skip_unavailable=False)


def skip_without_kernel_esp(what: str) -> None:
    with RunResources() as resources:
        status = IPsec.backends(LocalKernelProbe(resources))[0]
    if not status.available:
        pytest.skip(f"{what} runs in the kernel VM (make test-kernel): {status.reason}")
