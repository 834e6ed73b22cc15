"""What a run shows in the terminal: a progress bar over the cells and one line per cell."""

from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from vpnbench.foundation.terminal_text import plain
from vpnbench.impair.model import lossy
from vpnbench.measure import MEASUREMENTS
from vpnbench.store.records import Cell


class Display:
    def __init__(self, console: Console):
        self.console = console
        self._progress: Progress | None = None
        self._task = None

    def say(self, markup: str) -> None:
        self.console.print(markup)

    @contextmanager
    def cells(self, total: int):
        """The progress bar while the cells run (gone when they are done)."""
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
        with Progress(*columns, console=self.console, transient=True) as progress:
            self._progress, self._task = progress, progress.add_task("cells", total=total)
            try:
                yield self
            finally:
                self._progress = self._task = None

    def starting(self, technique: str, measurement: str, repetition: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=plain(f"{technique} · {measurement} #{repetition}"))

    def advance(self) -> None:
        if self._progress is not None:
            self._progress.advance(self._task)

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
