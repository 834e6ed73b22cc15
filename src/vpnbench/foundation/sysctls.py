"""Kernel tuning for a run (socket buffers the way S3 tuned them, congestion control, ...).

A setting is applied inside every namespace of the testbed when the kernel keeps it per
namespace (tcp_rmem, tcp_congestion_control, ...): it then vanishes with the namespace.
Settings only the initial namespace may change (net.core.rmem_max, ...) are changed
machine-wide; their previous values are saved in the run directory first and restored
when the run ends — or by `vpnbench cleanup` after a kill -9.
"""

import json
import subprocess
from pathlib import Path

from vpnbench.foundation.errors import HostError

RESTORE_FILE = "sysctl-restore.json"


def _read(key: str, netns: str | None = None) -> str | None:
    prefix = ["ip", "netns", "exec", netns] if netns else []
    proc = subprocess.run([*prefix, "sysctl", "-n", key], capture_output=True, text=True)
    return " ".join(proc.stdout.split()) if proc.returncode == 0 else None


def _write(key: str, value: str, netns: str | None = None) -> bool:
    prefix = ["ip", "netns", "exec", netns] if netns else []
    proc = subprocess.run([*prefix, "sysctl", "-qw", f"{key}={value}"], capture_output=True, text=True)
    return proc.returncode == 0 and not proc.stderr.strip()


def apply_sysctls(settings: dict[str, str], netns_names: list[str], run_dir: Path) -> dict[str, dict]:
    """Apply every setting; returns what was done (recorded with the run)."""
    applied = {}
    for key, raw in settings.items():
        value = " ".join(str(raw).split())
        if all(_write(key, value, ns) for ns in netns_names) and all(_read(key, ns) == value for ns in netns_names):
            applied[key] = {"value": value, "scope": "namespaces"}
            continue
        applied[key] = {"value": value, "scope": "machine", "previous": save_and_write(key, value, run_dir)}
    return applied


def save_and_write(key: str, value: str, run_dir: Path) -> str:
    """Change a machine-wide setting, its previous value saved first for restore_sysctls (also
    after a kill -9, by `vpnbench cleanup`). Returns the previous value."""
    restore_path = run_dir / RESTORE_FILE
    previous = _read(key)
    if previous is None:
        raise HostError(f"sysctl {key}: no such setting on this kernel")
    saved = json.loads(restore_path.read_text()) if restore_path.exists() else {}
    saved.setdefault(key, previous)  # first value seen is the one to restore
    restore_path.write_text(json.dumps(saved))
    if not _write(key, value):
        raise HostError(f"sysctl {key}={value}: refused by the kernel")
    return previous


def restore_sysctls(run_dir: Path) -> list[str]:
    """Put back every machine-wide value a run changed. Returns what was restored."""
    restore_path = run_dir / RESTORE_FILE
    if not restore_path.exists():
        return []
    restored = []
    for key, value in json.loads(restore_path.read_text()).items():
        if _write(key, value):
            restored.append(f"sysctl {key}={value}")
    restore_path.unlink()
    return restored
