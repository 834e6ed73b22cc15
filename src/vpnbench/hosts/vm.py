"""kind = "vm": one QEMU VM per role, booting the distribution kernel (kernelvm.py), reached
over ssh; then any campaign runs on them unchanged (they are ssh hosts).

Everything lives in a network namespace of the run (vpb-<run id>-vm), so nothing appears
on this machine's own network and `vpnbench cleanup` finds it all by name:

- the QEMU processes (killed with the namespace; also PR_SET_PDEATHSIG, so a killed run
  takes its VMs along);
- the virtual links: a pair of UDP socket netdevs on the namespace's loopback per link
  (client-router, router-server, or client-server); the guests name the NICs like the
  local testbed (c0, r0, r1, s0) and carry its addresses;
- the management path: user-mode networking restricted to forwarding the namespace's
  127.0.0.1:220N to the guest's sshd, which accepts only a key generated for this run
  and presents a host key generated for this run (known_hosts written by us).

Each guest sees this machine's root read-only over 9p under a tmpfs overlay (its writes
vanish with it) and /vmshare, its private directory in the run directory.
"""

import os
import shlex
import subprocess
import time
from pathlib import Path

from vpnbench.hosts.ssh import SshSettings, SshTarget
from vpnbench.kernelvm import (VmError, _die_with_parent, build_initramfs, find_kernel, kernel_path, qemu_argv,
                               write_guest_script)
from vpnbench.resources import RunResources, delete_netns
from vpnbench.testbed import SshTestbed, TestbedSpec, plan_links
from vpnbench.vmaccel import Accel, BootWatch, choose, clean_console

SSH_PORT = {"client": 2201, "server": 2202, "router": 2203}
GUEST_IP = "10.0.2.15"  # user-mode networking's default guest address
SSHD_CONFIG = """ListenAddress {guest}:22
HostKey /run/vpnbench-vm/host_key
AuthorizedKeysFile /run/vpnbench-vm/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile none
MaxSessions 64
MaxStartups 64
"""


# No checksum or segmentation offload on the underlay NICs: a socket netdev carries no
# virtio-net header, so a packet the guest left for the "hardware" to checksum would reach the
# peer with a wrong checksum and die there silently (UDP: WireGuard, ESP in UDP). QEMU leaves
# these off for socket netdevs already; saying so keeps it true with any other backend.
LINK_OFFLOADS = "csum=off,guest_csum=off,gso=off,guest_tso4=off,guest_tso6=off,host_tso4=off,host_tso6=off"


def mac(index: int) -> str:
    return f"52:54:00:00:{index // 256:02x}:{index % 256:02x}"


