"""The monitor's remote sampler: a process that starts during a cell on a remote host is
sampled there, however slow the round trip to it (a loaded host over ssh)."""

import subprocess
import sys

from test_hostfacts import ShellHost
from vpnbench.hosts.ssh import WATCH_LOOP
from vpnbench.measure.monitor import Monitor

ROUND_TRIP = 0.4  # seconds of ssh to a loaded host, before the loop's first reading arrives


class Loop:
    """SshHost.watch's process, as RemoteWatch uses it."""

    def __init__(self, popen: subprocess.Popen):
        self.popen = popen

    def alive(self):
        return self.popen.poll() is None

    def remote_pid(self, timeout=0):
        return self.popen.pid

    def stop(self, timeout):
        self.popen.terminate()
        self.popen.wait(timeout)


class SlowRemote(ShellHost):
    """A remote host whose /proc is this machine's: its processes are those it has pid files of
    (as an ssh host's are), read by the real WATCH_LOOP, whose output arrives a round trip late."""

    def on_this_machine(self) -> bool:
        return False

    def __init__(self, role: str, workdir):
        super().__init__(role, None)
        self.workdir, self.count, self.loops = workdir, 0, []

    def start(self, argv, name) -> subprocess.Popen:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
        self.count += 1
        (self.workdir / f"{self.role}-{name}-{self.count}.pid").write_text(f"{proc.pid} 0\n")
        return proc

    def watch(self, interval):
        loop = Loop(self.start(["sh", "-c", f'sleep {ROUND_TRIP}; exec sh -c "$0" vpnbench-watch "$@"', WATCH_LOOP,
                                str(self.workdir), self.role, f"{interval:g}"], "monitor"))
        self.loops.append(loop)
        return loop


def test_a_process_started_during_the_cell_on_a_slow_remote_host_is_sampled(tmp_path):
    hosts = {role: SlowRemote(role, tmp_path) for role in ("client", "router", "server")}
    monitor = Monitor(hosts, 0.1)
    monitor.start()
    # a busy process of 0.8 s, started after the monitor: a cell's iperf3 server
    busy = hosts["server"].start([sys.executable, "-c", "import time\nend = time.monotonic() + 0.8\n"
                                  "while time.monotonic() < end: pass"], "busy")
    busy.wait()
    summary = monitor.stop()
    procs = summary["server"]["procs_cpu_pct"]
    # read in turn over ssh, three hosts took 3 x 0.4 s a round, after the process had ended
    assert any(name.startswith("python") for name in procs), summary["server"]
    assert procs[next(name for name in procs if name.startswith("python"))] > 0
    assert "sh" not in procs, procs  # the reading loop is vpnbench's, not one of the run's processes
    assert summary["server"]["samples"] >= 2, summary["server"]
    assert not any(loop.alive() for host in hosts.values() for loop in host.loops)  # each loop ended at stop
