"""The NAT matrix: for every pair of NAT types, what a mesh's pairs of nodes behind them ended up
as (direct, through a relay, or never answering) and how soon they first answered. Computed
once from the convergence cycles a run stored (each with its nodes' NAT types, each pair's first
reply and path: measure/convergence.py); the report draws it, a table or a test reads it.

A cell of the matrix holds the ordered node pairs of both orders (n3 > n4 and n4 > n3 for the types
of n3 and n4), so it is symmetric; a pair of nodes of the same type is its diagonal. Its outcome
is the commonest of its pairs' (ties: the worse, never before relay before direct), and the
counts say where they differ."""

import dataclasses
import statistics

# "unseen": answered, but no path seen in the window; "unprobed": not answered in a cycle whose up()
# returned after the deadline, so the pair was never asked (the deadline counts from the daemons' start)
OUTCOMES = ("direct", "relay", "never", "unseen", "unprobed")


@dataclasses.dataclass
class MatrixCell:
    pairs: int = 0
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    first_reply_s: list[float] = dataclasses.field(default_factory=list)

    @property
    def outcome(self) -> str:
        worst_first = ("never", "relay", "unseen", "unprobed", "direct")
        return max(worst_first, key=lambda outcome: (self.counts.get(outcome, 0), -worst_first.index(outcome)))

    @property
    def first_reply_p50_s(self) -> float | None:
        return statistics.median(self.first_reply_s) if self.first_reply_s else None


def nat_matrix(cycles: list[dict]) -> dict[tuple[str, str], MatrixCell]:
    """(type a, type b) with a <= b in the order types first appear -> its MatrixCell, over every
    cycle that recorded its nodes' NAT types."""
    matrix: dict[tuple[str, str], MatrixCell] = {}
    order: list[str] = []
    for cycle in cycles:
        nat = cycle.get("nat")
        if not nat:
            continue
        order += [kind for kind in nat.values() if kind not in order]
        never = set(cycle.get("never", ()))
        unanswered = "unprobed" if cycle.get("up_past_deadline") else "never"
        paths = cycle.get("paths", {})
        for pair in cycle["pairs"]:
            a, b = pair.split(">")
            key = tuple(sorted((nat[a], nat[b]), key=order.index))
            cell = matrix.setdefault(key, MatrixCell())
            cell.pairs += 1
            outcome = unanswered if pair in never else paths.get(pair, "unseen")
            cell.counts[outcome] = cell.counts.get(outcome, 0) + 1
            if pair in cycle.get("first_reply_s", {}):
                cell.first_reply_s.append(cycle["first_reply_s"][pair])
    return matrix


def nat_types(matrix: dict[tuple[str, str], MatrixCell]) -> list[str]:
    """The types of a matrix, in their order."""
    return list(dict.fromkeys(kind for key in matrix for kind in key))
