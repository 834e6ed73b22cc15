#!/usr/bin/env bash
# `make test`'s stages after lint, one after the other, each stage's wall time printed at the end
# against its budget; exits non-zero if any stage failed or went over its budget (every stage
# runs, so one failure does not hide another).
#
# Inside the host stage the tests that need no namespace run side by side with each other
# (pytest -n); the machine's own tests two at a time where two cores are free, with those units
# beside them at nice 19 (below); never beside the exclusive ones or a VM. Stop 48 tried the
# kernel-VM guest and the ~1 000 units beside the host's namespace tests at the same priority,
# with the CPU halved: test_corrupt, the udp_sweep and PDR-share tests, a clean-machine check and
# three of test_builds' tests failed. Two causes were found afterwards: net.core.rmem_max had been
# left at 4 MiB on the machine, and test_corrupt's fixed seed then hit iperf3's UDP opener (fixed
# in the test); and the two sessions' workers took the same run-id prefixes, so each could take
# the other's runs for its own leftovers (a clean-machine check; now 0-7 and 8-f). The kernel-VM
# guest, a steady 75-97 % of both cores under TCG (stop 61), stays apart.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=.venv/bin
ACCEL=${ACCEL:-auto}
CARGO_ARGS=(--release --offline --locked --config "$REPO/.cargo/config.toml")

# The suite's budget: each stage's seconds on the reference machine (2 cores, TCG, 2026-11-30 and
# stop 61: side by side 145-198 s (288 s one at a time; 313-345 s at nice 19 beside the machine's
# own, which it then does not lengthen), the machine's own ~2 000 s one at a time or 996-1 006 s two
# at a time and 346-348 s for the exclusive ones, kernel VM 834-1 202 s one at a time in the guest
# (567-676 s two at a time), VM testbed 186-221 s), with a fifth to a third to spare. It scales with
# this machine's speed: the wall time of a fixed Python loop against the reference's 0.12 s, read
# at the start and again at each stage's end, the slower of the two (never below 1: a fast CPU does
# not shorten a daemon's timers); a busy loop per core reads 0.24 s and doubles it. Each reading is
# the fastest of five loops: one loop alone on this idle machine read anywhere from 1.05 to 1.78
# times the reference (stop 61: 1.59 at one suite's start, which then ran everything one at a
# time), the fastest of five 1.01-1.15 (2.04-2.18 with a busy loop per core), and noise only ever
# adds time. A stage over its budget fails the suite, loudly: a change that makes the suite slower
# shows here before CI's 90 minutes do. Lower a budget when the suite gets faster (issue 44's
# target: the whole ≤ 35 min).
declare -A BUDGET_S=(
    ["linkem's and gen's cargo tests"]=60
    ["host suite: side by side"]=300
    ["beside them: units (left to wait)"]=400
    ["host suite: the machine's own, two at a time"]=1300
    ["host suite: the machine's own, exclusive"]=460
    ["host suite: the machine's own, one at a time"]=2900
    ["kernel-VM stage"]=1000
    ["VM testbed"]=330
)
REFERENCE_LOOP_S=0.12
slower() {  # how much slower than the reference this machine runs the loop now (at least 1)
    $BIN/python -c "import time
def loop():
    t = time.perf_counter(); sum(i * i for i in range(3_000_000)); return time.perf_counter() - t
print(max(1.0, min(loop() for _ in range(5)) / $REFERENCE_LOOP_S))"
}
free_cores() {  # how many of the cores sat idle over two seconds (/proc/stat: idle and iowait of all)
    $BIN/python -c "import os, time
def read():
    with open('/proc/stat') as f:
        ticks = [int(x) for x in f.readline().split()[1:9]]
    return ticks[3] + ticks[4], sum(ticks)
idle0, all0 = read(); time.sleep(2); idle1, all1 = read()
print(f'{(idle1 - idle0) / max(1, all1 - all0) * os.cpu_count():.2f}')"
}
SLOWER=$(slower)
printf 'make test: budgets x %.2f: a fixed Python loop takes that many times its %.2f s on the reference machine (read again at each stage'"'"'s end)\n' \
    "$SLOWER" "$REFERENCE_LOOP_S"

# Each stage's output also goes to a file of root's (below): CI shows only the tail of what make
# test printed, which held the stage table but not which test failed (stop 63's and stop 70's CI:
# "two at a time ... FAILED", the test unnamed). The names of what failed are printed again after
# the table, and the whole output of the last run is kept beside the stage log.
OUT_DIR=$(mktemp -d)  # root's, 0700, never a path another user made
trap 'rm -rf -- "$OUT_DIR"' EXIT
STAGE_N=0
logged() {  # command...: run it with its output on the terminal and in the next stage's file
    STAGE_N=$((STAGE_N + 1))
    "$@" 2>&1 | tee "$OUT_DIR/$(printf '%02d' $STAGE_N).log"
    return "${PIPESTATUS[0]}"
}

