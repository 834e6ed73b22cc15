"""The impairment backend of a run: which one (netem or linkem), and the impairment changed in
place between cells (a technique stays up across impairments, as the studies ran)."""

from vpnbench.campaign import Campaign, PlannedCell
from vpnbench.errors import UserError, VpnbenchError
from vpnbench.impair.backends import ImpairmentBackend, LinkemBackend, NetemBackend, linkem_binary
from vpnbench.impair.model import Impairment
from vpnbench.probe import has_qdisc
from vpnbench.resources import RunResources
from vpnbench.testbeds import Testbed


def resolve_impairment_backend(campaign: Campaign, resources: RunResources, probe=None) -> str | None:
    """netem where the kernel has it, linkem otherwise (auto); None without impairments.
    probe: the remote testbed's kernels (ssh, vm), else this machine's is tried."""
    if not campaign.impaired:
        return None
    asked = campaign.impairment_backend_asked()
    if probe is not None and asked in ("auto", "netem"):
        if not probe.has_qdisc("netem"):
            raise UserError("impairment.backend: netem is not available on the testbed's hosts (no sch_netem); "
                            "linkem runs on kind = 'local' only")
        return "netem"
    kernel_netem = has_qdisc(resources, "netem") if asked in ("auto", "netem") else False
    if asked == "netem" and not kernel_netem:
        raise UserError("impairment.backend: 'netem' is not available: the kernel has no sch_netem; "
                        "allowed here: auto, linkem")
    if asked == "netem" or (asked == "auto" and kernel_netem):
        return "netem"
    if linkem_binary() is None:
        raise UserError("impairment.backend: linkem is not built (run `make`, or set VPNBENCH_LINKEM)"
                        + ("" if kernel_netem else " and the kernel has no sch_netem"))
    return "linkem"


def make_impairer(backend: str, testbed: Testbed) -> ImpairmentBackend:
    if backend == "linkem":
        return LinkemBackend(testbed, linkem_binary())
    return NetemBackend(testbed)


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
