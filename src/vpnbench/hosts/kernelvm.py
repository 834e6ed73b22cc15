"""Run a command inside a throwaway QEMU VM that boots the distribution kernel.

The development machine's kernel has no netem, kernel WireGuard, MACsec or ESP; Debian's
`linux-image-amd64` has them all as modules. The VM boots that kernel with a tiny
initramfs (static busybox + the virtio/9p/overlay modules), mounts this machine's root
filesystem read-only over 9p under a tmpfs overlay (so the guest sees the same programs,
virtualenv and checkout, and its writes vanish with it), runs one command as root and
powers off. Its exit code comes back through a small writable 9p share.

    python -m vpnbench.hosts.kernelvm [--memory MB] [--cpus N] [--timeout S] [--accel auto|kvm|tcg]
                                [--writable DIR] -- COMMAND...

KVM is used when a probe boot proves it runs this guest, TCG otherwise (functional, not
performance); see vmaccel.py. A guest that does not boot fails in seconds, not at --timeout.
"""

import argparse
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vpnbench.foundation.errors import TestbedError, UserError
from vpnbench.foundation.lifetime import die_with_parent
from vpnbench.foundation.progress import LongWork
from vpnbench.hosts.vmaccel import QEMU, BootWatch, accel_argv, choose

INIT_MODULES = ("virtio_pci", "9pnet_virtio", "9p", "overlay")
DECOMPRESS = {".xz": ["xz", "-dc"], ".zst": ["zstd", "-qdc"]}  # distributions that compress modules
# The init's first line is vmaccel.INIT_MARKER: the proof that the kernel booted.
# The host root is mounted with cache=loose: the guest keeps what it read (a Python start
# under TCG: 6.9 -> 5.9 s). A guest's view of the root is read-only and boots empty; what
# vpnbench hands a guest while it runs goes over ssh into its overlay or through the writable
# shares (not cached), so nothing it reads changes under it.
INIT = r"""#!/bin/busybox sh
echo "vpnbench-vm: init"
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /modules/order); do insmod /modules/$m || echo "vpnbench-vm: insmod $m failed"; done
fail() { echo "vpnbench-vm: $1"; poweroff -f; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /lower || fail "9p root mount failed"
mount -t tmpfs -o size=75% tmpfs /upper && mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot || fail "overlay failed"
mkdir -p /newroot/vmshare
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 vmshare /newroot/vmshare || fail "share mount failed"
exec switch_root /newroot /bin/sh /vmshare/guest.sh
"""
GUEST = """#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
# /run starts empty (no host namespaces or run directories); /tmp stays the overlay's, so a
# checkout under the host's /tmp is visible too.
mount -t tmpfs tmpfs /run; mkdir -p /dev/pts /dev/shm /run/netns
mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
# What udev adds to devtmpfs on a booted system: rosenpass hands wg each key as /dev/stdin.
ln -s /proc/self/fd /dev/fd; ln -s fd/0 /dev/stdin; ln -s fd/1 /dev/stdout; ln -s fd/2 /dev/stderr
ip link set lo up
{mounts}
modprobe tun 2>/dev/null  # /dev/net/tun appears only once the module is loaded
echo "vpnbench-vm: up, kernel $(uname -r)"
cd {cwd}
export PATH={path} HOME=/root {env}
{command} > /dev/console 2>&1 < /dev/null
echo $? > /vmshare/rc
sync
echo "vpnbench-vm: command exited with $(cat /vmshare/rc)"
# reboot(2) from init itself, through a static binary: init never exits, so the kernel does not
# panic ("Attempted to kill init"). A sysrq power-off instead shuts the 9p root down under a
# still-running init, whose next command then fails to load and init exits: a panic and a
# register dump that read like a crash.
exec /bin/busybox poweroff -f
"""


class VmError(TestbedError):
    """The VM could not boot or run: one line (the runner stops cleanly, the CLI exits 1)."""


