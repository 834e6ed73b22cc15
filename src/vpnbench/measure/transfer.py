"""File transfers as users make them: scp, sftp, HTTP (nginx + curl) and FTP (vsftpd + curl).

A cell writes a random file on a tmpfs, starts the protocol's real server in the server's host,
runs `parallel` clients at once (S3 streamed two at a time), polls the growing copies for a
progress series, then checks every copy's sha256 against the original: a mismatch fails the
cell. goodput_bps is the bytes of all copies over the wall-clock time from the clients' start
to the last one's exit, handshakes included: the time a user waits.
"""

import re
import time
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params, Size
from vpnbench.foundation.safe_files import wipe
from vpnbench.measure.base import CPU_FIGURES, Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.transfer_clients import Flows, client_argv, curl_timings, make_server
from vpnbench.servers.base import config_dir, free_bytes, remove_dir, scratch_dir
from vpnbench.servers.files import file_sizes, make_random_file, sha256s

SSH_CIPHERS = Literal["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com",
                      "aes128-ctr", "aes192-ctr", "aes256-ctr", "aes128-cbc", "aes192-cbc", "aes256-cbc", "3des-cbc"]
DOWNLOAD_ONLY = ("http", "ftp")  # anonymous read-only servers: an upload would need a writable one
POLL_S = 0.25


class TransferParams(Params):
    kind: Literal["transfer"] = "transfer"
    protocol: Literal["scp", "sftp", "http", "ftp"] = "scp"
    direction: Literal["download", "upload"] = "download"
    parallel: int = Field(1, ge=1, le=16)  # clients at once, each its own copy of the file
    directory: str = "/dev/shm"  # a tmpfs: the disk must not be what is measured
    size: Size = 256 * 1024**2
    cipher: SSH_CIPHERS = "aes128-gcm@openssh.com"  # scp and sftp
    timeout: Duration = 600.0
    family: Family = "ipv4"

    @field_validator("directory")
    @classmethod
    def _plain_path(cls, directory: str) -> str:
        """The path goes into sshd, nginx and vsftpd configuration lines: a newline, a ';' or a
        '#' there would be configuration of its own, so only plain path characters pass."""
        if not re.fullmatch(r"/[A-Za-z0-9._+/-]*", directory) or "/../" in f"{directory}/":
            raise ValueError(f"{directory!r} is not allowed; allowed: an absolute path of letters, digits "
                             f"and . _ + - / (no '..'), such as '/dev/shm'")
        return directory

    @field_validator("size")
    @classmethod
    def _fits(cls, size: int, info: ValidationInfo) -> int:
        """The original and every copy share the tmpfs (one machine: both hosts see it)."""
        directory, parallel = info.data.get("directory"), info.data.get("parallel")
        if directory is None or parallel is None:
            return size
        if not Path(directory).is_dir():
            raise ValueError(f"directory {directory!r} does not exist; use a tmpfs such as '/dev/shm'")
        need, free = size * (1 + parallel), free_bytes(directory)
        if need > free:
            raise ValueError(f"{size} bytes x {1 + parallel} files (the original and {parallel} "
                             f"cop{'y' if parallel == 1 else 'ies'}) need {need} bytes but {directory} has "
                             f"{free} free; allowed: at most {free // (1 + parallel)} bytes")
        return size

    @model_validator(mode="after")
    def _direction(self) -> "TransferParams":
        if self.direction == "upload" and self.protocol in DOWNLOAD_ONLY:
            raise ValueError(f"direction: 'upload' is not allowed for protocol {self.protocol!r} (its server is "
                             f"anonymous and read-only: download only); allowed values: 'download'")
        return self


