"""Traffic over many tunnels (a bring-up with tunnels = N): each tunnel's share, and how evenly
the tunnels were served (Jain's fairness index), from per-tunnel received rates.

Jain's index compares each flow's throughput with its fair share (Jain, Chiu, Hawe 1984: x_i =
T_i / O_i, the measured over the fair allocation). Where the loads offered differ (gen with
threads = 3 over 2 tunnels sends 2:1), the index over raw rates reads 0.9 with every datagram
delivered; over received / offered it reads 1. Where the offered loads are unknown (TCP: one
flow per tunnel, each its own equal claim) the raw rates are the shares.
"""


def jain_index(rates: list[float]) -> float | None:
    """Jain's fairness index, (Σx)² / (n·Σx²): 1 when every tunnel got the same, 1/n when one got
    everything; None when nothing was received at all (no share to compare)."""
    total, squares = sum(rates), sum(rate * rate for rate in rates)
    return total * total / (len(rates) * squares) if squares > 0 else None


def tunnel_metrics(rates: list[float], offered: list[float] | None = None,
                   of: int | None = None) -> dict[str, float]:
    """The metrics of a cell over N tunnels, from each tunnel's received bits/s (and, where known,
    what was offered to each, in any one unit): how many there were, how many carried nothing,
    the least and most served and Jain's index over each one's received share of its offered
    load (over the raw rates where the offered loads are not known). `of`: the tunnels of the
    bring-up, where only the first len(rates) were measured (TCP: iperf3.IPERF3_TUNNELS_MAX):
    the rest are `tunnels_unmeasured`, so a sum plotted against N says it stops growing there."""
    metrics = {"tunnels": float(len(rates)), "tunnels_silent": float(sum(1 for rate in rates if rate <= 0)),
               "tunnel_min_bps": min(rates), "tunnel_max_bps": max(rates)}
    if of is not None and of > len(rates):
        metrics["tunnels_unmeasured"] = float(of - len(rates))
    if offered is None:
        jain = jain_index(rates)
    else:
        if len(offered) != len(rates):
            raise ValueError(f"{len(offered)} offered loads for {len(rates)} tunnels")
        # a tunnel offered nothing has no share to be fair to: left out
        jain = jain_index([rate / load for rate, load in zip(rates, offered) if load > 0])
    return metrics if jain is None else {**metrics, "jain_index": jain}
