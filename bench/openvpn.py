"""bench/openvpn: TCP throughput and CPU per host of every OpenVPN cipher over UDP and TCP,
as a ratio to the unencrypted baseline, measured in one run (S5's Figures 2 and 3).

One campaign: baseline + OpenVPN (TLS mode, userspace data channel) with each of the five
ciphers over each transport; one TCP stream for 5 s, 3 repetitions, medians.

Run as root, holding the test lock:
    flock /run/vpnbench-tests.lock .venv/bin/python bench/openvpn.py   (results go to bench/RESULTS.md)
"""

import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import publish, require_root, run_campaign  # noqa: E402

CIPHERS = ("AES-256-GCM", "AES-128-GCM", "CHACHA20-POLY1305", "AES-256-CBC", "AES-128-CBC")
REPETITIONS, SECONDS = 3, 5
NOTE = ' The baseline is a veth pair inside one kernel, so the ratios say how far each cipher falls short of memory speed, not of a real NIC; userspace OpenVPN moves every packet through one single-threaded daemon per side, whose busy share of a core (last column) is the limit.'


def campaign() -> str:
    lines = ["[campaign]", 'name = "bench-openvpn"', f"repetitions = {REPETITIONS}",
             "[[technique]]", 'kind = "baseline"']
    for transport in ("udp", "tcp"):
        for cipher in CIPHERS:
            lines += ["[[technique]]", 'kind = "openvpn"', f'label = "{cipher} {transport}"',
                      f'cipher = "{cipher}"', f'transport = "{transport}"']
    lines += ["[[measurement]]", 'kind = "tcp"', f'duration = "{SECONDS}s"']
    return "\n".join(lines) + "\n"


def medians(cells: list[dict]) -> dict[str, dict[str, float]]:
    by_technique: dict[str, list[dict]] = {}
    for cell in cells:
        by_technique.setdefault(cell["technique"], []).append(cell)
    out = {}
    for technique, group in by_technique.items():
        def med(get):
            return statistics.median(get(c) for c in group)
        out[technique] = {
            "bps": med(lambda c: c["metrics"]["throughput_bps"]),
            "client_cpu": med(lambda c: c["hosts"]["client"]["cpu_pct"]),
            "server_cpu": med(lambda c: c["hosts"]["server"]["cpu_pct"]),
            "client_ovpn": med(lambda c: c["hosts"]["client"]["procs_cpu_pct"].get("openvpn", 0.0)),
            "server_ovpn": med(lambda c: c["hosts"]["server"]["procs_cpu_pct"].get("openvpn", 0.0)),
        }
    return out


def main() -> None:
    require_root("openvpn.py")
    cells, _ = run_campaign(campaign())
    m = medians(cells)
    base = m["baseline"]
    rows = ["| technique | Mbit/s | ratio to baseline | client CPU % | server CPU % | openvpn CPU % of one core (client / server) |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
            f"| baseline | {base['bps'] / 1e6:.0f} | 1.000 | {base['client_cpu']:.0f} | {base['server_cpu']:.0f} | – |"]
    for technique, v in m.items():
        if technique == "baseline":
            continue
        rows.append(f"| {technique} | {v['bps'] / 1e6:.0f} | {v['bps'] / base['bps']:.3f} | {v['client_cpu']:.0f} | "
                    f"{v['server_cpu']:.0f} | {v['client_ovpn']:.0f} / {v['server_ovpn']:.0f} |")
        print(rows[-1])
    body = (f"Machine: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs; OpenVPN "
            f"{_openvpn_version()} userspace (no DCO in this kernel), TLS mode, tun, one iperf3 TCP stream "
            f"{SECONDS} s, median of {REPETITIONS}, all in one run (`bench/openvpn.py`). Host CPU = busy share of "
            "the host's pinned core (client CPU 0, server CPU 1), softirq included." + NOTE + "\n\n" + "\n".join(rows))
    publish("openvpn", body)


def _openvpn_version() -> str:
    out = subprocess.run(["openvpn", "--version"], capture_output=True, text=True).stdout
    return out.split()[1] if out else "?"


if __name__ == "__main__":
    main()
