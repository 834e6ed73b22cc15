"""The Measurement interface: run a real tool through the tunnel, return named metrics + raw output."""

import abc
import dataclasses
import itertools
from typing import Callable, ClassVar, Literal

from vpnbench.foundation.errors import MeasurementError, TechniqueError
from vpnbench.foundation.params import Params
from vpnbench.hosts.base import Host
from vpnbench.store.live import Live
from vpnbench.store.records import SeriesPoint, Trial
from vpnbench.techniques.base import Tunnel
from vpnbench.testbeds.spec import TestbedSpec


@dataclasses.dataclass(frozen=True)
class Cycled:
    """One down-and-up of the cell's technique (MeasureContext.cycle)."""

    tunnel: Tunnel  # the new tunnel
    up_s: float  # from the start of bring-up until the technique said it was up
    handshake_s: float | None = None  # the key exchange, where the daemon lets it be timed
    # What the daemons' logs count of this key exchange so far (Technique.handshake_attempts), read
    # when the first reply came back or the cycle gave up: the packets it took happen after up().
    attempts: Callable[[], dict[str, int]] = lambda: {}


class CycleFailed(TechniqueError):
    """A cycle whose up() failed (the technique is down again): why, and what the daemons' logs
    counted of the key exchange before they were stopped (an IKE that gave up under loss)."""

    def __init__(self, reason: str, attempts: dict[str, int]):
        super().__init__(reason)
        self.attempts = attempts


@dataclasses.dataclass
class MeasureContext:
    client: Host
    server: Host
    tunnel: Tunnel
    ports: "PortAllocator"
    # The technique's kind and settings (Params.settings()), for measurements that compare with
    # what the protocol should give (mtu's expected MTU).
    technique_params: dict = dataclasses.field(default_factory=dict)
    # Hooks into the cell's technique, given by the runner (fakes in unit tests), for the kinds
    # that measure the technique itself: bring it down and up again (the wire proof is not
    # repeated; given a timeout, the key exchange in up() waits at most that long where the
    # daemon lets it be bounded; CycleFailed when up() failed), and renew its keys now
    # (Technique.rekey: what changed, or TechniqueError).
    cycle: Callable[..., Cycled] | None = None
    rekey: Callable[[], dict] | None = None
    # Where a long measurement writes as it goes (vpnbench.store.live), for kinds that are `resumable`.
    live: "Live | None" = None
    # The host between client and server, where the testbed has one: kinds that change the path
    # mid-flow (a cut, a NAT rebinding, a smaller MTU with ICMP dropped) do it there.
    router: Host | None = None
    # Kill the server's daemon and start it again (Technique.restart_server: what was done), for
    # the motion kind's failover; None where the runner cannot.
    restart_server: Callable[[], dict] | None = None
    run_id: str = ""  # names what a kind makes on a host (an nft table), so `vpnbench cleanup` knows it
    # A mesh testbed's nodes by name (n0, n1, ...: Tunnel.overlay's keys; testbeds/mesh.py's
    # MeshNode: .host, .nat), for the kinds that measure a mesh (convergence); empty on a two-host testbed.
    nodes: dict = dataclasses.field(default_factory=dict)
    # The path each pair of nodes takes over the underlay in the next seconds (Testbed.observed_paths:
    # (a, b) -> "direct", "relay" or "unseen"; empty where the testbed cannot tell).
    observe_paths: Callable[[float], dict] | None = None
    # A mesh testbed's control node (Headscale, a lighthouse: Testbed.control), for the kinds that
    # report the control plane apart (idle_cost); None on a two-host testbed.
    control: Host | None = None
    # Take a mesh node out and let a newcomer in (Technique.leave, Technique.join: what was done,
    # or TechniqueError), for the churn kind; None where the runner cannot.
    leave: Callable[[str], dict] | None = None
    join: Callable[[str], dict] | None = None
    # Whether two mesh nodes behind these NAT types can answer each other at all, by the mesh's design
    # (Technique.pair_can_answer): what a kind stops waiting for; None: every pair is waited for.
    pair_can_answer: Callable[[str, str], bool] | None = None

    def target(self, family: str) -> str:
        if family not in self.tunnel.server_addrs:  # an overlay of one family (Yggdrasil's is IPv6 only)
            raise MeasurementError(f"family: the tunnel carries only {', '.join(self.tunnel.server_addrs)} inside; "
                                 f"set family = \"{next(iter(self.tunnel.server_addrs))}\" on this measurement")
        return self.tunnel.server_addrs[family]


@dataclasses.dataclass
class MeasureResult:
    metrics: dict[str, float]
    raw: dict[str, str]
    series: dict[str, list[tuple[float, float]]] = dataclasses.field(default_factory=dict)  # name -> [(t seconds from start, value)]
    trials: list[Trial] = dataclasses.field(default_factory=list)  # a search's or sweep's every step
    events: list[tuple[float, str, dict]] = dataclasses.field(default_factory=list)  # (t, kind, detail)

    def series_points(self) -> list[SeriesPoint]:
        return [SeriesPoint(name, t, float(value)) for name, values in self.series.items() for t, value in values]


