"""Per-host resource monitoring during a measurement, with psutil.

On a local testbed all hosts share one kernel, so "a host's CPU" is made meaningful in
two ways: the busy share of the cores the host is pinned to (which includes the kernel's
softirq work for its packets), and the CPU of the processes living in the host's network
namespace (the technique's daemons and the traffic tools), by process name.
"""

import collections
import dataclasses
import os
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import psutil

from vpnbench.hosts.base import Host
from vpnbench.store.records import SeriesPoint
from vpnbench.store.series_codec import sample_points

Sink = Callable[[list[SeriesPoint]], None]


@dataclasses.dataclass
class Watched:
    role: str
    cores: list[int]
    pinned: bool
    netns_inode: int | None


def _busy(delta) -> float:
    total = sum(delta)
    idle = delta.idle + getattr(delta, "iowait", 0.0)
    return 0.0 if total <= 0 else 100.0 * (total - idle) / total


def _core_deltas(before, after) -> list:
    return [type(a)(*[x - y for x, y in zip(a, b)]) for a, b in zip(after, before)]


def _share(deltas, cores, field) -> float:
    total = sum(sum(deltas[c]) for c in cores)
    return 0.0 if total <= 0 else 100.0 * sum(getattr(deltas[c], field, 0.0) for c in cores) / total


