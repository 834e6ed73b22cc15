"""Run a function inside a named network namespace, in a thread of this process.

setns(2) moves only the calling thread, so a short-lived thread enters the namespace, runs the
function and ends; the rest of the process stays where it was. What the function makes there
stays there: a socket it opens belongs to the namespace for its whole life (the NAT probe's
sockets), a /proc/sys/net file it opens is the namespace's (sysctls without a `sysctl` process),
and a process it starts is born in the namespace (nft without `ip netns exec`'s mount namespace).
Python 3.11 has no os.setns, hence libc's.
"""

import ctypes
import os
import threading
from collections.abc import Callable
from typing import TypeVar

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
T = TypeVar("T")


def run_in_netns(netns: str, fn: Callable[[], T]) -> T:
    """fn() run in the namespace /run/netns/<netns>; its result returned, its exception raised."""
    outcome: dict = {}

    def body() -> None:
        try:
            fd = os.open(f"/run/netns/{netns}", os.O_RDONLY | os.O_CLOEXEC)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns {netns}: {os.strerror(err)}")
            finally:
                os.close(fd)
            outcome["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, raised there
            outcome["error"] = exc

    thread = threading.Thread(target=body, name=f"netns-{netns}")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def write_sysctl(name: str, value: str) -> None:
    """A per-namespace sysctl, in the calling thread's namespace (inside run_in_netns)."""
    with open(f"/proc/sys/{name.replace('.', '/')}", "w") as out:
        out.write(value)
