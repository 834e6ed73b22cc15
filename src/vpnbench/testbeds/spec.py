"""What a campaign's [testbed] table says: pure data, validated before any host is touched.

The runtime (building namespaces, connecting, booting VMs) is the package vpnbench.testbeds,
which reads this; nothing here imports it.
"""

import os
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, model_validator

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import MAX_MTU, MIN_MTU, Duration, core_range_error
from vpnbench.hosts.inventory import inventory_hosts
from vpnbench.hosts.ssh import SshSettings, SshTarget
from vpnbench.impair.registry import BackendName, allowed_here, wrong_kind
from vpnbench.testbeds.mesh_spec import NatSetting, Nodes, nat_list_error


class VmSettings(BaseModel):
    """The VMs of kind = "vm": a guest per endpoint (client, server) booted from the
    distribution kernel; the router, if any, is a namespace of this machine between them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(1024, ge=256, le=65536)
    vcpus: int = Field(1, ge=1, le=64)
    pin: bool = False  # pin each VM's QEMU to its own core (client 0, server 1, modulo the cores)
    accel: Literal["auto", "kvm", "tcg"] = "auto"  # auto: KVM when it starts a guest here, else TCG
    boot_timeout: Duration = 300.0


def _whole_numbers(low: int, high: int, why: str):
    """A number or a list of numbers, each from low to high: one of S3's scaling axes."""
    def check(value):
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise ValueError(f"{v!r} is not allowed; allowed values: whole numbers from {low} to {high}{why}")
        return values
    return BeforeValidator(check)


