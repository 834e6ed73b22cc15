"""The CLI's start-up tuning: work done in the idle moments of a run's set-up, so that neither
the set-up nor the first cell waits for it."""

import sys
import threading
from collections.abc import Callable

# While the warm-up imports, they hold the GIL for up to the switch interval (5 ms) each time the
# set-up's thread returns from a command and wants it back; 0.5 ms keeps the set-up's forty-odd
# commands from queueing behind them.
WARM_UP_SWITCH_INTERVAL = 0.0005
WARM_UP_WAIT = 30.0  # seconds finish() waits at most; the work is a daemon thread after that


class WarmUp:
    """`work` (e.g. the imports the summary after the run needs) in a thread from `with` on;
    finish() (the runner's before_cells) waits for it before the first cell, so it never
    competes with a measurement. Leaving the `with` puts the switch interval back also when the
    set-up failed before finish()."""

    def __init__(self, work: Callable[[], object]):
        self._thread = threading.Thread(target=work, name="vpnbench-warm-up", daemon=True)
        self._interval: float | None = None

    def __enter__(self) -> "WarmUp":
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(WARM_UP_SWITCH_INTERVAL)
        self._thread.start()
        return self

    def finish(self) -> None:
        self._thread.join(timeout=WARM_UP_WAIT)
        self._restore()

    def __exit__(self, *exc) -> None:
        self._restore()

    def _restore(self) -> None:
        if self._interval is not None:
            sys.setswitchinterval(self._interval)
            self._interval = None
