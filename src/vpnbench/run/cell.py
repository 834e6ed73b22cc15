"""The cell stage: one cell measured with the monitor running beside it, and recorded (its
metrics, raw output, series, trials and events), failed with its reason when anything breaks."""

import json

from vpnbench.campaign import PlannedCell, TechniqueBlock
from vpnbench.foundation.errors import MeasurementError, VpnbenchError
from vpnbench.foundation.params import Params
from vpnbench.measure import MEASUREMENTS
from vpnbench.measure.base import MeasureContext
from vpnbench.measure.monitor import Monitor
from vpnbench.measure.scaling import SOFTIRQ_NOTE
from vpnbench.run.bringup import cycler
from vpnbench.run.context import RunContext
from vpnbench.store.database import SeriesWriter
from vpnbench.store.live import StoreLive
from vpnbench.store.records import Bringup, now_iso
from vpnbench.store.records import Cell as CellRecord
from vpnbench.techniques.base import Technique


def new_record(ctx: RunContext, cell: PlannedCell, params: Params, bringup: Bringup) -> CellRecord:
    return CellRecord(
        run_id=ctx.run_id, campaign=ctx.campaign.name, cell_key=cell.key, technique=cell.technique,
        technique_params={**params.stored_settings(), "backend": bringup.backend, "backend_asked": bringup.backend_asked},
        impairment=cell.impairment.label, impairment_params=ctx.impairments.params(cell),
        measurement=cell.measurement_params.kind, measurement_label=cell.measurement,
        measurement_params={**cell.measurement_params.stored_settings(), **cell.scaling_params(),
                            **({"cores_note": SOFTIRQ_NOTE} if cell.cores is not None else {})},
        repetition=cell.repetition, started_at=now_iso(), bringup_id=bringup.id, bringup=bringup)


def run_cell(ctx: RunContext, cell: PlannedCell, technique: Technique, bringup: Bringup,
             impairment_error: str | None) -> CellRecord:
    """Measure the cell (or store it failed when its bring-up or impairment did) and store it."""
    record = new_record(ctx, cell, technique.params, bringup)
    if not bringup.ok or impairment_error:
        record.status, record.error, record.finished_at = "failed", bringup.error or impairment_error, now_iso()
        ctx.store.save_cell(record)
        return record
    testbed = ctx.testbed
    measurement = MEASUREMENTS[cell.measurement_params.kind](cell.measurement_params)
    writer, live = open_cell(ctx, record, measurement)
    raw: dict[str, str] = {}
    result = None
    stats_before = ctx.impairments.stats()
    monitor = Monitor(testbed.hosts, ctx.campaign.testbed.monitor_interval, sink=live.add if live else writer.add)
    try:
        client_tools, server_tools = measurement.needed_tools()
        testbed.client.require(*client_tools)
        testbed.server.require(*server_tools)
        monitor.start()
        try:
            result = measurement.run(MeasureContext(testbed.client, testbed.server, bringup.tunnel, ctx.ports,
                                                    record.technique_params, cycler(technique, bringup),
                                                    technique.rekey, live, testbed.router,
                                                    technique.restart_server, ctx.resources.run_id,
                                                    {node.name: node for node in testbed.nodes},
                                                    testbed.observed_paths, testbed.control,
                                                    technique.leave, technique.join, technique.pair_can_answer))
        finally:
            record.hosts = monitor.stop()
        record.metrics, record.status, raw = result.metrics, "ok", result.raw
        writer.add(result.series_points())
        if stats_before:
            stats_after = ctx.impairments.stats()
            raw["impairment_stats"] = json.dumps({"before": stats_before, "after": stats_after})
            record.metrics.update(ctx.impairments.queue_drop_metrics(stats_before, stats_after))
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
    with ctx.store.transaction():  # the fence's lease check and the cell: one commit (lab/worker.py)
        if record.ok and ctx.fence is not None and (lost := ctx.fence()):
            record.status, record.error = "failed", lost  # another worker measures this cell: not stored ok twice
        ctx.store.finish_cell(record, raw, result.trials if result else [])
    for t, kind, detail in (result.events if result else []):
        ctx.event(kind, detail, cell_id=record.id, bringup_id=bringup.id, t=t)
    return record


def open_cell(ctx: RunContext, record: CellRecord, measurement) -> tuple[SeriesWriter, StoreLive | None]:
    """Store the cell as running. A resumable kind (soak) under --resume continues the attempt
    a kill cut short as its next segment: same cell, earlier series kept, times after them."""
    store = ctx.store
    earlier = store.unfinished_cell(record.run_id, record.cell_key) if ctx.resume and measurement.resumable else None
    if earlier is None:
        store.start_cell(record)
    else:
        record.id, record.started_at, record.segments = earlier.id, earlier.started_at, earlier.segments + 1
        store.continue_cell(record)
    writer = SeriesWriter(store, record.id)
    if not measurement.resumable:
        return writer, None
    offset = store.series_end(record.id) if earlier else 0.0
    return writer, StoreLive(store, writer, record.run_id, record.id, record.bringup_id, offset, record.segments)


def record_unavailable(ctx: RunContext, block: TechniqueBlock, reason: str, cells: list[PlannedCell]) -> Bringup:
    """Every cell of a technique this machine cannot run, stored as skipped with the reason."""
    bringup = Bringup(ctx.run_id, block.label, block.params.kind, "none", now_iso(),
                      backend_asked=block.params.settings().get("backend", "auto"),
                      error=f"unavailable here: {reason}", ended_at=now_iso())
    ctx.store.save_bringup(bringup)
    for cell in cells:
        record = new_record(ctx, cell, block.params, bringup)
        record.status, record.error, record.finished_at = "skipped", bringup.error, now_iso()
        ctx.store.save_cell(record)
        ctx.display.advance()
    return bringup
