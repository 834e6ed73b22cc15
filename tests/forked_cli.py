"""The vpnbench command run in a fork of the test process, for the suite's speed.

A test that runs `python -m vpnbench ...` pays the interpreter's start and vpnbench's imports
(pydantic models, and pandas for a run's summary) on every call: ~0.3 s here, and 6-9 s in the
kernel VM suite's TCG guest, where a test makes 3-5 calls. A fork of this process, which has
imported vpnbench once, runs the same `cli.entry` in a process of its own: its own pid, its
own stdout and stderr, the exit code the command returns. What it skips is only the start-up,
which `test_the_command_as_installed_starts_and_exits` still runs through the real entry
points. VPNBENCH_TEST_SPAWN=1 makes every call a real `python -m vpnbench` again."""
import gc
import io
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings

SPAWN = os.environ.get("VPNBENCH_TEST_SPAWN") == "1"
# The filters a fresh interpreter starts with (pytest sets its own around each test).
FRESH_FILTERS = list(warnings.filters)


def usable(kwargs: dict) -> bool:
    """A fork reproduces a fresh process only for the arguments it handles (cwd), and only
    when this process has no other thread (one could hold a lock the child would then wait
    on forever). An env= call changes what modules read at import: it spawns."""
    return not SPAWN and not (kwargs.keys() - {"cwd"}) and threading.active_count() == 1


def run(command: list[str], argv: list[str], timeout: float, cwd=None) -> subprocess.CompletedProcess:
    import vpnbench.answers.verdicts  # noqa: F401 - what a run's warm-up thread imports (pandas)
    import vpnbench.cli  # noqa: F401 - imported once here, so each fork starts warm

    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into pytest
        os.close(out_r)
        os.close(err_r)
        _child(argv, out_w, err_w, cwd)
    os.close(out_w)
    os.close(err_w)
    try:
        stdout, stderr = _read_both(out_r, err_r, time.monotonic() + timeout)
    except subprocess.TimeoutExpired:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise subprocess.TimeoutExpired(command, timeout) from None
    finally:
        os.close(out_r)
        os.close(err_r)
    _, status = os.waitpid(pid, 0)
    return subprocess.CompletedProcess(command, os.waitstatus_to_exitcode(status), stdout, stderr)


def _child(argv: list[str], out_w: int, err_w: int, cwd) -> None:
    code = 1
    try:
        # The test process's objects stay where they are: no collection in the child finalises
        # (and closes) a database connection or a file the parent still holds.
        gc.freeze()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in (null, out_w, err_w):
            os.close(fd)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # as subprocess's close_fds: no test's file stays open
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
        # pytest's own handlers are not the command's: a fresh interpreter has these.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        warnings.filters[:] = FRESH_FILTERS
        warnings._filters_mutated()  # each warning shows once per process, as in a fresh one
        sys.argv = ["vpnbench", *argv]
        from vpnbench.cli import entry

        code = entry()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - an uncaught error ends the process as Python's would
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)


def _read_both(out_r: int, err_r: int, deadline: float) -> tuple[str, str]:
    chunks = {out_r: [], err_r: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired([], 0)
            for key, _ in selector.select(left):
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
    return tuple(b"".join(chunks[fd]).decode(errors="replace") for fd in (out_r, err_r))
