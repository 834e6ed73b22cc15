"""Loss bursts: how lost packets cluster (Gilbert–Elliott's mean burst length is 1/r)."""


def loss_bursts(lost: list[bool]) -> list[int]:
    """Lengths of the runs of consecutive lost packets, in order."""
    bursts, run = [], 0
    for is_lost in list(lost) + [False]:
        if is_lost:
            run += 1
        elif run:
            bursts.append(run)
            run = 0
    return bursts
