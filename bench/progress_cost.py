"""What showing progress costs (issue 38 item 2): the CPU time a LongWork takes while the work it
shows sleeps, on a terminal (rich's redraw) and in a log (a plain line every interval), against
rich's default redraw of 10 per second that the campaign's bar used before.

    PYTHONPATH=src python bench/progress_cost.py [SECONDS]
"""

import io
import subprocess
import sys
import time

from rich.console import Console
from rich.progress import Progress

from vpnbench.commands.doctor import build_step
from vpnbench.foundation.progress import LongWork, child_command


def cpu_while_sleeping(seconds: float, make) -> float:
    """CPU seconds this process spent while a child `sleep` ran under `make()`'s progress."""
    before = time.process_time()
    with make():
        subprocess.run(["sleep", str(seconds)], check=True)
    return time.process_time() - before


def terminal() -> Console:
    return Console(file=io.StringIO(), width=120, force_terminal=True)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0

    def long_work(console, watch=None):
        def make():
            work = LongWork("build", total=3, console=console, watch=watch)
            work.__enter__().begin("x 1.0")
            return _Exit(work)
        return make

    def rich_default():
        progress = Progress(console=terminal(), transient=True)
        progress.start()
        progress.add_task("cells", total=3)
        return _Exit(progress, stop=True)

    cases = {"nothing": lambda: _Exit(None),
             "rich Progress, default 10 redraws/s (the campaign bar before)": rich_default,
             "LongWork on a terminal (2 redraws/s)": long_work(terminal()),
             "LongWork on a terminal, watching the child (doctor --install)":
                 long_work(terminal(), lambda: child_command(build_step)),
             "LongWork in a log (a line every 10 s)": long_work(Console(file=io.StringIO(), force_terminal=False)),
             "LongWork in a log, watching the child": long_work(Console(file=io.StringIO(), force_terminal=False),
                                                                lambda: child_command(build_step))}
    for name, make in cases.items():
        cpu = cpu_while_sleeping(seconds, make)
        print(f"{name}: {cpu * 1000:.1f} ms CPU in {seconds:g} s ({cpu / seconds:.3%} of a core)")


class _Exit:
    def __init__(self, thing, stop: bool = False):
        self.thing, self.stop = thing, stop

    def __enter__(self):
        return self.thing

    def __exit__(self, *exc):
        if self.thing is None:
            return
        self.thing.stop() if self.stop else self.thing.__exit__(*exc)


if __name__ == "__main__":
    main()