declare -a STAGES=()
stage_done() {  # name seconds rc
    local budget verdict
    budget=$($BIN/python -c "print(round(${BUDGET_S[$1]} * max($SLOWER, $(slower))))")
    verdict=$([ "$3" -eq 0 ] && echo ok || echo "FAILED (exit $3)")
    if [ "$2" -gt "$budget" ]; then
        verdict="$verdict, OVER BUDGET by $(($2 - budget)) s"
    fi
    STAGES+=("$(printf '%-32s %6d s of %6d s  %s' "$1" "$2" "$budget" "$verdict")")
}

# cargo from / with this checkout's configuration (see the Makefile's CARGO).
start=$SECONDS
logged bash -c 'cd / && cargo test -q "${@:2}" --manifest-path "$1/linkem/Cargo.toml" \
      && cargo test -q "${@:2}" --manifest-path "$1/gen/Cargo.toml"' cargo-tests "$REPO" "${CARGO_ARGS[@]}"
stage_done "linkem's and gen's cargo tests" $((SECONDS - start)) $?

# The host's tests in two sessions: the ~1 200 that need no namespace, VM or quiet cores (units,
# builds into temporary prefixes; tests/conftest.py's needs_the_machine says which), side by side
# on every core; and the ~300 that need the machine, under its test lock.
#
# The machine's own run two at a time where two cores are free (at least 1.5 cores idle over two
# seconds, read from /proc/stat; until stop 66 it was the loop's reading under 1.5, which says how
# fast a core is, not whether it is free: on 2 December this machine, idle, read 2.1-2.6 and ran
# everything one at a time, which fits CI's 4 699 s against 2 462 s the stop before): pytest -n 2, each worker's runs carrying a run-id prefix of their own so its
# leftover checks look at those only (tests/conftest.py); then the ones marked `exclusive` (timing
# held to milliseconds, machine-wide state) one at a time. On one core, on a busy machine, or with
# MACHINE_TESTS_ONE_AT_A_TIME=1, the units first and then all of the machine's own one at a time.
# Two at a time was opt-in until stop 59: the first five such runs each failed one or two tests
# another test's load had moved (a baseline held to a tunnel's ceiling, a direct path timed out, a
# per-core CPU share) or that found a real race (the lab worker's deadlock, `wg show` unlinking a
# daemon's socket), all fixed or marked exclusive since; the runs after (stop 58: 843 + 446 s;
# stop 59: 838 + 453 s) passed.
#
# Beside the two-at-a-time ones, at the lowest priority (nice 19), the units. Those machine tests
# wait on daemons' timers and flows much of the time (they kept the two cores 33-40 % busy on
# average once the units were done, stop 61), and a nice-19 process gets a core where they leave it
# idle and ~1.5 % of one they want (a weight of 15 against 1 024). Never beside the exclusive ones
# (they read the cores' busy shares) or a VM: stop 61 ran the VM testbed's tests here too, after the
# units, and CI failed one (its client guest found no route to the server "within 40 s", its
# underlay deadline: 10 s x 4 under TCG): a TCG guest's deadlines are wall-clock seconds, and at nice
# 19 the guest gets ~1.5 % of a core for as long as the machine tests want both. What ran beside is
# printed when it ends; its stage line counts only the time the suite still waited for it after the
# two-at-a-time ones. Its run ids start with 8-f, the machine tests' with 0-7, and it leaves the
# test lock to the latter (VPNBENCH_TESTS_BESIDE, tests/conftest.py): neither's runs are the
# other's leftovers.
UNITS=(-q -n auto --dist worksteal --machine-tests=none -m "not vmtestbed" --durations=10 tests)
VM_TESTBED=(-q -m vmtestbed --durations=10 tests)
beside() {  # $1: a new directory of root's, for the session's output and "exit-status seconds"
    local t0
    renice -n 19 -p $BASHPID >/dev/null
    export VPNBENCH_TESTS_BESIDE=1
    t0=$SECONDS; $BIN/python -m pytest "${UNITS[@]}" >"$1/units.log" 2>&1
    echo "$? $((SECONDS - t0))" >"$1/units.rc"
}
FREE=$(free_cores)
echo "make test: $FREE of $(nproc) cores idle over two seconds"
if [ "${MACHINE_TESTS_ONE_AT_A_TIME:-0}" != 1 ] && [ "$(nproc)" -ge 2 ] \
        && $BIN/python -c "import sys; sys.exit(not $FREE >= 1.5)"; then
    beside_dir=$OUT_DIR/beside; mkdir -m 0700 "$beside_dir"
    set -m  # its own process group, which Ctrl-C does not reach: the EXIT trap ends all of it
    beside "$beside_dir" &
    beside_pid=$!
    set +m
    trap 'kill -TERM -- -"$beside_pid" 2>/dev/null; rm -rf -- "$OUT_DIR"' EXIT
    start=$SECONDS
    logged $BIN/python -m pytest -q -n 2 --dist worksteal --machine-tests=only -m "not vmtestbed and not exclusive" \
        --durations=25 tests
    stage_done "host suite: the machine's own, two at a time" $((SECONDS - start)) $?
    start=$SECONDS
    wait "$beside_pid"
    trap 'rm -rf -- "$OUT_DIR"' EXIT  # its pid is no longer its own
    read -r rc took <"$beside_dir/units.rc" || { rc=1; took=?; }
    echo "---- beside them at nice 19: units (exit $rc, $took s) ----"
    cat "$beside_dir/units.log"
    stage_done "beside them: units (left to wait)" $((SECONDS - start)) "$rc"
    start=$SECONDS
    logged $BIN/python -m pytest -q --machine-tests=only -m "exclusive and not vmtestbed" --durations=10 tests
    stage_done "host suite: the machine's own, exclusive" $((SECONDS - start)) $?