class Transfer(Measurement):
    kind = "transfer"
    Params = TransferParams
    tools = ("scp", "sftp", "curl", "sha256sum", "stat")
    server_tools = ("sshd", "ssh-keygen", "nginx", "vsftpd", "sha256sum", "ss", "unshare")
    packages = {"scp": "openssh-client", "sftp": "openssh-client", "curl": "curl", "sshd": "openssh-server",
                "ssh-keygen": "openssh-client", "nginx": "nginx-light", "vsftpd": "vsftpd"}
    columns = (Column("goodput_bps", "Mbit/s", 1e-6), Column("seconds", "s"), Column("ttfb_s", "TTFB s"))
    headline = Headline(("goodput_bps",), "goodput (Mbit/s)", 1e-6, log=True)
    figures = (*Measurement.figures, *CPU_FIGURES)

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        return f"{metrics['goodput_bps'] / 1e6:.1f} Mbit/s in {metrics['seconds']:.2f} s"

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        return params.model_copy(update={"size": min(params.size, 16 * 1024**2)})

    def expected_seconds(self) -> float:
        return 2 + self.params.size * self.params.parallel * 8 / 200e6

    def default_label(self) -> str:
        p = self.params
        parts = [p.protocol, p.direction[:2] if p.direction == "upload" else "", f"x{p.parallel}" if p.parallel > 1 else "",
                 "v6" if p.family == "ipv6" else ""]
        return "_".join(part for part in parts if part)

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        sdir, cdir = scratch_dir(ctx.server, Path(p.directory)), scratch_dir(ctx.client, Path(p.directory))
        sconf, cconf = config_dir(ctx.server), config_dir(ctx.client)
        server = None
        raw: dict[str, str] = {}
        try:
            flows = Flows.plan(p, sdir, cdir, cconf)
            source_host = ctx.server if p.direction == "download" else ctx.client
            expected = make_random_file(source_host, flows.source, p.size)
            server = make_server(p, ctx, sconf, cconf, sdir)
            server.start()
            return self._transfer(ctx, flows, server, expected, raw)
        finally:
            if server is not None:
                raw[f"{p.protocol}_server"] = server.stop()
            remove_dir(ctx.server, sdir)
            remove_dir(ctx.client, cdir)
            wipe(ctx.server, sconf)
            wipe(ctx.client, cconf)

    def _transfer(self, ctx: MeasureContext, flows: "Flows", server, expected: str, raw: dict) -> MeasureResult:
        p = self.params
        dest_host = ctx.client if p.direction == "download" else ctx.server
        started = time.monotonic()
        procs = [ctx.client.spawn(client_argv(p, server, flows, i), name=f"{p.protocol}-client")
                 for i in range(p.parallel)]
        progress, ended = self._watch(procs, dest_host, flows.copies, started)
        for i, proc in enumerate(procs):
            raw[f"client{i + 1}"] = proc.output()
        failed = [i for i, proc in enumerate(procs) if proc.wait(0) != 0]
        if ended is None or failed:
            for proc in procs:
                proc.stop(1)
            why = f"did not finish within {p.timeout:g} s" if ended is None else \
                f"client {failed[0] + 1} failed: {raw[f'client{failed[0] + 1}'].strip()[-300:] or 'no output'}"
            raise MeasurementError(f"{p.protocol} {p.direction}: {why}", raw)
        got = sha256s(dest_host, flows.copies)
        bad = [i + 1 for i, digest in enumerate(got) if digest != expected]
        seconds = ended - started
        metrics = {"goodput_bps": p.size * p.parallel * 8 / seconds, "seconds": seconds,
                   "bytes": float(p.size * p.parallel)}
        metrics.update(self._timings(raw, progress))
        if bad:
            raise MeasurementError(f"sha256 mismatch: copy {bad[0]} of {len(got)} differs from the original "
                                   f"({got[bad[0] - 1][:12]} != {expected[:12]})", raw, metrics)
        return MeasureResult(metrics, raw, series=progress_series(progress))

    def _watch(self, procs, dest_host, copies: list[Path], started: float):
        """Wait for every client, sampling the copies' total size: (progress, end time or None)."""
        progress: list[tuple[float, float]] = []
        next_poll = started
        while time.monotonic() - started < self.params.timeout:
            if not any(proc.alive() for proc in procs):
                ended = time.monotonic()
                progress.append((ended - started, float(file_sizes(dest_host, copies))))
                return progress, ended
            if time.monotonic() >= next_poll:
                progress.append((time.monotonic() - started, float(file_sizes(dest_host, copies))))
                next_poll = time.monotonic() + POLL_S
            time.sleep(0.01)
        return progress, None

    def _timings(self, raw: dict, progress: list[tuple[float, float]]) -> dict[str, float]:
        """curl's own connect (HTTP only) and first-byte times (mean over the clients); for scp and sftp,
        which report neither, the first poll that saw bytes arrive (POLL_S resolution)."""
        if self.params.protocol in ("http", "ftp"):
            timings = curl_timings([raw[name] for name in raw if name.startswith("client")])
            if self.params.protocol == "ftp":
                # curl's FTP connect timer is not the control connection's connect: it can come out
                # later than the first byte (seen here: 9.8 ms against 8.0 ms; curl/curl#22587)
                timings.pop("connect_s", None)
            return timings
        first = next((t for t, size in progress if size > 0), None)
        return {"ttfb_s": first} if first is not None else {}


def progress_series(progress: list[tuple[float, float]]) -> dict[str, list[tuple[float, float]]]:
    """Bytes received so far at every poll, and goodput over each whole second."""
    rates, last_t, last_bytes, second = [], 0.0, 0.0, 1.0
    for t, size in progress:
        if t >= second:
            rates.append((t, (size - last_bytes) * 8 / (t - last_t)))
            last_t, last_bytes, second = t, size, second + 1.0
    return {"received_bytes": progress, "goodput_bps": rates}
