"""Every thing a run stores, as one typed record each: the runner fills them, the store
writes and reads them, export, tables, report and `vpnbench.load` read them.

A field's type says how it is stored: `dict` and `list` fields are JSON text, the rest
plain SQLite values. Fields marked `stored=False` are filled when reading (a cell's
bring-up) and never written. Adding a field here adds it to the table (see
store.MIGRATIONS for files written before it existed).
"""

import dataclasses
import datetime
import functools
import typing
from typing import Any, Literal

CellStatus = Literal["running", "ok", "failed", "skipped"]


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def not_stored(default=None, factory=None):
    """A field read alongside a record but not a column of its table."""
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={"stored": False}, compare=False, repr=False)
    return dataclasses.field(default=default, metadata={"stored": False}, compare=False, repr=False)


@dataclasses.dataclass
class Run:
    """One execution of a campaign (a --resume continues the same run)."""

    run_id: str
    campaign: str
    spec: dict  # the validated campaign input
    environment: dict  # the controller's view: vpnbench version, testbed kind and facts, backends chosen
    started_at: str
    finished_at: str | None = None
    status: str = "running"  # running, finished, interrupted, failed


@dataclasses.dataclass
class HostFacts:
    """What a host was when the run measured it: CPU, kernel, offloads, governor, tool versions."""

    run_id: str
    host: str  # role: client, server, router
    facts: dict


@dataclasses.dataclass
class Bringup:
    """One bring-up of a technique: every cell it served points at it."""

    run_id: str
    technique: str  # the technique's label
    kind: str
    backend: str  # the data path that ran
    started_at: str
    backend_asked: str = "auto"
    setup_time_s: float | None = None  # from `up` to the first reply through the tunnel
    wire_check: dict = dataclasses.field(default_factory=dict)  # verdict, detail: the proof of encryption
    negotiated: dict = dataclasses.field(default_factory=dict)  # what the daemons agreed (ciphers, ...)
    facts: dict = dataclasses.field(default_factory=dict)  # the technique's own: interface MTU, expected overhead
    evidence: dict = dataclasses.field(default_factory=dict)  # state dumps of both ends when it failed
    error: str | None = None
    ended_at: str | None = None
    id: int | None = None
    tunnel: Any = not_stored()  # the live Tunnel while the bring-up serves cells

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def verdict(self) -> str:
        return self.wire_check.get("verdict", "not-checked")


@dataclasses.dataclass
class Cell:
    """One technique × impairment × measurement × repetition."""

    run_id: str
    campaign: str
    cell_key: str
    technique: str
    technique_params: dict
    impairment: str
    impairment_params: dict
    measurement: str  # kind
    measurement_label: str
    measurement_params: dict
    repetition: int
    started_at: str
    status: CellStatus = "running"
    error: str | None = None
    metrics: dict = dataclasses.field(default_factory=dict)
    hosts: dict = dataclasses.field(default_factory=dict)  # role -> the monitor's summary of that host
    finished_at: str | None = None
    bringup_id: int | None = None
    segments: int = 1  # a resumable kind (soak) killed and resumed: each --resume adds a segment
    id: int | None = None
    bringup: "Bringup | None" = not_stored()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def wire_check(self) -> str:
        return self.bringup.verdict if self.bringup else "not-checked"

    @property
    def negotiated(self) -> dict:
        return self.bringup.negotiated if self.bringup else {}

    def export(self) -> dict:
        """The JSON export's record (the contract in ARCHITECTURE.md, unchanged since schema 0):
        the bring-up's set-up time is in metrics, its verdict and negotiated parameters beside."""
        metrics = dict(self.metrics)
        if self.ok and self.bringup and self.bringup.setup_time_s is not None:
            metrics["setup_time_s"] = self.bringup.setup_time_s
        status, error = self.status, self.error
        if status == "running":  # the run was killed while this cell ran: what it measured is in its series
            status, error = "failed", "the run ended while this cell was running"
        return {"run_id": self.run_id, "campaign": self.campaign, "technique": self.technique,
                "technique_params": self.technique_params, "impairment": self.impairment,
                "impairment_params": self.impairment_params, "measurement": self.measurement,
                "measurement_label": self.measurement_label, "measurement_params": self.measurement_params,
                "repetition": self.repetition, "status": status, "error": error, "metrics": metrics,
                "hosts": self.hosts, "wire_check": self.wire_check, "negotiated": self.negotiated,
                "tunnel": self.bringup.facts if self.bringup else {},
                "started_at": self.started_at, "finished_at": self.finished_at, "bringup_id": self.bringup_id,
                "cell_id": self.id}


@dataclasses.dataclass
class Trial:
    """One trial of a measurement that searches or sweeps (a rate step, a search probe)."""

    number: int  # 1, 2, ... in the order the trials ran
    offered_bps: float | None = None
    offered_pps: float | None = None
    length: int | None = None  # datagram payload bytes
    duration_s: float | None = None
    sent_packets: float | None = None
    received_packets: float | None = None
    loss_ratio: float | None = None
    data: dict = dataclasses.field(default_factory=dict)  # whatever else the trial measured
    cell_id: int | None = None
    id: int | None = None


@dataclasses.dataclass(frozen=True)
class SeriesPoint:
    """One value of a named time series of a cell: t is seconds since the cell's measurement started."""

    name: str  # e.g. throughput_bps, cpu_pct, cpu_steal_pct, cpu_core3_pct, proc_cpu_pct:charon
    t: float
    value: float
    host: str = ""  # the role for monitor series; "" for the measurement's own


@dataclasses.dataclass
class Event:
    """Something that happened at a moment: a rekey, a daemon restart, a stall, an impairment change."""

    run_id: str
    kind: str
    at: str  # wall clock, ISO 8601 UTC
    detail: dict = dataclasses.field(default_factory=dict)
    cell_id: int | None = None
    bringup_id: int | None = None
    t: float | None = None  # seconds since the cell's measurement started, when inside one
    id: int | None = None


def stored_fields(record_type: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(record_type) if f.metadata.get("stored", True)]


@functools.cache
def json_fields(record_type: type) -> frozenset[str]:
    """The stored fields kept as JSON text (dicts and lists); resolved once per record type."""
    hints = typing.get_type_hints(record_type)
    return frozenset(f.name for f in stored_fields(record_type)
                     if typing.get_origin(hints[f.name]) in (dict, list) or hints[f.name] in (dict, list))


def column_type(field: dataclasses.Field, record_type: type) -> str:
    hint = typing.get_type_hints(record_type)[field.name]
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    base = args[0]
    return {int: "INTEGER", float: "REAL"}.get(base, "TEXT")


def field_names(record_type: type) -> list[str]:
    return [f.name for f in stored_fields(record_type)]


def as_row(record: Any) -> dict:
    """The record's stored fields as plain values (JSON fields still Python objects)."""
    return {f.name: getattr(record, f.name) for f in stored_fields(type(record))}