else
    start=$SECONDS
    logged $BIN/python -m pytest "${UNITS[@]}"
    stage_done "host suite: side by side" $((SECONDS - start)) $?
    start=$SECONDS
    logged $BIN/python -m pytest -q --machine-tests=only -m "not vmtestbed" --durations=25 tests
    stage_done "host suite: the machine's own, one at a time" $((SECONDS - start)) $?
fi

# Tests marked `vm`, inside a QEMU VM booting the distribution kernel (that script says how).
start=$SECONDS
logged env ACCEL="$ACCEL" scripts/kernel-vm-tests.sh
stage_done "kernel-VM stage" $((SECONDS - start)) $?

# The VM testbed's TCG guests, alone: their deadlines are wall-clock seconds (above).
start=$SECONDS
logged $BIN/python -m pytest "${VM_TESTBED[@]}"
stage_done "VM testbed" $((SECONDS - start)) $?

echo "---- make test: stages (wall time of budget) ----"
failed=0
for line in "${STAGES[@]}"; do
    echo "$line"
    [[ $line == *FAILED* || $line == *"OVER BUDGET"* ]] && failed=1
done
# pytest's short summary lines (FAILED/ERROR test - reason), from every stage and from the units
# beside them, so the tail names what failed.
FAILURES=$(cat "$OUT_DIR"/*.log "$OUT_DIR"/beside/units.log 2>/dev/null | grep -E '^(FAILED|ERROR) ' | cut -c1-300)
if [ -n "$FAILURES" ]; then
    echo "---- make test: what failed ----"
    echo "$FAILURES"
fi

# The stages also go to a log of root's that outlives the clone: CI keeps no output of a run that
# passed, so without it nobody learns where a passing run's minutes went (stop 69's CI: 2 960 s,
# stage by stage unknown). A directory that exists but is not root's alone is refused, not used.
SUITE_LOG_DIR=/var/log/vpnbench
if [ "$(id -u)" -eq 0 ]; then
    mkdir -p -m 0700 "$SUITE_LOG_DIR" 2>/dev/null
    if [ -d "$SUITE_LOG_DIR" ] && [ ! -L "$SUITE_LOG_DIR" ] && [ "$(stat -c '%u %a' "$SUITE_LOG_DIR")" = "0 700" ]; then
        {
            printf '# %s  %s  budgets x %.2f  cores idle at the start %s of %s\n' "$(date -u +%FT%TZ)" \
                "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$SLOWER" "$FREE" "$(nproc)"
            printf '%s\n' "${STAGES[@]}"
            [ -z "$FAILURES" ] || printf '%s\n' "$FAILURES"
        } >>"$SUITE_LOG_DIR/suite-stages.log"
        cat "$OUT_DIR"/*.log "$OUT_DIR"/beside/units.log >"$SUITE_LOG_DIR/make-test-last.log" 2>/dev/null
        echo "make test: stages appended to $SUITE_LOG_DIR/suite-stages.log, the whole output in $SUITE_LOG_DIR/make-test-last.log"
    else
        echo "make test: $SUITE_LOG_DIR is not a directory of root's alone (0700); stages not logged"
    fi
fi
exit $failed
