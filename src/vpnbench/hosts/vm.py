"""QEMU guests booting the distribution kernel (kernelvm.py), each reached over ssh.

This module boots and stops guests; which guests, their links and addresses are the VM
testbed's (testbeds/vm.py). Everything runs inside a network namespace of the run, so nothing
appears on this machine's own network and `vpnbench cleanup` finds it by name:

- the QEMU processes (killed with the namespace; also PR_SET_PDEATHSIG, so a killed run
  takes its guests along);
- the management path: user-mode networking restricted to forwarding the namespace's
  127.0.0.1:220N to the guest's sshd, which accepts only a key generated for this run
  and presents a host key generated for this run (known_hosts written by us).

Each guest sees this machine's root read-only over 9p under a tmpfs overlay (its writes
vanish with it) and /vmshare, its private directory in the run directory.
"""

import dataclasses
import os
import subprocess
import time
from pathlib import Path

from vpnbench.foundation.lifetime import die_with_parent
from vpnbench.hosts.kernelvm import VmError, build_initramfs, find_kernel, kernel_path, qemu_argv, write_guest_script
from vpnbench.hosts.ssh import SshSettings
from vpnbench.hosts.vmaccel import Accel, BootWatch, choose, clean_console

SSH_PORT = {"client": 2201, "server": 2202}
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
# The last lines of a guest's node script: sshd's keys in place, then sshd for the guest's life.
# /run is a fresh tmpfs (mode 1777): sshd refuses keys under a world-writable directory.
# root's home is an empty tmpfs: the guest sees this machine's root filesystem, and bash run by
# sshd reads ~/.bashrc for every command. Here that was `pyenv init`, 3.4 s per command under
# TCG (about 90 commands for one 2-cell run); elsewhere it could be anything of the host's.
SSHD_START = ["mount -t tmpfs -o mode=0700,size=1m tmpfs /root",
              "chmod 0755 /run && mkdir -p /run/sshd /run/vpnbench-vm && chmod 0755 /run/sshd",
              "cp /vmshare/host_key /vmshare/authorized_keys /run/vpnbench-vm/",
              "chmod 0600 /run/vpnbench-vm/*",
              'echo "vpnbench-vm: node ready"',
              "exec /usr/sbin/sshd -D -e -f /vmshare/sshd_config"]


def mac(index: int) -> str:
    return f"52:54:00:00:{index // 256:02x}:{index % 256:02x}"


@dataclasses.dataclass(frozen=True)
class Nic:
    """One underlay NIC of a guest: its name in the guest, its MAC and QEMU's -netdev for it."""

    name: str
    mac: str
    netdev: str  # e.g. "tap,ifname=...,script=no,downscript=no" (the id is added here)


# No checksum or segmentation offload on the underlay NICs: a socket netdev carries no
# virtio-net header, so a packet the guest left for the "hardware" to checksum would reach the
# peer with a wrong checksum and die there silently (UDP: WireGuard, ESP in UDP). A tap without
# vnet_hdr is the same. Saying so keeps it true with any other backend.
LINK_OFFLOADS = "csum=off,guest_csum=off,gso=off,guest_tso4=off,guest_tso6=off,host_tso4=off,host_tso6=off"