class Monitor:
    """Samples every host at a fixed interval in a background thread. Each sample goes to
    the sink as series points as it is taken (the store writes them while the cell runs);
    the monitor itself keeps only running totals, so a 20-hour soak costs no memory."""

    def __init__(self, hosts: dict[str, Host], interval: float, sink: Sink | None = None):
        self.sink = sink
        ncores = psutil.cpu_count() or 1
        self.interval = interval
        # Hosts on other machines (ssh, vm) are sampled there, by reading their /proc over ssh.
        self.remote = [RemoteWatch(host, interval) for host in hosts.values() if not host.on_this_machine()]
        # Each remote host's loop started, and its last reading awaited, at once, not one ssh round
        # trip after another.
        self._remote_pool = ThreadPoolExecutor(max_workers=len(self.remote)) if self.remote else None
        self.watched = [
            Watched(role, host.cpus if host.cpus is not None else list(range(ncores)), host.cpus is not None,
                    host.netns_inode())
            for role, host in hosts.items() if host.on_this_machine()
        ]
        self.sample_counts: dict[str, int] = collections.Counter()
        self.mem_max: dict[str, float] = {}
        self._procs: dict[int, psutil.Process] = {}
        self._seen: dict[int, str | None] = {}  # pid -> role (None: not a watched namespace)
        self._proc_cpu: dict[int, float] = {}
        self._proc_total: dict[str, dict[str, float]] = {w.role: {} for w in self.watched}
        self._rss: dict[str, float] = {}  # role -> RSS of its processes at the last sample
        self._rss_max: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="vpnbench-monitor", daemon=True)

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._last_t = 0.0
        self._cores0 = self._last_cores = psutil.cpu_times(percpu=True)
        # Processes already running count from now; any pid seen later started inside the
        # window, so all of its CPU time belongs to it.
        for pid in self._scan_processes():
            try:
                times = psutil.Process(pid).cpu_times()
                self._proc_cpu[pid] = times.user + times.system
            except psutil.Error:
                pass
        self._each_remote(lambda watch: watch.start())
        self._thread.start()

    def _each_remote(self, call) -> list:
        return list(self._remote_pool.map(call, self.remote)) if self._remote_pool else []

    def stop(self) -> dict[str, dict]:
        self._stop.set()
        self._thread.join()
        self._each_remote(lambda watch: watch.finish())
        self._sample()
        if self._remote_pool:
            self._remote_pool.shutdown()
        return self.summary()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _scan_processes(self) -> dict[int, str]:
        """pid -> role, for every process in a watched namespace. Only pids not seen before
        are looked at (a process does not change namespace here), which keeps a 10 Hz
        sampler cheap on a machine with many processes."""
        by_inode = {w.netns_inode: w.role for w in self.watched if w.netns_inode is not None}
        pids = set(psutil.pids())
        for pid in pids - self._seen.keys():
            try:
                self._seen[pid] = by_inode.get(os.stat(f"/proc/{pid}/ns/net").st_ino)
            except OSError:
                self._seen[pid] = None
        for pid in self._seen.keys() - pids:
            del self._seen[pid]
        return {pid: role for pid, role in self._seen.items() if role is not None}

    def _sample(self) -> None:
        now = time.monotonic() - self._t0
        elapsed, self._last_t = max(now - self._last_t, 1e-6), now
        cores = psutil.cpu_times(percpu=True)
        deltas = _core_deltas(self._last_cores, cores)
        self._last_cores = cores
        owners = self._scan_processes()
        proc_now = self._sample_processes(owners, elapsed)
        samples = [sample for sample in self._each_remote(lambda watch: watch.sample(now)) if sample]
        mem = psutil.virtual_memory()
        for w in self.watched:
            samples.append({
                "t": round(now, 3), "host": w.role, "cores": w.cores,
                "cpu_pct": statistics.fmean(_busy(deltas[c]) for c in w.cores),
                "cpu_per_core_pct": [round(_busy(deltas[c]), 2) for c in w.cores],
                "cpu_steal_pct": _share(deltas, w.cores, "steal"),
                "cpu_softirq_pct": _share(deltas, w.cores, "softirq"),
                "cpu_system_pct": _share(deltas, w.cores, "system"),
                "procs_cpu_pct": proc_now.get(w.role, {}),
                "proc_rss_bytes": self._rss.get(w.role),
                "mem_used_bytes": mem.total - mem.available,
            })
        self._keep(samples)

    def _keep(self, samples: list[dict]) -> None:
        """Count each host's samples, track its peak memory, hand the values to the sink."""
        for sample in samples:
            role = sample["host"]
            self.sample_counts[role] += 1
            if sample.get("mem_used_bytes") is not None:
                self.mem_max[role] = max(self.mem_max.get(role, 0), sample["mem_used_bytes"])
        if self.sink is not None and samples:  # no sink, no conversion: it is on the sampler's path
            self.sink([point for sample in samples for point in sample_points(sample)])

    def _sample_processes(self, owners: dict[int, str], elapsed: float) -> dict[str, dict[str, float]]:
        """CPU of each watched process since the previous sample, summed by host and name."""
        result: dict[str, dict[str, float]] = {}
        rss: dict[str, float] = {}
        for pid, role in owners.items():
            try:
                proc = self._procs.get(pid) or self._procs.setdefault(pid, psutil.Process(pid))
                with proc.oneshot():
                    times = proc.cpu_times()
                    name = proc.name()
                    rss[role] = rss.get(role, 0.0) + proc.memory_info().rss
            except psutil.Error:
                self._procs.pop(pid, None)
                continue
            cpu = times.user + times.system
            used = cpu - self._proc_cpu.get(pid, 0.0)
            self._proc_cpu[pid] = cpu
            per_name = result.setdefault(role, {})
            per_name[name] = round(per_name.get(name, 0.0) + 100.0 * used / elapsed, 2)
            totals = self._proc_total[role]
            totals[name] = totals.get(name, 0.0) + used
        self._rss = rss
        for role, value in rss.items():
            self._rss_max[role] = max(self._rss_max.get(role, 0.0), value)
        return result

    def summary(self) -> dict[str, dict]:
        window = max(time.monotonic() - self._t0, 1e-9)
        deltas = _core_deltas(self._cores0, self._last_cores)
        freq = _frequencies()
        temp = _temperature()
        out = {}
        for w in self.watched:
            procs = {name: round(100.0 * secs / window, 2) for name, secs in self._proc_total[w.role].items()}
            out[w.role] = {
                "cpu_pct": round(statistics.fmean(_busy(deltas[c]) for c in w.cores), 2),
                "cpu_per_core_pct": [round(_busy(deltas[c]), 2) for c in w.cores],
                "cores": w.cores,
                "cpu_pinned": w.pinned,
                "cpu_user_pct": round(_share(deltas, w.cores, "user"), 2),
                "cpu_system_pct": round(_share(deltas, w.cores, "system"), 2),
                "cpu_softirq_pct": round(_share(deltas, w.cores, "softirq"), 2),
                "cpu_steal_pct": round(_share(deltas, w.cores, "steal"), 2),
                "proc_cpu_pct": round(sum(procs.values()), 2),
                "procs_cpu_pct": procs,
                "mem_used_bytes": self.mem_max.get(w.role),
                "proc_rss_bytes": self._rss_max.get(w.role, 0.0),
                "temperature_c": temp,
                "freq_mhz": _mean([freq[c] for c in w.cores if c < len(freq)]) if freq else None,
                "samples": self.sample_counts[w.role],
            }
        for watch in self.remote:
            out[watch.host.role] = watch.summary(self.sample_counts[watch.host.role])
        return out


