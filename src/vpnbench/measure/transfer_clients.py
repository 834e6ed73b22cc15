"""The transfer's two ends per protocol: which server to start, and each client's command line."""

import dataclasses
import json
from pathlib import Path

from vpnbench.measure.base import MeasureContext
from vpnbench.servers.nginx import HttpServer
from vpnbench.servers.sshd import SshServer
from vpnbench.servers.vsftpd import FtpServer


@dataclasses.dataclass
class Flows:
    """The original file and the copies the clients make, one per parallel client."""

    source: Path
    copies: list[Path]
    batch_dir: Path  # the client's private directory: sftp batch files

    @classmethod
    def plan(cls, p, server_dir: Path, client_dir: Path, client_conf: Path) -> "Flows":
        src_dir, dst_dir = (server_dir, client_dir) if p.direction == "download" else (client_dir, server_dir)
        return cls(src_dir / "original.bin", [dst_dir / f"copy-{i + 1}.bin" for i in range(p.parallel)], client_conf)


def make_server(p, ctx: MeasureContext, server_conf: Path, client_conf: Path, data: Path):
    """The protocol's server: keys and configuration in each host's private directory (server_conf,
    client_conf), the served or received files in `data` on the tmpfs."""
    address = ctx.target(p.family)
    if p.protocol in ("scp", "sftp"):
        return SshServer(ctx.server, ctx.client, server_conf, client_conf, address, ctx.ports.next(), p.cipher)
    if p.protocol == "http":
        return HttpServer(ctx.server, server_conf, data, address, ctx.ports.next())
    control = ctx.ports.next()
    return FtpServer(ctx.server, server_conf, data, address, control, [ctx.ports.next() for _ in range(p.parallel)])


def client_argv(p, server, flows: Flows, index: int) -> list[str]:
    copy = flows.copies[index]
    if p.protocol == "scp":
        # -O: the SCP protocol itself, as S1 timed it (OpenSSH 9 otherwise speaks SFTP underneath)
        ends = [server.remote(flows.source), str(copy)] if p.direction == "download" else \
            [str(flows.source), server.remote(copy)]
        return ["scp", "-O", "-q", *server.client_options(), *ends]
    if p.protocol == "sftp":
        verb = "get" if p.direction == "download" else "put"
        batch = flows.batch_dir / f"sftp-{index + 1}.batch"
        server.client.write_file(batch, f"{verb} {flows.source} {copy}\n")
        return ["sftp", "-q", *server.client_options(), "-b", str(batch), server.remote("").rstrip(":")]
    # curl: -w '%{json}' reports connect, first byte and total times; --fail makes an HTTP error an error
    return ["curl", "-sS", "--fail", "--connect-timeout", "10", "-o", str(copy), "-w", "%{json}", server.url(flows.source)]


def curl_timings(outputs: list[str]) -> dict[str, float]:
    """Mean connect and first-byte time over the clients' `-w '%{json}'` documents."""
    docs = []
    for text in outputs:
        start = text.find("{")
        if start >= 0:
            try:
                docs.append(json.JSONDecoder().raw_decode(text[start:])[0])
            except ValueError:
                pass
    timings = {}
    for metric, key in (("connect_s", "time_connect"), ("ttfb_s", "time_starttransfer"), ("curl_total_s", "time_total")):
        values = [float(doc[key]) for doc in docs if isinstance(doc.get(key), (int, float))]
        if values:
            timings[metric] = sum(values) / len(values)
    return timings