class Guests:
    """The run's guests: booted together, waited for, stopped together."""

    def __init__(self, vm_dir: Path, netns: str, roles: list[str], memory_mb: int, vcpus: int, pin: bool,
                 accel: str, boot_timeout: float):
        self.vm_dir = vm_dir
        self.netns = netns  # where QEMU runs: its management ports are on this namespace's loopback
        self.roles = roles
        self.memory_mb, self.vcpus, self.pin, self.asked, self.boot_timeout = memory_mb, vcpus, pin, accel, boot_timeout
        self.qemu: dict[str, subprocess.Popen] = {}
        self.watches: dict[str, BootWatch] = {}
        self.accel: Accel | None = None
        self.kernel: str | None = None
        self._image: Path | None = None

    def ssh_settings(self) -> SshSettings:
        return SshSettings(identity_file=str(self.vm_dir / "id_ed25519"), known_hosts=str(self.vm_dir / "known_hosts"),
                           config_file="/dev/null", connect_timeout=10)

    def prepare(self) -> None:
        """The kernel, the initramfs, the accelerator (a probe boot under auto) and the keys."""
        self.kernel = find_kernel()
        self.vm_dir.mkdir(mode=0o700)
        self._image = build_initramfs(self.kernel, self.vm_dir)
        self.accel = choose(self.asked, kernel_path(self.kernel), self._image)
        self._keys()

    def _keys(self) -> None:
        """A client key and one host key per guest, fresh for this run; known_hosts lists exactly those."""
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "vpnbench", "-f", str(self.vm_dir / "id_ed25519")])
        lines = []
        for role in self.roles:
            key = self.vm_dir / f"host_{role}"
            _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", role, "-f", str(key)])
            lines.append(f"[127.0.0.1]:{SSH_PORT[role]} {Path(f'{key}.pub').read_text().strip()}")
        (self.vm_dir / "known_hosts").write_text("\n".join(lines) + "\n")

    def boot(self, role: str, number: int, nics: list[Nic], setup: list[str]) -> None:
        """Start role's QEMU: management NIC m0, then nics; the guest runs setup (shell lines that
        name and address the NICs), then sshd."""
        share = self.vm_dir / role
        share.mkdir(mode=0o700)
        for name, source in (("host_key", f"host_{role}"), ("authorized_keys", "id_ed25519.pub")):
            (share / name).write_bytes((self.vm_dir / source).read_bytes())
            (share / name).chmod(0o600)
        (share / "sshd_config").write_text(SSHD_CONFIG.format(guest=GUEST_IP))
        index = list(SSH_PORT).index(role)
        netdevs = ["-netdev", f"user,id=mgmt,restrict=on,net=10.0.2.0/24,"
                              f"hostfwd=tcp:127.0.0.1:{SSH_PORT[role]}-{GUEST_IP}:22",
                   "-device", f"virtio-net-pci,netdev=mgmt,mac={mac(index)}"]
        for nic in nics:
            netdevs += ["-netdev", f"{nic.netdev},id={nic.name}",
                        "-device", f"virtio-net-pci,netdev={nic.name},mac={nic.mac},{LINK_OFFLOADS}"]
        (share / "node.sh").write_text(node_script([("m0", mac(index)), *((n.name, n.mac) for n in nics)], setup))
        write_guest_script(share, ["sh", "/vmshare/node.sh"], cwd="/")
        argv = qemu_argv(self.kernel, self._image, share, self.memory_mb, self.vcpus, self.accel.kvm) + netdevs
        if self.pin:
            argv = ["taskset", "-c", str(number % len(os.sched_getaffinity(0)))] + argv
        with open(self.vm_dir / f"console-{role}.log", "wb") as console:
            self.watches[role] = BootWatch(self.accel, f"VM {role}")
            self.qemu[role] = subprocess.Popen(["ip", "netns", "exec", self.netns, *argv], stdout=console,
                                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                               preexec_fn=die_with_parent)

    def wait_sshd(self, role: str, host, deadline: float) -> None:
        """Until role's sshd accepts host's connection; a guest that does not come up fails with its console."""
        while True:
            self.check()
            if not self.watches[role].booted:
                if time.monotonic() > deadline:  # boot_timeout shorter than the watchdog
                    raise VmError(f"VM {role} did not boot within boot_timeout ({self.boot_timeout:g} s) "
                                  f"under {self.accel.name}; console:\n{self.console_tail(role)}")
                time.sleep(0.5)  # no sshd before init: an ssh attempt would only wait for its banner
                continue
            try:
                host.connect()
                return
            except ConnectionError as exc:
                if time.monotonic() > deadline:
                    raise VmError(f"VM {role} not reachable over ssh within {self.boot_timeout:g} s "
                                  f"({exc}); console:\n{self.console_tail(role)}") from None
                time.sleep(1)

    def check(self) -> None:
        """Every guest, not just the one waited on: a dead QEMU or a guest that never booted fails now."""
        for role, watch in self.watches.items():
            if not watch.booted:
                watch.replace(self.console(role))
            if self.qemu[role].poll() is not None:
                if not watch.booted:
                    raise VmError(watch.exited_message(self.qemu[role].returncode, self.console(role)))
                raise VmError(f"VM {role} stopped after booting (QEMU exit {self.qemu[role].returncode}): "
                              f"{self.console_tail(role, 1) or 'no console output'}")
            if watch.expired():
                raise VmError(watch.message())

    def console(self, role: str) -> str:
        try:
            return (self.vm_dir / f"console-{role}.log").read_text(errors="replace")
        except OSError:
            return ""

    def console_tail(self, role: str, lines: int = 15) -> str:
        """The console's last lines as plain text (no escape codes), for error messages."""
        text = clean_console(self.console(role))
        return "\n".join(line for line in text.strip().splitlines()[-lines:] if line.strip())

    def state(self, role: str) -> str:
        """How role's QEMU is doing, seen from here: a starved guest shows little CPU per second."""
        proc = self.qemu.get(role)
        if proc is None:
            return "not started"
        if proc.poll() is not None:
            return f"QEMU exited with {proc.returncode}"
        try:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks = os.sysconf("SC_CLK_TCK")
            cpu = (int(fields[11]) + int(fields[12])) / ticks
            started = int(fields[19]) / ticks
            uptime = float(Path("/proc/uptime").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return "QEMU running"
        alive = max(uptime - started, 1e-3)
        return (f"QEMU running {alive:.0f} s, {cpu:.0f} s of CPU ({100 * cpu / alive:.0f} % of a core; "
                f"{self.vcpus} vCPU under {self.accel.name if self.accel else '?'}), "
                f"{len(os.sched_getaffinity(0))} cores on this machine")

    def stop(self) -> None:
        """Bounded: SIGTERM, then SIGKILL. The guests' disks are tmpfs overlays in their own
        memory: nothing else to remove."""
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


def node_script(nics: list[tuple[str, str]], setup: list[str]) -> str:
    """Name the NICs by MAC (management m0 up on user-mode networking), run setup, then sshd."""
    lines = ["modprobe virtio_net", "sleep 0.5",
             "sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0",
             'rename() { for d in /sys/class/net/*; do [ "$(cat "$d/address")" = "$1" ] && '
             'ip link set dev "${d##*/}" name "$2"; done; }']
    lines += [f"rename {nic_mac} {name}" for name, nic_mac in nics]  # MACs and names are ours, [0-9a-z:]
    lines += [f"ip addr add {GUEST_IP}/24 dev m0", "ip link set m0 up"]
    return "\n".join(lines + setup + SSHD_START) + "\n"


def _run(argv: list[str]) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise VmError(f"{' '.join(argv[:3])}: {proc.stderr.strip()}")
