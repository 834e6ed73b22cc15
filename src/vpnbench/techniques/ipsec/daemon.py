"""What charon and pluto share: each runs in a private mount namespace of its own, so the
fixed paths these daemons insist on (pid files, sockets under /run, helpers under
/usr/libexec) are per host."""

import time
from pathlib import Path
from typing import Callable

from vpnbench.hosts.base import Host, Proc

# $1 is bound over /run; $2, when set, is overlaid (read-only) on /usr/libexec; exec keeps the
# daemon's pid the one we signal.
PRIVATE_MOUNTS = ('mount --bind "$1" /run'
                  ' && { [ -z "$2" ] || mount -t overlay vpnbench -o lowerdir=/usr/libexec:"$2" /usr/libexec; }'
                  ' && shift 2 && exec "$@"')


def spawn_private(host: Host, directory: Path, argv: list[str], name: str, env: dict[str, str] | None = None,
                  overlay_libexec: Path | None = None) -> Proc:
    """Start argv on host with `directory` as its /run (and overlay_libexec merged into /usr/libexec)."""
    return host.spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c", PRIVATE_MOUNTS,
                       "sh", str(directory), str(overlay_libexec or ""), *argv], name=name, env=env)


def wait_until(ready: Callable[[], bool], proc: Proc, what: str, timeout: float) -> None:
    """Poll ready() until it holds; fail with the daemon's last lines if it dies or takes too long."""
    deadline = time.monotonic() + timeout
    while not ready():
        if not proc.alive() or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start: {tail(proc.output())}")
        time.sleep(0.05)


def tail(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:]) or "no output"
