"""kind = "vm": the client and the server are QEMU guests booting the distribution kernel
(hosts/vm.py), reached over ssh; the router, when there is one, is a namespace of this machine
between them. Any campaign then runs on them unchanged.

Two guests, not three: under TCG each guest wants a core of its own, and three single-vCPU
guests on a 2-core machine starved each other until evidence commands timed out. The router
only forwards, which this machine's kernel does as well as a guest's. The price: what runs in
the router runs on this machine's kernel. netem (which a kernel without sch_netem cannot give
the router) is then applied on the guests' own egress (placement "endpoints"; see
impair_backends.NetemBackend), which the run records as the impairment's placement.

The links: with a router, each guest's NIC is a tap device QEMU creates in the run's VM
namespace, moved into the router's namespace and named and addressed as the local testbed's
router interfaces (r0 faces the client, r1 the server). Without a router, the two guests'
NICs are a pair of UDP socket netdevs on the VM namespace's loopback (a point-to-point wire).
The guests name their NICs like the local testbed (c0, s0) and carry its addresses.
"""

import time

from vpnbench.foundation.errors import HostError, TestbedError
from vpnbench.foundation.progress import LongWork
from vpnbench.hosts import evidence
from vpnbench.hosts.kernelvm import VmError
from vpnbench.hosts.netns import NetnsHost
from vpnbench.hosts.resources import RunResources, delete_netns
from vpnbench.hosts.ssh import SshTarget
from vpnbench.hosts.vm import SSH_PORT, Guests, Nic, mac
from vpnbench.testbeds.base import Link, Testbed, plan_links
from vpnbench.testbeds.local import add_netns, address, forward, ip
from vpnbench.testbeds.probe import RemoteKernelProbe, has_qdisc
from vpnbench.testbeds.spec import TestbedSpec
from vpnbench.testbeds.ssh import SshHosts

GUESTS = ("client", "server")
TAP_TIMEOUT = 30.0  # QEMU creates its taps before the guest starts: seconds, even under TCG


