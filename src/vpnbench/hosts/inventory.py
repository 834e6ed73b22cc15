"""Ansible inventories: the hosts a file names, with their variables, as ansible-inventory reads
them. A testbed's [testbed.hosts.<role>] name takes a host from one; `vpnbench provision` runs its
playbook over one (provision/)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from vpnbench.foundation.errors import UserError


def ansible_command(name: str) -> str:
    """ansible-playbook / ansible-inventory of this environment (the venv `make deps` made)."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if os.access(beside, os.X_OK) else shutil.which(name)
    if not found:
        raise UserError(f"provision: {name} not found; `make deps` installs ansible-core")
    return found


def ansible_env() -> dict[str, str]:
    return {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "False",
            # ansible-runner turns host key checking off unless told otherwise
            "ANSIBLE_HOST_KEY_CHECKING": "True"}


def inventory_hosts(path: str) -> dict[str, dict]:
    """inventory hostname -> its variables, from ansible-inventory; one line for a file that is
    missing, that Ansible cannot parse, or that names no host."""
    inventory = Path(path)
    if not inventory.is_file():
        raise UserError(f"INVENTORY: {path}: no such file")
    proc = subprocess.run([ansible_command("ansible-inventory"), "-i", str(inventory), "--list"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **ansible_env()},
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserError(f"INVENTORY: {path}: {first_error(proc.stderr) or 'ansible-inventory failed'}")
    data = json.loads(proc.stdout)
    hosts = dict(data.get("_meta", {}).get("hostvars", {}))
    for group in data.values():
        for host in group.get("hosts", []) if isinstance(group, dict) else []:
            hosts.setdefault(host, {})
    if not hosts:
        raise UserError(f"INVENTORY: {path}: no hosts in it")
    return hosts


def first_error(stderr: str) -> str:
    """Ansible's reason in one line (its [ERROR]/[WARNING] lines, without the decoration)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:  # the parser's own reason beats the summary "No inventory was parsed"
        if line.startswith("[WARNING]: Failed to parse"):
            return line.split(":", 1)[1].strip()
    for line in lines:
        if line.startswith("[ERROR]") or line.startswith("ERROR!"):
            return line.split(":", 1)[1].strip() if line.startswith("[ERROR]") else line[len("ERROR!"):].strip()
    return lines[0] if lines else ""
