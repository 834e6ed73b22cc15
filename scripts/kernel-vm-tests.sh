#!/usr/bin/env bash
# The tests marked `vm`, inside a QEMU VM booting the distribution kernel (netem, kernel
# WireGuard, ...), with this machine's root filesystem read-only over 9p. Only the files that hold
# such tests go to the guest's pytest: collecting all ~150 files there imports every test module
# under TCG, about a minute; the host lists them in seconds. --timeout stops a hung guest, it is
# no speed bound. It waits for other test sessions (the lock): timing assertions need the cores.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
mapfile -t FILES < <($BIN/python -m pytest -q --collect-only -p no:cacheprovider -m vm tests | sed -n 's/::.*//p' | sort -u)
if [ "${#FILES[@]}" -eq 0 ]; then
    echo "kernel-vm-tests: no test is marked vm" >&2
    exit 1
fi
# In the guest (2 vCPUs, one TCG thread per host core), the tests two at a time (pytest -n 2; each
# test's process spawns and daemon starts are mostly one CPU's work at a time under TCG, so a second
# worker uses the second vCPU), then the ones marked `exclusive` (netem's fidelity, timed to
# milliseconds) one at a time. pytest's exit 5 (nothing selected) is no failure here.
GUEST='py=$1; shift
"$py" -m pytest -q --color=no -p no:cacheprovider -n 2 --dist worksteal -m "vm and not exclusive" --durations=15 "$@"
side=$?
"$py" -m pytest -q --color=no -p no:cacheprovider -m "vm and exclusive" --durations=5 "$@"
alone=$?
for rc in $side $alone; do [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ] || exit "$rc"; done'
exec flock /run/vpnbench-tests.lock $BIN/python -m vpnbench.hosts.kernelvm --timeout 3000 --memory 3072 \
    --accel "${ACCEL:-auto}" -- bash -c "$GUEST" kernel-vm-tests "$PWD/$BIN/python" "${FILES[@]}"