@dataclasses.dataclass(frozen=True)
class Column:
    """A column of the terminal table and the report for one measurement kind."""

    metric: str
    title: str
    scale: float = 1.0


@dataclasses.dataclass(frozen=True)
class Headline:
    """What a measurement kind is judged by: the metrics drawn side by side, the axis, whether a
    sweep of it is drawn on a log axis (when a baseline dwarfs the tunnels)."""

    metrics: tuple[str, ...]
    axis: str
    scale: float = 1.0
    log: bool = False
    names: tuple[str, ...] = ()  # legend names of metrics, when there are several


class PortAllocator:
    """A fresh port for every traffic server, so a lingering one never answers 'server is busy'."""

    def __init__(self, first: int = 5201, last: int = 5999):
        self._ports = itertools.cycle(range(first, last + 1))

    def next(self) -> int:
        return next(self._ports)


# Per-core busy shares and where the CPU time went (user, kernel, softirq): the figures of kinds that move bytes.
CPU_FIGURES = ("cpu_per_core", "cpu_kinds")


class Measurement(abc.ABC):
    """A measurement kind declares, beside how it runs, what it shows: its table columns,
    headline and figures, how a rehearsal shortens it, and the tools it needs on each end.
    A new kind is one module plus one registry line; tables, report and rehearsal read these."""

    kind: ClassVar[str]
    Params: ClassVar[type[Params]]
    # Commands the client and the server need with its default tool (doctor and the testbed's
    # check read these); needed_tools() says what one instance's params need.
    tools: ClassVar[tuple[str, ...]] = ()
    server_tools: ClassVar[tuple[str, ...]] = ()
    packages: ClassVar[dict[str, str]] = {}  # command -> Debian package, for install hints

    columns: ClassVar[tuple[Column, ...]] = ()
    headline: ClassVar[Headline | None] = None
    # The report's figures of this kind, by name, drawn in this order (report/figures.FIGURES; as
    # Flent's PLOTS beside its DATA_SETS): the headline per impairment, every packet's RTT as a CDF,
    # long cells per second, the hosts' CPU; throughput kinds add CPU_FIGURES.
    figures: ClassVar[tuple[str, ...]] = ("headline", "rtt_cdf", "time_series", "host_cpu")
    # What is said in words beside its figures, by name (verdicts.CAPTIONS): "outcome" (each
    # technique's result as headline_text says it), "congestion_control" (the control TCP ran
    # with, where the impairment drops packets).
    captions: ClassVar[tuple[str, ...]] = ()
    # Writes its series and events as it runs (ctx.live), and a killed cell of it continues
    # under --resume as a new segment instead of starting over (a soak).
    resumable: ClassVar[bool] = False
    repeats: ClassVar[bool] = True  # False: one cell per technique × impairment whatever the repetitions

    def __init__(self, params: Params):
        self.params = params

    def needed_tools(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(client's, server's) commands this cell needs, as its params choose the tool."""
        return self.tools, self.server_tools

    @classmethod
    def renews_keys(cls, params: Params) -> Literal["control", "required"] | None:
        """Whether a cell of these params calls ctx.rekey(), so every technique of the campaign must
        rekey on demand (checked with the campaign, before anything runs): None, it does not;
        "control", the reference technique runs it without rekeys as the control; "required", the
        reference cannot run it either."""
        return None

    @abc.abstractmethod
    def run(self, ctx: MeasureContext) -> MeasureResult:
        """Raise MeasurementError (with raw output) when the tool fails or its output can't be parsed."""

    @classmethod
    def refused(cls, params: Params, techniques: list[Params], testbed: TestbedSpec) -> str | None:
        """Why these params cannot run in a campaign of these techniques on this testbed (a kind
        that changes the router's links needs a router): "field: why; allowed ..." (checked with
        the campaign, before anything runs), or None."""
        return None

    @abc.abstractmethod
    def expected_seconds(self) -> float:
        """How long one run takes, for the ETA and the harness-overhead benchmark."""

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        """These params cut down for a rehearsal: durations to `seconds` without warm-up, counts to
        `pings` at most 0.2 s apart. A kind with other long parts overrides this."""
        fields = type(params).model_fields
        update: dict = {}
        if "duration" in fields:
            update["duration"] = min(params.duration, seconds)
        if "omit" in fields:
            update["omit"] = None
        if "count" in fields:
            update["count"] = min(params.count, pings)
            update["interval"] = min(params.interval, 0.2)
        return params.model_copy(update=update)

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        """One line for the terminal as a cell finishes: its first columns."""
        parts = []
        for column in cls.columns[:2]:
            if column.metric in metrics:
                parts.append(f"{column.title} {metrics[column.metric] * column.scale:.4g}")
        return ", ".join(parts)

    def label(self) -> str:
        return self.params.label or self.default_label()

    def default_label(self) -> str:
        return self.kind
