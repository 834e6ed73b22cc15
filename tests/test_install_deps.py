"""scripts/install-deps.sh installs what every technique and measurement says it needs: the suite
runs them all on a fresh machine, and `make test` installs nothing else (stop 53: n2n and
net-tools were missing from it, so a fresh machine failed every n2n test at validation)."""

import re
from pathlib import Path

from vpnbench.measure import MEASUREMENTS
from vpnbench.techniques import TECHNIQUES

SCRIPT = Path(__file__).parent.parent / "scripts" / "install-deps.sh"


def test_every_declared_package_is_one_the_script_installs():
    text = SCRIPT.read_text()
    commands = set(re.findall(r"\[([\w.+-]+)\]=", text))
    packages = set(re.findall(r"\]=([\w.+-]+)", text)) | set(re.findall(r"missing\+=\(([\w.+ -]+)\)", text))
    packages = {word for entry in packages for word in entry.split()}
    assert {"n2n", "fping", "iperf3"} <= packages  # the parse reads the script's table
    lacking = sorted(f"{name}: {command} ({package})" for name, kind in {**TECHNIQUES, **MEASUREMENTS}.items()
                     for command, package in getattr(kind, "packages", {}).items()
                     if command not in commands and package not in packages)
    assert lacking == [], lacking
