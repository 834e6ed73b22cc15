"""Kept for callers of the old module: the testbeds live in the package vpnbench.testbeds."""

from vpnbench.testbeds import (BUMP_IFACES, CapturePoint, Link, LocalTestbed, SshTestbed, Testbed, TestbedSpec,
                               VmSettings, make_testbed, plan_links, plan_pinning)

__all__ = ["BUMP_IFACES", "CapturePoint", "Link", "LocalTestbed", "SshTestbed", "Testbed", "TestbedSpec", "VmSettings",
           "make_testbed", "plan_links", "plan_pinning"]
