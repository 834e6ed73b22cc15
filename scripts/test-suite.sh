#!/usr/bin/env bash
# `make test`'s stages after lint, one after the other, each stage's wall time printed at the end;
# exits non-zero if any stage failed (every stage runs, so one failure does not hide another).
#
# One after the other, not side by side. Stop 48 tried the kernel-VM guest and the ~1 000 tests
# that need no namespace (cargo builds among them) beside the host's namespace tests, with the
# CPU halved: test_corrupt, the udp_sweep and PDR-share tests, a clean-machine check and three of
# test_builds' tests failed. One cause was found afterwards and is no load's: net.core.rmem_max
# had been left at 4 MiB on the machine, and test_corrupt's fixed seed then hit iperf3's UDP
# opener (fixed in the test). The rest were not diagnosed, so the stages stay apart until a run
# side by side passes (issue 44).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=.venv/bin
ACCEL=${ACCEL:-auto}
CARGO_ARGS=(--release --offline --locked --config "$REPO/.cargo/config.toml")

declare -a STAGES=()
stage_done() {  # name seconds rc
    STAGES+=("$(printf '%-32s %6d s  %s' "$1" "$2" "$([ "$3" -eq 0 ] && echo ok || echo "FAILED (exit $3)")")")
}

# cargo from / with this checkout's configuration (see the Makefile's CARGO).
start=$SECONDS
( cd / && cargo test -q "${CARGO_ARGS[@]}" --manifest-path "$REPO/linkem/Cargo.toml" \
      && cargo test -q "${CARGO_ARGS[@]}" --manifest-path "$REPO/gen/Cargo.toml" )
stage_done "linkem's and gen's cargo tests" $((SECONDS - start)) $?

start=$SECONDS
$BIN/python -m pytest -q -m "not vmtestbed" --durations=25 tests
stage_done "host suite" $((SECONDS - start)) $?

# Tests marked `vm`, inside a QEMU VM booting the distribution kernel (see the Makefile's
# test-kernel: the lock, and --timeout as a hung guest's guard, no speed bound).
start=$SECONDS
flock /run/vpnbench-tests.lock $BIN/python -m vpnbench.hosts.kernelvm --timeout 3000 --accel "$ACCEL" -- \
    $BIN/python -m pytest -q --color=no -p no:cacheprovider -m vm --durations=15 tests
stage_done "kernel-VM stage" $((SECONDS - start)) $?

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
