"""bench/gen: vpnbench-gen against iperf3 and iperf2, side by side in one run.

(a) UDP packets per second per core, 64 B and 1300 B datagrams, one sending thread, as fast
    as each tool goes, between two namespaces over one veth pair. "Per core" divides the
    packets by the sender's CPU seconds (getrusage of the sending process), so a tool that
    waits is not flattered nor one that spins penalised. Target: gen >= 3 x iperf3 at 64 B.
(b) gen's pacing accuracy at 10, 50 and 90 % of its own ceiling (the rate it reached in (a)),
    sent and received packet rate against the target. Target: within 1 %.

Run as root, under the machine lock:
    flock /run/vpnbench-tests.lock .venv/bin/python bench/gen.py   (results go to bench/RESULTS.md)
"""

import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import machine, require_root, write_section  # noqa: E402
from vpnbench.hosts.resources import RunResources  # noqa: E402
from vpnbench.measure.gen import gen_binary  # noqa: E402
from vpnbench.testbeds.local import LocalTestbed  # noqa: E402
from vpnbench.testbeds.spec import TestbedSpec

SECONDS = 3
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
LENGTHS = (64, 1300)
TOOLS = ("gen", "gen-nogso", "iperf3", "iperf2")
SHARES = (0.1, 0.5, 0.9)


@dataclasses.dataclass
class Sample:
    sent_pps: float
    received_pps: float
    sender_cpu: float  # cores: CPU seconds of the sender / wall seconds

    @property
    def pps_per_core(self) -> float:
        return self.sent_pps / max(self.sender_cpu, 1e-9)


