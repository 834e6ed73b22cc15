"""Runs a campaign: testbed up, then for each technique: up, every cell, down; testbed down.

A cell that fails is stored as failed with its reason and the run goes on. Ctrl-C and
SIGTERM stop the run between (or inside) cells and everything the run created is removed.
"""

import dataclasses
import json
import math
import os
import platform
import signal
import sys
import threading
import time
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from vpnbench import __version__
from vpnbench.campaign import Campaign, Cell, TechniqueBlock, expand
from vpnbench.errors import MeasurementError, TechniqueError, TestbedError, UserError, VpnbenchError
from vpnbench.impair.backends import ImpairmentBackend, choose_backend
from vpnbench.impair.registry import BACKENDS as IMPAIRMENT_BACKENDS
from vpnbench.impair.model import Impairment
from vpnbench.measure import MEASUREMENTS
from vpnbench.measure.base import Cycled, MeasureContext, PortAllocator
from vpnbench.measure.ping import rtts
from vpnbench.hostfacts import collect_host_facts
from vpnbench.live import StoreLive
from vpnbench.hosts.base import CommandFailed
from vpnbench.monitor import Monitor
from vpnbench.probe import LocalKernelProbe
from vpnbench.resources import RunResources
from vpnbench.hosts.route import device_mtu, route_device
from vpnbench.scaling import SOFTIRQ_NOTE, CorePinner, fit_tunnel
from vpnbench.records import Bringup, Event, Run, now_iso
from vpnbench.records import Cell as CellRecord
from vpnbench.store import SeriesWriter, Store
from vpnbench.techniques import TECHNIQUES
from vpnbench.techniques.base import Technique, TechniqueContext
from vpnbench.testbed import Testbed, make_testbed
from vpnbench.wirecheck import check_wire

SETUP_TIMEOUT = 15.0
# A path has settled when a ping's RTT is within this of the lowest seen (factor × lowest + slack).
SETTLE_FACTOR, SETTLE_SLACK_MS = 1.5, 0.5


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM. A BaseException, so that no cell's error handling swallows it."""


@dataclasses.dataclass
class RunOutcome:
    run_id: str
    ok: int = 0
    failed: int = 0
    skipped: int = 0  # already done (--resume)
    unavailable: int = 0  # cells of techniques this machine cannot run (--skip-unavailable)
    interrupted: bool = False


def resolve_impairment_backend(campaign: Campaign, resources: RunResources, probe=None) -> str | None:
    """netem where the kernel has it, linkem otherwise (auto); None without impairments.
    probe: the remote testbed's kernels (ssh, vm), else this machine's is tried."""
    if not campaign.impaired:
        return None
    return choose_backend(campaign.impairment_backend_asked(), campaign.testbed.kind,
                          probe or LocalKernelProbe(resources))


@dataclasses.dataclass(frozen=True)
class Unavailable:
    """A technique this machine cannot run, and why."""

    where: str  # technique[N].backend
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


