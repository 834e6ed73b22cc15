"""A run's life in its process: Ctrl-C and SIGTERM stop it wherever it is (between or inside
cells), the testbed is set up and torn down around the cells whatever happens, and the run is
stored finished, interrupted or failed. The runner and a lab worker both live it."""

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from vpnbench.hosts.resources import RunResources
from vpnbench.run.context import RunContext, RunOutcome
from vpnbench.run.setup import set_up, tear_down

T = TypeVar("T")


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM. A BaseException, so that no cell's error handling swallows it."""


# Every stop signal this process received, by name: also those held back while a run cleaned up,
# which raise nothing. A loop of runs (`worker --follow`) asks stop_requested() between them: a
# SIGTERM that came during the last run's cleanup must still end it (it was lost, and the worker
# waited for the next job: seen with the CPU halved).
_stops: list[str] = []


def stop_requested() -> bool:
    return bool(_stops)


def _hold(signum, frame) -> None:
    """During a cleanup: noted, not raised (a second Ctrl-C must not cut the cleanup short)."""
    _stops.append(signal.Signals(signum).name)


@contextmanager
def stop_signals_raise():
    """SIGTERM behaves like Ctrl-C, so both run the same cleanup path."""
    def handler(signum, frame):
        _stops.append(signal.Signals(signum).name)
        raise Interrupted(signal.Signals(signum).name)
    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def in_process(body: Callable[[RunResources], T]) -> T:
    """body(the run's resources) with Ctrl-C and SIGTERM raising Interrupted; the resources
    (everything the run created) removed afterwards, whatever happened."""
    with stop_signals_raise():
        resources = RunResources()
        try:
            return body(resources)
        finally:
            # A second Ctrl-C must not cut the cleanup short: held, not raised (stop_requested).
            signal.signal(signal.SIGINT, _hold)
            signal.signal(signal.SIGTERM, _hold)
            resources.close()


@contextmanager
def underway(run: RunContext, outcome: RunOutcome, impair_backend: str | None, note: str = "cleaning up",
             ended: Callable[[str], None] | None = None) -> Iterator[None]:
    """The testbed set up (run/setup.py) for the cells the body runs, then torn down and the run
    stored finished, interrupted (Ctrl-C, SIGTERM: the outcome says so, the note tells what
    happens next) or failed (any other error, which goes on up); ended(that state) last."""
    state = "failed"
    try:
        set_up(run, impair_backend)
        yield
        state = "finished"
    except Interrupted as exc:
        outcome.interrupted, state = True, "interrupted"
        run.display.say(f"[yellow]interrupted ({exc}); {note}[/]")
    finally:
        tear_down(run)
        run.store.finish_run(run.run_id, state)
        if ended is not None:
            ended(state)
