"""The impairment backend of a run: which one (the registry's, impair_backends.py), and the
impairment changed in place between cells (a technique stays up across impairments, as the
studies ran)."""

from vpnbench.campaign import Campaign, PlannedCell
from vpnbench.foundation.errors import VpnbenchError
from vpnbench.impair.model import Impairment
from vpnbench.testbeds.base import Testbed
from vpnbench.testbeds.impair_backends import BACKENDS, ImpairmentBackend, choose_backend
from vpnbench.testbeds.probe import KernelProbe


def resolve_impairment_backend(campaign: Campaign, probe: KernelProbe) -> str | None:
    """The backend asked for, or (auto) the first registered one that may run on this testbed
    and is available where the testbed's probe looks (netem where the kernel has it, else
    linkem); None without impairments."""
    if not campaign.impaired:
        return None
    return choose_backend(campaign.impairment_backend_asked(), campaign.testbed.kind, probe)


def needs_bump(backend: str | None) -> bool:
    """Does the testbed need a bump-in-the-wire hop for this backend (linkem's)?"""
    return backend is not None and BACKENDS[backend].needs_bump


def make_impairer(backend: str, testbed: Testbed) -> ImpairmentBackend:
    return BACKENDS[backend].create(testbed)


class ImpairmentSwitch:
    """The run's impairment backend (none without impairments) and the impairment in force."""

    def __init__(self, backend: ImpairmentBackend | None = None):
        self.backend = backend
        self.current: Impairment | None = None

    def switch(self, impairment: Impairment | None) -> tuple[bool, str | None]:
        """Change the impairment in place: (changed, why it could not be applied, if so)."""
        if self.backend is None or impairment == self.current:
            return False, None
        try:
            if impairment is None:
                self.backend.clear()
            else:
                self.backend.apply(impairment)
        except (VpnbenchError, OSError, TimeoutError, EOFError) as exc:
            self.current = None
            return False, f"impairment {impairment.label if impairment else 'none'} could not be applied: {exc}"
        self.current = impairment
        return True, None

    def params(self, cell: PlannedCell) -> dict:
        """The cell's impairment as stored: its settings, and the backend that applied it and where."""
        params = cell.impairment.params()
        if self.backend is not None:
            params.update(backend=self.backend.name, placement=self.backend.placement_of(cell.impairment),
                          **self.backend.facts())
        else:
            params.update(backend=None, placement=None)
        return params

    def stats(self) -> dict:
        """The backend's counters (drops, queue), {} without one."""
        return self.backend.stats() if self.backend is not None else {}

    def queue_drop_metrics(self, before: dict, after: dict) -> dict[str, float]:
        """impairment_queue_drops_<direction> between two stats() reads, where the backend can tell."""
        drops = self.backend.queue_drops(before, after) if self.backend is not None else {}
        return {f"impairment_queue_drops_{direction}": float(n) for direction, n in drops.items()}
