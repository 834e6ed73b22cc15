#!/usr/bin/env bash
# `make test`'s stages after lint, timed, with the kernel-VM stage and the host tests that need
# no machine beside the host's namespace tests.
#
# Why side by side: the host suite spends most of its time waiting on traffic of a set length
# (CI at stop 47: user+sys was 41 min of a 78 min run), and the kernel-VM stage is one TCG guest,
# about one core. Run one after the other they took ~31 + ~20 min; side by side the machine's
# idle time carries the guest. Both stages' tests already hold with the CPU halved (a busy loop
# pinned per core), which loads the machine more than the guest does. The guest has its own
# kernel, /run and namespaces and no network (-nic none), so nothing in it can meet the host
# tests' namespaces. The VM-testbed stage makes host namespaces and VMs of its own, so it runs
# after both.
#
# Prints each stage's wall time at the end; exits non-zero if any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=.venv/bin
ACCEL=${ACCEL:-auto}
CARGO_ARGS=(--release --offline --locked --config "$REPO/.cargo/config.toml")

declare -a STAGES=()
stage_done() {  # name seconds rc
    STAGES+=("$(printf '%-34s %6d s  %s' "$1" "$2" "$([ "$3" -eq 0 ] && echo ok || echo "FAILED (exit $3)")")")
}

# The kernel-VM stage in the background, its output kept apart (root's own file, 0600) and
# shown after the host suite, so the two logs do not interleave. --timeout is a hung guest's
# guard, no speed bound: the stage took 1 753 s alone with the CPU halved.
vm_log=$(mktemp -t vpnbench-kernel-vm-log.XXXXXXXX)
vm_start=$SECONDS
$BIN/python -m vpnbench.hosts.kernelvm --timeout 4800 --accel "$ACCEL" -- \
    $BIN/python -m pytest -q --color=no -p no:cacheprovider -m vm --durations=15 tests >"$vm_log" 2>&1 &
vm_pid=$!
# Ctrl-C or a failure here stops the guest too (QEMU dies with kernelvm: die_with_parent).
trap 'kill "$vm_pid" 2>/dev/null; rm -f "$vm_log"' EXIT

# cargo from / with this checkout's configuration (see the Makefile's CARGO).
start=$SECONDS
( cd / && cargo test -q "${CARGO_ARGS[@]}" --manifest-path "$REPO/linkem/Cargo.toml" \
      && cargo test -q "${CARGO_ARGS[@]}" --manifest-path "$REPO/gen/Cargo.toml" )
stage_done "linkem's and gen's cargo tests" $((SECONDS - start)) $?

# The host suite in two parts side by side: the tests that need the machine to themselves
# (namespaces, daemons, the test lock: conftest's needs_the_machine) in front, the ~1 000 that
# do not (parsers, stores, reports, builds into temporary prefixes) behind, their output kept
# apart like the guest's.
standalone_log=$(mktemp -t vpnbench-standalone-log.XXXXXXXX)
start=$SECONDS
$BIN/python -m pytest -q -p no:cacheprovider --machine-tests=none -m "not vmtestbed" --durations=10 tests \
    >"$standalone_log" 2>&1 &
standalone_pid=$!
trap 'kill "$vm_pid" "$standalone_pid" 2>/dev/null; rm -f "$vm_log" "$standalone_log"' EXIT
$BIN/python -m pytest -q --machine-tests=only -m "not vmtestbed" --durations=25 tests
stage_done "host suite: the machine's tests" $((SECONDS - start)) $?

wait "$standalone_pid"
standalone_rc=$?
echo "---- host suite: the tests that need no machine (ran beside) ----"
cat "$standalone_log"
stage_done "host suite: the rest (beside)" $((SECONDS - start)) "$standalone_rc"

wait "$vm_pid"
vm_rc=$?
echo "---- kernel-VM stage (ran beside the host suite) ----"
cat "$vm_log"
stage_done "kernel-VM stage (beside the host)" $((SECONDS - vm_start)) "$vm_rc"

start=$SECONDS
$BIN/python -m pytest -q -m vmtestbed --durations=10 tests
stage_done "VM testbed" $((SECONDS - start)) $?

echo "---- make test: stages (wall time) ----"
failed=0
for line in "${STAGES[@]}"; do
    echo "$line"
    [[ $line == *FAILED* ]] && failed=1
done
exit $failed
