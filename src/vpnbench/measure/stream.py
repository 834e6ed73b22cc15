"""Real-time media as a listener hears it: isochronous VoIP-shaped flows with irtt, one-way
delay each way, IPDV, loss, packets too late for the jitter buffer, and a MOS from the ITU-T
G.107 E-model (vpnbench.measure.emodel).

A fixed jitter buffer is modelled: playout starts jitter_buffer ms after the fastest packet
of the direction arrived, so a packet whose one-way delay exceeds (minimum + jitter_buffer)
is late and, for the listener, lost. The E-model's delay is then the mouth-to-ear delay
minimum + jitter_buffer + one packet interval (packetisation), its loss the lost plus late
packets. Each direction is rated; the cell's mos and r_factor are the worse direction's.
The video profile is measure/video.py: frames decoded and continuity errors, no MOS.
"""

import json
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params, Rate
from vpnbench.measure import emodel
from vpnbench.measure.base import Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.irtt import Packet, packet_series, percentile
from vpnbench.measure.traffic import IrttProbe
from vpnbench.measure.video import run_video

PROFILES = {"g711": (0.020, 172), "g729": (0.020, 72), "opus": (0.020, 132)}  # interval s, bytes (RTP payload + 12)


class StreamParams(Params):
    kind: Literal["stream"] = "stream"
    profile: Literal["g711", "g729", "opus", "custom", "video"] = "g711"  # packet shape and E-model codec, or video
    rate: Rate = 4_280_000  # video: the stream's constant bit rate (S3's 4.28 Mbit/s)
    interval: Duration | None = None  # custom packet interval (default: the profile's, 20 ms)
    size: int | None = Field(None, ge=60, le=1472)  # custom packet bytes (irtt's -l, UDP payload)
    codec: Literal["g711", "g711-noplc", "g729", "opus"] | None = None  # E-model codec (default: the profile's)
    duration: Duration = 10.0
    calls: int = Field(1, ge=1, le=64)  # calls at once
    jitter_buffer: Duration = 0.060  # seconds of fixed playout buffer
    family: Family = "ipv4"

    def shape(self) -> tuple[float, int]:
        interval, size = PROFILES.get(self.profile, (0.020, 172))
        return self.interval or interval, self.size or size

    def codec_name(self) -> str:
        return self.codec or (self.profile if self.profile in PROFILES else "g711")


class Stream(Measurement):
    kind = "stream"
    Params = StreamParams
    tools = ("irtt", "ffmpeg")
    server_tools = ("irtt", "ffmpeg", "ss")
    packages = {"irtt": "irtt", "ffmpeg": "ffmpeg"}
    columns = (Column("mos", "MOS"), Column("owd_up_p50_ms", "up ms"), Column("owd_down_p50_ms", "down ms"),
               Column("loss_pct", "loss %"), Column("late_pct", "late %"), Column("ipdv_p50_ms", "IPDV ms"),
               Column("frame_loss_pct", "frames lost %"), Column("continuity_errors", "TS cc errors"))
    headline = Headline(("mos",), "MOS (E-model)")

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        if "mos" not in metrics:
            return f"{metrics.get('frames_received', 0):.0f}/{metrics.get('frames_sent', 0):.0f} frames, " \
                   f"{metrics.get('continuity_errors', 0):.0f} continuity errors"
        return (f"MOS {metrics['mos']:.2f}, owd {metrics.get('owd_up_p50_ms', float('nan')):.1f}/"
                f"{metrics.get('owd_down_p50_ms', float('nan')):.1f} ms, loss {metrics.get('loss_pct', 0):.2f} %")

    def expected_seconds(self) -> float:
        return self.params.duration + 1

    def default_label(self) -> str:
        p = self.params
        parts = [p.profile, f"x{p.calls}" if p.calls > 1 else "", "v6" if p.family == "ipv6" else ""]
        return "_".join(part for part in parts if part)

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        if p.profile == "video":
            return run_video(ctx, p.rate, p.duration, p.calls, p.family)
        interval, size = p.shape()
        calls = IrttProbe(ctx, p.family, interval, size, p.duration, p.calls)
        raw: dict[str, str] = {}
        try:
            pkts = calls.start().finish(raw)
        finally:
            calls.stop()
            raw.update(calls.outputs())
        if not any(pk.rtt_ms is not None for pk in pkts):
            raise MeasurementError("no irtt packet came back (100% loss)", raw)
        metrics, inputs = stream_metrics(pkts, interval, p.jitter_buffer, p.codec_name())
        raw["emodel"] = json.dumps(inputs, indent=1)
        return MeasureResult(metrics, raw, series=packet_series(pkts))


