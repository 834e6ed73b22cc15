"""A run never copies a vpnbench-gen of the wrong architecture to a host: it asks each remote
host's `uname -m` before the first cell and stops with one line (exit 2), nothing copied."""

import platform
from pathlib import Path

import pytest
from rich.console import Console

from runner_doubles import SSH_INVENTORY, FakeClock, FakeHost, FakeNetwork, FakeTestbed, Lab
from vpnbench.campaign import campaign_from_dict
from vpnbench.foundation.errors import MeasurementError, UserError
from vpnbench.hosts import resources as resources_module
from vpnbench.hosts.arch import check_gen_arch, elf_arch, normalize
from vpnbench.hosts.base import CommandResult
from vpnbench.measure import gen
from vpnbench.measure.gen import REPO_GEN, binary_on
from vpnbench.run.runner import Runner
from vpnbench.store.database import Store

UDP_GEN = {"kind": "udp", "tool": "gen", "rate": "10M", "length": 1200, "duration": "1s"}


def elf(path, machine: int):
    """An ELF header for `machine` (62: x86-64, 183: AArch64): all elf_arch reads."""
    path.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(11) + machine.to_bytes(2, "little") + bytes(44))
    path.chmod(0o755)
    return str(path)


class RemoteHost(FakeHost):
    """A lab machine over ssh that answers `uname -m` with its architecture."""

    def on_this_machine(self) -> bool:
        return False

    def __init__(self, role, network, machine: str, commands=("ping", "ip", "sh")):
        super().__init__(role, network, commands)
        self.machine_name = machine
        self.workdir = Path("/run/vpnbench-test")

    def run(self, argv, timeout=30.0, check=True, input=None):
        if argv == ["uname", "-m"]:
            self.ran.append(list(argv))
            return CommandResult(argv, 0, self.machine_name + "\n", "")
        return super().run(argv, timeout, check, input)


def test_elf_arch_reads_the_machine_field(tmp_path):
    assert elf_arch(elf(tmp_path / "x", 62)) == "x86_64"
    assert elf_arch(elf(tmp_path / "a", 183)) == "aarch64"
    assert elf_arch(tmp_path / "missing") is None
    (tmp_path / "text").write_text("#!/bin/sh\n")
    assert elf_arch(tmp_path / "text") is None
    assert normalize("arm64\n") == "aarch64"
    if REPO_GEN.exists():  # the binary `make` builds is this machine's
        assert elf_arch(REPO_GEN) == normalize(platform.machine())


def test_an_aarch64_host_without_its_own_gen_is_refused_before_anything_is_copied(tmp_path):
    local = elf(tmp_path / "vpnbench-gen", 62)
    pi = RemoteHost("client", FakeNetwork(FakeClock()), "aarch64")
    with pytest.raises(UserError) as refused:
        check_gen_arch([pi], local)
    message = str(refused.value)
    assert "\n" not in message and refused.value.exit_code == 2
    assert "client: the host is aarch64 but this machine's vpnbench-gen" in message and "x86_64" in message
    with pytest.raises(MeasurementError, match="aarch64"):  # the copy itself refuses too
        binary_on(pi, local)
    assert pi.files == {}


def test_same_architecture_or_a_gen_of_its_own_passes(tmp_path):
    local = elf(tmp_path / "vpnbench-gen", 62)
    network = FakeNetwork(FakeClock())
    same = RemoteHost("client", network, "x86_64")
    own = RemoteHost("server", network, "aarch64", commands=("ping", "vpnbench-gen"))
    check_gen_arch([same, own], local)
    assert ["uname", "-m"] not in own.ran  # its own binary on PATH: nothing to copy, nothing to ask
    gen._COPIES.clear()
    assert binary_on(same, local).endswith("vpnbench-gen-client") and len(same.files) == 1


def test_a_run_on_an_aarch64_testbed_stops_before_its_first_cell(tmp_path, monkeypatch):
    monkeypatch.setattr(resources_module, "RUN_ROOT", tmp_path / "run")
    monkeypatch.setenv("VPNBENCH_GEN", elf(tmp_path / "vpnbench-gen", 62))
    clock = FakeClock()
    lab = Lab(clock, FakeNetwork(clock))

    def make(spec, resources):
        testbed = FakeTestbed(spec, lab.network)
        testbed.hosts = {role: RemoteHost(role, lab.network, "aarch64") for role in ("client", "server")}
        lab.testbeds.append(testbed)
        return testbed

    spec = campaign_from_dict({"campaign": {"name": "pi"}, "testbed": SSH_INVENTORY,
                               "technique": [{"kind": "baseline"}], "measurement": [UDP_GEN]})
    store = Store(tmp_path / "r.db")
    runner = Runner(spec, store, console=Console(file=open("/dev/null", "w")), make=make, clock=clock)
    try:
        with pytest.raises(UserError, match=r"^client: the host is aarch64 but this machine's vpnbench-gen"):
            runner.run()
    finally:
        store.close()
    testbed = lab.testbeds[0]
    assert testbed.calls == ["connect", "down"]  # never up, no cell
    assert all(host.files == {} and host.procs == [] for host in testbed.hosts.values())
