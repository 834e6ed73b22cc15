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
exec flock /run/vpnbench-tests.lock $BIN/python -m vpnbench.hosts.kernelvm --timeout 3000 --accel "${ACCEL:-auto}" -- \
    $BIN/python -m pytest -q --color=no -p no:cacheprovider -m vm --durations=15 "${FILES[@]}"
