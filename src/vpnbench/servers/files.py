"""The files a transfer moves: random content on a tmpfs, checked by sha256 at both ends."""

import os
from pathlib import Path

from vpnbench.foundation.errors import MeasurementError
from vpnbench.hosts.base import Host

# A test hook, never set in a campaign: the served file is changed after it was hashed, so the
# checksum comparison has a real mismatch to catch (tests/test_transfer.py).
CORRUPT_ENV = "VPNBENCH_TEST_CORRUPT_TRANSFER"


def make_random_file(host: Host, path: Path, size: int) -> str:
    """Write `size` random bytes to path (mode 0644: the servers' workers read it); its sha256."""
    # Positional parameters, not text: the size and path never become shell code.
    host.run(["sh", "-c", 'head -c "$1" /dev/urandom > "$2" && chmod 0644 "$2"', "sh", str(size), str(path)],
             timeout=60 + size / 50e6)
    digest = sha256s(host, [path])[0]
    if os.environ.get(CORRUPT_ENV):
        host.run(["sh", "-c", 'printf x | dd of="$1" bs=1 seek=1000 conv=notrunc status=none', "sh", str(path)])
    return digest


def sha256s(host: Host, paths: list[Path]) -> list[str]:
    result = host.run(["sha256sum", "--", *map(str, paths)], timeout=120, check=False)
    digests = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    if not result.ok or len(digests) != len(paths):
        raise MeasurementError(f"sha256sum failed: {result.describe_failure()}")
    return digests


def file_sizes(host: Host, paths: list[Path]) -> int:
    """Bytes written so far to these files together (a missing file counts 0)."""
    out = host.run(["stat", "-c", "%s", "--", *map(str, paths)], timeout=5, check=False).stdout
    return sum(int(word) for word in out.split() if word.isdigit())