CLOCK_TICKS = 100  # USER_HZ: the unit of /proc/<pid>/stat times on every Linux architecture


class RemoteWatch:
    """One host on another machine, read by a loop running there (SshHost.watch): /proc/stat,
    /proc/meminfo and the stat of the run's processes every interval, timed by the host's own
    uptime. Each reading is taken in as it arrives, so a process that any reading saw counts
    however late the sample that reports it. Same keys as local hosts."""

    def __init__(self, host: Host, interval: float):
        self.host = host
        self.interval = interval
        self.loop = None
        self.first = self.last = self.mark = None  # readings: the first, the newest, the last sampled
        self.proc_cpu: dict[int, tuple[str, float]] = {}  # pid -> (name, cpu seconds at the last reading)
        self.proc_total: dict[str, float] = {}
        self.proc_since_mark: dict[str, float] = {}
        self.mem_max: int | None = None
        self.t0 = self.t_last = self.t_mark = 0.0  # the host's uptime at those readings
        self.readings = 0
        self._arrived = threading.Condition()

    def start(self) -> None:
        try:
            self.loop = self.host.watch(self.interval)
        except OSError:  # ConnectionError: the host did not answer, so no samples rather than wrong ones
            return
        threading.Thread(target=self._take_readings, name=f"vpnbench-watch-{self.host.role}", daemon=True).start()
        self._wait_for(1, 10 + 4 * self.interval)  # none by then: the host did not answer, no samples

    def _wait_for(self, count: int, timeout: float) -> None:
        with self._arrived:
            self._arrived.wait_for(lambda: self.readings >= count or not self.loop.alive(), timeout)

    def _take_readings(self) -> None:
        uptime, lines = None, []
        for raw in self.loop.popen.stdout:
            line = raw.decode(errors="replace")
            if line.startswith("vpnbench-sample "):
                uptime, lines = float(line.split()[1]), []
            elif line.strip() == "vpnbench-end" and uptime is not None:
                self._take(uptime, parse_proc("".join(lines)))
            else:
                lines.append(line)
        with self._arrived:
            self._arrived.notify_all()

    def _take(self, uptime: float, reading) -> None:
        own = self.loop.remote_pid(0)
        with self._arrived:
            if not reading[0]:
                return
            if self.first is None:
                self.first = self.last = self.mark = reading
                self.t0 = self.t_last = self.t_mark = uptime
                self.proc_cpu = dict(reading[2])  # already running: counted from now
            else:
                for pid, (name, cpu) in reading[2].items():
                    if pid == own:
                        continue
                    used = cpu - self.proc_cpu.get(pid, (name, 0.0))[1]  # unseen before: started since
                    self.proc_cpu[pid] = (name, cpu)
                    self.proc_since_mark[name] = self.proc_since_mark.get(name, 0.0) + used
                    self.proc_total[name] = self.proc_total.get(name, 0.0) + used
                self.last, self.t_last = reading, uptime
            if reading[1]:
                self.mem_max = max(self.mem_max or 0, reading[1])
            self.readings += 1
            self._arrived.notify_all()

    def finish(self) -> None:
        """One more reading (the monitor's last sample is taken at its stop), then end the loop."""
        if self.loop is None:
            return
        self._wait_for(self.readings + 1, 5 + 2 * self.interval)
        self.loop.stop(1)

    def sample(self, now: float) -> dict | None:
        with self._arrived:
            if self.first is None or self.last is self.mark:
                return None  # no reading since the last sample (or the host did not answer)
            elapsed = max(self.t_last - self.t_mark, 1e-6)
            deltas = _core_deltas(self.mark[0], self.last[0])
            procs = {name: round(100.0 * used / elapsed, 2) for name, used in self.proc_since_mark.items()}
            self.mark, self.t_mark, self.proc_since_mark = self.last, self.t_last, {}
            mem = self.last[1]
        cores = self._cores(deltas)
        return {"t": round(now, 3), "host": self.host.role, "cores": cores,
                "cpu_pct": statistics.fmean(_busy(deltas[c]) for c in cores) if cores else 0.0,
                "cpu_per_core_pct": [round(_busy(deltas[c]), 2) for c in cores],
                "cpu_steal_pct": _share(deltas, cores, "steal") if cores else None,
                "cpu_softirq_pct": _share(deltas, cores, "softirq") if cores else None,
                "cpu_system_pct": _share(deltas, cores, "system") if cores else None,
                "procs_cpu_pct": procs, "mem_used_bytes": mem}

    def _cores(self, deltas) -> list[int]:
        cores = self.host.cpus if self.host.cpus is not None else range(len(deltas))
        return [c for c in cores if c < len(deltas)]

    def summary(self, sample_count: int) -> dict:
        window = max(self.t_last - self.t0, 1e-9)
        deltas = _core_deltas(self.first[0], self.last[0]) if self.first and self.first[0] else []
        cores = self._cores(deltas)
        procs = {name: round(100.0 * secs / window, 2) for name, secs in self.proc_total.items()}
        mean = (lambda f: round(statistics.fmean(f(deltas[c]) for c in cores), 2)) if cores else (lambda f: None)
        return {
            "cpu_pct": mean(_busy),
            "cpu_per_core_pct": [round(_busy(deltas[c]), 2) for c in cores],
            "cores": cores, "cpu_pinned": self.host.cpus is not None,
            "cpu_user_pct": round(_share(deltas, cores, "user"), 2) if cores else None,
            "cpu_system_pct": round(_share(deltas, cores, "system"), 2) if cores else None,
            "cpu_softirq_pct": round(_share(deltas, cores, "softirq"), 2) if cores else None,
            "cpu_steal_pct": round(_share(deltas, cores, "steal"), 2) if cores else None,
            "proc_cpu_pct": round(sum(procs.values()), 2), "procs_cpu_pct": procs,
            "mem_used_bytes": self.mem_max, "proc_rss_bytes": None,
            "temperature_c": None, "freq_mhz": None,
            "samples": sample_count,
        }


