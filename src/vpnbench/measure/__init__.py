"""The registry of measurements. Adding one is a new module plus one line here."""

from vpnbench.measure.base import Measurement
from vpnbench.measure.latency_under_load import LatencyUnderLoad
from vpnbench.measure.mtu import Mtu
from vpnbench.measure.ping import Ping
from vpnbench.measure.rate_search import RateSearch
from vpnbench.measure.rekey import Rekey
from vpnbench.measure.setup import Setup
from vpnbench.measure.soak import Soak
from vpnbench.measure.stream import Stream
from vpnbench.measure.tcp import Tcp
from vpnbench.measure.transfer import Transfer
from vpnbench.measure.udp import Udp
from vpnbench.measure.udp_sweep import UdpSweep

MEASUREMENTS: dict[str, type[Measurement]] = {
    cls.kind: cls for cls in (Tcp, Udp, Ping, UdpSweep, Mtu, RateSearch, Transfer, Stream, LatencyUnderLoad,
                             Setup, Rekey, Soak)}
