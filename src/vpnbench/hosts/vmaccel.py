"""Which accelerator a kernel VM runs on, proven by a boot, and the boot watchdog.

/dev/kvm can exist, and QEMU can start with accel=kvm, while the guest never gets past the
firmware ("Booting from ROM..."): nested and paravirtualised cloud VMs do this. So `auto`
does not trust QEMU staying up; it boots the real kernel and initramfs under KVM and takes
KVM only when the initramfs' init prints its marker within a few seconds. The verdict is
kept for this boot of the machine, per kernel and QEMU version (a probe that fails costs
its whole deadline), in /run, which a reboot empties.

Every boot is watched too: a guest whose init has not spoken within BOOT_WATCHDOG seconds
fails with one line naming the accelerator and the way out, never with the console's
escape codes.
"""

import dataclasses
import json
import os
import re
import select
import subprocess
import time
from pathlib import Path

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.lifetime import die_with_parent

QEMU = "qemu-system-x86_64"
KVM_DEVICE = "/dev/kvm"
VERDICT_FILE = Path("/run/vpnbench-kvm-verdict")
PROBE_DEADLINE = 10.0  # a working KVM reaches init in 1-2 s, even nested
BOOT_WATCHDOG = {"KVM": 30.0, "TCG": 180.0}  # TCG: three guests booting at once on two busy cores
KVM_WATCHDOG_ENV = "VPNBENCH_KVM_BOOT_WATCHDOG"  # seconds: a slow nested host may need more, tests less


def boot_watchdog(accel_name: str) -> float:
    """The watchdog's limit for this accelerator; KVM's from $VPNBENCH_KVM_BOOT_WATCHDOG when set."""
    text = os.environ.get(KVM_WATCHDOG_ENV) if accel_name == "KVM" else None
    if not text:
        return BOOT_WATCHDOG[accel_name]
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 1 <= seconds <= 3600:
        raise UserError(f"{KVM_WATCHDOG_ENV}={text!r}: allowed: seconds from 1 to 3600")
    return seconds
INIT_MARKER = "vpnbench-vm: init"  # the initramfs' first words (kernelvm.INIT)
FIRMWARE_MARKER = "Booting from ROM"
WAY_OUT = ('set accel = "tcg" ([testbed.vm] accel; python -m vpnbench.hosts.kernelvm --accel tcg; '
           'make test-kernel ACCEL=tcg)')
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|[@-Z\\-_]|c)|[\x00-\x08\x0b-\x1f\x7f]")


@dataclasses.dataclass(frozen=True)
class Accel:
    """The accelerator chosen for a boot and why (stored as the testbed fact accel_reason)."""

    kvm: bool
    reason: str

    @property
    def name(self) -> str:
        return "KVM" if self.kvm else "TCG"

    @property
    def note(self) -> str:
        return "KVM" if self.kvm else "TCG (functional, not performance)"

    @property
    def setup_timeout_scale(self) -> float:
        """Deadlines of work inside the guest (bring-up, first packet) scale by this."""
        return 1.0 if self.kvm else 4.0


def accel_argv(kvm: bool) -> list[str]:
    return ["-machine", "q35,accel=kvm", "-cpu", "host"] if kvm else ["-machine", "q35,accel=tcg", "-cpu", "max"]


def clean_console(text: str) -> str:
    """Console text without terminal escape codes and control characters (SeaBIOS clears the screen)."""
    return _ESCAPES.sub("", text.replace("\r\n", "\n"))


def choose(wanted: str, kernel: str, initrd: Path) -> Accel:
    """wanted: "auto" | "kvm" | "tcg" (the testbed's accel, or kernelvm's --accel)."""
    if wanted == "tcg":
        return Accel(False, 'accel = "tcg" asked for')
    if wanted == "kvm":
        return Accel(True, 'accel = "kvm" asked for (not probed; the boot watchdog guards it)')
    return probe_kvm(kernel, initrd)


def probe_kvm(kernel: str, initrd: Path) -> Accel:
    if not os.access(KVM_DEVICE, os.R_OK | os.W_OK):
        return Accel(False, f"{KVM_DEVICE} missing or not accessible")
    key = verdict_key(kernel)
    cached = _read_verdict(key)
    if cached is not None:
        return cached
    verdict = boot_probe(kernel, initrd)
    _write_verdict(key, verdict)
    return verdict


