"""Evidence for a failed bring-up: what each host and technique looked like when it failed.

Gathered best effort: every command has a short timeout, every piece is cut to a few KB,
and nothing here raises (a dead host or a daemon that never started says so in the text),
because evidence is collected while something is already going wrong. Keys name the host
and the command, e.g. "client: ip -d link".
"""

from typing import Callable, Iterable

from vpnbench.hosts.base import Host, Proc

LIMIT = 4096  # characters per piece
TIMEOUT = 5.0  # seconds per command
LOG_LINES = 40


def clip(text: str, limit: int = LIMIT, keep: str = "head") -> str:
    """State dumps keep their head (the first interfaces); logs their tail (the newest lines)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    if keep == "tail":
        return f"[... {cut} characters cut]\n" + text[-limit:]
    return text[:limit] + f"\n[... {cut} characters cut]"


def command(host: Host, argv: list[str], timeout: float | None = None) -> str:
    """stdout (and stderr) of argv on host; a failure is part of the evidence, not an exception.
    Default deadline: TIMEOUT, stretched on a slow host (a TCG guest) as its set-up is."""
    try:
        result = host.run(argv, timeout=timeout or TIMEOUT * host.slowdown, check=False)
    except Exception as exc:  # noqa: BLE001 - best effort: a lost connection is evidence too
        return f"(could not run: {exc})"
    text = (result.stdout + ("\n" + result.stderr if result.stderr.strip() else "")).strip()
    status = "" if result.ok else f"(exit {result.returncode}) "
    return clip(status + (text or "(no output)"))


def log_tail(proc: Proc | None, lines: int = LOG_LINES) -> str:
    """The last lines a daemon wrote (stdout and stderr)."""
    if proc is None:
        return "(not started)"
    try:
        text = proc.output()
    except Exception as exc:  # noqa: BLE001 - evidence never raises: the reason is the evidence
        return f"(log unreadable: {exc})"
    return _state(proc) + clip("\n".join(text.strip().splitlines()[-lines:]) or "(no output)", keep="tail")


def _state(proc: Proc) -> str:
    """"" while the daemon runs, else a line that says it exited, or why that is not known."""
    try:
        return "" if proc.alive() else "(exited)\n"
    except Exception as exc:  # noqa: BLE001 - evidence never raises (see above); the reason is kept
        return f"(state unknown: {type(exc).__name__}: {exc})\n"


def gather(pieces: Iterable[tuple[str, Callable[[], str]]]) -> dict[str, str]:
    """key -> text; a piece that raises records why instead."""
    found: dict[str, str] = {}
    for key, get in pieces:
        try:
            found[key] = get()
        except Exception as exc:  # noqa: BLE001 - one broken piece must not lose the others
            found[key] = f"(not gathered: {type(exc).__name__}: {exc})"
    return found
