"""A run's testbed: the backends chosen (before anything is built), the testbed connected,
built and recorded with its impairment backend, and torn down whatever state it is in."""

import dataclasses
import os
import platform
from collections.abc import Callable

from vpnbench import __version__
from vpnbench.campaign import Campaign, expand
from vpnbench.foundation.errors import TestbedError, UserError, VpnbenchError
from vpnbench.foundation.terminal_text import plain
from vpnbench.hosts.arch import check_gen_arch
from vpnbench.hosts.resources import RunResources
from vpnbench.measure.gen import gen_binary
from vpnbench.measure.scaling import CorePinner
from vpnbench.run.context import RunContext
from vpnbench.run.display import Display
from vpnbench.run.hostfacts import collect_host_facts
from vpnbench.run.impairments import ImpairmentSwitch, make_impairer, needs_bump, resolve_impairment_backend
from vpnbench.techniques import TECHNIQUES
from vpnbench.testbeds import congestion
from vpnbench.testbeds.base import Testbed
from vpnbench.testbeds.make import make_testbed
from vpnbench.testbeds.probe import KernelProbe
from vpnbench.testbeds.spec import TestbedSpec

VM_HINT = "use [testbed] kind = \"vm\" (QEMU VMs with a full distribution kernel) for the kernel backends"

# How the runner obtains its testbed: make_testbed; the runner's unit tests give doubles.
TestbedMaker = Callable[[TestbedSpec, RunResources], Testbed]


@dataclasses.dataclass(frozen=True)
class Unavailable:
    """A technique this machine cannot run, and why."""

    where: str  # technique[N].backend
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def resolve_backends(campaign: Campaign, probe) -> list[str | Unavailable]:
    """The backend each technique will use, or why it has none here."""
    backends: list[str | Unavailable] = []
    for number, params in enumerate(campaign.techniques, start=1):
        try:
            backends.append(TECHNIQUES[params.kind].resolve_backend(params, probe))
        except ValueError as exc:
            backends.append(Unavailable(f"technique[{number}].backend", str(exc)))
    return backends


def check_available(backends: list[str | Unavailable], skip_unavailable: bool, ask=None) -> None:
    """A technique that cannot run here stops the run before anything is touched, unless the
    user said to run the rest (--skip-unavailable, presets) or answers yes when asked."""
    missing = [b for b in backends if isinstance(b, Unavailable)]
    if not missing or skip_unavailable:
        return
    question = (f"{len(missing)} of {len(backends)} techniques cannot run here ({missing[0]}); "
                f"run the other {len(backends) - len(missing)}?")
    if ask is not None and len(missing) < len(backends) and ask(question):
        return
    raise UserError(f"{missing[0]}; run the others with --skip-unavailable, or {VM_HINT}")


@dataclasses.dataclass
class Prepared:
    """What the run will use, chosen before the testbed is built."""

    testbed: Testbed
    probe: KernelProbe
    backends: list[str | Unavailable]  # one per technique of the campaign
    impairment_backend: str | None


def prepare(campaign: Campaign, resources: RunResources, display: Display, make: TestbedMaker = make_testbed,
            skip_unavailable: bool = False, ask=None) -> Prepared:
    """The testbed, its probe and the backends, in one sequence for every kind: the testbed made
    and connected (ssh: reached, vm: booted, local: nothing to do), its probe asked what the hosts
    that run a technique can do, the backends resolved from the answers (and, when the impairment
    backend needs one, the testbed given its bump-in-the-wire hop); set_up then brings it up."""
    spec = campaign.testbed
    testbed = make(spec, resources)
    try:
        if testbed.connect_note:
            display.say(testbed.connect_note)
        testbed.connect()
        if any(getattr(m, "tool", None) == "gen" for m in campaign.measurements):  # before any cell
            check_gen_arch(testbed.hosts.values(), gen_binary())
        if congestion.asked(campaign.techniques):
            congestion.check_offered(campaign.techniques, congestion.offered(testbed.probe))
        backends = resolve_backends(campaign, testbed.probe)
        check_available(backends, skip_unavailable, ask)
        impair_backend = resolve_impairment_backend(campaign, testbed.probe)
        if needs_bump(impair_backend):
            testbed.add_bump()
        return Prepared(testbed, testbed.probe, backends, impair_backend)
    except UserError:
        testbed.down()
        raise
    except (VpnbenchError, OSError, TimeoutError) as exc:
        testbed.down()
        raise TestbedError(f"testbed: {exc}") from None
    except BaseException:
        testbed.down()
        raise


def set_up(ctx: RunContext, impair_backend: str | None) -> None:
    """The testbed up, cores pinned, its impairment backend started, every host's facts stored."""
    testbed = ctx.testbed
    try:
        testbed.up()
        if ctx.campaign.testbed.cores:
            ctx.pinner = CorePinner([testbed.client, testbed.server])
            ctx.pinner.check(ctx.campaign.testbed.cores)
        ctx.store.annotate_run(ctx.run_id, sysctls=testbed.sysctls, impairment_backend=impair_backend)
        if impair_backend:
            ctx.impairments = ImpairmentSwitch(make_impairer(impair_backend, testbed))
            ctx.impairments.backend.start()
            testbed.wait_ready()
        for facts in collect_host_facts(ctx.run_id, testbed.hosts,
                                         {technique.kind for technique in ctx.campaign.techniques}):
            ctx.store.save_host_facts(facts)
    except TestbedError:
        raise
    except (VpnbenchError, OSError, TimeoutError, EOFError) as exc:
        raise TestbedError(f"testbed: {exc}") from None


def tear_down(ctx: RunContext) -> None:
    """Stop the impairment backend and remove the testbed, whatever state they are in."""
    backend = ctx.impairments.backend
    if backend is not None:
        try:
            backend.stop()
        except (VpnbenchError, OSError, TimeoutError, EOFError) as exc:
            ctx.display.say(f"[yellow]impairment backend did not stop cleanly: {plain(str(exc))}[/]")
    ctx.testbed.down()


def environment(campaign: Campaign, testbed: Testbed, backends: list) -> dict:
    """The controller's view stored with the run: version, kernel, testbed, the backends chosen."""
    found = {"backends": {block.label: str(backends[block.index]) for block in expand(campaign)},
             "vpnbench": __version__, "kernel": platform.release(), "machine": platform.machine(),
             "hostname": platform.node(), "pinning": testbed.pin_note, "cpu_count": os.cpu_count(),
             "testbed": {"kind": campaign.testbed.kind, **testbed.facts}}
    accel = os.environ.get("VPNBENCH_VM_ACCEL")  # set inside vpnbench's kernel VM
    if accel:
        found["virtualization"] = f"QEMU VM ({accel}" + (": functional, not performance)" if accel == "TCG"
                                                         else ")")
    return found
