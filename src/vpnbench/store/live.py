"""Where a long measurement (a soak) puts what it measures while it runs, instead of returning
it at the end: series points and events go to the store as they come (a kill -9 loses at most
the SeriesWriter's last few seconds), and a resumed cell continues as a new segment, its times
offset after what the earlier segments measured.

StoreLive is the runner's; MemoryLive keeps everything in memory (unit tests, benchmarks)."""

import dataclasses

from vpnbench.store.database import SeriesWriter, Store
from vpnbench.store.records import Event, SeriesPoint, now_iso

SEGMENT_EVENT = "segment"


class Live:
    """offset: seconds the earlier segments of this cell measured (0 for the first);
    segment: this segment's number, from 1. Times given to add and event are the segment's own."""

    offset: float = 0.0
    segment: int = 1

    def add(self, points: list[SeriesPoint]) -> None:
        raise NotImplementedError

    def event(self, t: float, kind: str, detail: dict) -> None:
        raise NotImplementedError

    def history(self, names: list[str]) -> list[SeriesPoint]:
        """The cell's points of these series so far, all segments, in cell time (only the names
        asked: the monitor's many series of a 20-hour soak would not fit in memory as objects)."""
        raise NotImplementedError

    def events(self, kind: str) -> list[Event]:
        """The cell's events of one kind, all segments."""
        raise NotImplementedError

    def segment_starts(self) -> list[float]:
        return sorted(e.t or 0.0 for e in self.events(SEGMENT_EVENT))

    def _shift(self, points: list[SeriesPoint]) -> list[SeriesPoint]:
        if not self.offset:
            return points
        return [dataclasses.replace(p, t=round(p.t + self.offset, 4)) for p in points]


class MemoryLive(Live):
    def __init__(self):
        self.points: list[SeriesPoint] = []
        self._events: list[Event] = []
        self.event(0.0, SEGMENT_EVENT, {"segment": 1, "offset_s": 0.0})

    def add(self, points: list[SeriesPoint]) -> None:
        self.points.extend(self._shift(points))

    def event(self, t: float, kind: str, detail: dict) -> None:
        self._events.append(Event("", kind, now_iso(), detail, t=round(t + self.offset, 4)))

    def history(self, names: list[str]) -> list[SeriesPoint]:
        return [p for p in self.points if p.name in names]

    def events(self, kind: str) -> list[Event]:
        return [e for e in self._events if e.kind == kind]


class StoreLive(Live):
    def __init__(self, store: Store, writer: SeriesWriter, run_id: str, cell_id: int, bringup_id: int | None,
                 offset: float, segment: int):
        self.store, self.writer = store, writer
        self.run_id, self.cell_id, self.bringup_id = run_id, cell_id, bringup_id
        self.offset, self.segment = offset, segment
        self.event(0.0, SEGMENT_EVENT, {"segment": segment, "offset_s": round(offset, 3)})

    def add(self, points: list[SeriesPoint]) -> None:
        self.writer.add(self._shift(points))

    def event(self, t: float, kind: str, detail: dict) -> None:
        self.store.add_event(Event(self.run_id, kind, now_iso(), detail, cell_id=self.cell_id,
                                   bringup_id=self.bringup_id, t=round(t + self.offset, 4)))

    def history(self, names: list[str]) -> list[SeriesPoint]:
        self.writer.flush()
        return [point for name in names for point in self.store.series(self.cell_id, name)]

    def events(self, kind: str) -> list[Event]:
        return [e for e in self.store.events(self.run_id, self.cell_id) if e.kind == kind]
