"""linkem's default queue limit, as linkem/src/spec.rs `effective_limit` computes it.

netem's default `limit 1000` counts the frames on its delay line, so `delay 40ms` alone caps a
per-packet flow (a tunnel's UDP underlay) at 1000 frames per 40 ms. linkem's default holds the
delay line: without a rate, netem's 1000 frames plus the delay line at 10 Gbit/s; with a rate,
twice the rate's bandwidth-delay product (at least 1000). An explicit limit is used as given.
"""

import math

NETEM_DEFAULT_LIMIT = 1000  # packets
FRAME_BYTES = 1514  # one MTU-sized Ethernet frame per queue slot
LINE_RATE_BPS = 10e9  # the delay line's assumed line rate when no rate is set
MAX_DEFAULT_LIMIT = 1_000_000


def linkem_default_limit(delay_us: float, jitter_us: float = 0.0, rate_bps: float = 0.0) -> int:
    """The queue limit linkem uses for a spec without `limit`."""
    hold_s = (delay_us + jitter_us) / 1e6
    if not rate_bps:
        limit = NETEM_DEFAULT_LIMIT + math.ceil(LINE_RATE_BPS / 8 * hold_s / FRAME_BYTES)
    else:
        limit = max(math.ceil(2 * rate_bps / 8 * hold_s / FRAME_BYTES), NETEM_DEFAULT_LIMIT)
    return min(limit, MAX_DEFAULT_LIMIT)
