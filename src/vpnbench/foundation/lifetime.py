"""Child processes that must not outlive vpnbench: QEMU, ssh masters, remote commands."""

import ctypes
import signal


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when vpnbench dies (kill -9 included): PR_SET_PDEATHSIG."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
