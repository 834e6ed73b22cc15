"""Runs a campaign: testbed up, then for each technique: up, every cell, down; testbed down.

A cell that fails is stored as failed with its reason and the run goes on. Ctrl-C and
SIGTERM stop the run between (or inside) cells and everything the run created is removed.
"""

import dataclasses
import json
import os
import platform
import signal
import time
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from vpnbench import __version__
from vpnbench.campaign import Campaign, Cell, TechniqueBlock, expand
from vpnbench.errors import MeasurementError, TechniqueError, UserError
from vpnbench.hosts.base import CommandFailed
from vpnbench.impair.backends import ImpairmentBackend, LinkemBackend, NetemBackend, linkem_binary
from vpnbench.impair.model import Impairment
from vpnbench.measure import MEASUREMENTS
from vpnbench.measure.base import MeasureContext, PortAllocator
from vpnbench.monitor import Monitor
from vpnbench.probe import LocalKernelProbe, has_qdisc
from vpnbench.resources import RunResources
from vpnbench.store import Store, now_iso
from vpnbench.techniques import TECHNIQUES
from vpnbench.techniques.base import Technique, TechniqueContext
from vpnbench.testbed import Testbed, make_testbed
from vpnbench.wirecheck import check_wire

SETUP_TIMEOUT = 15.0


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM. A BaseException, so that no cell's error handling swallows it."""


class TestbedError(UserError):
    """The testbed or the impairment backend could not be set up: the run stops, cleanly."""

    __test__ = False
    exit_code = 1


@dataclasses.dataclass
class RunOutcome:
    run_id: str
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    interrupted: bool = False


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


