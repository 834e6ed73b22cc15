"""bench/stages: where a `vpnbench` command's seconds go, stage by stage.

    python bench/stages.py OUT.json run c.toml --db c.db

runs `vpnbench run c.toml --db c.db` in this process with a timer around each stage below and
writes {stage: seconds} to OUT.json: each stage's own time (its time less that of the stages
inside it), so the stages add up to this process's time from its first line to its end; the
caller (bench/overhead_stages.py) adds the interpreter's start and exit around it. The timers
are wrappers put on the functions from outside: vpnbench is not changed to be measured, and a
wrapper costs ~2 µs a call (a few hundred calls a run). Each stage's processes spawned are
counted too ({stage: count} under "spawns"): subprocess.Popen is where every spawn of vpnbench
passes (asyncio's included), and the count, unlike the seconds, does not move with the other
sessions' load.
"""

import atexit
import importlib.abc
import importlib.machinery
import json
import subprocess
import sys
import time
from pathlib import Path

STARTED = time.monotonic()

# (module, attribute path, stage). A function the caller imported by name is wrapped where it
# is called from (vpnbench.run.runner.prepare, not vpnbench.run.setup.prepare).
STAGES = [
    ("vpnbench.run.runner", "Runner.run", "run: other (display, store run row, block loop)"),
    ("vpnbench.run.runner", "prepare", "prepare: testbed made, probe, backends"),
    ("vpnbench.run.lifecycle", "set_up", "testbed up (namespaces, links, host facts)"),
    ("vpnbench.run.lifecycle", "tear_down", "testbed down"),
    ("vpnbench.commands.startup", "WarmUp.finish", "waiting for the summary's imports"),
    ("vpnbench.run.bringup", "BringUpStage._bring_up", "bring-up: other (facts, store)"),
    ("vpnbench.run.bringup", "wait_reachable", "bring-up: first packet through"),
    ("vpnbench.run.bringup", "BringUpStage._wire_check", "bring-up: encryption proof (tcpdump)"),
    ("vpnbench.run.bringup", "BringUpStage.settle", "settle ping before each cell"),
    ("vpnbench.run.bringup", "BringUpStage.end", "bring-up ended (store)"),
    ("vpnbench.run.context", "RunContext.impair", "impairment set/cleared"),
    ("vpnbench.run.blocks", "run_cell", "cell: other (records, monitor made, store)"),
    ("vpnbench.measure.monitor", "Monitor.start", "cell: monitor start"),
    ("vpnbench.measure.monitor", "Monitor.stop", "cell: monitor stop"),
    ("vpnbench.measure.iperf", "_attempt", "cell: iperf3 client run (3 s traffic + connect, results)"),
    ("vpnbench.measure.traffic", "Iperf3Server.start", "cell: iperf3 server start, listening"),
    ("vpnbench.measure.traffic", "Iperf3Server.wait", "cell: iperf3 server exit"),
    ("vpnbench.measure.traffic", "Iperf3Server.stop", "cell: iperf3 server stop, output"),
    ("vpnbench.store.database", "Store.finish_cell", "cell: store the cell"),
    ("vpnbench.store.database", "Store.start_cell", "cell: store the cell"),
    ("vpnbench.cli", "print_findings", "summary: verdicts, tables, findings"),
    ("vpnbench.answers.verdicts", "verdicts", "summary: verdicts, tables, findings"),
    ("vpnbench.views.tables", "summary_tables", "summary: verdicts, tables, findings"),
    ("vpnbench.store.database", "Store.cells", "summary: verdicts, tables, findings"),
]
TECHNIQUE_STAGES = (("up", "technique up"), ("down", "technique down"))
ROOT = "start-up (imports, parsing, store opened), exit"

own: dict[str, float] = {}
spawns: dict[str, int] = {}
stack: list[list] = []  # [stage, started, time of the stages inside]


def timed(function, stage: str):
    def wrapper(*args, **kwargs):
        stack.append([stage, time.monotonic(), 0.0])
        try:
            return function(*args, **kwargs)
        finally:
            name, started, inner = stack.pop()
            spent = time.monotonic() - started
            own[name] = own.get(name, 0.0) + spent - inner
            if stack:
                stack[-1][2] += spent
    wrapper.__wrapped__ = function
    return wrapper


def wrap(owner, attribute: str, stage: str) -> None:
    function = owner.__dict__[attribute]
    setattr(owner, attribute, timed(function, stage))


def wrap_module(name: str, module) -> None:
    for module_name, path, stage in STAGES:
        if module_name == name:
            owner = module
            *classes, attribute = path.split(".")
            for class_name in classes:
                owner = getattr(owner, class_name)
            wrap(owner, attribute, stage)
    if name == "vpnbench.techniques":
        for cls in set(module.TECHNIQUES.values()):
            for attribute, stage in TECHNIQUE_STAGES:
                for owner in cls.__mro__:  # wrapped where it is defined, once
                    if attribute in owner.__dict__:
                        if not hasattr(owner.__dict__[attribute], "__wrapped__"):
                            wrap(owner, attribute, stage)
                        break


def count_spawns() -> None:
    """Every Popen counted against the stage that is running when it is made."""
    popen_init = subprocess.Popen.__init__

    def counted(self, *args, **kwargs):
        stage = stack[-1][0] if stack else ROOT
        spawns[stage] = spawns.get(stage, 0) + 1
        popen_init(self, *args, **kwargs)
    subprocess.Popen.__init__ = counted


class WrapOnImport(importlib.abc.MetaPathFinder):
    """Wraps a module's stages once it is imported, whenever that is: importing them all up front
    would move the CLI's lazy imports (pandas with the verdicts) into the start-up."""

    names = {module_name for module_name, _, _ in STAGES} | {"vpnbench.techniques"}

    def find_spec(self, name, path, target=None):
        if name not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        exec_module = spec.loader.exec_module

        def exec_and_wrap(module):
            exec_module(module)
            wrap_module(name, module)
        spec.loader.exec_module = exec_and_wrap
        return spec


def main() -> int:
    out, argv = Path(sys.argv[1]), sys.argv[2:]
    sys.meta_path.insert(0, WrapOnImport())
    count_spawns()
    import vpnbench.cli

    def write() -> None:
        own[ROOT] = time.monotonic() - STARTED - sum(own.values())
        out.write_text(json.dumps({"seconds": time.monotonic() - STARTED, "stages": own, "spawns": spawns}))
    atexit.register(write)
    sys.argv = ["vpnbench", *argv]
    return vpnbench.cli.entry()  # as the installed command runs it (its gc.freeze included)


if __name__ == "__main__":
    sys.exit(main())
