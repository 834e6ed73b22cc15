"""Long work that shows its progress: what it is doing, how far, elapsed and, where it can be
known, how long is left.

On a terminal that is rich's progress bar (a spinner where the total is unknown), redrawn a few
times a second. Where stderr is a log or CI (`make test`), it is a plain line every PLAIN_EVERY_S
("build 2 of 5, tailscale 1.102.0: go build tailscale.com/cmd/tailscaled … 40 s (all 3 min 10 s)"),
so a silent minute shows up as such. It always writes to stderr: never into a --json or an export.

The cost is a thread asleep on an Event between lines (woken every PLAIN_EVERY_S, or WATCH_EVERY_S
where a `watch` names the running step) and rich's own redraw at TERMINAL_REFRESH_PER_S; nothing
spins (bench/progress_cost.py measures both).
"""

import threading
import time
from collections.abc import Callable

import psutil
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from vpnbench.foundation.terminal_text import visible

PLAIN_EVERY_S = 10.0  # a log's line per long step: often enough to see it move, rare enough to read the log
WATCH_EVERY_S = 1.0  # how often a watch asks which step runs (a /proc scan: well under a millisecond)
# rich redraws 10 times a second by default; an elapsed time in whole seconds needs 2 (the spinner turns slower).
TERMINAL_REFRESH_PER_S = 2


def duration(seconds: float) -> str:
    """40 s, 3 min 10 s, 1 h 02 min: as a person reads a log."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def child_command(describe: Callable[[list[str]], str | None] = lambda argv: " ".join(argv[:2])) -> str | None:
    """What a child of this process runs now, as `describe` names its argv (None: no child): how a
    caller shows the step of a function that runs commands without telling anyone."""
    try:
        for child in psutil.Process().children():
            said = describe(child.cmdline())
            if said:
                return said
    except psutil.Error:  # a child that ended while we looked
        pass
    return None


class LongWork:
    """A long step with `total` items (None: unknown), each begun with begin(item) and counted
    with advance(); `step` names what the item is doing now, set by the caller or found by
    `watch` (polled every WATCH_EVERY_S). Used as a context manager."""

    def __init__(self, what: str, total: int | None = None, *, console: Console | None = None,
                 every_s: float = PLAIN_EVERY_S, watch: Callable[[], str | None] | None = None,
                 clock: Callable[[], float] = time.monotonic, transient: bool = True, may_count: bool = False):
        self.what, self.total, self.done = what, total, 0
        self.may_count = may_count  # a total comes later (set_total): the bar's columns from the start
        self.item = self.step = ""
        self.console = console or Console(stderr=True)
        self.terminal = self.console.is_terminal and not self.console.is_dumb_terminal
        self.every_s, self.watch, self.clock, self.transient = every_s, watch, clock, transient
        self.started = self.item_started = self.last_line = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: Progress | None = None
        self._task = None

    def __enter__(self) -> "LongWork":
        self.started = self.item_started = self.last_line = self.clock()
        if self.terminal:
            columns = [SpinnerColumn(), TextColumn("{task.description}", markup=False), _ItemElapsed(self)]
            if self.total is not None or self.may_count:
                columns += [BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
                            TimeRemainingColumn()]
            self._bar = Progress(*columns, console=self.console, transient=self.transient,
                                 refresh_per_second=TERMINAL_REFRESH_PER_S)
            self._bar.start()
            self._task = self._bar.add_task(self.description(), total=self.total)
        if self.watch is not None or not self.terminal:
            self._thread = threading.Thread(target=self._tick, name=f"progress {self.what}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """The progress ends here (again: nothing), before the with block does where the work
        goes on in another form (a booted VM's own console)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def begin(self, item: str) -> None:
        """The next item starts (its own elapsed time counts from here)."""
        self.item, self.step, self.item_started = item, "", self.clock()
        self._redraw()

    def set_step(self, step: str) -> None:
        if step != self.step:
            self.step = step
            self._redraw()

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.update(self._task, advance=count)

    def set_total(self, total: int) -> None:
        if total == self.total:
            return
        self.total = total
        if self._bar is not None:
            self._bar.update(self._task, total=total)

    def description(self) -> str:
        """The terminal's text: a stored label may hold anything, so its control characters show as \\xNN."""
        return visible(": ".join(part for part in (self.what if self.total is None else "", self.item, self.step)
                                 if part) or self.what)

    def line(self) -> str:
        """The plain line a log gets: what, which of how many, the step, its elapsed time, then the
        whole's elapsed time and what is left where it can be told (from the items done so far)."""
        now = self.clock()
        where = f"{self.what} {min(self.done + 1, self.total)} of {self.total}" if self.total else self.what
        doing = ": ".join(part for part in (self.item, self.step) if part)
        text = f"{where}, {doing}" if doing and self.total else (f"{where}: {doing}" if doing else where)
        text += f" … {duration(now - self.item_started)}"
        whole = now - self.started
        if self.total:
            left = f", ~{duration(whole / self.done * (self.total - self.done))} left" if self.done else ""
            text += f" (all {duration(whole)}{left})"
        return visible(text)

    def _redraw(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=self.description())

    def _tick(self) -> None:
        wait = min(WATCH_EVERY_S, self.every_s) if self.watch is not None else self.every_s
        while not self._stop.wait(wait):
            if self.watch is not None:
                self.set_step(self.watch() or "")
            if not self.terminal and self.clock() - self.last_line >= self.every_s:
                self.last_line = self.clock()
                self.console.print(self.line(), highlight=False, markup=False, soft_wrap=True)


class _ItemElapsed(ProgressColumn):
    """The current item's elapsed time (rich's own column counts the whole task's)."""

    def __init__(self, work: LongWork):
        super().__init__()
        self.work = work

    def render(self, task) -> Text:
        return Text(duration(self.work.clock() - self.work.item_started), style="progress.elapsed")
