"""Per-host resource monitoring during a measurement, with psutil.

On a local testbed all hosts share one kernel, so "a host's CPU" is made meaningful in
two ways: the busy share of the cores the host is pinned to (which includes the kernel's
softirq work for its packets), and the CPU of the processes living in the host's network
namespace (the technique's daemons and the traffic tools), by process name.
"""

import dataclasses
import os
import statistics
import threading
import time

import psutil

from vpnbench.hosts.base import Host


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
    """Samples every host at a fixed interval in a background thread."""

    def __init__(self, hosts: dict[str, Host], interval: float):
        ncores = psutil.cpu_count() or 1
        self.interval = interval
        self.watched = [
            Watched(role, host.cpus if host.cpus is not None else list(range(ncores)), host.cpus is not None,
                    getattr(host, "netns_inode", lambda: None)())
            for role, host in hosts.items()
        ]
        self.samples: list[dict] = []
        self._procs: dict[int, psutil.Process] = {}
        self._seen: dict[int, str | None] = {}  # pid -> role (None: not a watched namespace)
        self._proc_cpu: dict[int, float] = {}
        self._proc_total: dict[str, dict[str, float]] = {w.role: {} for w in self.watched}
        self._rss: dict[str, list[float]] = {w.role: [] for w in self.watched}
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
        self._thread.start()

    def stop(self) -> dict[str, dict]:
        self._stop.set()
        self._thread.join()
        self._sample()
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
        mem = psutil.virtual_memory()
        for w in self.watched:
            self.samples.append({
                "t": round(now, 3), "host": w.role,
                "cpu_pct": statistics.fmean(_busy(deltas[c]) for c in w.cores),
                "cpu_per_core_pct": [round(_busy(deltas[c]), 2) for c in w.cores],
                "procs_cpu_pct": proc_now.get(w.role, {}),
                "mem_used_bytes": mem.total - mem.available,
            })

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
        for role, value in rss.items():
            self._rss[role].append(value)
        return result

    def summary(self) -> dict[str, dict]:
        window = max(time.monotonic() - self._t0, 1e-9)
        deltas = _core_deltas(self._cores0, self._last_cores)
        freq = _frequencies()
        temp = _temperature()
        out = {}
        for w in self.watched:
            mine = [s for s in self.samples if s["host"] == w.role]
            procs = {name: round(100.0 * secs / window, 2) for name, secs in self._proc_total[w.role].items()}
            out[w.role] = {
                "cpu_pct": round(statistics.fmean(_busy(deltas[c]) for c in w.cores), 2),
                "cpu_per_core_pct": [round(_busy(deltas[c]), 2) for c in w.cores],
                "cores": w.cores,
                "cpu_pinned": w.pinned,
                "cpu_user_pct": round(_share(deltas, w.cores, "user"), 2),
                "cpu_system_pct": round(_share(deltas, w.cores, "system"), 2),
                "cpu_softirq_pct": round(_share(deltas, w.cores, "softirq"), 2),
                "proc_cpu_pct": round(sum(procs.values()), 2),
                "procs_cpu_pct": procs,
                "mem_used_bytes": max((s["mem_used_bytes"] for s in mine), default=None),
                "proc_rss_bytes": max(self._rss[w.role], default=0.0),
                "temperature_c": temp,
                "freq_mhz": _mean([freq[c] for c in w.cores if c < len(freq)]) if freq else None,
                "samples": len(mine),
            }
        return out


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
