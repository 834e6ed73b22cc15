"""Writes export_fields.json: the export's field set for test_runner's campaign through its doubles,
run by the runner of another checkout (the reference was taken from main at e46a3ce, before the
runner was split into stages):

    git archive e46a3ce src | tar -x -C /tmp/ref
    PYTHONPATH=/tmp/ref/src .venv/bin/python tests/data/export_fields_gen.py > tests/data/export_fields.json

The old runner had no testbed maker or clock to pass, so both are patched into its module."""

import json
import sys
import tempfile
import types
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).parents[1]))
import vpnbench.run.runner as runner_module  # noqa: E402
from runner_doubles import FakeClock, FakeNetwork, FakeVpn, Lab  # noqa: E402
from test_runner import campaign, export_fields  # noqa: E402
from vpnbench.hosts import resources as resources_module  # noqa: E402
from vpnbench.store.database import Store  # noqa: E402
from vpnbench.techniques import TECHNIQUES  # noqa: E402
from vpnbench.views.export import records  # noqa: E402

tmp = Path(tempfile.mkdtemp())
resources_module.RUN_ROOT = tmp / "run"
TECHNIQUES["fakevpn"] = FakeVpn
clock = FakeClock()
lab = Lab(clock, FakeNetwork(clock))
runner_module.time = types.SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep)
runner_module.make_testbed = lambda spec, resources, bump=False: lab.make(spec, resources, bump)
store = Store(tmp / "r.db")
outcome = runner_module.Runner(campaign(repetitions=2), store, console=Console(file=open("/dev/null", "w"))).run()
assert outcome.ok == 4, outcome
print(json.dumps(export_fields(records(store)), indent=0))
