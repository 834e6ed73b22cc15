"""vpnbench: benchmark network encryption techniques side by side.

`vpnbench.load(DB)` returns a results file as pandas DataFrames (see vpnbench.views.dataset).
"""

__version__ = "0.2.0"  # the one version: pyproject reads it (dynamic), runs store it


def load(path, run_id=None):
    """A results file as DataFrames: runs, cells, metrics (tidy), bringups, series, trials, events, hosts."""
    from vpnbench.views.dataset import load as load_results  # noqa: PLC0415 - pandas only when asked for

    return load_results(path, run_id)