def boot_probe(kernel: str, initrd: Path, deadline: float | None = None) -> Accel:
    """Boot kernel + initrd under KVM until the init marker: proof that KVM runs this guest."""
    deadline = PROBE_DEADLINE if deadline is None else deadline
    argv = [QEMU, *accel_argv(True), "-m", "256", "-smp", "2", "-nographic", "-no-reboot", "-kernel", kernel,
            "-initrd", str(initrd), "-append", "console=ttyS0 quiet panic=-1", "-nic", "none"]
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                preexec_fn=die_with_parent)
    except OSError as exc:
        return Accel(False, f"KVM probe: {QEMU} did not start: {exc}")
    try:
        text, exited = _read_until(proc, INIT_MARKER, started + deadline)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    took = time.monotonic() - started
    if INIT_MARKER in text:
        return Accel(True, f"KVM probe booted {Path(kernel).name} to its init in {took:.1f} s")
    if exited:
        return Accel(False, f"KVM probe: QEMU exited ({proc.returncode}) before the guest booted: {_last_line(text)}")
    return Accel(False, f"KVM probe: the guest did not boot within {deadline:g} s ({_stage(text)})")


def _read_until(proc: subprocess.Popen, marker: str, deadline: float) -> tuple[str, bool]:
    """Console text until marker, QEMU's exit, or deadline; and whether QEMU exited."""
    fd = proc.stdout.fileno()
    text = ""
    while marker not in text:
        left = deadline - time.monotonic()
        if left <= 0:
            return clean_console(text), False
        if select.select([fd], [], [], min(left, 0.5))[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                return clean_console(text), True
            text += chunk.decode(errors="replace")
    return clean_console(text), False


def _stage(text: str) -> str:
    if FIRMWARE_MARKER in text:
        return "the firmware ran; no output from the kernel's init after it"
    return "no output at all" if not text.strip() else "no output from the kernel's init"


def _last_line(text: str) -> str:
    """QEMU's own error line when it wrote one (its assertion that follows says less), else the last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no output"])[0 if errors else -1][:300]


def verdict_key(kernel: str) -> str:
    """Kernel file (path, size, mtime) and QEMU version: a change of either probes again."""
    try:
        stat = os.stat(kernel)
        version = subprocess.run([QEMU, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    first = version.splitlines()[0] if version else "?"
    return f"{kernel}:{stat.st_size}:{int(stat.st_mtime)}|{first}"


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _read_verdict(key: str) -> Accel | None:
    if not key:
        return None
    try:
        data = json.loads(VERDICT_FILE.read_text())
    except (OSError, ValueError):
        return None
    entry = data.get("verdicts", {}).get(key) if data.get("boot_id") == _boot_id() else None
    if not isinstance(entry, dict):
        return None
    return Accel(bool(entry.get("kvm")), f"{entry.get('reason', '')} (verdict cached for this boot in {VERDICT_FILE})")


def _write_verdict(key: str, verdict: Accel) -> None:
    """Best effort, atomic: another run may write at the same moment."""
    if not key:
        return
    try:
        data = json.loads(VERDICT_FILE.read_text())
        if data.get("boot_id") != _boot_id():
            data = {}
    except (OSError, ValueError):
        data = {}
    verdicts = {**data.get("verdicts", {}), key: {"kvm": verdict.kvm, "reason": verdict.reason}}
    tmp = VERDICT_FILE.with_name(f"{VERDICT_FILE.name}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps({"boot_id": _boot_id(), "verdicts": verdicts}))
        os.replace(tmp, VERDICT_FILE)
    except OSError:
        tmp.unlink(missing_ok=True)


class BootWatch:
    """Fails a boot whose init has not spoken within the limit (from QEMU's start)."""

    def __init__(self, accel: Accel, what: str = "the guest", limit: float | None = None):
        self.accel = accel
        self.what = what
        self.limit = boot_watchdog(accel.name) if limit is None else limit
        self.started = time.monotonic()
        self.text = ""
        self.booted = False

    def feed(self, text: str) -> None:
        if self.booted:
            return
        self.text = (self.text + text)[-8192:]
        self.booted = INIT_MARKER in self.text

    def replace(self, console: str) -> None:
        """The whole console so far (the VM testbed reads it from a file)."""
        if not self.booted:
            self.booted = INIT_MARKER in console
            self.text = console[-8192:]

    def expired(self) -> bool:
        return not self.booted and time.monotonic() - self.started > self.limit

    def exited_message(self, returncode: int | None, console: str | None = None) -> str:
        """QEMU ended before the guest booted (e.g. KVM refused this CPU model)."""
        line = _last_line(clean_console(self.text if console is None else console))
        way_out = f"; {WAY_OUT}" if self.accel.kvm else ""
        return f"{self.what} stopped before its kernel booted under {self.accel.name} (QEMU exit {returncode}): {line}{way_out}"

    def message(self) -> str:
        stage = _stage(clean_console(self.text))
        if self.accel.kvm:
            return f"{self.what} did not boot within {self.limit:g} s under KVM ({stage}); {WAY_OUT}"
        return (f"{self.what} did not boot within {self.limit:g} s under TCG ({stage}); "
                f"the host may be overloaded or the kernel unbootable")
