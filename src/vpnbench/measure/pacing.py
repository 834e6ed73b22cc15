"""How far short of its offered load a generator that keeps up may fall: the one bound that
udp_sweep (a step that did not send its rate) and rate_search (a trial whose unsent packets
MLRsearch counts as lost) both judge a sender by.

iperf3 paces UDP by its average since the stream began (iperf_check_throttle: bytes sent x 8 /
seconds elapsed, against -b), checked again every --pacing-timer tick (1 ms by default): a sender
that keeps up is behind rate x seconds by at most a tick where the stream starts, a tick where
the test stops, and the datagram it was sending. Measured on loopback (3.12, 1300 B, 1 s): 0.83-
0.96 ms of sending short at 50-400 Mbit/s. vpnbench-gen paces by a finer clock and is held to
the same bound.
"""

IPERF3_PACING_TIMER_S = 0.001


def sending_tolerance(offered_bps: float, length: int, duration: float) -> float:
    """The share of a step's offered rate a sender that keeps up may fall short by:
    (2 pacing ticks + one datagram's time at the offered rate) / the step's seconds."""
    return (2 * IPERF3_PACING_TIMER_S + 8 * length / offered_bps) / duration


def sent_in_full(sent_packets: float, intended_packets: float, length: int, duration: float) -> bool:
    """Whether a trial of `duration` s that was to send `intended_packets` of `length` bytes sent
    them, up to its pacing's own tolerance."""
    if intended_packets <= 0:
        return True
    offered_bps = intended_packets * 8 * length / duration
    return sent_packets >= (1 - sending_tolerance(offered_bps, length, duration)) * intended_packets
