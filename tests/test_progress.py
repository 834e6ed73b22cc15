"""Long work shows its progress (issue 38 item 2): a plain line every few seconds where stderr is a
log (what, which of how many, the step, elapsed, what is left), rich's bar on a terminal, and
never a byte on stdout, which --json and the exports own."""

import io
import subprocess
import sys
import time

from rich.console import Console

from vpnbench.commands.doctor import build_step
from vpnbench.foundation.progress import LongWork, child_command, duration


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def log_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, force_terminal=False), out


def test_the_plain_line_says_which_item_its_step_elapsed_and_what_is_left():
    clock, (console, _) = FakeClock(), log_console()
    work = LongWork("build", total=4, console=console, clock=clock)
    work.started = work.item_started = clock.now
    work.begin("tailscale 1.102.0")
    work.set_step("go build tailscale.com/cmd/tailscaled")
    clock.now += 40
    assert work.line() == "build 1 of 4, tailscale 1.102.0: go build tailscale.com/cmd/tailscaled … 40 s (all 40 s)"
    work.advance()
    work.begin("headscale 0.26.1")
    clock.now += 20  # 60 s for the first one and a third of the next: three more at that pace, 180 s
    assert work.line() == "build 2 of 4, headscale 0.26.1 … 20 s (all 1 min 00 s, ~3 min 00 s left)"
    unknown = LongWork("VM testbed boot", console=console, clock=clock)
    unknown.begin("booting client (TCG)")
    clock.now += 7
    assert unknown.line() == "VM testbed boot: booting client (TCG) … 7 s"


def test_durations_read_as_a_person_reads_them():
    assert [duration(s) for s in (0.4, 59.6, 190, 3725)] == ["0 s", "1 min 00 s", "3 min 10 s", "1 h 02 min"]


def test_a_long_step_in_a_log_prints_a_plain_line_every_interval_naming_the_running_command():
    """A real child process (sleep) is the step: the lines come while it runs, each naming it."""
    console, out = log_console()
    started = time.monotonic()
    with LongWork("build", total=2, console=console, every_s=0.2, watch=lambda: child_command(build_step)) as work:
        work.begin("sleeper 1.0")
        subprocess.run(["sleep", "1.1"], check=True)
        while_it_ran = out.getvalue().splitlines()
        work.advance()
    elapsed = time.monotonic() - started
    lines = out.getvalue().splitlines()
    # a line at most once an interval, however busy the machine made the step; at least one in 1.1 s
    assert 1 <= len(lines) <= elapsed / 0.2, (elapsed, lines)
    # (the thread may print once more between advance() and the end: "build 2 of 2", the count moved on)
    assert while_it_ran and all(line.startswith("build 1 of 2, sleeper 1.0") for line in while_it_ran), lines
    assert any("sleeper 1.0: sleep 1.1 …" in line for line in while_it_ran), lines
    assert "\x1b" not in out.getvalue()


def test_a_quiet_step_prints_nothing_before_its_first_interval():
    console, out = log_console()
    with LongWork("trend", console=console, every_s=30) as work:
        work.begin("reading the runs")
    assert out.getvalue() == ""


def test_on_a_terminal_the_step_is_a_rich_progress_bar():
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True, color_system=None)
    with LongWork("build", total=3, console=console, transient=False) as work:
        work.begin("rosenpass 0.2.2")
        work.set_step("cargo install rosenpass@0.2.2")
        work.advance()
    shown = out.getvalue()
    assert "rosenpass 0.2.2: cargo install rosenpass@0.2.2" in shown
    assert "1/3" in shown and "━" in shown  # rich's MofN and bar
    assert work.terminal and work._thread is None  # no thread of ours: rich's own redraw only


def test_build_steps_are_named_without_their_paths():
    assert build_step(["/root/go/pkg/mod/golang.org/toolchain@v0.0.1-go1.24.5.linux-amd64/bin/go", "build",
                       "-trimpath", "-o", "/opt/vpnbench/tailscale/.x/bin/tailscaled",
                       "tailscale.com/cmd/tailscaled"]) == "go build tailscale.com/cmd/tailscaled"
    assert build_step(["go", "get", "tailscale.com/cmd/tailscaled@v1.102.0"]) == \
        "go get tailscale.com/cmd/tailscaled@v1.102.0"
    assert build_step(["cargo", "install", "--locked", "--quiet", "rosenpass@0.2.2", "--root", "/tmp/x"]) == \
        "cargo install rosenpass@0.2.2"
    assert build_step(["go", "mod", "download", "-json", "golang.org/toolchain@v0.0.1-go1.24.5.linux-amd64"]) == \
        "go mod download golang.org/toolchain@v0.0.1-go1.24.5.linux-amd64"
    assert build_step([]) is None


def test_progress_never_writes_to_stdout():
    """LongWork's default console is stderr: a child whose stdout is a pipe reads nothing of it."""
    code = ("import time\nfrom vpnbench.foundation.progress import LongWork\n"
            "with LongWork('x', total=2, every_s=0.1) as w:\n w.begin('a'); time.sleep(0.5); w.advance()\n"
            "print('{\"ok\": true}')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == '{"ok": true}\n'
    assert "x 1 of 2, a … 0 s" in done.stderr


def test_a_stored_label_shows_as_it_is_in_both_modes():
    """A campaign cell's technique label may hold markup and ESC: shown literally, never obeyed."""
    label = "\x1b[2J[blink red]evil[/]"
    console, out = log_console()
    with LongWork("cell", total=1, console=console, every_s=0.05) as work:
        work.begin(label)
        time.sleep(0.2)
    assert "\x1b" not in out.getvalue() and "\\x1b[2J[blink red]evil[/]" in out.getvalue()
    terminal = io.StringIO()
    with LongWork("cell", total=1, console=Console(file=terminal, width=120, force_terminal=True, color_system=None),
                  transient=False) as work:
        work.begin(label)
    assert "\\x1b[2J[blink red]evil[/]" in terminal.getvalue() and "\x1b[2J" not in terminal.getvalue()
