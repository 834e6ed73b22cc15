"""The series table's encoding: one row per (cell, host, name), times as offsets from the
first sample and values as deflated float32s. The store and its migrations both write it, and
the monitor's samples become series in one layout (sample_points), which an old file's migration
shares."""

import array
import zlib

from vpnbench.store.records import SeriesPoint


def encode_chunks(cell_id: int, points: list[SeriesPoint]) -> list[tuple]:
    """Rows of the series table: one per (host, name), times as offsets from the first."""
    chunks: dict[tuple[str, str], list[SeriesPoint]] = {}
    for point in points:
        chunks.setdefault((point.host, point.name), []).append(point)
    rows = []
    for (host, name), mine in chunks.items():
        t0 = mine[0].t
        rows.append((cell_id, host, name, t0, len(mine), _pack([p.t - t0 for p in mine]),
                     _pack([p.value for p in mine])))
    return rows


def _pack(values: list[float]) -> bytes:
    """float32s, deflated: sample times are evenly spaced and many series (memory, steal) barely
    change, so a 20-hour soak fits the size target (bench/store.py)."""
    return zlib.compress(array.array("f", values).tobytes(), 1)


def decode_chunk(host: str, name: str, t0: float, t_blob: bytes, v_blob: bytes) -> list[SeriesPoint]:
    times, values = array.array("f"), array.array("f")
    times.frombytes(zlib.decompress(t_blob))
    values.frombytes(zlib.decompress(v_blob))
    return [SeriesPoint(name, round(t0 + dt, 4), value, host) for dt, value in zip(times, values)]


# Per-sample values that become series of the same name (the rest are lists and maps, below).
SCALAR_SERIES = ("cpu_pct", "cpu_steal_pct", "cpu_softirq_pct", "cpu_system_pct", "mem_used_bytes", "proc_rss_bytes")


def sample_points(sample: dict) -> list[SeriesPoint]:
    """One monitor sample as series points: the scalars by name, each core as cpu_core<N>_pct
    (N the real core number), each process as proc_cpu_pct:<name>."""
    t, host = sample["t"], sample["host"]
    points = [SeriesPoint(name, t, float(sample[name]), host) for name in SCALAR_SERIES
              if sample.get(name) is not None]
    per_core = sample.get("cpu_per_core_pct") or []
    cores = sample.get("cores") or range(len(per_core))
    points += [SeriesPoint(f"cpu_core{core}_pct", t, float(busy), host) for core, busy in zip(cores, per_core)]
    points += [SeriesPoint(f"proc_cpu_pct:{name}", t, float(pct), host)
               for name, pct in (sample.get("procs_cpu_pct") or {}).items()]
    return points
