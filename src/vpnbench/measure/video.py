"""The stream measurement's video profile: S3's live video, a constant-bitrate MPEG-TS stream
(ffmpeg, `-re`, a generated test picture) sent over UDP from the client to an ffmpeg receiver in
the server's host, `calls` streams at once (S3 watched two). The receiver counts the frames it
decoded and the MPEG-TS continuity-counter errors (a lost or reordered datagram); a frame not
decoded is one a viewer missed.

The TS muxer pads with null packets to `-muxrate`, so the wire rate is `rate` whatever the
picture; the encoder's own rate is 80 % of it, under the mux rate.
"""

import re
import time

from vpnbench.foundation.errors import MeasurementError
from vpnbench.hosts.base import Proc
from vpnbench.measure.base import MeasureContext, MeasureResult
from vpnbench.servers.base import tail, url_host, wait_listening

FPS = 25
PICTURE = "testsrc=size=640x360:rate=25"
IDLE_END_US = 2_000_000  # the receiver stops 2 s after the last datagram
_FRAMES = re.compile(r"frame=\s*(\d+)")
_CONTINUITY = re.compile(r"Continuity check failed")


def run_video(ctx: MeasureContext, rate: int, duration: float, streams: int, family: str) -> MeasureResult:
    address = ctx.target(family)
    ports = [ctx.ports.next() for _ in range(streams)]
    raw: dict[str, str] = {}
    receivers: list[Proc] = []
    try:
        for port in ports:
            # debug level: the MPEG-TS demuxer reports continuity errors only there
            receivers.append(ctx.server.spawn(["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "debug", "-i",
                                               f"udp://{url_host(address)}:{port}?timeout={IDLE_END_US}",
                                               "-f", "null", "-"], name="ffmpeg-receiver"))
            wait_listening(ctx.server, receivers[-1], port, "ffmpeg receiver", udp=True)
        senders = [ctx.client.spawn(sender_argv(address, port, rate, duration), name="ffmpeg") for port in ports]
        for i, proc in enumerate(senders, start=1):
            if proc.wait(duration + 20) is None:
                proc.stop(1)
            raw[f"ffmpeg_sender{i}"] = proc.output()
            if proc.wait(0) != 0:
                raise MeasurementError(f"ffmpeg sender {i} failed: {tail(proc.output())}", raw)
        deadline = time.monotonic() + IDLE_END_US / 1e6 + 5
        for proc in receivers:
            proc.wait(max(0.1, deadline - time.monotonic()))
    finally:
        for i, proc in enumerate(receivers, start=1):
            proc.stop(1)
            raw[f"ffmpeg_receiver{i}"] = proc.output()
    return MeasureResult(video_metrics([raw[f"ffmpeg_receiver{i}"] for i in range(1, len(ports) + 1)],
                                       duration, rate), raw)


def sender_argv(address: str, port: int, rate: int, duration: float) -> list[str]:
    video = str(int(rate * 0.8))
    return ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i", PICTURE,
            "-t", f"{duration:g}", "-c:v", "mpeg2video", "-b:v", video, "-maxrate", video, "-bufsize", video,
            "-f", "mpegts", "-muxrate", str(rate), f"udp://{url_host(address)}:{port}?pkt_size=1316"]


def video_metrics(receiver_logs: list[str], duration: float, rate: int) -> dict[str, float]:
    """Frames sent and decoded, and continuity errors, over all streams."""
    sent = round(duration * FPS) * len(receiver_logs)
    received = sum(int(frames[-1]) if (frames := _FRAMES.findall(log)) else 0 for log in receiver_logs)
    errors = sum(len(_CONTINUITY.findall(log)) for log in receiver_logs)
    return {"frames_sent": float(sent), "frames_received": float(received),
            "frame_loss_pct": max(0.0, 100.0 * (sent - received) / sent), "continuity_errors": float(errors),
            "rate_bps": float(rate)}
