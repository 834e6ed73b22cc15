"""Traffic over many tunnels (a bring-up with tunnels = N): each tunnel's share, and how evenly
the tunnels were served (Jain's fairness index), from per-tunnel received rates."""


def jain_index(rates: list[float]) -> float | None:
    """Jain's fairness index, (Σx)² / (n·Σx²): 1 when every tunnel got the same, 1/n when one got
    everything; None when nothing was received at all (no share to compare)."""
    total, squares = sum(rates), sum(rate * rate for rate in rates)
    return total * total / (len(rates) * squares) if squares > 0 else None


def tunnel_metrics(rates: list[float]) -> dict[str, float]:
    """The metrics of a cell over N tunnels, from each tunnel's received bits/s: how many there
    were, how many carried nothing, the least and most served and Jain's index over them."""
    metrics = {"tunnels": float(len(rates)), "tunnels_silent": float(sum(1 for rate in rates if rate <= 0)),
               "tunnel_min_bps": min(rates), "tunnel_max_bps": max(rates)}
    jain = jain_index(rates)
    return metrics if jain is None else {**metrics, "jain_index": jain}
