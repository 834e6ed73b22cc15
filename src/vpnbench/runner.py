"""Runs a campaign: the plan of a run. Testbed up, then for each round and technique: up, every
cell, down; testbed down. The stages are in vpnbench.run (setup, bringup, cell, rounds).

A cell that fails is stored as failed with its reason and the run goes on. Ctrl-C and
SIGTERM stop the run between (or inside) cells and everything the run created is removed.
"""

import signal
from collections.abc import Callable
from contextlib import contextmanager

from rich.console import Console

from vpnbench.campaign import Campaign, PlannedCell, TechniqueBlock
from vpnbench.records import Cell as CellRecord
from vpnbench.records import Run, now_iso
from vpnbench.resources import RunResources
from vpnbench.run.bringup import BringUpStage
from vpnbench.run.cell import record_unavailable, run_cell
from vpnbench.run.context import Clock, RunContext, RunOutcome
from vpnbench.run.display import Display
from vpnbench.run.rounds import first_round, record_convergence, rounds
from vpnbench.run.setup import VM_HINT, Prepared, TestbedMaker, Unavailable, environment, prepare, set_up, tear_down
from vpnbench.store import Store
from vpnbench.techniques import TECHNIQUES
from vpnbench.techniques.base import TechniqueContext
from vpnbench.terminal_text import plain
from vpnbench.testbeds import make_testbed


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM. A BaseException, so that no cell's error handling swallows it."""


@contextmanager
def stop_signals_raise():
    """SIGTERM behaves like Ctrl-C, so both run the same cleanup path."""
    def handler(signum, frame):
        raise Interrupted(signal.Signals(signum).name)
    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


class Runner:
    """before_cells: called once the testbed is up, before the first cell (the CLI finishes its
    start-up work there, so it never competes with a measurement). make: how the testbed is
    obtained, and clock: the time stages read; the runner's unit tests give doubles for both."""

    def __init__(self, campaign: Campaign, store: Store, resume: bool = False, console: Console | None = None,
                 skip_unavailable: bool = False, ask=None, before_cells: Callable[[], None] | None = None,
                 make: TestbedMaker = make_testbed, clock: Clock = Clock()):
        self.campaign, self.store, self.resume = campaign, store, resume
        self.skip_unavailable = skip_unavailable
        self.ask = ask  # asks the user a yes/no question (an interactive terminal), or None
        self.display = Display(console or Console(stderr=True))
        self.before_cells, self.make, self.clock = before_cells, make, clock

    def run(self) -> RunOutcome:
        with stop_signals_raise():
            resources = RunResources()
            try:
                return self._run(resources)
            finally:
                # A second Ctrl-C must not cut the cleanup short.
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                resources.close()

    def _run(self, resources: RunResources) -> RunOutcome:
        prepared = prepare(self.campaign, resources, self.display, self.make, self.skip_unavailable, self.ask)
        run, done = self._open(resources, prepared)
        outcome = RunOutcome(run.run_id)
        blocks = first_round(run)
        todo = sum(1 for block in blocks for cell in block.cells if cell.key not in done)
        outcome.skipped = sum(len(b.cells) for b in blocks) - todo
        impair_backend = prepared.impairment_backend
        self.display.say(f"[bold]{plain(self.campaign.name)}[/]: {todo} cells to run"
                         + (f", {outcome.skipped} already done" if outcome.skipped else "")
                         + f" — {run.testbed.pin_note}"
                         + (f"; impairments by {impair_backend}" if impair_backend else ""))
        status = "failed"
        try:
            set_up(run, impair_backend)
            if self.before_cells is not None:
                self.before_cells()
            with self.display.cells(todo):
                for round_blocks in rounds(run):
                    for block in round_blocks:
                        cells = [c for c in block.cells if c.key not in done]
                        if cells:
                            self._run_block(run, block, prepared.backends[block.index], cells, outcome)
            if self.campaign.info.adaptive:
                record_convergence(run)
            status = "finished"
        except Interrupted as exc:
            outcome.interrupted = True
            status = "interrupted"
            self.display.say(f"[yellow]interrupted ({exc}); cleaning up[/]")
        finally:
            tear_down(run)
            self.store.finish_run(run.run_id, status)
        return outcome

    def _open(self, resources: RunResources, prepared: Prepared) -> tuple[RunContext, set[str]]:
        """The run object, and the cells already done: a new run, or with --resume the campaign's
        latest run, whose finished cells are skipped."""
        run_id = self.store.latest_run(self.campaign.name) if self.resume else None
        done = self.store.done_keys(run_id) if run_id else set()
        if run_id is None:
            run_id = resources.run_id
            self.store.start_run(Run(run_id, self.campaign.name, self.campaign.source, self.environment(prepared),
                                     now_iso()))
        return RunContext(self.campaign, self.store, resources, prepared.testbed, prepared.probe, run_id,
                          self.display, self.clock, self.resume), done

    def environment(self, prepared: Prepared) -> dict:
        """What the run records of where it runs (a lab worker adds its queue and testbed name)."""
        return environment(self.campaign, prepared.testbed, prepared.backends)

    def before_cell(self) -> None:
        """Called before each cell; a lab worker stops a block here whose lease it lost."""

    def _run_block(self, run: RunContext, block: TechniqueBlock, backend: str | Unavailable, cells: list[PlannedCell],
                   outcome: RunOutcome) -> None:
        """One technique's cells of this round: brought up once (again after a daemon died), each
        cell under its impairment and cores, the technique down at the end whatever happened."""
        if isinstance(backend, Unavailable):
            bringup = record_unavailable(run, block, backend.reason, cells)
            outcome.unavailable += len(cells)
            self.display.say(f"  [yellow]skipped[/] {plain(block.label)}: {len(cells)} cells, "
                             f"{plain(bringup.error)} ({VM_HINT})")
            return
        testbed = run.testbed
        technique = TECHNIQUES[block.params.kind](block.params, TechniqueContext(
            testbed.client, testbed.server, testbed.underlay_map(), run.resources, run.probe, testbed.router))
        technique.params = run.congestion_control(block.params)
        stage = BringUpStage(run, technique, block, backend)
        if block.mtu is not None:
            testbed.set_mtu(block.mtu)  # before the bring-up: the tunnel is made over it
        try:
            for cell in cells:
                self.before_cell()
                self.display.starting(cell.technique, cell.measurement, cell.repetition)
                bringup = stage.ready()
                if cell.cores is not None and run.pinner is not None:
                    run.pinner.apply(cell.cores)
                impairment_error = run.impair(cell.impairment, bringup.id)
                if bringup.ok and not impairment_error:
                    stage.settle(cell)
                self._report(run_cell(run, cell, technique, bringup, impairment_error), outcome)
        finally:
            technique.down()
            stage.end()
            run.impair(None)
            if run.pinner is not None:
                run.pinner.restore()

    def _report(self, record: CellRecord, outcome: RunOutcome) -> None:
        if record.ok:
            outcome.ok += 1
        else:
            outcome.failed += 1
        self.display.done(record)
