"""nginx serving a directory over HTTP on a port of its own; every path it writes is run-owned."""

from pathlib import Path

from vpnbench.hosts.base import Host, Proc
from vpnbench.servers.base import url_host, wait_listening

# daemon off: the run owns the process. `user root`: the workers read the run's files as the
# master does. The temp paths default to /var/lib/nginx, shared with the machine's nginx.
CONFIG = """\
daemon off;
master_process on;
worker_processes 1;
user root;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    default_type application/octet-stream;
    sendfile on;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen {listen};
        root {root};
    }}
}}
"""


class HttpServer:
    def __init__(self, server: Host, directory: Path, root: Path, address: str, port: int):
        self.server, self.dir, self.root, self.address, self.port = server, Path(directory), Path(root), address, port
        self.proc: Proc | None = None

    def start(self) -> None:
        config = self.dir / "nginx.conf"
        self.server.write_file(config, CONFIG.format(dir=self.dir, root=self.root,
                                                     listen=f"{url_host(self.address)}:{self.port}"))
        # -e: the error log before the configuration is read would otherwise go to /var/log/nginx
        self.proc = self.server.spawn(["nginx", "-c", str(config), "-p", str(self.dir),
                                       "-e", str(self.dir / "nginx-error.log")], name="nginx")
        wait_listening(self.server, self.proc, self.port, "nginx")

    def url(self, path: Path) -> str:
        return f"http://{url_host(self.address)}:{self.port}/{Path(path).relative_to(self.root)}"

    def stop(self) -> str:
        if self.proc is None:
            return ""
        self.proc.stop(2)
        log = self.server.run(["cat", str(self.dir / "nginx-error.log")], check=False).stdout
        return self.proc.output() + log
