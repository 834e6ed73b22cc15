"""bench/applications: what an application costs on top of the tunnel, and what the latency
probe costs the link it measures.

1. Transfer goodput (scp, http) ÷ iperf3 TCP throughput of the same technique, in one run:
   iperf3 moves memory to memory; scp adds SSH's own encryption and a copy to tmpfs, nginx
   sendfile() and curl a write to tmpfs. The ratio is what users feel beside what iperf3 says.
2. The irtt probe's overhead on a saturated link: one TCP flow client→server alone (tcp) and
   the same flow while irtt probes every 20 ms (latency_under_load, flows_up = 1, down 0).

Run as root: .venv/bin/python bench/applications.py   (takes the test lock; results go to bench/RESULTS.md)
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import exclusive, machine, publish, require_root, run_campaign  # noqa: E402

SECONDS = 5
SIZE = "128M"
REPETITIONS = 2
CAMPAIGN = f"""
[campaign]
name = "bench-applications"
repetitions = {REPETITIONS}
[[technique]]
kind = "baseline"
[[technique]]
kind = "wireguard"
label = "wireguard-go"
backend = "userspace"
[[measurement]]
kind = "tcp"
duration = "{SECONDS}s"
[[measurement]]
kind = "transfer"
protocol = "scp"
size = "{SIZE}"
[[measurement]]
kind = "transfer"
protocol = "http"
size = "{SIZE}"
[[measurement]]
kind = "latency_under_load"
flows_up = 1
flows_down = 0
idle = "1s"
duration = "{SECONDS}s"
"""


def median(cells: list[dict], technique: str, label: str, metric: str) -> float:
    return statistics.median(c["metrics"][metric] for c in cells
                             if c["technique"] == technique and c["measurement_label"] == label)


def tables(cells: list[dict]) -> str:
    lines = ["| technique | iperf3 TCP Mbit/s | scp Mbit/s (÷ TCP) | http Mbit/s (÷ TCP) | TCP with irtt probe Mbit/s (÷ without) | probe RTT p99 idle → loaded ms |",
             "| --- | --- | --- | --- | --- | --- |"]
    for technique in dict.fromkeys(c["technique"] for c in cells):
        tcp = median(cells, technique, "tcp", "throughput_bps")
        scp = median(cells, technique, "scp", "goodput_bps")
        http = median(cells, technique, "http", "goodput_bps")
        probed = median(cells, technique, "lul_up1_down0", "throughput_up_bps")
        idle = median(cells, technique, "lul_up1_down0", "rtt_idle_p99_ms")
        loaded = median(cells, technique, "lul_up1_down0", "rtt_loaded_p99_ms")
        lines.append(f"| {technique} | {tcp / 1e6:.0f} | {scp / 1e6:.0f} (**{scp / tcp:.3f}**) | "
                     f"{http / 1e6:.0f} (**{http / tcp:.3f}**) | {probed / 1e6:.0f} (**{probed / tcp:.3f}**) | "
                     f"{idle:.2f} → {loaded:.2f} |")
    return "\n".join(lines)


def main() -> None:
    require_root("applications.py")
    with exclusive():
        cells, wall = run_campaign(CAMPAIGN)
    failed = [c for c in cells if c["status"] != "ok"]
    if failed:
        raise SystemExit(f"{len(failed)} cells failed: {failed[0]['error']}")
    body = f"""{machine('applications.py')}, one run ({wall:.0f} s), medians of {REPETITIONS} repetitions; client and server
pinned to one core each, router between. TCP: one iperf3 stream client→server, {SECONDS} s. scp: a {SIZE}
random file server→client (OpenSSH 9.2, SCP protocol, aes128-gcm@openssh.com), http: the same through
nginx + curl; both from /dev/shm to /dev/shm, sha256-checked, timed from the clients' start (handshakes
included). Probe: irtt, 64-byte packets every 20 ms both ways, beside one TCP flow of {SECONDS} s.

{tables(cells)}

Shared 2-core machine (other sessions at work): single runs vary by ±20 %.
"""
    publish("applications", body)


if __name__ == "__main__":
    main()