def direction(delays: list[float], packets: int, lost: int, buffer_ms: float) -> dict[str, float]:
    """One direction: `packets` sent, `lost` of them lost, the one-way delays known (a packet lost
    on the way back has no known delay up, yet it arrived): late, delay percentiles, IPDV."""
    out = {"packets": float(packets), "lost": float(lost)}
    if not delays:
        return out
    floor = min(delays)
    late = sum(1 for d in delays if d > floor + buffer_ms)
    ipdv = [abs(b - a) for a, b in zip(delays, delays[1:])]
    out.update({"late": float(late), "min_ms": floor, "p50_ms": percentile(delays, 0.5),
                "p99_ms": percentile(delays, 0.99), "ipdv_p50_ms": percentile(ipdv, 0.5) if ipdv else 0.0})
    return out


def stream_metrics(pkts: list[Packet], interval: float, jitter_buffer: float, codec: str) -> tuple[dict, dict]:
    """Metrics and the E-model's inputs. Upstream: every packet sent; downstream: those that reached
    the server (a packet lost on the way up never had a way down)."""
    buffer_ms = jitter_buffer * 1000
    lost_up = sum(1 for pk in pkts if pk.lost in ("true_up", "true"))  # "true": irtt cannot tell; counted up
    up = direction([pk.up_ms for pk in pkts if pk.up_ms is not None], len(pkts), lost_up, buffer_ms)
    down = direction([pk.down_ms for pk in pkts if pk.down_ms is not None], len(pkts) - lost_up,
                     sum(1 for pk in pkts if pk.lost == "true_down"), buffer_ms)
    metrics: dict[str, float] = {}
    ratings = {}
    for name, d in (("up", up), ("down", down)):
        lost_pct = 100 * d["lost"] / d["packets"] if d["packets"] else 100.0
        late_pct = 100 * d.get("late", 0) / d["packets"] if d["packets"] else 0.0
        metrics[f"loss_{name}_pct"], metrics[f"late_{name}_pct"] = lost_pct, late_pct
        for key in ("min_ms", "p50_ms", "p99_ms"):
            if key in d:
                metrics[f"owd_{name}_{key}"] = d[key]
        if "ipdv_p50_ms" in d:
            metrics[f"ipdv_{name}_p50_ms"] = d["ipdv_p50_ms"]
        if "min_ms" in d:
            mouth_to_ear = d["min_ms"] + buffer_ms + interval * 1000
            ratings[name] = emodel.rate_call(mouth_to_ear, min(100.0, lost_pct + late_pct), codec)
    metrics["loss_pct"] = (metrics["loss_up_pct"] + metrics["loss_down_pct"]) / 2
    metrics["late_pct"] = (metrics["late_up_pct"] + metrics["late_down_pct"]) / 2
    metrics["ipdv_p50_ms"] = max(metrics.get("ipdv_up_p50_ms", 0.0), metrics.get("ipdv_down_p50_ms", 0.0))
    metrics["packets"] = float(len(pkts))
    worst = min(ratings.values(), key=lambda r: r.r_factor) if ratings else None
    metrics["mos"] = worst.mos if worst else 1.0
    metrics["r_factor"] = worst.r_factor if worst else 0.0
    for name, rating in ratings.items():
        metrics[f"mos_{name}"] = rating.mos
    inputs = {"model": "ITU-T G.107 (06/2015) E-model, defaults of clause 7.7", "jitter_buffer_ms": buffer_ms,
              "packet_interval_ms": interval * 1000, "codec": codec,
              "directions": {name: vars(rating) for name, rating in ratings.items()}}
    return metrics, inputs
