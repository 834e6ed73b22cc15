"""The run object: what every stage of one run shares, so no stage takes a testbed, a run id
and a store as separate parameters."""

import dataclasses
import time
from collections.abc import Callable

from vpnbench.campaign import Campaign
from vpnbench.hosts.resources import RunResources
from vpnbench.impair.model import Impairment
from vpnbench.measure.base import PortAllocator
from vpnbench.measure.scaling import CorePinner
from vpnbench.run.display import Display
from vpnbench.run.impairments import ImpairmentSwitch
from vpnbench.store.database import Store
from vpnbench.store.records import Event, now_iso
from vpnbench.testbeds import congestion
from vpnbench.testbeds.base import Testbed
from vpnbench.testbeds.probe import KernelProbe


@dataclasses.dataclass(frozen=True)
class Clock:
    """Where a run's stages read the time and wait: the real clock; the runner's unit tests give
    one whose sleep only moves the time on."""

    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


@dataclasses.dataclass
class RunOutcome:
    run_id: str
    ok: int = 0
    failed: int = 0
    skipped: int = 0  # already done (--resume)
    unavailable: int = 0  # cells of techniques this machine cannot run (--skip-unavailable)
    interrupted: bool = False


@dataclasses.dataclass
class RunContext:
    """One run of a campaign: a new one, or the one --resume continues (run_id is then the
    earlier run's, while resources belong to this process)."""

    campaign: Campaign
    store: Store
    resources: RunResources
    testbed: Testbed
    probe: KernelProbe
    run_id: str
    display: Display
    clock: Clock
    resume: bool = False
    impairments: ImpairmentSwitch = dataclasses.field(default_factory=ImpairmentSwitch)
    ports: PortAllocator = dataclasses.field(default_factory=PortAllocator)
    pinner: CorePinner | None = None  # [testbed] cores: moves each cell's processes
    own_control: dict[str, str | None] | None = None  # each end's TCP congestion control before the run
    # Asked before a cell is stored ok: why it must not be (a lab worker whose block another
    # worker has taken over), or None.
    fence: Callable[[], str | None] | None = None

    def congestion_control(self, params):
        """The technique's TCP congestion control set on both ends (or theirs put back); its
        parameters as they ran name the one in force, which every TCP figure under loss is told with."""
        ends = [self.testbed.client, self.testbed.server]
        own_just_read = self.own_control is None
        if own_just_read:
            self.own_control = {host.role: congestion.current(host) for host in ends}
        in_force = congestion.for_run(ends, params.congestion_control, self.own_control, self.resources.dir, own_just_read)
        return params.model_copy(update={"congestion_control": in_force})

    def event(self, kind: str, detail: dict, **ids) -> None:
        """Store an event of this run (ids: bringup_id, cell_id, t)."""
        self.store.add_event(Event(self.run_id, kind, now_iso(), detail, **ids))

    def impair(self, impairment: Impairment | None, bringup_id: int | None = None) -> str | None:
        """Change the impairment in place (an event when it changed); returns why it could not be applied."""
        changed, error = self.impairments.switch(impairment)
        if changed:
            self.event("impairment", {"impairment": impairment.label if impairment else "none"}, bringup_id=bringup_id)
        return error
