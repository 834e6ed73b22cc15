"""The one reachability wait: ping from a host until the first reply comes back.

One ping process does the whole wait (`-c 1` with a `-w` deadline sends every `interval` and
stops at the first reply), so a wait costs one process (over ssh, one round trip), not one per
try, and its time resolves to `interval`. The underlay's readiness, a tunnel's first packet, the
set-up time and an external technique's stall check all ask it.
"""

import math
import time

from vpnbench.hosts.base import Host

INTERVAL = 0.01  # s between pings: the wait's resolution (root may go below ping's 0.2 s floor; users to 2 ms)
# A mesh's first echo between two nodes, one a second: each request may start a handshake or a
# punch through a NAT, and a hundred a second would be a flood of them.
MESH_INTERVAL = 1.0


def wait_reachable(host: Host, address: str, timeout: float, interval: float = INTERVAL) -> float | None:
    """Ping `address` from `host` until it answers, at most `timeout` s: the seconds from the
    start of ping to the reply (starting ping included: a few ms), or None when none came."""
    started = time.monotonic()
    # ping's -w takes whole seconds (iputils refuses "2.5" and sends nothing): rounded up, and a
    # reply after `timeout` counts as none.
    deadline = max(1, math.ceil(timeout))
    result = host.run(["ping", "-n", "-q", "-c", "1", "-i", f"{interval:g}", "-w", str(deadline), address],
                      timeout=deadline + 10, check=False)
    seconds = time.monotonic() - started
    return seconds if result.ok and seconds <= timeout else None


PARALLEL_PINGS = 64  # at once: a thousand addresses in ~16 rounds, never a thousand processes at once


def wait_all_reachable(host: Host, addresses: list[str], timeout: float, interval: float = INTERVAL) -> float | None:
    """wait_reachable for many addresses (every tunnel of a bring-up with tunnels > 1): one
    `xargs` on the host runs the pings, PARALLEL_PINGS at a time, so the wait costs one round trip
    however many there are; each address once. The seconds until the last answered, or None when one did not."""
    started = time.monotonic()
    deadline = max(1, math.ceil(timeout))  # whole seconds, as wait_reachable's
    result = host.run(["xargs", "-P", str(PARALLEL_PINGS), "-n", "1", "ping", "-n", "-q", "-c", "1",
                       "-i", f"{interval:g}", "-w", str(deadline)],
                      input="".join(f"{address}\n" for address in dict.fromkeys(addresses)), timeout=deadline + 10,
                      check=False)
    seconds = time.monotonic() - started
    return seconds if result.ok and seconds <= timeout else None
