"""The block stage: the run opened, then technique block after block of its cells run in it.
The runner gives it the plan's rounds; a lab worker (lab/worker.py) its testbed's reference
blocks first, then each block it claims from the queue."""

from collections.abc import Callable, Container, Iterable

from vpnbench.campaign import Campaign, PlannedCell, TechniqueBlock
from vpnbench.foundation.terminal_text import plain
from vpnbench.hosts.resources import RunResources
from vpnbench.run.bringup import BringUpStage
from vpnbench.run.cell import record_unavailable, run_cell
from vpnbench.run.context import Clock, RunContext, RunOutcome
from vpnbench.run.display import Display
from vpnbench.run.setup import VM_HINT, Prepared, Unavailable, environment
from vpnbench.store.database import Store
from vpnbench.store.records import Cell as CellRecord
from vpnbench.store.records import Run, now_iso
from vpnbench.techniques import TECHNIQUES
from vpnbench.techniques.base import TechniqueContext


def open_run(campaign: Campaign, store: Store, resources: RunResources, prepared: Prepared, display: Display,
             clock: Clock, resume: bool = False, recorded: dict | None = None) -> tuple[RunContext, set[str]]:
    """The run object, and the keys of the cells already done: a new run (stored with recorded,
    what it records of where it runs: by default setup.environment), or with resume the
    campaign's latest run, whose finished cells are skipped."""
    run_id = store.latest_run(campaign.name) if resume else None
    done = store.done_keys(run_id) if run_id else set()
    if run_id is None:
        run_id = resources.run_id
        if recorded is None:
            recorded = environment(campaign, prepared.testbed, prepared.backends)
        store.start_run(Run(run_id, campaign.name, campaign.source, recorded, now_iso()))
    return RunContext(campaign, store, resources, prepared.testbed, prepared.probe, run_id, display, clock,
                      resume), done


class BlockStage:
    """Runs blocks' cells in one run, each technique on the backend prepared for it, and counts
    them into outcome. before_cell: called before each cell (a lab worker stops a block there
    whose lease it lost, by raising)."""

    def __init__(self, run: RunContext, backends: list[str | Unavailable], outcome: RunOutcome,
                 before_cell: Callable[[], None] | None = None):
        self.run, self.backends, self.outcome, self.before_cell = run, backends, outcome, before_cell

    def run_all(self, blocks: Iterable[TechniqueBlock], done: Container[str] = frozenset()) -> None:
        """The blocks in their order, each with its cells not done yet (a block with none is not brought up)."""
        for block in blocks:
            cells = [cell for cell in block.cells if cell.key not in done]
            if cells:
                self.run_block(block, cells)

    def run_block(self, block: TechniqueBlock, cells: list[PlannedCell]) -> None:
        """One technique's cells: brought up once (again after a daemon died), each cell under its
        impairment and cores, the technique down at the end whatever happened."""
        run = self.run
        backend = self.backends[block.index]
        if isinstance(backend, Unavailable):
            bringup = record_unavailable(run, block, backend.reason, cells)
            self.outcome.unavailable += len(cells)
            run.display.say(f"  [yellow]skipped[/] {plain(block.label)}: {len(cells)} cells, "
                            f"{plain(bringup.error)} ({VM_HINT})")
            return
        testbed = run.testbed
        technique = TECHNIQUES[block.params.kind](block.params, TechniqueContext(
            testbed.client, testbed.server, testbed.underlay_map(), run.resources, run.probe, testbed.router,
            testbed.nodes, testbed.control))
        technique.params = run.congestion_control(block.params)
        stage = BringUpStage(run, technique, block, backend)
        if block.mtu is not None:
            testbed.set_mtu(block.mtu)  # before the bring-up: the tunnel is made over it
        try:
            for cell in cells:
                if self.before_cell is not None:
                    self.before_cell()
                run.display.starting(cell.technique, cell.measurement, cell.repetition)
                bringup = stage.ready()
                if cell.cores is not None and run.pinner is not None:
                    run.pinner.apply(cell.cores)
                impairment_error = run.impair(cell.impairment, bringup.id)
                if bringup.ok and not impairment_error:
                    stage.settle(cell)
                self._count(run_cell(run, cell, technique, bringup, impairment_error))
        finally:
            technique.down()
            stage.end()
            run.impair(None)
            if run.pinner is not None:
                run.pinner.restore()

    def _count(self, record: CellRecord) -> None:
        if record.ok:
            self.outcome.ok += 1
        else:
            self.outcome.failed += 1
        self.run.display.done(record)
