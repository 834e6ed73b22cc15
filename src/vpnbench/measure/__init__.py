"""The registry of measurements. Adding one is a new module plus one line here."""

from vpnbench.foundation.tools import declare_packages
from vpnbench.measure.base import Measurement
from vpnbench.measure.blackhole import PmtuBlackhole
from vpnbench.measure.churn import Churn
from vpnbench.measure.convergence import Convergence
from vpnbench.measure.idle_cost import IdleCost
from vpnbench.measure.latency_under_load import LatencyUnderLoad
from vpnbench.measure.motion import Motion
from vpnbench.measure.mtu import Mtu
from vpnbench.measure.ping import Ping
from vpnbench.measure.quic import Quic
from vpnbench.measure.rate_search import RateSearch
from vpnbench.measure.rekey import Rekey
from vpnbench.measure.rekey_rate import RekeyRate
from vpnbench.measure.setup import Setup
from vpnbench.measure.setup_rate import SetupRate
from vpnbench.measure.soak import Soak
from vpnbench.measure.stream import Stream
from vpnbench.measure.tcp import Tcp
from vpnbench.measure.transfer import Transfer
from vpnbench.measure.udp import Udp
from vpnbench.measure.udp_sweep import UdpSweep

MEASUREMENTS: dict[str, type[Measurement]] = {}


def register(cls: type[Measurement]) -> None:
    """Make a measurement known: by its kind in MEASUREMENTS, and its commands' Debian packages
    in the install hints wherever one is missing (tools.py)."""
    MEASUREMENTS[cls.kind] = cls
    declare_packages(cls.packages)


for built_in in (Tcp, Udp, Ping, UdpSweep, Mtu, RateSearch, Transfer, Stream, LatencyUnderLoad, Setup, Rekey, Soak,
                 PmtuBlackhole, SetupRate, RekeyRate, Motion, Convergence, Quic, IdleCost, Churn):
    register(built_in)
