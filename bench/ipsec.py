"""bench/ipsec: TCP throughput and CPU per host for every IPsec cipher on strongSwan's userspace
data path (kernel-libipsec), as a ratio to the unencrypted baseline, all in one run.

This is the first row of the table S1 drew (IPsec aes128gcm8 / aes256gcm8 / chacha20poly1305
next to the baseline), extended to every cipher the studies compared. S1's Pi numbers
(no AES instructions) are for the shape only: this machine has AES-NI.

Run as root: .venv/bin/python bench/ipsec.py   (takes the test lock; results go to bench/RESULTS.md)
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import exclusive, machine, publish, require_root, run_campaign  # noqa: E402
from vpnbench.techniques.ipsec.proposals import CIPHERS  # noqa: E402

SECONDS = 4
REPETITIONS = 2
S1_MBITS = {"baseline": 841.6, "aes128gcm8": 77.7, "aes256gcm8": 71.1, "chacha20poly1305": 320.5}


def campaign() -> str:
    text = f"""
[campaign]
name = "bench-ipsec"
repetitions = {REPETITIONS}
[[technique]]
kind = "baseline"
"""
    for cipher in CIPHERS:
        text += f'[[technique]]\nkind = "ipsec"\nlabel = "{cipher}"\nbackend = "userspace"\ncipher = "{cipher}"\n'
    return text + f'[[measurement]]\nkind = "tcp"\nduration = "{SECONDS}s"\n'


def summarize(cells: list[dict]) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for technique in dict.fromkeys(c["technique"] for c in cells):
        mine = [c for c in cells if c["technique"] == technique and c["status"] == "ok"]
        if not mine:
            rows[technique] = {"error": next(c["error"] for c in cells if c["technique"] == technique)}
            continue
        rows[technique] = {
            "gbits": statistics.median(c["metrics"]["throughput_bps"] for c in mine) / 1e9,
            "runs": [c["metrics"]["throughput_bps"] / 1e9 for c in mine],
            "cpu": {h: statistics.median(c["hosts"][h]["cpu_pct"] for c in mine) for h in ("client", "server")},
            "setup": statistics.median(c["metrics"]["setup_time_s"] for c in mine),
            "wire": mine[0]["wire_check"],
        }
    return rows


def table(rows: dict[str, dict]) -> str:
    base = rows["baseline"]
    lines = ["| technique | Gbit/s (median of runs) | ÷ baseline | CPU client % | CPU server % | set-up s | wire | S1 Pi Mbit/s (÷ baseline) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, row in rows.items():
        s1 = f"{S1_MBITS[name]} ({S1_MBITS[name] / S1_MBITS['baseline']:.3f})" if name in S1_MBITS else "–"
        if "error" in row:
            lines.append(f"| {name} | failed: {row['error']} | | | | | | {s1} |")
            continue
        runs = ", ".join(f"{g:.3f}" for g in row["runs"])
        lines.append(f"| {name} | **{row['gbits']:.3f}** ({runs}) | **{row['gbits'] / base['gbits']:.4f}** | "
                     f"{row['cpu']['client']:.0f} | {row['cpu']['server']:.0f} | {row['setup']:.2f} | {row['wire']} | {s1} |")
    return "\n".join(lines)


def main() -> None:
    require_root("ipsec.py")
    with exclusive():
        cells, wall = run_campaign(campaign())
    rows = summarize(cells)
    body = f"""{machine('ipsec.py')}, all numbers from one run ({wall:.0f} s): one iperf3 TCP stream client→server,
{SECONDS} s, {REPETITIONS} repetitions per technique (median), client and server pinned to one core each,
router in between. IPsec: strongSwan 5.9.8, IKEv2 PSK, tunnel mode, userspace data path
(kernel-libipsec: ESP in UDP 4500 over a TUN device). CPU is each host's share of its pinned core(s).

{table(rows)}

S1's Raspberry Pi 4 had no AES instructions, so AES-GCM was slow there and ChaCha20 ~4× faster;
here (AES-NI, OpenSSL) the comparison is between ciphers inside the same userspace data path,
whose cost is dominated by libipsec's per-packet path (TUN read, one thread per direction,
UDP socket), not by the cipher.
"""
    publish("ipsec", body)


if __name__ == "__main__":
    main()