def find_kernel() -> str:
    """The newest generic distribution kernel in /boot whose modules are installed."""
    versions = []
    for vmlinuz in Path("/boot").glob("vmlinuz-*"):
        version = vmlinuz.name.removeprefix("vmlinuz-")
        if "-rt-" not in version and Path("/lib/modules", version, "modules.dep").exists():
            versions.append(version)
    if not versions:
        raise VmError("no distribution kernel with modules in /boot; apt-get install linux-image-amd64")
    return sorted(versions, key=lambda v: [int(x) if x.isdigit() else x for x in re.split(r"[.-]", v)])[-1]


def module_files(version: str, names: tuple[str, ...]) -> list[Path]:
    """The .ko files for names and their dependencies, in load order."""
    files: list[Path] = []
    for name in names:
        out = subprocess.run(["modprobe", "-S", version, "--show-depends", name],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if parts and parts[0] == "insmod" and Path(parts[1]) not in files:
                files.append(Path(parts[1]))
    return files


def build_initramfs(version: str, directory: Path) -> Path:
    busybox = Path("/bin/busybox")  # busybox-static: the initramfs has no libc to link against
    if not busybox.exists():
        raise VmError("/bin/busybox missing; apt-get install busybox-static")
    root = directory / "initramfs"
    for sub in ("bin", "proc", "sys", "dev", "lower", "upper", "newroot", "modules"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy(busybox, root / "bin" / "busybox")
    order = []
    for ko in module_files(version, INIT_MODULES):
        target = root / "modules" / ko.name.removesuffix(ko.suffix if ko.suffix in DECOMPRESS else "")
        if ko.suffix in DECOMPRESS:  # busybox insmod wants plain .ko files
            with open(target, "wb") as out:
                subprocess.run([*DECOMPRESS[ko.suffix], str(ko)], stdout=out, check=True)
        else:
            shutil.copy(ko, target)
        order.append(target.name)
    (root / "modules" / "order").write_text("\n".join(order) + "\n")
    (root / "init").write_text(INIT)
    (root / "init").chmod(0o755)
    image = directory / "initramfs.cpio"
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, text=True, check=True).stdout
    with open(image, "wb") as out:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files.encode(), stdout=out, check=True)
    return image


def kernel_path(version: str) -> str:
    return f"/boot/vmlinuz-{version}"


def write_guest_script(share: Path, command: list[str], cwd: str | None = None, env: dict[str, str] | None = None,
                       writable: list[str] = ()) -> None:
    """The script the guest runs as root once the host root is mounted (see GUEST)."""
    env_words = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
    mounts = "\n".join(f"mkdir -p {shlex.quote(d)} && "
                       f"mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 rw{i} {shlex.quote(d)}"
                       for i, d in enumerate(writable))
    (share / "guest.sh").write_text(GUEST.format(
        cwd=shlex.quote(cwd or os.getcwd()), path=shlex.quote(os.environ.get("PATH", "/usr/bin:/bin")),
        env=env_words, command=shlex.join(command), mounts=mounts))


def qemu_argv(version: str, image: Path, share: Path, memory_mb: int, cpus: int, kvm: bool,
              writable: list[str] = ()) -> list[str]:
    """Boot the distribution kernel on the host root (9p, read-only) with share as /vmshare;
    no network unless the caller adds -netdev/-device arguments."""
    argv = [QEMU, *accel_argv(kvm), "-m", str(memory_mb), "-smp", str(cpus), "-nographic",
            "-no-reboot", "-kernel", kernel_path(version), "-initrd", str(image),
            # A guest kernel stuck for a minute panics, and the VM ends (-no-reboot) with that on its
            # console, instead of waiting out the caller's timeout: stop 61's kernel-VM stage hung with
            # both TCG vCPUs in soft lockups (ksoftirqd/0, a kworker) for 50 minutes' worth of timeout.
            "-append", "console=ttyS0 quiet panic=-1 oops=panic softlockup_panic=1 watchdog_thresh=30",
            "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
            "-virtfs", f"local,path={share},mount_tag=vmshare,security_model=none,multidevs=remap",
            "-nic", "none"]
    for i, directory in enumerate(writable):
        argv += ["-virtfs", f"local,path={directory},mount_tag=rw{i},security_model=none,multidevs=remap"]
    return argv


