"""Network impairments as data: the netem spec, named profiles, sweeps (spec.py, model.py,
profiles.py, sweep.py, bursts.py) and the registry of backend names (registry.py). The backends
that apply them are the runtime, a layer up: impair_backends.py, which registers the built-in ones."""