VM_HINT = "use [testbed] kind = \"vm\" (QEMU VMs with a full distribution kernel) for the kernel backends"


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
    def __init__(self, campaign: Campaign, store: Store, resume: bool = False, console: Console | None = None,
                 skip_unavailable: bool = False, ask=None, meanwhile=None):
        self.campaign = campaign
        # Work for idle moments (e.g. imports the summary needs): run in a thread while the testbed
        # is built, finished before the first cell so it never competes with a measurement.
        self.meanwhile = threading.Thread(target=meanwhile, daemon=True) if meanwhile else None
        self.skip_unavailable = skip_unavailable
        self.ask = ask  # asks the user a yes/no question (an interactive terminal), or None
        self.store = store
        self.resume = resume
        self.console = console or Console(stderr=True)
        self.ports = PortAllocator()
        self.impairer: ImpairmentBackend | None = None
        self._idle_rtt: dict[tuple[int, str], float] = {}  # (bring-up, impairment) -> lowest RTT seen, ms
        self.current_impairment: Impairment | None = None
        self.pinner: CorePinner | None = None  # [testbed] cores: moves each cell's processes

    def run(self) -> RunOutcome:
        switch_interval = sys.getswitchinterval()  # _run lowers it while the warm-up imports
        with stop_signals_raise():
            resources = RunResources()
            try:
                return self._run(resources)
            finally:
                sys.setswitchinterval(switch_interval)  # also when set-up failed before the join
                # A second Ctrl-C must not cut the cleanup short.
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                resources.close()

    def _run(self, resources: RunResources) -> RunOutcome:
        if self.meanwhile is not None:
            # The warm-up imports hold the GIL for up to the switch interval (5 ms) each time the
            # set-up's thread returns from a command and wants it back; 0.5 ms keeps the set-up's
            # forty-odd commands from queueing behind them.
            switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(0.0005)
            self.meanwhile.start()
        testbed, probe, backends, impair_backend = self._prepare(resources)
        run_id = (self.store.latest_run(self.campaign.name) if self.resume else None)
        done = self.store.done_keys(run_id) if run_id else set()
        if run_id is None:
            run_id = resources.run_id
        if run_id == resources.run_id:
            self.store.start_run(Run(run_id, self.campaign.name, self.campaign.source, self._environment(testbed, backends),
                                     now_iso()))
        outcome = RunOutcome(run_id)
        info = self.campaign.info
        blocks = expand(self.campaign, range(1, info.min_repetitions + 1) if info.adaptive else None)
        todo = sum(1 for block in blocks for cell in block.cells if cell.key not in done)
        outcome.skipped = sum(len(b.cells) for b in blocks) - todo
        self.console.print(f"[bold]{escape(self.campaign.name)}[/]: {todo} cells to run"
                           + (f", {outcome.skipped} already done" if outcome.skipped else "")
                           + f" — {testbed.pin_note}"
                           + (f"; impairments by {impair_backend}" if impair_backend else ""))
        status = "failed"
        try:
            self._set_up(testbed, impair_backend, run_id)
            if self.meanwhile is not None:
                self.meanwhile.join(timeout=30)
                sys.setswitchinterval(switch_interval)
            with self._progress(todo) as progress:
                for round_blocks in self._rounds(run_id):
                    for block in round_blocks:
                        backend = backends[block.index]
                        cells = [c for c in block.cells if c.key not in done]
                        if cells and isinstance(backend, Unavailable):
                            self._record_unavailable(block, backend, cells, run_id, outcome, progress)
                        elif cells:
                            self._run_block(block, backend, cells, testbed, resources, probe, run_id, outcome,
                                            progress)
            if info.adaptive:
                self._record_convergence(run_id)
            status = "finished"
        except Interrupted as exc:
            outcome.interrupted = True
            status = "interrupted"
            self.console.print(f"[yellow]interrupted ({exc}); cleaning up[/]")
        finally:
            self._tear_down(testbed)
            self.store.finish_run(run_id, status)
        return outcome

    def _rounds(self, run_id: str):
        """The blocks to run: all at once for a fixed number of repetitions (each technique up
        once, as the studies ran); for repetitions = "auto", one repetition per round across all
        techniques (so a burst of machine noise lands on several techniques, not on one), the
        first min_repetitions rounds for every cell, then only for the cells whose interval is
        still wider than the target, until max_repetitions."""
        info = self.campaign.info
        if not info.adaptive:
            yield expand(self.campaign)
            return
        for repetition in range(1, info.max_repetitions + 1):
            blocks = expand(self.campaign, range(repetition, repetition + 1))
            if repetition > info.min_repetitions:
                pending = {key for key, decision in self._convergence(run_id).items() if not decision.done}
                blocks = [dataclasses.replace(b, cells=[c for c in b.cells if group_of(c) in pending]) for b in blocks]
            if not any(block.cells for block in blocks):
                return
            yield blocks

    def _convergence(self, run_id: str) -> dict:
        """Each (technique, impairment, measurement) group's stop decision (quality.Decision) on its
        first column's metric."""
        from vpnbench.quality import converged  # noqa: PLC0415 - numpy/pandas only for adaptive runs

        info = self.campaign.info
        values: dict[tuple[str, str, str], list[float]] = {}
        for cell in self.store.cells(run_id):
            metric = deciding_metric(cell.measurement)
            key = (cell.technique, cell.impairment, cell.measurement_label)
            values.setdefault(key, [])
            if cell.ok and metric in cell.metrics:
                values[key].append(float(cell.metrics[metric]))
        return {key: converged(v, info.ci_target, info.min_repetitions, info.max_repetitions)
                for key, v in values.items()}

    def _record_convergence(self, run_id: str) -> None:
        """One event per group with how many repetitions it took and whether it converged."""
        for (technique, impairment, label), decision in self._convergence(run_id).items():
            self.store.add_event(Event(run_id, "repetitions", now_iso(), {
                "technique": technique, "impairment": impairment, "measurement_label": label, "n": decision.n,
                "converged": decision.reason == "converged", "reason": decision.reason,
                "rel_halfwidth": decision.rel_halfwidth if math.isfinite(decision.rel_halfwidth) else None}))
            if decision.reason != "converged":
                self.console.print(f"  [yellow]not converged[/] {escape(technique)} · {escape(label)}"
                                   f"{'' if impairment == 'none' else ' · ' + escape(impairment)}: "
                                   f"{decision.reason} after {decision.n} repetitions")

    def _prepare(self, resources: RunResources):
        """The testbed, its kernel probe and the backends. A remote testbed (ssh, vm) is
        connected (booted) first, since only its hosts can say what their kernels can do."""
        spec = self.campaign.testbed
        if spec.kind == "local":
            probe = LocalKernelProbe(resources)
            backends = resolve_backends(self.campaign, probe)
            check_available(backends, self.skip_unavailable, self.ask)
            impair_backend = resolve_impairment_backend(self.campaign, resources, probe)
            bump = impair_backend is not None and IMPAIRMENT_BACKENDS[impair_backend].needs_bump
            return Testbed(spec, resources, bump=bump), probe, backends, impair_backend
        testbed = make_testbed(spec, resources)
        try:
            self.console.print(f"connecting to the {spec.kind} testbed: {', '.join(testbed.hosts)}")
            testbed.connect()
            backends = resolve_backends(self.campaign, testbed.probe)
            check_available(backends, self.skip_unavailable, self.ask)
            return testbed, testbed.probe, backends, resolve_impairment_backend(self.campaign, resources, testbed.probe)
        except UserError:
            testbed.down()
            raise
        except (VpnbenchError, OSError, TimeoutError) as exc:
            testbed.down()
            raise TestbedError(f"testbed: {exc}") from None
        except BaseException:
            testbed.down()
            raise

    def _set_up(self, testbed: Testbed, impair_backend: str | None, run_id: str) -> None:
        try:
            testbed.up()
            if self.campaign.testbed.cores:
                self.pinner = CorePinner([testbed.client, testbed.server])
                self.pinner.check(self.campaign.testbed.cores)
            self.store.annotate_run(run_id, sysctls=testbed.sysctls, impairment_backend=impair_backend)
            if impair_backend:
                self.impairer = make_impairer(impair_backend, testbed)
                self.impairer.start()
                testbed.wait_ready()
            for facts in collect_host_facts(run_id, testbed.hosts):
                self.store.save_host_facts(facts)
        except TestbedError:
            raise
        except (VpnbenchError, OSError, TimeoutError, EOFError) as exc:
            raise TestbedError(f"testbed: {exc}") from None

    def _tear_down(self, testbed: Testbed) -> None:
        """Stop the impairment backend and remove the testbed, whatever state they are in."""
        if self.impairer is not None:
            try:
                self.impairer.stop()
            except (VpnbenchError, OSError, TimeoutError, EOFError) as exc:
                self.console.print(f"[yellow]impairment backend did not stop cleanly: {escape(str(exc))}[/]")
        testbed.down()

    @contextmanager
    def _progress(self, total: int):
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
        with Progress(*columns, console=self.console, transient=True) as progress:
            progress.task = progress.add_task("cells", total=total)
            yield progress

    def _environment(self, testbed: Testbed, backends: list) -> dict:
        environment = {"backends": {block.label: str(backends[block.index]) for block in expand(self.campaign)},"vpnbench": __version__, "kernel": platform.release(), "machine": platform.machine(),
                       "hostname": platform.node(), "pinning": testbed.pin_note, "cpu_count": os.cpu_count(),
                       "testbed": {"kind": self.campaign.testbed.kind, **getattr(testbed, "facts", {})}}
        accel = os.environ.get("VPNBENCH_VM_ACCEL")  # set inside vpnbench's kernel VM
        if accel:
            environment["virtualization"] = f"QEMU VM ({accel}" + (": functional, not performance)" if accel == "TCG"
                                                                   else ")")
        return environment

    def _record_unavailable(self, block: TechniqueBlock, why: Unavailable, cells: list[Cell], run_id: str,
                            outcome: RunOutcome, progress) -> None:
        """Every cell of a technique this machine cannot run, stored as skipped with the reason."""
        bringup = Bringup(run_id, block.label, block.params.kind, "none", now_iso(),
                          backend_asked=block.params.settings().get("backend", "auto"),
                          error=f"unavailable here: {why.reason}", ended_at=now_iso())
        self.store.save_bringup(bringup)
        for cell in cells:
            record = self._new_record(cell, block.params, bringup, run_id)
            record.status, record.error, record.finished_at = "skipped", bringup.error, now_iso()
            self.store.save_cell(record)
            progress.advance(progress.task)
        outcome.unavailable += len(cells)
        self.console.print(f"  [yellow]skipped[/] {escape(block.label)}: {len(cells)} cells, "
                           f"{escape(bringup.error)} ({VM_HINT})")

    def _run_block(self, block: TechniqueBlock, backend: str, cells: list[Cell], testbed: Testbed,
                   resources: RunResources, probe, run_id: str, outcome: RunOutcome, progress) -> None:
        ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), resources, probe,
                               testbed.router)
        technique = TECHNIQUES[block.params.kind](block.params, ctx)
        bringup: Bringup | None = None
        if block.mtu is not None:
            testbed.set_mtu(block.mtu)  # before the bring-up: the tunnel is made over it
        try:
            for cell in cells:
                progress.update(progress.task, description=escape(f"{cell.technique} · {cell.measurement} #{cell.repetition}"))
                if bringup is None or technique.failure():
                    if bringup is not None:
                        self._end_bringup(bringup, restart_reason=technique.failure())
                    technique.down()
                    self._impair(None, run_id)  # bring-up time and the wire proof are taken unimpaired
                    bringup = self._bring_up(technique, block, backend, testbed, resources, run_id)
                    if block.mtu is not None and bringup.ok:
                        self._fit_tunnel(bringup, testbed, block)
                if cell.cores is not None and self.pinner is not None:
                    self.pinner.apply(cell.cores)
                impairment_error = self._impair(cell.impairment, run_id, bringup.id)
                if bringup.ok and not impairment_error:
                    self._settle(testbed, bringup, cell, run_id)
                record = self._run_cell(cell, technique, bringup, testbed, impairment_error, run_id)
                self._report(record, outcome, progress)
        finally:
            technique.down()
            if bringup is not None:
                self._end_bringup(bringup)
            self._impair(None, run_id)
            if self.pinner is not None:
                self.pinner.restore()

    def _fit_tunnel(self, bringup: Bringup, testbed: Testbed, block: TechniqueBlock) -> None:
        """Over a swept underlay MTU: the tunnel devices lowered to fit, the facts taken again."""
        tunnel = bringup.tunnel
        ends = [(testbed.client, tunnel.server_addrs[tunnel.family]), (testbed.server, tunnel.client_addrs[tunnel.family])]
        fitted = fit_tunnel(ends, {**block.params.settings(), "backend": bringup.backend}, block.mtu)
        bringup.facts = {**tunnel_facts(testbed.client, ends[0][1]), "underlay_mtu": block.mtu,
                         **({"tunnel_mtu_lowered_to": fitted} if fitted else {})}
        self.store.save_bringup(bringup)

    def _settle(self, testbed: Testbed, bringup: Bringup, cell: Cell, run_id: str) -> None:
        """Wait (at most settle_max) until a ping through the tunnel is back near the lowest round
        trip seen with this bring-up and impairment, so one cell's queues and TCP state do not leak
        into the next (seen: OpenVPN-over-TCP pings ~10 ms behind the backlog of a 1 Gbit/s UDP cell)."""
        limit = self.campaign.info.settle_max
        if limit <= 0:
            return
        address = bringup.tunnel.server_addrs[bringup.tunnel.family]
        key = (bringup.id, cell.impairment.label)
        started = time.monotonic()
        settled = False
        while not settled:
            rtt = ping_once(testbed.client, address)
            if rtt is not None:
                lowest = self._idle_rtt[key] = min(rtt, self._idle_rtt.get(key, rtt))
                settled = rtt <= SETTLE_FACTOR * lowest + SETTLE_SLACK_MS
            if not settled and time.monotonic() - started >= limit:
                break
            if not settled:
                time.sleep(0.05)
        waited = time.monotonic() - started
        if waited >= 0.1:
            self.store.add_event(Event(run_id, "settle", now_iso(), {
                "before": cell.key, "waited_s": round(waited, 3), "rtt_ms": rtt, "idle_rtt_ms": self._idle_rtt.get(key),
                "settled": settled}, bringup_id=bringup.id))

    def _end_bringup(self, bringup: Bringup, restart_reason: str | None = None) -> None:
        if bringup.ended_at is None:
            bringup.ended_at = now_iso()
            self.store.save_bringup(bringup)
        if restart_reason and bringup.ok:
            self.store.add_event(Event(bringup.run_id, "daemon-restart", now_iso(), {"reason": restart_reason},
                                       bringup_id=bringup.id))

    def _impair(self, impairment: Impairment | None, run_id: str, bringup_id: int | None = None) -> str | None:
        """Change the impairment in place; returns why it could not be applied, if so."""
        if self.impairer is None or impairment == self.current_impairment:
            return None
        try:
            if impairment is None:
                self.impairer.clear()
            else:
                self.impairer.apply(impairment)
        except (VpnbenchError, OSError, TimeoutError, EOFError) as exc:
            self.current_impairment = None
            return f"impairment {impairment.label if impairment else 'none'} could not be applied: {exc}"
        self.current_impairment = impairment
        self.store.add_event(Event(run_id, "impairment", now_iso(),
                                   {"impairment": impairment.label if impairment else "none"}, bringup_id=bringup_id))
        return None

    def _bring_up(self, technique: Technique, block: TechniqueBlock, backend: str, testbed: Testbed,
                  resources: RunResources, run_id: str) -> Bringup:
        """Bring the technique up, time it to the first packet through, prove what is on the wire.
        A failure keeps what a person would look at: both ends' state and the technique's own."""
        bringup = Bringup(run_id, block.label, block.params.kind, backend, now_iso(),
                          backend_asked=block.params.settings().get("backend", "auto"))
        started = time.monotonic()
        try:
            tunnel = technique.up(backend)
            wait_reachable(testbed.client, tunnel.server_addrs[tunnel.family], self._setup_deadline(testbed))
            bringup.setup_time_s = round(time.monotonic() - started, 4)
            bringup.tunnel = tunnel
            bringup.negotiated = tunnel.negotiated
            bringup.facts = tunnel_facts(testbed.client, tunnel.server_addrs[tunnel.family])
            bringup.wire_check = self._wire_check(tunnel, testbed, resources)
        except Exception as exc:  # noqa: BLE001 - a daemon's odd failure must not end the campaign
            reason = str(exc) if isinstance(exc, (VpnbenchError, OSError)) else f"{type(exc).__name__}: {exc}"
            bringup.error = f"bring-up failed: {reason}"
            bringup.evidence = self._evidence(technique, testbed)
            if isinstance(exc, CommandFailed):  # the whole output of the command that failed, not its last line
                result = exc.result
                bringup.evidence[f"failed command: {' '.join(result.argv)}"] = (result.stdout + result.stderr)[-8000:]
            technique.down()
            bringup.ended_at = now_iso()
        self.store.save_bringup(bringup)
        if bringup.negotiated.get("warning"):
            self.console.print(f"[yellow]{escape(block.label)}: {escape(bringup.negotiated['warning'])}[/]")
        return bringup

    def _setup_deadline(self, testbed: Testbed) -> float:
        """The campaign's set-up timeout, or the default scaled to the testbed (an emulated CPU is slower)."""
        asked = self.campaign.testbed.setup_timeout
        return asked if asked is not None else SETUP_TIMEOUT * testbed.setup_timeout_scale

    @staticmethod
    def _evidence(technique: Technique, testbed: Testbed) -> dict[str, str]:
        """The technique's and the testbed's state dumps; gathering them must never fail the run."""
        evidence: dict[str, str] = {}
        for source in (technique.evidence, testbed.evidence):
            try:
                evidence.update(source())
            except Exception as exc:  # noqa: BLE001 - evidence is best-effort by nature
                evidence[f"{source.__qualname__} failed"] = f"{type(exc).__name__}: {exc}"
        return evidence

    def _wire_check(self, tunnel, testbed: Testbed, resources: RunResources) -> dict:
        points = testbed.capture_points(tunnel.capture_near)
        for point in points:
            if not point.host.has_command("tcpdump"):
                return {"verdict": "not-checked",
                        "detail": f"tcpdump not installed on the {point.host.role} (apt-get install tcpdump)"}
        verdict = check_wire(tunnel, testbed.client, points, resources, tunnel.family)
        return dataclasses.asdict(verdict)

    def _impairment_params(self, cell: Cell) -> dict:
        params = cell.impairment.params()
        if self.impairer is not None:
            params.update(backend=self.impairer.name, placement=self.impairer.placement_of(cell.impairment),
                          **self.impairer.facts())
        else:
            params.update(backend=None, placement=None)
        return params

    def _new_record(self, cell: Cell, params, bringup: Bringup, run_id: str) -> CellRecord:
        return CellRecord(
            run_id=run_id, campaign=self.campaign.name, cell_key=cell.key, technique=cell.technique,
            technique_params={**params.settings(), "backend": bringup.backend,
                              "backend_asked": bringup.backend_asked},
            impairment=cell.impairment.label, impairment_params=self._impairment_params(cell),
            measurement=cell.measurement_params.kind, measurement_label=cell.measurement,
            measurement_params={**cell.measurement_params.settings(), **cell.scaling_params(),
                                **({"cores_note": SOFTIRQ_NOTE} if cell.cores is not None else {})}, repetition=cell.repetition,
            started_at=now_iso(), bringup_id=bringup.id, bringup=bringup)

    def _run_cell(self, cell: Cell, technique: Technique, bringup: Bringup, testbed: Testbed,
                  impairment_error: str | None, run_id: str) -> CellRecord:
        record = self._new_record(cell, technique.params, bringup, run_id)
        if not bringup.ok or impairment_error:
            record.status, record.error, record.finished_at = "failed", bringup.error or impairment_error, now_iso()
            self.store.save_cell(record)
            return record
        measurement = MEASUREMENTS[cell.measurement_params.kind](cell.measurement_params)
        writer, live = self._open_cell(record, measurement)
        raw: dict[str, str] = {}
        result = None
        stats_before = self.impairer.stats() if self.impairer else {}
        monitor = Monitor(testbed.hosts, self.campaign.testbed.monitor_interval, sink=live.add if live else writer.add)
        try:
            testbed.client.require(*measurement.tools)
            testbed.server.require(*measurement.server_tools)
            monitor.start()
            try:
                result = measurement.run(MeasureContext(testbed.client, testbed.server, bringup.tunnel, self.ports,
                                                        record.technique_params, cycler(technique, bringup),
                                                        technique.rekey, live))
            finally:
                record.hosts = monitor.stop()
            record.metrics, record.status, raw = result.metrics, "ok", result.raw
            writer.add(result.series_points())
            if stats_before:
                raw["impairment_stats"] = json.dumps({"before": stats_before, "after": self.impairer.stats()})
        except MeasurementError as exc:
            record.status, raw, record.metrics = "failed", exc.raw, exc.metrics
            died = technique.failure()
            record.error = f"{exc}; {died}" if died else str(exc)
        except (FileNotFoundError, VpnbenchError) as exc:
            record.status, record.error = "failed", str(exc)
        except Exception as exc:  # noqa: BLE001 - a bug in one cell must not end the campaign
            record.status, record.error = "failed", f"internal error: {type(exc).__name__}: {exc}"
        finally:
            writer.close()
        record.finished_at = now_iso()
        self.store.finish_cell(record, raw, result.trials if result else [])
        for t, kind, detail in (result.events if result else []):
            self.store.add_event(Event(run_id, kind, now_iso(), detail, cell_id=record.id, bringup_id=bringup.id, t=t))
        return record

    def _open_cell(self, record: CellRecord, measurement) -> tuple[SeriesWriter, StoreLive | None]:
        """Store the cell as running. A resumable kind (soak) under --resume continues the attempt
        a kill cut short as its next segment: same cell, earlier series kept, times after them."""
        earlier = (self.store.unfinished_cell(record.run_id, record.cell_key)
                   if self.resume and measurement.resumable else None)
        if earlier is None:
            self.store.start_cell(record)
        else:
            record.id, record.started_at, record.segments = earlier.id, earlier.started_at, earlier.segments + 1
            self.store.continue_cell(record)
        writer = SeriesWriter(self.store, record.id)
        if not measurement.resumable:
            return writer, None
        offset = self.store.series_end(record.id) if earlier else 0.0
        return writer, StoreLive(self.store, writer, record.run_id, record.id, record.bringup_id, offset,
                                 record.segments)

    def _report(self, record: CellRecord, outcome: RunOutcome, progress) -> None:
        progress.advance(progress.task)
        where = " · ".join(part for part in (record.technique, record.impairment if record.impairment != "none"
                                             else "", record.measurement_label) if part)
        where = escape(f"{where} #{record.repetition}")
        if record.ok:
            outcome.ok += 1
            headline = MEASUREMENTS[record.measurement].headline_text(record.metrics)
            self.console.print(f"  [green]ok[/]     {where}  {escape(headline)}")
        else:
            outcome.failed += 1
            self.console.print(f"  [red]failed[/] {where}  " + escape(record.error or ""))