def resolve_backends(campaign: Campaign, probe) -> list[str]:
    """The backend each technique will use; a combination this machine cannot run is a UserError."""
    backends = []
    for number, params in enumerate(campaign.techniques, start=1):
        try:
            backends.append(TECHNIQUES[params.kind].resolve_backend(params, probe))
        except ValueError as exc:
            raise UserError(f"technique[{number}].backend: {exc}") from None
    return backends


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
    def __init__(self, campaign: Campaign, store: Store, resume: bool = False, console: Console | None = None):
        self.campaign = campaign
        self.store = store
        self.resume = resume
        self.console = console or Console(stderr=True)
        self.ports = PortAllocator()
        self.impairer: ImpairmentBackend | None = None
        self.current_impairment: Impairment | None = None

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
        testbed, probe, backends, impair_backend = self._prepare(resources)
        run_id = (self.store.latest_run(self.campaign.name) if self.resume else None)
        done = self.store.done_keys(run_id) if run_id else set()
        if run_id is None:
            run_id = resources.run_id
        if run_id == resources.run_id:
            self.store.start_run(run_id, self.campaign.name, self.campaign.source, self._environment(testbed))
        outcome = RunOutcome(run_id)
        blocks = expand(self.campaign)
        todo = sum(1 for block in blocks for cell in block.cells if cell.key not in done)
        outcome.skipped = sum(len(b.cells) for b in blocks) - todo
        self.console.print(f"[bold]{escape(self.campaign.name)}[/]: {todo} cells to run"
                           + (f", {outcome.skipped} already done" if outcome.skipped else "")
                           + f" — {testbed.pin_note}"
                           + (f"; impairments by {impair_backend}" if impair_backend else ""))
        status = "failed"
        try:
            self._set_up(testbed, impair_backend, run_id)
            with self._progress(todo) as progress:
                for block, backend in zip(blocks, backends):
                    cells = [c for c in block.cells if c.key not in done]
                    if cells:
                        self._run_block(block, backend, cells, testbed, resources, probe, run_id, outcome, progress)
            status = "finished"
        except Interrupted as exc:
            outcome.interrupted = True
            status = "interrupted"
            self.console.print(f"[yellow]interrupted ({exc}); cleaning up[/]")
        finally:
            self._tear_down(testbed)
            self.store.finish_run(run_id, status)
        return outcome

    def _prepare(self, resources: RunResources):
        """The testbed, its kernel probe and the backends. A remote testbed (ssh, vm) is
        connected (booted) first, since only its hosts can say what their kernels can do."""
        spec = self.campaign.testbed
        if spec.kind == "local":
            probe = LocalKernelProbe(resources)
            backends = resolve_backends(self.campaign, probe)
            impair_backend = resolve_impairment_backend(self.campaign, resources)
            return Testbed(spec, resources, bump=impair_backend == "linkem"), probe, backends, impair_backend
        testbed = make_testbed(spec, resources)
        try:
            self.console.print(f"connecting to the {spec.kind} testbed: {', '.join(testbed.hosts)}")
            testbed.connect()
            backends = resolve_backends(self.campaign, testbed.probe)
            return testbed, testbed.probe, backends, resolve_impairment_backend(self.campaign, resources, testbed.probe)
        except (RuntimeError, CommandFailed, OSError, TimeoutError) as exc:
            testbed.down()
            raise TestbedError(f"testbed: {exc}") from None
        except BaseException:
            testbed.down()
            raise

    def _set_up(self, testbed: Testbed, impair_backend: str | None, run_id: str) -> None:
        try:
            testbed.up()
            self.store.annotate_run(run_id, sysctls=testbed.sysctls, impairment_backend=impair_backend)
            if impair_backend:
                self.impairer = make_impairer(impair_backend, testbed)
                self.impairer.start()
                testbed.wait_ready()
        except (RuntimeError, CommandFailed, OSError, TimeoutError, EOFError) as exc:
            raise TestbedError(f"testbed: {exc}") from None

    def _tear_down(self, testbed: Testbed) -> None:
        """Stop the impairment backend and remove the testbed, whatever state they are in."""
        if self.impairer is not None:
            try:
                self.impairer.stop()
            except (RuntimeError, CommandFailed, OSError, TimeoutError, EOFError) as exc:
                self.console.print(f"[yellow]impairment backend did not stop cleanly: {escape(str(exc))}[/]")
        testbed.down()

    @contextmanager
    def _progress(self, total: int):
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
        with Progress(*columns, console=self.console, transient=True) as progress:
            progress.task = progress.add_task("cells", total=total)
            yield progress

    def _environment(self, testbed: Testbed) -> dict:
        environment = {"vpnbench": __version__, "kernel": platform.release(), "machine": platform.machine(),
                       "hostname": platform.node(), "pinning": testbed.pin_note, "cpu_count": os.cpu_count(),
                       "testbed": {"kind": self.campaign.testbed.kind, **getattr(testbed, "facts", {})}}
        accel = os.environ.get("VPNBENCH_VM_ACCEL")  # set inside vpnbench's kernel VM
        if accel:
            environment["virtualization"] = f"QEMU VM ({accel}" + (": functional, not performance)" if accel == "TCG"
                                                                   else ")")
        return environment

    def _run_block(self, block: TechniqueBlock, backend: str, cells: list[Cell], testbed: Testbed,
                   resources: RunResources, probe, run_id: str, outcome: RunOutcome, progress) -> None:
        ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), resources, probe,
                               testbed.router)
        technique = TECHNIQUES[block.params.kind](block.params, ctx)
        bringup: dict | None = None
        try:
            for cell in cells:
                progress.update(progress.task, description=escape(f"{cell.technique} · {cell.measurement} #{cell.repetition}"))
                started = now_iso()
                if bringup is None or technique.failure():
                    technique.down()
                    self._impair(None)  # bring-up time and the wire proof are taken unimpaired
                    bringup = self._bring_up(technique, backend, testbed, resources)
                    if "tunnel" in bringup and bringup["tunnel"].negotiated.get("warning"):
                        self.console.print(f"[yellow]{escape(cell.technique)}: "
                                           f"{escape(bringup['tunnel'].negotiated['warning'])}[/]")
                impairment_error = self._impair(cell.impairment)
                record, raw, samples = self._run_cell(cell, technique, bringup, testbed, impairment_error)
                record.update(run_id=run_id, campaign=self.campaign.name, started_at=started, finished_at=now_iso())
                self.store.save_cell(record, raw, samples)
                self._report(record, outcome, progress)
        finally:
            technique.down()
            self._impair(None)

    def _impair(self, impairment: Impairment | None) -> str | None:
        """Change the impairment in place; returns why it could not be applied, if so."""
        if self.impairer is None or impairment == self.current_impairment:
            return None
        try:
            if impairment is None:
                self.impairer.clear()
            else:
                self.impairer.apply(impairment)
        except (RuntimeError, OSError, TimeoutError, EOFError, CommandFailed) as exc:
            self.current_impairment = None
            return f"impairment {impairment.label if impairment else 'none'} could not be applied: {exc}"
        self.current_impairment = impairment
        return None

    def _bring_up(self, technique: Technique, backend: str, testbed: Testbed, resources: RunResources) -> dict:
        """Bring the technique up, time it to the first packet through, prove what is on the wire."""
        started = time.monotonic()
        try:
            tunnel = technique.up(backend)
            wait_reachable(testbed.client, tunnel.server_addrs[tunnel.family], SETUP_TIMEOUT)
            setup_time = time.monotonic() - started
            verdict = self._wire_check(tunnel, testbed, resources)
        except (TechniqueError, RuntimeError, OSError) as exc:
            technique.down()
            return {"backend": backend, "error": f"bring-up failed: {exc}"}
        except Exception as exc:  # noqa: BLE001 - a daemon's odd failure must not end the campaign
            technique.down()
            return {"backend": backend, "error": f"bring-up failed: {type(exc).__name__}: {exc}"}
        return {"backend": backend, "tunnel": tunnel, "setup_time_s": round(setup_time, 4), "wire_check": verdict}

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

    def _run_cell(self, cell: Cell, technique: Technique, bringup: dict, testbed: Testbed,
                  impairment_error: str | None):
        measurement = MEASUREMENTS[cell.measurement_params.kind](cell.measurement_params)
        tunnel = bringup.get("tunnel")
        record = {
            "cell_key": cell.key, "technique": cell.technique,
            "technique_params": {**technique.params.settings(), "backend": bringup["backend"]},
            "impairment": cell.impairment.label, "impairment_params": self._impairment_params(cell),
            "measurement": cell.measurement_params.kind, "measurement_label": cell.measurement,
            "measurement_params": cell.measurement_params.settings(), "repetition": cell.repetition,
            "status": "failed", "error": None, "metrics": {}, "hosts": {},
            "wire_check": bringup.get("wire_check", {}).get("verdict", "not-checked"),
            "negotiated": tunnel.negotiated if tunnel else {},
        }
        if "error" in bringup or impairment_error:
            record["error"] = bringup.get("error") or impairment_error
            return record, {}, []
        raw: dict[str, str] = {}
        stats_before = self.impairer.stats() if self.impairer else {}
        samples: list[dict] = []
        monitor = Monitor(testbed.hosts, self.campaign.testbed.monitor_interval)
        try:
            for tool in measurement.tools:
                testbed.client.require(tool)
            monitor.start()
            try:
                result = measurement.run(MeasureContext(testbed.client, testbed.server, tunnel, self.ports))
            finally:
                record["hosts"] = monitor.stop()
                samples = monitor.samples
            record["metrics"] = {**result.metrics, "setup_time_s": bringup["setup_time_s"]}
            record["status"] = "ok"
            raw = result.raw
            if stats_before:
                raw["impairment_stats"] = json.dumps({"before": stats_before, "after": self.impairer.stats()})
        except MeasurementError as exc:
            raw = exc.raw
            record["metrics"] = {**exc.metrics, "setup_time_s": bringup["setup_time_s"]}
            died = technique.failure()
            record["error"] = f"{exc}; {died}" if died else str(exc)
        except FileNotFoundError as exc:
            record["error"] = str(exc)
        except Exception as exc:  # noqa: BLE001 - a bug in one cell must not end the campaign
            record["error"] = f"internal error: {type(exc).__name__}: {exc}"
        return record, raw, samples

    def _report(self, record: dict, outcome: RunOutcome, progress) -> None:
        progress.advance(progress.task)
        where = " · ".join(part for part in (record["technique"], record["impairment"] if record["impairment"] != "none"
                                             else "", record["measurement_label"]) if part)
        where = escape(f"{where} #{record['repetition']}")
        if record["status"] == "ok":
            outcome.ok += 1
            self.console.print(f"  [green]ok[/]     {where}  {_headline(record['metrics'])}")
        else:
            outcome.failed += 1
            self.console.print(f"  [red]failed[/] {where}  " + escape(record["error"] or ""))


def _headline(metrics: dict) -> str:
    if "throughput_bps" in metrics:
        text = f"{metrics['throughput_bps'] / 1e6:.1f} Mbit/s"
        if "loss_pct" in metrics:
            text += f", loss {metrics['loss_pct']:.2f} %"
        return text
    if "rtt_avg_ms" in metrics:
        return f"rtt {metrics['rtt_avg_ms']:.3f} ms"
    return ""


def make_impairer(backend: str, testbed: Testbed) -> ImpairmentBackend:
    if backend == "linkem":
        return LinkemBackend(testbed, linkem_binary())
    return NetemBackend(testbed)


def wait_reachable(client, address: str, timeout: float) -> None:
    """Ping until the first reply comes back through the tunnel."""
    deadline = time.monotonic() + timeout
    while True:
        if client.run(["ping", "-n", "-c", "1", "-W", "0.2", address], timeout=5, check=False).ok:
            return
        if time.monotonic() > deadline:
            raise TechniqueError(f"no packet through the tunnel to {address} within {timeout:g} s")
