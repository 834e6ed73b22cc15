"""What a run shows in the terminal: a progress bar over the cells and one line per cell."""

from contextlib import contextmanager

from rich.console import Console

from vpnbench.foundation.progress import LongWork
from vpnbench.foundation.terminal_text import plain
from vpnbench.impair.model import lossy
from vpnbench.measure import MEASUREMENTS
from vpnbench.store.records import Cell


class Display:
    def __init__(self, console: Console):
        self.console = console
        self._progress: LongWork | None = None

    def say(self, markup: str) -> None:
        self.console.print(markup)

    @contextmanager
    def cells(self, total: int):
        """The cells' progress while they run: on a terminal a bar (gone when they are done), in a
        log a plain line every few seconds (the cell, its elapsed time, the run's, the time left)."""
        with LongWork("cell", total=total, console=self.console) as progress:
            self._progress = progress
            try:
                yield self
            finally:
                self._progress = None

    def starting(self, technique: str, measurement: str, repetition: int) -> None:
        if self._progress is not None:
            self._progress.begin(f"{technique} · {measurement} #{repetition}")  # shown without markup

    def advance(self) -> None:
        if self._progress is not None:
            self._progress.advance()

    def done(self, record: Cell) -> None:
        """The cell's line: ok with its headline, or failed with the reason."""
        self.advance()
        where = " · ".join(part for part in (record.technique, record.impairment if record.impairment != "none"
                                             else "", record.measurement_label) if part)
        where = plain(f"{where} #{record.repetition}")
        if record.ok:
            measurement = MEASUREMENTS[record.measurement]
            headline = measurement.headline_text(record.metrics)
            # Under loss TCP measures its congestion control too: the kinds declaring that caption say which.
            if "congestion_control" in measurement.captions and lossy(record.export()):
                headline += f" (congestion control {record.technique_params.get('congestion_control') or '?'})"
            self.say(f"  [green]ok[/]     {where}  {plain(headline)}")
        else:
            self.say(f"  [red]failed[/] {where}  " + plain(record.error or ""))
