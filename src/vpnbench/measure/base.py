"""The Measurement interface: run a real tool through the tunnel, return named metrics + raw output."""

import abc
import dataclasses
import itertools
from typing import ClassVar

from vpnbench.hosts.base import Host
from vpnbench.params import Params
from vpnbench.techniques.base import Tunnel


@dataclasses.dataclass
class MeasureContext:
    client: Host
    server: Host
    tunnel: Tunnel
    ports: "PortAllocator"

    def target(self, family: str) -> str:
        return self.tunnel.server_addrs[family]


@dataclasses.dataclass
class MeasureResult:
    metrics: dict[str, float]
    raw: dict[str, str]
    series: dict[str, list[tuple[float, float]]] = dataclasses.field(default_factory=dict)  # name -> [(t seconds from start, value)]


class PortAllocator:
    """A fresh port for every traffic server, so a lingering one never answers 'server is busy'."""

    def __init__(self, first: int = 5201, last: int = 5999):
        self._ports = itertools.cycle(range(first, last + 1))

    def next(self) -> int:
        return next(self._ports)


class Measurement(abc.ABC):
    kind: ClassVar[str]
    Params: ClassVar[type[Params]]
    tools: ClassVar[tuple[str, ...]]

    def __init__(self, params: Params):
        self.params = params

    @abc.abstractmethod
    def run(self, ctx: MeasureContext) -> MeasureResult:
        """Raise MeasurementError (with raw output) when the tool fails or its output can't be parsed."""

    @abc.abstractmethod
    def expected_seconds(self) -> float:
        """How long one run takes, for the ETA and the harness-overhead benchmark."""

    def label(self) -> str:
        return self.params.label or self.default_label()

    def default_label(self) -> str:
        return self.kind
