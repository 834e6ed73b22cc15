"""QUIC through the tunnel with TQUIC's tools (tquic_server, tquic_client; builds.RECIPES["tquic"]).

vpn-bench, the peer mesh benchmark, measures QUIC with qperf (rbruenig/qperf, C on quicly): no
registry this machine reaches has it. TQUIC's tools are a crate on crates.io (tquic_tools, with
BoringSSL inside the tquic crate), built like the daemons. A cell runs two things against one
tquic_server on the server (a self-signed certificate made for the cell on the server: key 0600
in the cell's private directory, wiped after; only its path is in argv):

- timing: `connections` fresh connections one after the other, each one HTTP/0.9 GET of a 1-byte
  file, with the client's qlog on. Each connection's qlog times (ms from the connection's
  creation, the tool's clock) give its handshake, the client's first 1-RTT packet sent (the
  client has 1-RTT keys only once the server's Finished is in: at least one round trip), and its
  time to first byte, the first STREAM frame of the request's stream the client receives (the
  handshake, then a request's round trip). The cell keeps their medians.
- throughput: one connection, one HTTP/0.9 GET of a `size`-byte random file on a tmpfs, one
  stream (qperf's too), no qlog (a packet's event each would cost the client CPU). The tool's own
  "time for request" (from sending the GET to the stream's end) over the file's bits is the
  throughput; the handshake is outside it.

TQUIC's defaults, which every cell states in raw["tquic_settings"]: BBR, an initial window of
32 packets, 1200-byte UDP payloads (QUIC's minimum, which fits inside every tunnel's MTU here;
a padded 1-RTT PING of 1472 bytes probes for more), one thread, one stream, no 0-RTT. The client verifies no
certificate (tquic_client never does): the measurement is of the path, not of a PKI.
"""

import json
import re
import statistics
from pathlib import Path
from typing import Literal

from pydantic import Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params, Size
from vpnbench.foundation.safe_files import wipe
from vpnbench.hosts import builds
from vpnbench.hosts.base import Host
from vpnbench.measure.base import CPU_FIGURES, Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.servers.base import config_dir, remove_dir, scratch_dir, tail, url_host, wait_listening
from vpnbench.servers.files import make_random_file

NAME = "tquic"
BLOB, BYTE = "blob", "byte"  # the throughput file and the timing one (1 byte)
# What tquic_client and tquic_server are given on every run, beside the cell's own choices: one
# thread, one connection at a time, HTTP/0.9 (a GET line, then the file's bytes on the stream,
# the nearest to qperf's raw stream), logs only on error.
COMMON = ("--log-level", "ERROR")
# A qlog record (RFC 7464 JSON text sequences): the record separator starts each one.
RECORD_SEPARATOR = "\x1e"


class QuicParams(Params):
    kind: Literal["quic"] = "quic"
    size: Size = 64 * 1024**2  # the throughput download; 64 MiB: ~0.5 s at 1 Gbit/s, ~5 s at 100 Mbit/s
    connections: int = Field(5, ge=1, le=100)  # timing connections, each its handshake and TTFB
    congestion_control: Literal["bbr", "bbr3", "cubic", "copa"] = "bbr"  # tquic's default: bbr
    udp_payload: int = Field(1200, ge=1200, le=1472)  # tquic's send_udp_payload_size (default 1200)
    timeout: Duration = 120.0
    family: Family = "ipv4"


