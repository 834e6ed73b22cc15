"""Network impairments: the netem spec, named profiles, sweeps, and the backends that apply them."""
