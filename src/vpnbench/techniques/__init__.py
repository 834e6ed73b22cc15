"""The registry of techniques. Adding one is a new module plus one line here."""

from vpnbench.techniques.base import Technique
from vpnbench.techniques.baseline import Baseline
from vpnbench.techniques.external import External
from vpnbench.techniques.ipsec import IPsec
from vpnbench.techniques.macsec import MACsec
from vpnbench.techniques.openvpn import OpenVPN
from vpnbench.techniques.wireguard import WireGuard

TECHNIQUES: dict[str, type[Technique]] = {
    cls.kind: cls for cls in (Baseline, WireGuard, IPsec, OpenVPN, MACsec, External)}