class Quic(Measurement):
    kind = "quic"
    Params = QuicParams
    tools = ("openssl",)  # tquic_client and tquic_server are vpnbench's build: checked in run()
    server_tools = ("openssl", "ss")
    packages = {"openssl": "openssl"}
    columns = (Column("throughput_bps", "Mbit/s", 1e-6), Column("handshake_s", "handshake ms", 1e3),
               Column("ttfb_s", "TTFB ms", 1e3))
    headline = Headline(("throughput_bps",), "QUIC throughput (Mbit/s)", 1e-6, log=True)
    figures = (*Measurement.figures, *CPU_FIGURES)

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        return (f"{metrics['throughput_bps'] / 1e6:.1f} Mbit/s, handshake {metrics['handshake_s'] * 1e3:.2f} ms, "
                f"TTFB {metrics['ttfb_s'] * 1e3:.2f} ms")

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"size": min(params.size, 8 * 1024**2),
                                         "connections": min(params.connections, 2)})

    def expected_seconds(self) -> float:
        return 1 + 0.05 * self.params.connections + self.params.size * 8 / 200e6

    def default_label(self) -> str:
        p = self.params
        parts = ["quic", p.congestion_control if p.congestion_control != "bbr" else "",
                 "v6" if p.family == "ipv6" else ""]
        return "_".join(part for part in parts if part)

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        for host in (ctx.client, ctx.server):
            program = builds.program(NAME, f"{NAME}_client" if host is ctx.client else f"{NAME}_server")
            if not host.has_file(program):
                raise MeasurementError(builds.missing_reason(NAME, None, f"the {host.role}"), {})
        root, sconf, cconf = scratch_dir(ctx.server, Path("/dev/shm")), config_dir(ctx.server), config_dir(ctx.client)
        server = None
        raw: dict[str, str] = {"tquic_settings": json.dumps(self.settings())}
        try:
            make_random_file(ctx.server, root / BLOB, p.size)
            make_random_file(ctx.server, root / BYTE, 1)
            cert, key = make_certificate(ctx.server, sconf)
            address, port = ctx.target(p.family), ctx.ports.next()
            server = ctx.server.spawn([builds.program(NAME, f"{NAME}_server"), *COMMON,
                                       "--listen", f"{url_host(address)}:{port}", "--cert", str(cert),
                                       "--key", str(key), "--root", str(root), *self._transport_args()],
                                      name="tquic-server")
            wait_listening(ctx.server, server, port, "tquic_server", udp=True)
            metrics = self._timing(ctx.client, cconf, address, port, raw)
            metrics.update(self._throughput(ctx.client, address, port, raw))
            return MeasureResult(metrics, raw)
        finally:
            if server is not None:
                server.stop()
                raw["tquic_server"] = server.output()
            remove_dir(ctx.server, root)
            wipe(ctx.server, sconf)
            wipe(ctx.client, cconf)

    def settings(self) -> dict:
        """What the tool ran with: the cell's choices and tquic's defaults it keeps."""
        p = self.params
        return {"tool": f"tquic_tools {builds.RECIPES[NAME].default}", "congestion_control": p.congestion_control,
                "udp_payload_bytes": p.udp_payload, "initial_cwnd_packets": 32, "streams": 1,
                "application": "http/0.9", "early_data": False, "timing_connections": p.connections,
                "throughput_bytes": p.size}

    def _transport_args(self) -> list[str]:
        return ["--congestion-control-algor", self.params.congestion_control.upper(),
                "--send-udp-payload-size", str(self.params.udp_payload)]

    def _client(self, client: Host, address: str, port: int, name: str, extra: list[str], key: str,
                raw: dict) -> str:
        argv = [builds.program(NAME, f"{NAME}_client"), *COMMON, "--connect-to", f"{url_host(address)}:{port}",
                "--alpn", "http/0.9", *self._transport_args(), *extra, f"https://{url_host(address)}:{port}/{name}"]
        result = client.run(argv, timeout=self.params.timeout, check=False)
        raw[key] = result.stdout + result.stderr
        if not result.ok:
            raise MeasurementError(f"tquic_client ({key}) exited {result.returncode}: {tail(raw[key])}", raw)
        return result.stdout

    def _timing(self, client: Host, cconf: Path, address: str, port: int, raw: dict) -> dict[str, float]:
        qlogs = cconf / "qlog"
        client.run(["mkdir", "-m", "0700", "--", str(qlogs)])
        n = self.params.connections
        self._client(client, address, port, BYTE, ["--qlog-dir", str(qlogs), "--max-requests-per-conn", "1",
                                                   "--total-requests-per-thread", str(n)], "client_timing", raw)
        names = sorted(client.run(["ls", "--", str(qlogs)]).stdout.split())
        timings, texts = [], []
        for name in names:
            text = client.read_file(qlogs / name).decode()
            texts.append(text)
            raw["client_timing_qlog"] = "".join(texts)
            try:
                timings.append(qlog_timings(text))
            except ValueError as exc:
                raise MeasurementError(f"unexpected tquic_client qlog ({name}): {exc}", raw) from None
        if len(timings) != n:
            raise MeasurementError(f"tquic_client made {len(timings)} qlog files for {n} connections", raw)
        return {"handshake_s": statistics.median(t[0] for t in timings),
                "ttfb_s": statistics.median(t[1] for t in timings),
                "handshake_max_s": max(t[0] for t in timings), "ttfb_max_s": max(t[1] for t in timings),
                "connections": float(n)}

    def _throughput(self, client: Host, address: str, port: int, raw: dict) -> dict[str, float]:
        out = self._client(client, address, port, BLOB, [], "client_throughput", raw)
        try:
            stats = client_stats(out)
        except ValueError as exc:
            raise MeasurementError(f"unexpected tquic_client output: {exc}", raw) from None
        if stats["requests_succeeded"] != 1 or stats["recv_bytes"] < self.params.size:
            raise MeasurementError(f"tquic_client fetched {stats['recv_bytes']:.0f} bytes in "
                                   f"{stats['requests_succeeded']:.0f} request(s) of {self.params.size}", raw)
        request_s = stats["request_mean_s"]
        return {"throughput_bps": self.params.size * 8 / request_s, "request_s": request_s,
                "bytes": float(self.params.size), "lost_packets": stats["lost_packets"],
                "sent_packets": stats["sent_packets"], "recv_packets": stats["recv_packets"]}