class Bench:
    def __init__(self, testbed: LocalTestbed):
        self.client, self.server = testbed.client, testbed.server
        self.target = testbed.underlay_addr("server", "ipv4")
        self.port = 7400
        self.binary = gen_binary()
        if self.binary is None:
            raise SystemExit("vpnbench-gen is not built: make")

    def _port(self) -> int:
        self.port += 1
        return self.port

    def timed(self, argv: list[str]) -> tuple[str, float]:
        """Run in the client namespace; (stdout, CPU seconds it used)."""
        pin = ["taskset", "-c", ",".join(map(str, self.client.cpus))] if self.client.cpus else []
        proc = subprocess.Popen(["ip", "netns", "exec", self.client.netns, *pin, *argv],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {out[-500:]}")
        return out, usage.ru_utime + usage.ru_stime

    def server_proc(self, argv: list[str]):
        proc = self.server.spawn(argv, name="bench-server")
        time.sleep(0.3)  # iperf2/iperf3 have no connect retry
        return proc

    def gen_run(self, length: int, rate: str, *extra: str) -> tuple[dict, float]:
        port = self._port()
        srv = self.server_proc([self.binary, "server", "--port", str(port), "--accept-timeout", "20"])
        try:
            out, cpu = self.timed([self.binary, "client", "--target", self.target, "--port", str(port), "--rate", rate,
                                   "--length", str(length), "--duration", str(SECONDS), *extra])
            srv.wait(10)
        finally:
            srv.stop(1)
        return json.loads(out.strip().splitlines()[-1]), cpu

    def gen(self, length: int, gso: bool) -> Sample:
        doc, cpu = self.gen_run(length, "max", *([] if gso else ["--gso", "off"]))
        return Sample(doc["sender"]["pps"], doc["receiver"]["pps"], cpu / SECONDS)

    def iperf3(self, length: int) -> Sample:
        port = self._port()
        srv = self.server_proc(["iperf3", "-s", "-1", "-p", str(port)])
        try:
            out, cpu = self.timed(["iperf3", "-c", self.target, "-p", str(port), "-u", "-b", "0", "-l", str(length),
                                   "-t", str(SECONDS), "-J"])
        finally:
            srv.stop(1)
        end = json.loads(out[out.index("{"):])["end"]
        sent = end.get("sum_sent") or end["sum"]
        received = end.get("sum_received") or end["sum"]
        secs = sent["seconds"]
        got = received["packets"] - received.get("lost_packets", 0)
        return Sample(sent["packets"] / secs, got / secs, cpu / SECONDS)

    def iperf2(self, length: int) -> Sample:
        port = self._port()
        srv = self.server_proc(["iperf", "-s", "-u", "-p", str(port)])
        try:
            out, cpu = self.timed(["iperf", "-c", self.target, "-p", str(port), "-u", "-b", "100G", "-l", str(length),
                                   "-t", str(SECONDS)])
        finally:
            srv.stop(1)
        sent = int(re.search(r"Sent (\d+) datagrams", out).group(1))
        # The server's report, echoed to the client: lost/total datagrams.
        report = re.search(r"(\d+)/\s*(\d+)\s*\([\d.e+-]+%\)", out.split("Server Report", 1)[-1])
        got = int(report.group(2)) - int(report.group(1)) if report else float("nan")
        return Sample(sent / SECONDS, got / SECONDS, cpu / SECONDS)

    def sample(self, tool: str, length: int) -> Sample:
        if tool.startswith("gen"):
            return self.gen(length, gso=tool == "gen")
        return getattr(self, tool)(length)

    def accuracy(self, length: int, pps: float) -> tuple[float, float, float]:
        """(sent, received) packet rate ÷ the target, and the sender's cores."""
        rate = pps * 8 * length
        doc, cpu = self.gen_run(length, f"{rate:.0f}")
        return doc["sender"]["pps"] / pps, doc["receiver"]["pps"] / pps, cpu / SECONDS


def median_sample(samples: list[Sample]) -> Sample:
    return Sample(*(statistics.median(getattr(s, f.name) for s in samples) for f in dataclasses.fields(Sample)))


def measure(bench: Bench) -> dict:
    runs: dict[tuple[str, int], list[Sample]] = {}
    for _ in range(REPEATS):  # interleaved, so the machine's load falls on every tool alike
        for length in LENGTHS:
            for tool in TOOLS:
                runs.setdefault((tool, length), []).append(bench.sample(tool, length))
    ceilings = {key: median_sample(samples) for key, samples in runs.items()}
    accuracy: dict[tuple[int, float], list[tuple[float, float, float]]] = {}
    for _ in range(REPEATS):
        for length in LENGTHS:
            ceiling = ceilings[("gen", length)].received_pps
            for share in SHARES:
                accuracy.setdefault((length, share), []).append(bench.accuracy(length, share * ceiling))
    return {"ceilings": ceilings, "runs": runs, "accuracy": accuracy}


def render(result: dict) -> str:
    c = result["ceilings"]
    rows = []
    for length in LENGTHS:
        for tool in TOOLS:
            s = c[(tool, length)]
            spread = ", ".join(f"{x.pps_per_core / 1e6:.2f}" for x in result["runs"][(tool, length)])
            rows.append(f"| {length} B | {tool} | {s.sent_pps / 1e6:.3f} | {s.received_pps / 1e6:.3f} | "
                        f"{s.sender_cpu:.2f} | **{s.pps_per_core / 1e6:.3f}** ({spread}) |")
    ratios = {length: c[("gen", length)].pps_per_core / c[("iperf3", length)].pps_per_core for length in LENGTHS}
    ratios2 = {length: c[("gen", length)].pps_per_core / c[("iperf2", length)].pps_per_core for length in LENGTHS}
    nogso = {length: c[("gen-nogso", length)].pps_per_core / c[("iperf3", length)].pps_per_core for length in LENGTHS}
    acc = "\n".join(
        f"| {length} B | {int(share * 100)} % ({share * c[('gen', length)].received_pps / 1e6:.3f} Mpps) | "
        + " | ".join(", ".join(f"{100 * (run[i] - 1):+.2f} %" for run in runs) for i in (0, 1))
        + " | " + ", ".join(f"{run[2]:.2f}" for run in runs) + " |"
        for (length, share), runs in result["accuracy"].items())
    return f"""
{machine('gen.py')} (shared with other sessions), all numbers from one run: one
sending thread, client and server namespaces on one veth pair, {SECONDS} s per run, the median of
{REPEATS} interleaved runs (per-run values in brackets). Mpps = millions of UDP datagrams per second;
"per core" = datagrams sent per CPU-second of the sending process. `gen` uses UDP GSO
(64 segments of 64 B or 50 of 1300 B per send, 8 sends per sendmmsg) and the
receiver UDP GRO; `gen-nogso` is sendmmsg of 64 single datagrams.

| length | tool | sent Mpps | received Mpps | sender cores | sent Mpps per core |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

gen ÷ iperf3, per core: **{ratios[64]:.1f} ×** at 64 B (target ≥ 3 ×), {ratios[1300]:.1f} × at 1300 B;
gen ÷ iperf2: {ratios2[64]:.1f} × at 64 B, {ratios2[1300]:.1f} × at 1300 B;
without GSO (sendmmsg alone) gen ÷ iperf3: {nogso[64]:.1f} × at 64 B, {nogso[1300]:.1f} × at 1300 B.

What the ratios mean: a send system call and the kernel's per-datagram path cost about the same
for every tool (~0.25 Mpps per core here, 64 or 1300 B alike: the veth hands each datagram to
the receiving namespace inside the sender's system call, so its CPU includes the receive side).
sendmmsg alone saves only the system-call entry (gen-nogso ≈ iperf3). UDP GSO is what gains:
one trip through the stack carries up to 64 datagrams, and on a veth pair the batch stays one
packet until the receiving socket splits it (UDP GRO keeps it whole up to gen's receiver; the
veth counters count it once). So a tunnel or router that segments (anything that must look at
every datagram, as WireGuard and IPsec do) gets its packets at a rate no one-datagram-per-call
tool can offer; a path that forwards GSO batches whole sees batches, and then `gso = false` is
the honest setting (and as slow as iperf3).

Pacing accuracy, at shares of gen's own ceiling (its median received rate above), rate ÷ target − 1,
each of {REPEATS} runs (interleaved), and the sender's cores in each (1.00 = it ran out of CPU):

| length | target | sent | received | sender cores |
| --- | --- | --- | --- | --- |
{acc}
"""


def main() -> None:
    require_root("gen.py")
    resources = RunResources()
    testbed = LocalTestbed(TestbedSpec(router=False), resources)
    try:
        testbed.up()
        testbed.wait_ready()
        result = measure(Bench(testbed))
    finally:
        testbed.down()
        resources.close()
    body = render(result)
    print(body)
    if "--no-write" not in sys.argv:
        write_section("gen", body)


if __name__ == "__main__":
    main()
