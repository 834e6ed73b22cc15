"""Network impairments: the netem spec, named profiles, sweeps, and the backends that apply them."""

# The built-in backends register themselves (impair/registry.py) on import, before any schema
# of this package validates a backend name.
from vpnbench.impair import backends  # noqa: F401
