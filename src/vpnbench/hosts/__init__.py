"""Where commands run. Everything above this package speaks only to Host."""

from vpnbench.hosts.base import CommandResult, Host, Proc

__all__ = ["CommandResult", "Host", "Proc"]