def make_certificate(server: Host, directory: Path) -> tuple[Path, Path]:
    """A fresh self-signed P-256 certificate and its key for this cell, made on the server host in
    its 0700 cell directory (the key 0600; wiped with the directory)."""
    cert, key = directory / "quic.crt", directory / "quic.key"
    server.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=vpnbench-quic"], timeout=30)
    server.run(["chmod", "0600", "--", str(key)])
    return cert, key


STATS_PATTERNS = {
    "requests_succeeded": r"requests: sent \d+, finish \d+, success (\d+)",
    "request_mean_us": r"time for request\(µs\):\s*min: [\d.]+, max: [\d.]+, mean: ([\d.]+)",
    "recv_packets": r"recv pkts: (\d+)", "sent_packets": r"sent pkts: (\d+)", "lost_packets": r"lost pkts: (\d+)",
    "recv_bytes": r"recv bytes: (\d+)", "sent_bytes": r"sent bytes: (\d+)", "lost_bytes": r"lost bytes: (\d+)",
}


def client_stats(text: str) -> dict[str, float]:
    """tquic_client's closing statistics (tquic_client.rs Client::stats): the requests, their
    time in µs, and the connection's packets and bytes (UDP payloads, the client's view)."""
    stats = {}
    for name, pattern in STATS_PATTERNS.items():
        found = re.search(pattern, text)
        if found is None:
            raise ValueError(f"no {name.replace('_', ' ')} in it")
        stats[name] = float(found.group(1))
    stats["request_mean_s"] = stats.pop("request_mean_us") / 1e6
    return stats


def qlog_timings(text: str) -> tuple[float, float]:
    """One client connection's qlog (JSON-SEQ, times in ms from its creation): (handshake, time to
    first byte) in seconds. The handshake ends when the client sends its first 1-RTT packet; the
    first byte is the first received packet carrying a STREAM frame (the response)."""
    handshake = first_byte = None
    for record in text.split(RECORD_SEPARATOR):
        if not record.strip():
            continue
        event = json.loads(record)
        name, data = event.get("name", ""), event.get("data") or {}
        if "time" not in event:
            continue
        packet_type = (data.get("header") or {}).get("packet_type")
        if handshake is None and name.endswith("packet_sent") and packet_type == "1RTT":
            handshake = event["time"] / 1e3
        if first_byte is None and name.endswith("packet_received") and any(
                frame.get("frame_type") == "stream" for frame in data.get("frames") or []):
            first_byte = event["time"] / 1e3
    if handshake is None or first_byte is None:
        raise ValueError(f"no {'1-RTT packet sent' if handshake is None else 'STREAM frame received'} in the qlog")
    return handshake, first_byte
