"""What charon and pluto share: each runs in a private mount namespace of its own, so the
fixed paths these daemons insist on (pid files, sockets under /run, helpers under
/usr/libexec) are per host."""

import time
from pathlib import Path
from typing import Callable

from vpnbench.foundation.errors import TechniqueError
from vpnbench.hosts.base import Host, Proc
from vpnbench.testbeds.probe import KernelProbe

# $1 is bound over /run; $2, when set, is overlaid (read-only) on /usr/libexec; before that,
# the pairs (source, target) up to "--" are bound (first: a source may live under /run);
# exec keeps the daemon's pid the one we signal.
PRIVATE_MOUNTS = ('run=$1 libexec=$2 && shift 2'
                  ' && while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done && shift'
                  ' && mount --bind "$run" /run'
                  ' && { [ -z "$libexec" ] || mount -t overlay vpnbench -o lowerdir=/usr/libexec:"$libexec" /usr/libexec; }'
                  ' && exec "$@"')


def spawn_private(host: Host, directory: Path, argv: list[str], name: str, env: dict[str, str] | None = None,
                  overlay_libexec: Path | None = None, binds: dict[str, Path] | None = None) -> Proc:
    """Start argv on host with `directory` as its /run (and overlay_libexec merged into /usr/libexec,
    and each binds source directory over its target path)."""
    pairs = [word for target, source in (binds or {}).items() for word in (str(source), target)]
    return host.spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c", PRIVATE_MOUNTS,
                       "sh", str(directory), str(overlay_libexec or ""), *pairs, "--", *argv], name=name, env=env)


def missing_package(probe: KernelProbe, software: tuple[tuple[str, str], ...]) -> str | None:
    """None when the hosts have every (path, Debian package) of software; otherwise which host
    lacks which, and how to install it."""
    for path, package in software:
        host = probe.host_lacking(path)
        if host:
            return f"{host}: {path} not found; install the Debian package '{package}' (apt-get install {package})"
    return None


def wait_until(ready: Callable[[], bool], proc: Proc, what: str, timeout: float) -> None:
    """Poll ready() until it holds; fail with the daemon's last lines if it dies or takes too long."""
    deadline = time.monotonic() + timeout
    while not ready():
        if not proc.alive() or time.monotonic() > deadline:
            raise TechniqueError(f"{what} did not start: {tail(proc.output())}")
        time.sleep(0.05)


def tail(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:]) or "no output"
