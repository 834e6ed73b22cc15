"""The registry of techniques. Adding one is a new module plus one line here; everything else
(doctor, host facts, the MTU expectation, the report, the export) asks the class."""

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.tools import declare_packages
from vpnbench.techniques.base import Technique
from vpnbench.techniques.baseline import Baseline
from vpnbench.techniques.easytier import EasyTier
from vpnbench.techniques.easytier_mesh import EasyTierMesh
from vpnbench.techniques.external import External
from vpnbench.techniques.innernet import Innernet
from vpnbench.techniques.innernet_mesh import InnernetMesh
from vpnbench.techniques.ipsec import IPsec
from vpnbench.techniques.macsec import MACsec
from vpnbench.techniques.n2n import N2n
from vpnbench.techniques.n2n_mesh import N2nMesh
from vpnbench.techniques.nebula import Nebula
from vpnbench.techniques.nebula_mesh import NebulaMesh
from vpnbench.techniques.netbird import Netbird
from vpnbench.techniques.netbird_mesh import NetbirdMesh
from vpnbench.techniques.openvpn import OpenVPN
from vpnbench.techniques.overhead import Expectation
from vpnbench.techniques.rosenpass import Rosenpass
from vpnbench.techniques.tailscale import Tailscale
from vpnbench.techniques.tailscale_mesh import TailscaleMesh
from vpnbench.techniques.tinc import Tinc
from vpnbench.techniques.tinc_mesh import TincMesh
from vpnbench.techniques.vpncloud import VpnCloud
from vpnbench.techniques.vpncloud_mesh import VpnCloudMesh
from vpnbench.techniques.wireguard import WireGuard
from vpnbench.techniques.wireguard_mesh import WireGuardMesh
from vpnbench.techniques.yggdrasil import Yggdrasil
from vpnbench.techniques.yggdrasil_mesh import YggdrasilMesh

TECHNIQUES: dict[str, type[Technique]] = {}


def register(cls: type[Technique]) -> None:
    """Make a technique known: by its kind in TECHNIQUES, and its commands' Debian packages in
    the install hints wherever one is missing (tools.py)."""
    TECHNIQUES[cls.kind] = cls
    declare_packages(cls.packages)


for built_in in (Baseline, WireGuard, IPsec, OpenVPN, MACsec, External):
    register(built_in)
register(Nebula)
register(Tailscale)
register(Rosenpass)
register(Tinc)
register(Yggdrasil)
register(VpnCloud)
register(Innernet)
register(Netbird)
register(N2n)
register(EasyTier)
register(WireGuardMesh)
register(NebulaMesh)
register(TailscaleMesh)
register(TincMesh)
register(N2nMesh)
register(YggdrasilMesh)
register(VpnCloudMesh)
register(EasyTierMesh)
register(NetbirdMesh)
register(InnernetMesh)


def technique_class(settings: dict) -> type[Technique]:
    """The class of a cell's technique_params; an unknown kind is an error, never a guess."""
    kind = settings.get("kind")
    if kind not in TECHNIQUES:
        raise TechniqueError(f"technique kind {kind!r} is not known; allowed: {', '.join(TECHNIQUES)}")
    return TECHNIQUES[kind]


def expect(settings: dict, underlay_mtu: int) -> Expectation:
    """The MTU a cell's technique (its technique_params) should leave of underlay_mtu."""
    return technique_class(settings).expectation(settings, underlay_mtu)


def is_reference(settings: dict) -> bool:
    """Is this cell's technique (its technique_params) the reference the others are compared with?
    False for a kind this version does not know (a results file from elsewhere)."""
    cls = TECHNIQUES.get(settings.get("kind"))
    return cls is not None and cls.is_reference
