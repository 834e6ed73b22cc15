"""The series table's encoding: one row per (cell, host, name), times as offsets from the
first sample and values as deflated float32s. The store and its migrations both write it."""

import array
import zlib

from vpnbench.records import SeriesPoint


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
