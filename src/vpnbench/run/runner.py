"""Runs a campaign: the plan of a run. Testbed up, then for each round and technique: up, every
cell, down; testbed down. The stages are in vpnbench.run (setup, lifecycle, blocks, bringup,
cell, rounds); a lab worker (lab/worker.py) strings the same stages together for queued blocks.

A cell that fails is stored as failed with its reason and the run goes on. Ctrl-C and
SIGTERM stop the run between (or inside) cells and everything the run created is removed.
"""

from collections.abc import Callable

from rich.console import Console

from vpnbench.campaign import Campaign
from vpnbench.foundation.terminal_text import plain
from vpnbench.hosts.resources import RunResources
from vpnbench.run.blocks import BlockStage, open_run
from vpnbench.run.context import Clock, RunOutcome
from vpnbench.run.display import Display
from vpnbench.run.lifecycle import in_process, underway
from vpnbench.run.rounds import first_round, record_convergence, rounds
from vpnbench.run.setup import TestbedMaker, prepare
from vpnbench.store.database import Store
from vpnbench.testbeds.make import make_testbed


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
        return in_process(self._run)

    def _run(self, resources: RunResources) -> RunOutcome:
        prepared = prepare(self.campaign, resources, self.display, self.make, self.skip_unavailable, self.ask)
        run, done = open_run(self.campaign, self.store, resources, prepared, self.display, self.clock, self.resume)
        outcome = RunOutcome(run.run_id)
        planned = first_round(run)
        todo = sum(1 for block in planned for cell in block.cells if cell.key not in done)
        outcome.skipped = sum(len(b.cells) for b in planned) - todo
        impair_backend = prepared.impairment_backend
        self.display.say(f"[bold]{plain(self.campaign.name)}[/]: {todo} cells to run"
                         + (f", {outcome.skipped} already done" if outcome.skipped else "")
                         + f" — {run.testbed.pin_note}"
                         + (f"; impairments by {impair_backend}" if impair_backend else ""))
        blocks = BlockStage(run, prepared.backends, outcome)
        with underway(run, outcome, impair_backend):
            if self.before_cells is not None:
                self.before_cells()
            with self.display.cells(todo):
                for round_blocks in rounds(run):
                    blocks.run_all(round_blocks, done)
            if self.campaign.info.adaptive:
                record_convergence(run)
        return outcome