class VmTestbed(Testbed):
    def __init__(self, spec: TestbedSpec, resources: RunResources):
        self.spec = spec
        self.resources = resources
        self.links = plan_links(spec.router)
        self.vm_netns = resources.netns_name("vm")
        self.router_netns = resources.netns_name("router") if spec.router else None
        vm = spec.vm
        self.guests = Guests(resources.path("vm"), self.vm_netns, list(GUESTS), vm.memory_mb, vm.vcpus, vm.pin,
                             vm.accel, vm.boot_timeout)
        self.remote = SshHosts({role: self._target(role) for role in GUESTS}, self.guests.ssh_settings(), resources,
                               prefix=["ip", "netns", "exec", self.vm_netns])
        self.hosts = dict(self.remote.hosts)
        if spec.router:
            self.hosts["router"] = NetnsHost("router", self.router_netns, resources.dir)
        self.pin_note = "VMs " + ("pinned: one core per VM" if vm.pin else "not pinned")
        self.sysctls: dict[str, dict] = {}
        self._created: list[str] = []
        self._probe = RemoteKernelProbe([self.client, self.server])
        self._facts = {"vms": len(GUESTS), "memory_mb": vm.memory_mb, "vcpus": vm.vcpus}
        if spec.router:
            self._facts["router"] = "a namespace of this machine"

    @property
    def probe(self) -> RemoteKernelProbe:
        return self._probe

    @property
    def facts(self) -> dict:
        return self._facts

    @property
    def setup_timeout_scale(self) -> float:
        """Bring-up (and evidence) deadlines stretch under TCG."""
        return self.guests.accel.setup_timeout_scale if self.guests.accel else 1.0

    def _link_of(self, role: str) -> Link:
        return next(link for link in self.links if role in (link.a, link.b))

    def _target(self, role: str) -> SshTarget:
        link = self._link_of(role)
        side, iface = link.end(role)
        return SshTarget(host="127.0.0.1", port=SSH_PORT[role], user="root", iface=iface,
                         ipv4=link.addr(side, "ipv4"), ipv6=link.addr(side, "ipv6"))

    # -- boot ------------------------------------------------------------------------------
    def connect(self) -> None:
        """Boot both guests (their links attached to the router's namespace) and wait for their sshd;
        the boot's progress on stderr (under TCG a first boot takes a minute or more)."""
        with LongWork("VM testbed boot") as progress:
            progress.begin("kernel, initramfs and accelerator (a KVM probe boot under auto)")
            self._boot(progress)

    def _boot(self, progress: LongWork) -> None:
        self.guests.prepare()
        accel = self.guests.accel
        self._facts.update(accel=accel.note, accel_reason=accel.reason, kernel=self.guests.kernel,
                           setup_timeout_scale=self.setup_timeout_scale)
        add_netns(self.vm_netns, self._created)
        if self.router_netns:
            add_netns(self.router_netns, self._created)
            # netem only where a kernel has it: the router's is this machine's
            self.netem_on_router = has_qdisc(self.resources, "netem")
        for number, role in enumerate(GUESTS):
            progress.begin(f"starting {role}'s QEMU ({accel.name})")
            self.guests.boot(role, number, [self._nic(role, number)], self._guest_setup(role))
            if self.router_netns:
                self._attach_tap(role)
        deadline = time.monotonic() + self.spec.vm.boot_timeout
        for role in GUESTS:
            progress.begin(f"{role} booting under {accel.name}, then its sshd")
            self.guests.wait_sshd(role, self.hosts[role], deadline)
            self.hosts[role].slowdown = accel.setup_timeout_scale  # evidence commands wait as long as set-up does

    def _nic(self, role: str, number: int) -> Nic:
        link = self._link_of(role)
        side, iface = link.end(role)
        nic_mac = mac(256 + 16 * number + (0 if side == "a" else 1))
        if self.router_netns:
            return Nic(iface, nic_mac, f"tap,ifname={_tap(role)},script=no,downscript=no,vnet_hdr=off")
        # each end listens on its own port and sends to the other's: a point-to-point wire
        mine, peer = (10000, 10001)[:: 1 if side == "a" else -1]
        return Nic(iface, nic_mac, f"socket,udp=127.0.0.1:{peer},localaddr=127.0.0.1:{mine}")

    def _guest_setup(self, role: str) -> list[str]:
        """Address the guest's end of its link as the local testbed does; route via the router."""
        link = self._link_of(role)
        side, iface = link.end(role)
        lines = [f"ip addr add {link.addr(side, 'ipv4')}/24 dev {iface}",
                 f"ip -6 addr add {link.addr(side, 'ipv6')}/64 dev {iface} nodad",
                 f"ip link set {iface} up"]
        if self.router_netns:
            lines += [f"ip route add default via {link.addr('a', 'ipv4')}",
                      f"ip -6 route add default via {link.addr('a', 'ipv6')}"]
        return lines

    def _attach_tap(self, role: str) -> None:
        """Move the tap QEMU made for role into the router's namespace, as the router's interface."""
        link, tap = self._link_of(role), _tap(role)
        deadline = time.monotonic() + TAP_TIMEOUT
        while True:
            try:
                ip("-n", self.vm_netns, "link", "set", "dev", tap, "netns", self.router_netns)
                break
            except HostError:
                self.guests.check()
                if time.monotonic() > deadline:
                    raise VmError(f"VM {role}: QEMU made no tap device {tap} within {TAP_TIMEOUT:g} s; "
                                  f"console:\n{self.guests.console_tail(role)}") from None
                time.sleep(0.1)
        ip("-n", self.router_netns, "link", "set", "dev", tap, "name", link.a_iface)
        address(self.router_netns, link, "a")

    def up(self) -> None:
        capture_hosts = [point.host for point in self.capture_points()]
        self.remote.check_tools(capture_hosts)
        router = self.router
        if router is not None:
            missing = router.missing_commands(["ip", "ping", "sysctl"] + (["tcpdump"] if router in capture_hosts else []))
            if missing:
                raise TestbedError(f"router (this machine): {', '.join(missing)} not found")
            forward(self.router_netns)  # the guests route by themselves
        # the endpoints' kernels are tuned; the router namespace only forwards
        self.sysctls = self.remote.apply_sysctls(self.spec.sysctls)
        self.wait_ready()

    # -- evidence --------------------------------------------------------------------------
    def evidence(self) -> dict[str, str]:
        """The hosts' dumps plus each guest's console (kernel warnings, an oops) and how its QEMU
        fares from here (a guest starved of CPU shows it)."""
        found = super().evidence()
        for role in GUESTS:
            found[f"{role}: console"] = evidence.clip(self.guests.console_tail(role, 40), keep="tail") or "(no console output)"
            found[f"{role}: qemu"] = self.guests.state(role)
        return found

    # -- shutdown --------------------------------------------------------------------------
    def down(self) -> None:
        """Close the ssh side, then stop the guests and remove the namespaces (the taps vanish with QEMU)."""
        self.remote.close()
        self.guests.stop()
        for netns in reversed(self._created):
            delete_netns(netns)
        self._created.clear()


def _tap(role: str) -> str:
    return f"vpbtap-{role}"  # unique inside the run's VM namespace only: it is fresh per run
