"""bench/workers: one worker against two on the same queued campaign, side by side in one run.

A campaign of duration-bound cells (3 s TCP, 2 repetitions) over a baseline and six queued
techniques, enqueued into a local PostgreSQL (tests/pg.py) with `vpnbench run --queue`, then
worked by one `vpnbench worker` on a local namespace testbed, and again (a new database) by two
workers on two such testbeds at once. Each worker measures the baseline on its own testbed, so
two workers do the baseline twice; the target is two ≤ 0.65 × one (issue 20). Rounds alternate
one, two, one, two...; the ratio is of the medians.

.venv/bin/python bench/workers.py [ROUNDS]   (root; results go to bench/RESULTS.md)
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
import pg  # noqa: E402 - tests/pg.py: the tests' own PostgreSQL
from common import exclusive, machine, publish, require_root  # noqa: E402

VPNBENCH = [sys.executable, "-m", "vpnbench"]
CAMPAIGN = """
[campaign]
name = "bench-queue"
repetitions = 2
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
[[technique]]
kind = "wireguard"
mtu = 1380
[[technique]]
kind = "openvpn"
[[technique]]
kind = "openvpn"
transport = "tcp"
[[technique]]
kind = "ipsec"
[[technique]]
kind = "ipsec"
cipher = "chacha20poly1305"
[[measurement]]
kind = "tcp"
duration = "3s"
"""


def work(server: pg.Postgres, directory: Path, number: int, workers: int) -> float:
    """Wall seconds from enqueueing to the last worker's exit."""
    url = server.create_database(f"q{number}")
    env = {**os.environ, "VPNBENCH_DB": url}  # the URL holds the password: never in argv
    started = time.monotonic()
    subprocess.run([*VPNBENCH, "run", str(directory / "c.toml"), "--queue"], check=True, capture_output=True, env=env)
    procs = [subprocess.Popen([*VPNBENCH, "worker", "--testbed", str(directory / "tb.toml"), "--name", f"tb{i}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
             for i in range(workers)]
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a worker failed: {err.decode()[-2000:]}")
    seconds = time.monotonic() - started
    cells = server.query(f"q{number}", "SELECT count(*) FROM cells WHERE status = 'ok'")[0][0]
    print(f"  {workers} worker(s): {seconds:.1f} s, {cells} cells ok", flush=True)
    return seconds


def main() -> None:
    require_root("workers.py")
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    directory = Path(tempfile.mkdtemp(prefix="vpnbench-bench-queue-"))
    (directory / "c.toml").write_text(CAMPAIGN)
    # a database on a private socket, queued into by this script only: unsigned jobs are its own
    (directory / "tb.toml").write_text("[testbed]\nkind = \"local\"\n[worker]\naccept_unsigned = true\n")
    times: dict[int, list[float]] = {1: [], 2: []}
    with exclusive():
        for server in pg.start(pg.server_bin()):
            number = 0
            for _ in range(rounds):
                for workers in (1, 2):
                    number += 1
                    times[workers].append(work(server, directory, number, workers))
    one, two = statistics.median(times[1]), statistics.median(times[2])
    publish("queue", f"{machine('workers.py')}; {rounds} rounds, alternating.\n\n"
            "| workers | wall time s (median; runs) | ÷ one worker |\n| --- | --- | --- |\n"
            f"| 1 | {one:.1f} ({', '.join(f'{t:.1f}' for t in times[1])}) | 1.00 |\n"
            f"| 2 | {two:.1f} ({', '.join(f'{t:.1f}' for t in times[2])}) | **{two / one:.2f}** |\n\n"
            "Campaign: baseline + 6 queued techniques (WireGuard ×2, OpenVPN UDP/TCP, IPsec AES-GCM/ChaCha20; "
            "userspace backends here), 3 s TCP × 2 repetitions: 12 queued cells. Each worker measures the "
            "baseline on its own testbed (2 cells each), brings its local namespace testbed up and down, and "
            "waits for nothing else: the two testbeds share this machine's 2 cores. Target ≤ 0.65.")


if __name__ == "__main__":
    main()