class VmTestbed(SshTestbed):
    def __init__(self, spec: TestbedSpec, resources: RunResources):
        self.vm_dir = resources.path("vm")
        self.netns = resources.netns_name("vm")
        self.layout = plan_links(spec.router)
        roles = ["client", "server"] + (["router"] if spec.router else [])
        targets = {role: self._target(role) for role in roles}
        settings = SshSettings(identity_file=str(self.vm_dir / "id_ed25519"), known_hosts=str(self.vm_dir / "known_hosts"),
                               config_file="/dev/null", connect_timeout=10)
        super().__init__(spec, resources, targets, settings, prefix=["ip", "netns", "exec", self.netns])
        self.qemu: dict[str, subprocess.Popen] = {}
        self.watches: dict[str, BootWatch] = {}
        self.accel: Accel | None = None
        self.facts = {"vms": len(roles), "memory_mb": spec.vm.memory_mb, "vcpus": spec.vm.vcpus}
        self.pin_note = "VMs " + ("pinned: one core per VM" if spec.vm.pin else "not pinned")

    def _target(self, role: str) -> SshTarget:
        ifaces = [(link.a_iface if link.a == role else link.b_iface, link, "a" if link.a == role else "b")
                  for link in self.layout if role in (link.a, link.b)]
        first = ifaces[0]
        return SshTarget(host="127.0.0.1", port=SSH_PORT[role], user="root", iface=first[0],
                         iface_server=ifaces[1][0] if len(ifaces) > 1 else None,
                         ipv4=None if role == "router" else first[1].addr(first[2], "ipv4"),
                         ipv6=None if role == "router" else first[1].addr(first[2], "ipv6"))

    # -- boot ------------------------------------------------------------------------------
    def connect(self) -> None:
        """Boot every VM and wait for its sshd; a VM that does not come up fails with its console."""
        spec = self.spec.vm
        version = find_kernel()
        self.vm_dir.mkdir(mode=0o700)
        image = build_initramfs(version, self.vm_dir)
        self.accel = choose(spec.accel, kernel_path(version), image)
        self.facts.update(accel=self.accel.note, accel_reason=self.accel.reason, kernel=version,
                          setup_timeout_scale=self.setup_timeout_scale)
        self._keys()
        _run(["ip", "netns", "add", self.netns])
        _run(["ip", "-n", self.netns, "link", "set", "lo", "up"])
        for number, role in enumerate(self.hosts):
            self._boot(role, number, version, image, self.accel.kvm)
        deadline = time.monotonic() + spec.boot_timeout
        for role, host in self.hosts.items():
            self._wait_sshd(role, host, deadline)

    def _keys(self) -> None:
        """A client key and one host key per VM, fresh for this run; known_hosts lists exactly those."""
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "vpnbench", "-f", str(self.vm_dir / "id_ed25519")])
        lines = []
        for role in self.hosts:
            key = self.vm_dir / f"host_{role}"
            _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", role, "-f", str(key)])
            lines.append(f"[127.0.0.1]:{SSH_PORT[role]} {Path(f'{key}.pub').read_text().strip()}")
        (self.vm_dir / "known_hosts").write_text("\n".join(lines) + "\n")

    def _boot(self, role: str, number: int, version: str, image: Path, kvm: bool) -> None:
        share = self.vm_dir / role
        share.mkdir(mode=0o700)
        for name, source in (("host_key", f"host_{role}"), ("authorized_keys", "id_ed25519.pub")):
            (share / name).write_bytes((self.vm_dir / source).read_bytes())
            (share / name).chmod(0o600)
        (share / "sshd_config").write_text(SSHD_CONFIG.format(guest=GUEST_IP))
        nics, netdevs = self._nics(role)
        (share / "node.sh").write_text(self._node_script(role, nics))
        write_guest_script(share, ["sh", "/vmshare/node.sh"], cwd="/")
        argv = qemu_argv(version, image, share, self.spec.vm.memory_mb, self.spec.vm.vcpus, kvm) + netdevs
        if self.spec.vm.pin:
            cores = len(os.sched_getaffinity(0))
            argv = ["taskset", "-c", str(number % cores)] + argv
        console = open(self.vm_dir / f"console-{role}.log", "wb")
        self.watches[role] = BootWatch(self.accel, f"VM {role}")
        self.qemu[role] = subprocess.Popen(["ip", "netns", "exec", self.netns, *argv], stdout=console,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           preexec_fn=_die_with_parent)

    def _nics(self, role: str) -> tuple[list[tuple[str, str]], list[str]]:
        """(guest name, MAC) per NIC and the QEMU arguments: management first, then the links."""
        index = list(SSH_PORT).index(role)
        nics = [("m0", mac(index))]
        netdevs = ["-netdev", f"user,id=mgmt,restrict=on,net=10.0.2.0/24,"
                              f"hostfwd=tcp:127.0.0.1:{SSH_PORT[role]}-{GUEST_IP}:22",
                   "-device", f"virtio-net-pci,netdev=mgmt,mac={mac(index)}"]
        for number, link in enumerate(self.layout):
            if role not in (link.a, link.b):
                continue
            side = "a" if link.a == role else "b"
            # each end listens on its own port and sends to the other's: a point-to-point wire
            mine, peer = (10000 + 2 * number, 10001 + 2 * number)[:: 1 if side == "a" else -1]
            name = link.a_iface if side == "a" else link.b_iface
            nic_mac = mac(256 + 16 * number + (0 if side == "a" else 1))
            nics.append((name, nic_mac))
            netdevs += ["-netdev", f"socket,id={name},udp=127.0.0.1:{peer},localaddr=127.0.0.1:{mine}",
                        "-device", f"virtio-net-pci,netdev={name},mac={nic_mac},{LINK_OFFLOADS}"]
        return nics, netdevs

    def _node_script(self, role: str, nics: list[tuple[str, str]]) -> str:
        """Name the NICs, address the underlay as the local testbed does, then run sshd."""
        q = shlex.quote
        lines = ["modprobe virtio_net", "sleep 0.5",
                 "sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0",
                 'rename() { for d in /sys/class/net/*; do [ "$(cat "$d/address")" = "$1" ] && '
                 'ip link set dev "${d##*/}" name "$2"; done; }']
        lines += [f"rename {q(nic_mac)} {q(name)}" for name, nic_mac in nics]
        lines += [f"ip addr add {GUEST_IP}/24 dev m0", "ip link set m0 up"]
        for link in self.layout:
            for side, iface in (("a", link.a_iface), ("b", link.b_iface)):
                if (link.a if side == "a" else link.b) == role:
                    lines += [f"ip addr add {q(link.addr(side, 'ipv4'))}/24 dev {q(iface)}",
                              f"ip -6 addr add {q(link.addr(side, 'ipv6'))}/64 dev {q(iface)} nodad",
                              f"ip link set {q(iface)} up"]
        if role == "router":
            lines.append("sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1")
        elif self.spec.router:
            link = next(link for link in self.layout if link.b == role)
            lines += [f"ip route add default via {q(link.addr('a', 'ipv4'))}",
                      f"ip -6 route add default via {q(link.addr('a', 'ipv6'))}"]
        # /run is a fresh tmpfs (mode 1777): sshd refuses keys under a world-writable directory
        lines += ["chmod 0755 /run && mkdir -p /run/sshd /run/vpnbench-vm && chmod 0755 /run/sshd",
                  "cp /vmshare/host_key /vmshare/authorized_keys /run/vpnbench-vm/",
                  "chmod 0600 /run/vpnbench-vm/*",
                  'echo "vpnbench-vm: node ready"',
                  "exec /usr/sbin/sshd -D -e -f /vmshare/sshd_config"]
        return "\n".join(lines) + "\n"

    @property
    def setup_timeout_scale(self) -> float:
        """Bring-up deadlines stretch under TCG (see Testbed.setup_timeout_scale)."""
        return self.accel.setup_timeout_scale if self.accel else 1.0

    def _wait_sshd(self, role: str, host, deadline: float) -> None:
        while True:
            self._check_boots()
            if not self.watches[role].booted:
                if time.monotonic() > deadline:  # boot_timeout shorter than the watchdog
                    raise VmError(f"VM {role} did not boot within boot_timeout ({self.spec.vm.boot_timeout:g} s) "
                                  f"under {self.accel.name}")
                time.sleep(0.5)  # no sshd before init: an ssh attempt would only wait for its banner
                continue
            try:
                host.connect()
                return
            except ConnectionError as exc:
                if time.monotonic() > deadline:
                    raise VmError(f"VM {role} not reachable over ssh within {self.spec.vm.boot_timeout:g} s "
                                  f"({exc}); console:\n{self.console_tail(role)}") from None
                time.sleep(1)

    def _check_boots(self) -> None:
        """Every VM, not just the one waited on: a dead QEMU or a guest that never booted fails now."""
        for role, watch in self.watches.items():
            if not watch.booted:
                watch.replace(self._console(role))
            if self.qemu[role].poll() is not None:
                if not watch.booted:
                    raise VmError(watch.exited_message(self.qemu[role].returncode, self._console(role)))
                raise VmError(f"VM {role} stopped after booting (QEMU exit {self.qemu[role].returncode}): "
                              f"{self.console_tail(role, 1) or 'no console output'}")
            if watch.expired():
                raise VmError(watch.message())

    def _console(self, role: str) -> str:
        try:
            return (self.vm_dir / f"console-{role}.log").read_text(errors="replace")
        except OSError:
            return ""

    def console_tail(self, role: str, lines: int = 15) -> str:
        """The console's last lines as plain text (no escape codes), for error messages."""
        text = clean_console(self._console(role))
        return "\n".join(line for line in text.strip().splitlines()[-lines:] if line.strip())

    def evidence(self) -> dict[str, str]:
        """The ssh testbed's dumps plus each VM's console (kernel warnings, a guest oops)."""
        found = super().evidence()
        for role in self.hosts:
            found[f"{role}: console"] = self.console_tail(role, 40)[-4096:] or "(no console output)"
        return found

    # -- shutdown --------------------------------------------------------------------------
    def down(self) -> None:
        """Close the ssh side, then stop the VMs (bounded: SIGTERM, then SIGKILL) and their namespace.
        The guests' disks are tmpfs overlays in their own memory: nothing else to remove."""
        super().down()
        for proc in self.qemu.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.qemu.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.qemu.clear()
        delete_netns(self.netns)

    def kill_vm(self, role: str) -> None:
        """For tests: a VM dying under the run."""
        self.qemu[role].kill()


def _run(argv: list[str]) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise VmError(f"{' '.join(argv[:3])}: {proc.stderr.strip()}")