CpuTimes = collections.namedtuple("CpuTimes", "user nice system idle iowait irq softirq steal guest guest_nice")


def parse_proc(text: str) -> tuple[list, int | None, dict[int, tuple[str, float]]]:
    """Per-core CPU times, used memory and {pid: (name, cpu seconds)} from concatenated
    /proc/stat, /proc/meminfo and /proc/<pid>/stat."""
    cores, meminfo, procs = [], {}, {}
    for line in text.splitlines():
        if line.startswith("cpu") and line[3:4].isdigit():
            values = [float(v) for v in line.split()[1:11]]
            cores.append(CpuTimes(*values, *[0.0] * (10 - len(values))))
        elif ":" in line and line.split(":", 1)[0] in ("MemTotal", "MemAvailable"):
            meminfo[line.split(":", 1)[0]] = int(line.split()[1]) * 1024
        elif ") " in line and line.split(" ", 1)[0].isdigit():
            head, rest = line.rsplit(") ", 1)
            fields = rest.split()
            procs[int(head.split(" ", 1)[0])] = (head.split("(", 1)[1], (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)
    used = meminfo["MemTotal"] - meminfo["MemAvailable"] if len(meminfo) == 2 else None
    return cores, used, procs


def _mean(values):
    return round(statistics.fmean(values), 1) if values else None


def _frequencies() -> list[float]:
    try:
        return [f.current for f in psutil.cpu_freq(percpu=True) or []]
    except (AttributeError, OSError, NotImplementedError):
        return []


def _temperature() -> float | None:
    try:
        sensors = psutil.sensors_temperatures()
    except (AttributeError, OSError):
        return None
    values = [t.current for entries in sensors.values() for t in entries if t.current]
    return max(values) if values else None
