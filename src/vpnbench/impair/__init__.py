"""Network impairments: the netem spec, named profiles, sweeps (pure data: spec.py, model.py,
profiles.py, sweep.py, bursts.py, the registry of names), and the backends that apply them
(backends.py, the runtime). The registry loads the built-in backends when first asked."""
