"""The pure parts of a soak: the stall detector, drift slopes over segments, and the kernel
counters a soak samples (/proc/meminfo Slab, /proc/net/snmp Udp, /proc/net/xfrm_stat).

No I/O here, so each piece is tested on its own (tests/test_soak.py)."""

import bisect
import dataclasses


@dataclasses.dataclass(frozen=True)
class Stall:
    start: float  # seconds since the soak's start: the last progress before it
    end: float  # the first progress after it (or the end of the soak, when it never recovered)
    recovered: bool = True

    @property
    def duration(self) -> float:
        return self.end - self.start


class StallDetector:
    """No progress for `after` seconds is a stall; it lasts until progress is seen again.
    Fed with the times progress was seen (and, to notice a tool that went silent, with the
    time now): a stall is only known once it is `after` old, and only closed by progress."""

    def __init__(self, after: float, start: float = 0.0):
        self.after = after
        self.last_progress = start

    def progress(self, t: float) -> Stall | None:
        """Progress seen at t; returns the stall this ends, if one was under way."""
        stall = Stall(self.last_progress, t) if t - self.last_progress >= self.after else None
        self.last_progress = max(self.last_progress, t)
        return stall

    def stalled_for(self, t: float) -> float:
        """How long the stall under way at t has lasted (0 when there is none)."""
        gap = t - self.last_progress
        return gap if gap >= self.after else 0.0

    def finish(self, t: float) -> Stall | None:
        """The stall still under way when the soak ends, if any."""
        return Stall(self.last_progress, t, recovered=False) if self.stalled_for(t) else None


def segment_of(t: float, starts: list[float]) -> int:
    """The index of the segment a time falls in, given the segments' start times (sorted)."""
    return max(bisect.bisect_right(starts, t) - 1, 0)


def by_segment(points: list[tuple[float, float]], starts: list[float]) -> list[list[tuple[float, float]]]:
    groups: dict[int, list[tuple[float, float]]] = {}
    for t, v in points:
        groups.setdefault(segment_of(t, starts), []).append((t, v))
    return [groups[key] for key in sorted(groups)]


def pooled_slope(groups: list[list[tuple[float, float]]]) -> float | None:
    """Least-squares slope (value per second) with its own intercept per segment: a resumed
    soak restarts its daemons, so their memory starts over, but the growth rate is shared.
    None when no segment has two distinct times."""
    num = den = 0.0
    for points in groups:
        if len(points) < 2:
            continue
        mean_t = sum(t for t, _ in points) / len(points)
        mean_v = sum(v for _, v in points) / len(points)
        num += sum((t - mean_t) * (v - mean_v) for t, v in points)
        den += sum((t - mean_t) ** 2 for t, _ in points)
    return num / den if den > 0 else None


def growth(groups: list[list[tuple[float, float]]]) -> float:
    """Last minus first value, summed over segments (a counter that restarted is not a drop)."""
    return sum(points[-1][1] - points[0][1] for points in groups if points)


def parse_counters(text: str) -> dict[str, float]:
    """The counters a soak watches from concatenated /proc/meminfo, /proc/net/snmp and
    /proc/net/xfrm_stat (absent without IPsec in the kernel): slab_bytes, udp_<Field> for every
    Udp field, xfrm_errors (the sum of xfrm_stat, every one of which counts an error)."""
    counters: dict[str, float] = {}
    udp_header: list[str] | None = None
    xfrm = None
    for line in text.splitlines():
        fields = line.split()
        if line.startswith("Slab:") and len(fields) >= 2:
            counters["slab_bytes"] = float(fields[1]) * 1024
        elif fields and fields[0] == "Udp:":
            if udp_header is None:
                udp_header = fields[1:]
            else:
                counters.update({f"udp_{name}": float(value) for name, value in zip(udp_header, fields[1:])})
        elif len(fields) == 2 and fields[0].startswith("Xfrm") and fields[1].isdigit():
            xfrm = (xfrm or 0.0) + float(fields[1])
    if xfrm is not None:
        counters["xfrm_errors"] = xfrm
    return counters


def process_rss(text: str, page_size: int, skip: frozenset[str]) -> float:
    """The summed RSS (bytes) of the processes in concatenated /proc/<pid>/stat lines, leaving
    out those named in skip (the soak's own traffic tools)."""
    total = 0.0
    for line in text.splitlines():
        if ") " not in line or not line.split(" ", 1)[0].isdigit():
            continue
        head, rest = line.rsplit(") ", 1)
        fields = rest.split()
        if head.split("(", 1)[1] in skip or len(fields) < 22:
            continue
        total += float(fields[21]) * page_size  # field 24 of stat: rss in pages
    return total