def run_in_vm(command: list[str], memory_mb: int = 2048, cpus: int = 2, timeout: float = 1200,
              cwd: str | None = None, env: dict[str, str] | None = None, writable: list[str] = (),
              log=sys.stdout, accel: str = "auto") -> int:
    """Boot, run command as root, power off; returns its exit code. Directories in writable
    are shared read-write at the same path, so results written there reach the host.
    accel: "auto" (KVM when a probe boot proves it, else TCG), "kvm" or "tcg".
    Until the guest's init runs (the console is quiet: `quiet`), the boot's progress is on stderr."""
    version = find_kernel()
    with tempfile.TemporaryDirectory(prefix="vpnbench-vm-") as tmp:
        work = Path(tmp)
        share = work / "share"
        share.mkdir()
        with LongWork("VM boot") as progress:
            progress.begin(f"kernel {version}: initramfs and accelerator (a KVM probe boot under auto)")
            image = build_initramfs(version, work)
            chosen = choose(accel, kernel_path(version), image)
        log.write(f"vpnbench-vm: kernel {version}, {chosen.note}: {chosen.reason}\n")  # not under a live bar
        log.flush()
        # The guest learns how it is emulated, so results can say "TCG: functional, not performance".
        env = {"VPNBENCH_VM_ACCEL": chosen.name, **(env or {})}
        exports = [os.path.abspath(d) for d in writable]
        write_guest_script(share, command, cwd, env, exports)
        argv = qemu_argv(version, image, share, memory_mb, cpus, chosen.kvm, exports)
        deadline = time.monotonic() + timeout
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                preexec_fn=die_with_parent)
        progress = LongWork("VM boot").__enter__()  # closed when the guest's init runs, or at the latest below
        progress.begin(f"kernel {version}: booting under {chosen.name}")
        try:
            _stream_until(proc, deadline, log, BootWatch(chosen, "the VM"), booted=progress.close)
        finally:
            progress.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        rc_file = share / "rc"
        if not rc_file.exists():
            raise VmError("the VM stopped before the command finished (see the console above)")
        return int(rc_file.read_text().strip() or 1)


def _stream_until(proc: subprocess.Popen, deadline: float, log, watch: BootWatch,
                  booted: Callable[[], None] = lambda: None) -> None:
    """Copy the console to log until the VM exits; a guest that does not boot fails at the
    watchdog, a silent, hung one at the deadline. `booted` is called once, when the guest is."""
    fd = proc.stdout.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise VmError("VM still running at its time limit")
        if watch.expired():
            raise VmError(watch.message())
        if select.select([fd], [], [], min(left, 1.0))[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                proc.wait(10)
                if not watch.booted:
                    raise VmError(watch.exited_message(proc.returncode))
                return
            text = chunk.decode(errors="replace")
            was_booted = watch.booted
            watch.feed(text)
            if watch.booted and not was_booted:
                booted()
            log.write(text)
            log.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vpnbench.hosts.kernelvm", description=__doc__.splitlines()[0])
    parser.add_argument("--memory", type=int, default=2048, help="guest memory in MB")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1200, help="seconds")
    parser.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto",
                        help="auto: KVM when a probe boot proves it works here, else TCG")
    parser.add_argument("--writable", action="append", default=[], metavar="DIR",
                        help="share DIR read-write at the same path (results written there stay)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give a command after --")
    try:
        for directory in args.writable:
            if not os.path.isdir(directory):
                raise VmError(f"--writable: {directory!r} is not a directory")
        return run_in_vm(command, args.memory, args.cpus, args.timeout, env={"VPNBENCH_IN_VM": "1"},
                         writable=args.writable, accel=args.accel)
    except (TestbedError, UserError, subprocess.CalledProcessError, OSError) as exc:
        print(f"vpnbench-vm: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
