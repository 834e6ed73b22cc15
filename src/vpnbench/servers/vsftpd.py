"""vsftpd: anonymous, read-only FTP of a directory, on a port of its own, in the foreground."""

from pathlib import Path

from vpnbench.hosts.base import Host, Proc
from vpnbench.servers.base import url_host, wait_listening

# listen=YES + background=NO: one standalone process the run owns. Passive mode on ports
# the run allocated (one per parallel transfer). secure_chroot_dir must exist and be empty.
# seccomp off: its filter refuses calls some kernels and libcs make (a known vsftpd 3.0.3 trap).
CONFIG = """\
listen={ipv4}
listen_ipv6={ipv6}
listen_address{suffix}={address}
listen_port={port}
background=NO
anonymous_enable=YES
no_anon_password=YES
anon_root={root}
local_enable=NO
write_enable=NO
anon_upload_enable=NO
anon_mkdir_write_enable=NO
pasv_enable=YES
pasv_min_port={pasv_min}
pasv_max_port={pasv_max}
secure_chroot_dir={dir}/empty
seccomp_sandbox=NO
xferlog_enable=NO
vsftpd_log_file={dir}/vsftpd.log
dual_log_enable=NO
pam_service_name=vsftpd
"""


class FtpServer:
    def __init__(self, server: Host, directory: Path, root: Path, address: str, port: int, pasv_ports: list[int]):
        self.server, self.dir, self.root, self.address = server, Path(directory), Path(root), address
        self.port, self.pasv_ports = port, pasv_ports
        self.proc: Proc | None = None

    def start(self) -> None:
        ipv6 = ":" in self.address
        self.server.run(["mkdir", "-p", "-m", "0755", str(self.dir / "empty")])
        config = self.dir / "vsftpd.conf"
        self.server.write_file(config, CONFIG.format(
            ipv4="NO" if ipv6 else "YES", ipv6="YES" if ipv6 else "NO", suffix="_ipv6" if ipv6 else "",
            address=self.address, port=self.port, root=self.root, dir=self.dir,
            pasv_min=min(self.pasv_ports), pasv_max=max(self.pasv_ports)))
        self.proc = self.server.spawn(["vsftpd", str(config)], name="vsftpd")
        wait_listening(self.server, self.proc, self.port, "vsftpd")

    def url(self, path: Path) -> str:
        return f"ftp://{url_host(self.address)}:{self.port}/{Path(path).relative_to(self.root)}"

    def stop(self) -> str:
        if self.proc is None:
            return ""
        self.proc.stop(2)
        return self.proc.output()
