"""The monitor's remote sampler: a process that starts during a cell on a remote host is
sampled there, even when every read is a slow round trip (a loaded host over ssh)."""

import subprocess
import sys
import time

from test_hostfacts import ShellHost
from vpnbench.measure.monitor import Monitor

ROUND_TRIP = 0.4  # seconds per read, as ssh to a loaded host took


class SlowRemote(ShellHost):
    """A remote host whose /proc is this machine's, read with a round trip's delay; its
    processes are those spawned through it (as an ssh host's are)."""

    def on_this_machine(self) -> bool:
        return False

    def __init__(self, role: str):
        super().__init__(role, None)
        self.procs: list[subprocess.Popen] = []

    def run(self, argv, timeout=30.0, check=True, input=None):
        time.sleep(ROUND_TRIP)
        return super().run(argv, timeout, check, input)

    def pids(self):
        return [p.pid for p in self.procs if p.poll() is None]


def test_a_process_started_during_the_cell_on_a_slow_remote_host_is_sampled():
    hosts = {role: SlowRemote(role) for role in ("client", "router", "server")}
    monitor = Monitor(hosts, 0.1)
    monitor.start()
    # a busy process of 0.8 s, started after the monitor: a cell's iperf3 server
    busy = subprocess.Popen([sys.executable, "-c", "import time\nend = time.monotonic() + 0.8\n"
                             "while time.monotonic() < end: pass"])
    hosts["server"].procs.append(busy)
    busy.wait()
    summary = monitor.stop()
    procs = summary["server"]["procs_cpu_pct"]
    # three hosts read in turn took 3 x 0.4 s a round: the server's read came after the process ended
    assert any(name.startswith("python") for name in procs), summary["server"]
    assert procs[next(name for name in procs if name.startswith("python"))] > 0