def cycler(technique: Technique, bringup: Bringup):
    """MeasureContext.cycle for this bring-up: the technique down and up again, timed to up()'s
    return; the bring-up serves the next cells with the new tunnel. A failed up() leaves the
    technique down, so the next cell brings it up afresh (with its wire proof)."""
    def cycle() -> Cycled:
        technique.down()
        started = time.monotonic()
        try:
            tunnel = technique.up(bringup.backend)
        except BaseException:
            technique.down()
            raise
        bringup.tunnel = tunnel
        return Cycled(tunnel, round(time.monotonic() - started, 4), technique.handshake_s)
    return cycle


def make_impairer(backend: str, testbed: Testbed) -> ImpairmentBackend:
    return IMPAIRMENT_BACKENDS[backend].create(testbed)


def tunnel_facts(client, address: str) -> dict:
    """The interface the client reaches the tunnel's far end through, and its MTU: the MTU a
    technique leaves for traffic, whatever the technique (a tunnel device or the underlay)."""
    device = route_device(client, address)
    return {} if device is None else {"interface": device, "interface_mtu": device_mtu(client, device)}


def group_of(cell: Cell) -> tuple[str, str, str]:
    return cell.technique, cell.impairment.label, cell.measurement


def deciding_metric(kind: str) -> str | None:
    """The metric adaptive repetitions judge a measurement by: its first table column."""
    columns = MEASUREMENTS[kind].columns if kind in MEASUREMENTS else ()
    return columns[0].metric if columns else None


def ping_once(client, address: str) -> float | None:
    """One ping's round trip in ms, or None when it was lost."""
    result = client.run(["ping", "-n", "-c", "1", "-W", "1", address], timeout=5, check=False)
    replies = rtts(result.stdout)
    return replies[0] if replies else None


def wait_reachable(client, address: str, timeout: float) -> None:
    """Ping until the first reply comes back through the tunnel."""
    deadline = time.monotonic() + timeout
    while True:
        if client.run(["ping", "-n", "-c", "1", "-W", "0.2", address], timeout=5, check=False).ok:
            return
        if time.monotonic() > deadline:
            raise TechniqueError(f"no packet through the tunnel to {address} within {timeout:g} s")