class TestbedSpec(BaseModel):
    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["local", "ssh", "vm"] = "local"
    inventory: str | None = None  # kind = "ssh": an Ansible inventory the hosts' `name`s come from
    router: bool = True
    pin: Literal["auto", "on", "off"] = "auto"
    monitor_interval: Duration = 0.5
    setup_timeout: Duration | None = None  # a bring-up's deadline to the first packet through; default 15 s, scaled on slow testbeds
    impairment_backend: BackendName = "auto"
    sysctls: dict[Annotated[str, StringConstraints(pattern=r"^net\.[a-z0-9_.]+$")], str | int] = {}
    ssh: SshSettings = SshSettings()
    hosts: dict[Literal["client", "server", "router"], SshTarget] = {}
    vm: VmSettings = VmSettings()
    # S3's scaling axes, each a list that multiplies the matrix (scaling.py): how many cores the
    # client's and the server's processes may use, and the MTU of every underlay interface.
    cores: Annotated[list[int], _whole_numbers(1, 4096, "")] = []
    # more cores than a host may use: an error, or (skip: presets made for bigger machines) left out
    cores_above: Literal["error", "skip"] = "error"
    mtu: Annotated[list[int], _whole_numbers(MIN_MTU, MAX_MTU, " (IPv4's minimum to veth's maximum)")] = []
    # A mesh testbed (mesh.py): N node namespaces on a routed "internet", each behind its NAT.
    nodes: Nodes = None
    nat: NatSetting = "none"

    @model_validator(mode="after")
    def _mesh_fits(self):
        if self.nodes is not None and self.kind != "local":
            raise ValueError(f"nodes: only for kind = 'local' so far (here kind = {self.kind!r}); "
                             "allowed here: leave nodes out")
        if error := nat_list_error(self.nat, self.nodes):
            raise ValueError(error)
        return self

    @model_validator(mode="before")
    @classmethod
    def _hosts_from_inventory(cls, data):
        """[testbed.hosts.<role>] name = "pi1": host, user and port from the inventory's pi1
        (ansible_host, ansible_user, ansible_port), so a lab is described once; what the
        entry itself says wins."""
        if not isinstance(data, dict) or not isinstance(data.get("hosts"), dict):
            return data
        named = {role: entry for role, entry in data["hosts"].items() if isinstance(entry, dict) and "name" in entry}
        if not named:
            return data
        if not data.get("inventory"):
            raise ValueError(f"hosts.{next(iter(named))}.name: needs inventory = \"FILE\" (an Ansible inventory)")
        try:
            known = inventory_hosts(data["inventory"])
        except UserError as exc:
            raise ValueError(str(exc).replace("INVENTORY: ", "inventory: ", 1)) from None
        hosts = dict(data["hosts"])
        for role, entry in named.items():
            entry = dict(entry)
            name = entry.pop("name")
            if name not in known:
                raise ValueError(f"hosts.{role}.name: {name!r} is not in {data['inventory']}; "
                                 f"hosts there: {', '.join(sorted(known))}")
            facts = known[name]
            found = {"host": facts.get("ansible_host", name), "user": facts.get("ansible_user"),
                     "port": facts.get("ansible_port")}
            hosts[role] = {**{k: v for k, v in found.items() if v is not None}, **entry}
        return {**data, "hosts": hosts}

    @model_validator(mode="after")
    def _scaling_fits(self):
        """cores no host can give, and an MTU on an underlay vpnbench does not build, are refused here."""
        if self.mtu and self.kind != "local":
            raise ValueError(f"mtu: only for kind = 'local' (the underlay of a {self.kind} testbed is not "
                             "vpnbench's to change); allowed here: leave mtu out")
        available, who = self._core_share()
        if self.cores_above == "skip" and any(n <= available for n in self.cores):
            return self.model_copy(update={"cores": [n for n in self.cores if n <= available]})
        error = core_range_error(self.cores, available, who)
        if error:
            raise ValueError(error)
        return self

    def _core_share(self) -> tuple[int, str]:
        """How many cores each host may use, as far as the spec tells (ssh without cpus: at run time)."""
        if self.kind == "vm":
            return self.vm.vcpus, "the VMs' vcpus"
        if self.kind == "ssh":
            pinned = [len(t.cpus) for t in self.hosts.values() if t.cpus]
            return (min(pinned), "the inventory's cpus") if pinned else (4096, "")
        cpu_count = os.cpu_count() or 1
        cpus, _ = plan_pinning(self.pin, cpu_count)
        if cpus:
            return len(cpus["client"]), f"each host's share of this machine's {cpu_count} cores; pin = \"off\" gives each all"
        return cpu_count, "this machine's cores"

    @model_validator(mode="after")
    def _inventory_matches_kind(self):
        if self.kind != "ssh":
            if self.inventory:
                raise ValueError(f"inventory: only for kind = 'ssh' (here kind = {self.kind!r})")
            if self.hosts:
                raise ValueError(f"hosts: only for kind = 'ssh' (here kind = {self.kind!r})")
            return self
        roles = ("client", "server") + (("router",) if self.router else ())
        for role in roles:
            if role not in self.hosts:
                raise ValueError(f"hosts.{role}: required for kind = 'ssh'; give host, iface and ipv4")
            if role != "router" and not self.hosts[role].ipv4:
                raise ValueError(f"hosts.{role}.ipv4: required (the underlay address of the {role})")
        if "router" in self.hosts and not self.router:
            raise ValueError("hosts.router: given, but router = false")
        if self.router and not self.hosts["router"].iface_server:
            raise ValueError("hosts.router.iface_server: required (the router's server-facing interface)")
        if reason := wrong_kind(self.impairment_backend, self.kind):
            raise ValueError(f"impairment_backend: {reason}; allowed here: {allowed_here(self.kind)}")
        return self


def plan_pinning(mode: str, cpu_count: int) -> tuple[dict[str, list[int] | None], str]:
    """Split the cores between client and server so per-host CPU means something on one machine."""
    if mode == "off":
        return {}, "not pinned (pin = \"off\"): per-host CPU shares all cores"
    if cpu_count < 2:
        return {}, f"cannot pin: only {cpu_count} CPU; per-host CPU shares all cores"
    half = cpu_count // 2
    cpus = {"client": list(range(half)), "server": list(range(half, cpu_count))}
    return cpus, f"pinned: client on CPU {_ranges(cpus['client'])}, server on CPU {_ranges(cpus['server'])}; router unpinned"


def _ranges(cpus: list[int]) -> str:
    return f"{cpus[0]}" if len(cpus) == 1 else f"{cpus[0]}-{cpus[-1]}"
