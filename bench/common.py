"""What the bench scripts share: root and the machine lock, a baseline testbed, the line that
says where and when a result was measured, and writing one section of bench/RESULTS.md
(leaving the sections other scripts wrote alone)."""

import fcntl
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
LOCK = "/run/vpnbench-tests.lock"  # the test suite's machine-wide lock (tests/conftest.py)


def require_root(script: str) -> None:
    if os.geteuid() != 0:
        raise SystemExit(f"bench/{script} must run as root")


@contextmanager
def exclusive():
    """Hold the machine lock: no test session runs while we measure (other work may still)."""
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def machine(script: str) -> str:
    """'Measured <date> on <host> (<n> CPUs, kernel <release>), by `bench/<script>`'."""
    return (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.node()} "
            f"({os.cpu_count()} CPUs, kernel {platform.release()}), by `bench/{script}`")


@contextmanager
def baseline_testbed(router: bool = True):
    """(testbed, tunnel, resources): namespaces up with the baseline (no encryption) between
    client and server; everything removed on the way out."""
    from vpnbench.hosts.resources import RunResources
    from vpnbench.techniques.base import TechniqueContext
    from vpnbench.techniques.baseline import Baseline, BaselineParams
    from vpnbench.testbeds.local import LocalTestbed
    from vpnbench.testbeds.spec import TestbedSpec

    resources = RunResources()
    testbed = LocalTestbed(TestbedSpec(router=router), resources)
    try:
        testbed.up()
        ctx = TechniqueContext(testbed.client, testbed.server, testbed.underlay_map(), resources, None)
        yield testbed, Baseline(BaselineParams(), ctx).up("kernel"), resources
    finally:
        testbed.down()
        resources.close()


def run_campaign(text: str, export: bool = True, check: bool = True) -> tuple[list[dict], float]:
    """Run a campaign through the CLI, as a user would: (its cells as `export --format json`
    gives them, or [] without export; the run's wall seconds). A failed campaign ends the bench,
    unless check is False: then its cells are returned, the failed ones with their errors."""
    vpnbench = [sys.executable, "-m", "vpnbench"]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "c.toml").write_text(text)
        started = time.monotonic()
        result = subprocess.run([*vpnbench, "run", f"{tmp}/c.toml", "--db", f"{tmp}/c.db"], capture_output=True, text=True)
        wall = time.monotonic() - started
        if result.returncode != 0 and (check or not Path(tmp, "c.db").exists()):
            raise SystemExit(f"campaign failed:\n{result.stdout}\n{result.stderr}")
        if not export:
            return [], wall
        subprocess.run([*vpnbench, "export", f"{tmp}/c.db", "--format", "json", "-o", f"{tmp}/c.json"], check=True,
                       capture_output=True)
        return json.loads(Path(tmp, "c.json").read_text()), wall


def publish(heading: str, body: str) -> None:
    print(body)
    write_section(heading, body)


def write_section(heading: str, body: str) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    section = f"## {heading}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text.rstrip("\n") + "\n")
