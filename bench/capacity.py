"""bench/capacity: what the capacity measurements' generators and search can do on this machine.

(a) Packets per second per core of the generators: iperf3 (3.12, one thread) and iperf2 (2.1,
    a thread per stream) sending UDP as fast as they can (iperf3 -b 0, iperf2 -b 100G) over the
    baseline testbed, at 1300 and 64 bytes. pps per core = datagrams sent / the client process's
    CPU seconds (user + system, from wait4), so a tool that also waits is not flattered.
(b) rate_search on the baseline at a 0.5 % width: its NDR and PDR beside the generator's own
    ceiling from (a), the search's wall time and trial count.

Run as root: flock /run/vpnbench-tests.lock .venv/bin/python bench/capacity.py  (writes bench/RESULTS.md)
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import baseline_testbed, machine, publish, require_root  # noqa: E402
from vpnbench.measure.base import MeasureContext, PortAllocator  # noqa: E402
from vpnbench.measure.iperf2 import parse_iperf2  # noqa: E402
from vpnbench.measure.rate_search import RateSearch, RateSearchParams  # noqa: E402

SECONDS = 3
REPEATS = 3


def timed(argv: list[str], timeout: float) -> tuple[str, float, float]:
    """Run argv; (output, wall seconds, CPU seconds of the process and its threads, from wait4).
    `ip netns exec` execs the tool in place, so the usage is the tool's."""
    with tempfile.TemporaryFile("w+") as out:
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, _, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = 0  # reaped above; keep Popen from waiting again
        wall = time.monotonic() - started
        out.seek(0)
        return out.read(), wall, usage.ru_utime + usage.ru_stime


def generator_rate(testbed, target: str, tool: str, length: int, streams: int, port: int) -> dict:
    udp_server = ["iperf3", "-s", "-1", "-p", str(port)] if tool == "iperf3" else \
        ["iperf", "-s", "-u", "-p", str(port), "-t", str(SECONDS + 10)]
    server = testbed.server.spawn(udp_server, name=f"{tool}-server")
    try:
        time.sleep(0.5)
        if tool == "iperf3":
            client = ["iperf3", "-c", target, "-p", str(port), "-u", "-b", "0", "-l", str(length),
                      "-t", str(SECONDS), "-P", str(streams), "-J"]
        else:
            client = ["iperf", "-c", target, "-p", str(port), "-u", "-b", "100G", "-l", str(length),
                      "-t", str(SECONDS), "-P", str(streams), "-e", "-f", "b"]
        out, wall, cpu = timed(["ip", "netns", "exec", testbed.client.netns, *client], SECONDS + 20)
    finally:
        server.stop(1)
    if tool == "iperf3":
        doc = json.loads(out[out.find("{"):])
        sent = doc["end"]["sum"]["packets"] if "packets" in doc["end"]["sum"] else \
            doc["end"]["sum_sent"]["packets"]
        seconds = doc["end"]["sum"]["seconds"]
    else:
        report = parse_iperf2(out)
        sent = sum(report.sent_datagrams.values()) or report.total()[0] // length
        seconds = report.total()[2]
    return {"pps": sent / seconds, "pps_per_core": sent / cpu if cpu > 0 else float("nan"),
            "cpu_cores": cpu / seconds, "bps": sent * length * 8 / seconds}


def best(runs: list[dict]) -> dict:
    """The run with the median pps (the machine is shared: noise goes both ways)."""
    return sorted(runs, key=lambda r: r["pps"])[len(runs) // 2]


def main() -> None:
    require_root("capacity.py")
    rows, search = {}, {}
    with baseline_testbed() as (testbed, tunnel, _):
        target = tunnel.server_addrs["ipv4"]
        ports = PortAllocator(5601, 5699)
        for length in (1300, 64):
            for tool, streams in (("iperf3", 1), ("iperf2", 1), ("iperf2", 2)):
                rows[(length, tool, streams)] = best([generator_rate(testbed, target, tool, length, streams,
                                                                     ports.next()) for _ in range(REPEATS)])
                print(length, tool, streams, rows[(length, tool, streams)], flush=True)
        mctx = MeasureContext(testbed.client, testbed.server, tunnel, PortAllocator(5701, 5799), {"kind": "baseline"})
        params = RateSearchParams(min_rate="50M", max_rate="10G", relative_width=0.005, trial_duration=1.0,
                                  final_trial_duration=1.0, duration_sum=1.0, budget=900.0)
        started = time.monotonic()
        result = RateSearch(params).run(mctx)
        search = {**result.metrics, "wall_s": time.monotonic() - started}
        print(search, flush=True)
    write(rows, search)


def write(rows: dict, search: dict) -> None:
    lines = ["| datagram | tool | streams | sent kpps | client CPU (cores) | kpps per core | Mbit/s sent |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for (length, tool, streams), r in rows.items():
        lines.append(f"| {length} B | {tool} | {streams} | {r['pps'] / 1e3:.0f} | {r['cpu_cores']:.2f} | "
                     f"**{r['pps_per_core'] / 1e3:.0f}** | {r['bps'] / 1e6:.0f} |")
    ceiling = rows[(1300, "iperf3", 1)]["bps"]
    ndr = search.get("ndr_bps")
    ndr_text = f"{ndr / 1e6:.0f} Mbit/s" if ndr else \
        f"generator-limited at {search.get('generator_limit_bps', 0) / 1e6:.0f} Mbit/s"
    pdr = search.get("pdr_bps")
    pdr_text = f"{pdr / 1e6:.0f} Mbit/s" if pdr else "generator-limited"
    body = f"""
{machine('capacity.py')}, all numbers from one run; UDP over the baseline (client—router—server namespaces),
{SECONDS} s per run, the median of {REPEATS} runs by pps. The machine is shared with other sessions.

{chr(10).join(lines)}

rate_search on the baseline, 1300-byte datagrams, iperf3 generator, MLRsearch at a 0.5 % width
(trials 1 s, duration sum 1 s, range 50 Mbit/s–10 Gbit/s):

| what | measured |
| --- | --- |
| NDR (loss 0) | **{ndr_text}** |
| PDR (loss 0.5 %) | {pdr_text} |
| the generator's own ceiling (iperf3 -b 0 above) | {ceiling / 1e6:.0f} Mbit/s → NDR ÷ ceiling **{(ndr or 0) / ceiling:.2f}** |
| highest rate the generator sent in the search | {search.get('generator_max_sent_bps', float('nan')) / 1e6:.0f} Mbit/s |
| search wall time | **{search.get('wall_s', float('nan')):.0f} s**, {search.get('trials', 0):.0f} trials |
"""
    publish("capacity", body)


if __name__ == "__main__":
    main()
