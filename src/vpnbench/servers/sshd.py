"""OpenSSH's sshd on a port of its own, with a host key and a client key made for the cell."""

from pathlib import Path

from vpnbench.hosts.base import Host, Proc
from vpnbench.servers.base import url_host, wait_listening
from vpnbench.techniques.ipsec.daemon import spawn_private

SSHD = "/usr/sbin/sshd"
SEEN_AS = "/run"  # the cell's private directory, as sshd sees it  # sshd re-executes itself, so it must be started by its absolute path

# StrictModes on: the keys and this file live in the run's 0700 directory, never on the tmpfs.
# internal-sftp: no dependence on where the distribution keeps sftp-server.
CONFIG = """\
Port {port}
ListenAddress {address}
HostKey {dir}/host_key
PidFile {dir}/sshd.pid
AuthorizedKeysFile {dir}/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes yes
PrintMotd no
Ciphers {cipher}
Subsystem sftp internal-sftp
"""


class SshServer:
    """sshd for one cell: start() then client_options() for scp/sftp, stop() at the end."""

    def __init__(self, server: Host, client: Host, directory: Path, client_dir: Path, address: str, port: int,
                 cipher: str):
        self.server, self.client = server, client
        self.dir, self.client_dir = Path(directory), Path(client_dir)  # each host's own: the keys stay on their side
        self.address, self.port, self.cipher = address, port, cipher
        self.proc: Proc | None = None

    def start(self) -> None:
        self.server.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "vpnbench", "-f", str(self.dir / "host_key")])
        self.client.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "vpnbench", "-f",
                         str(self.client_dir / "client_key")])
        public = self.client.read_file(self.client_dir / "client_key.pub")
        self.server.write_file(self.dir / "authorized_keys", public, 0o600)
        # The cell's private directory becomes sshd's /run (a mount namespace of its own): it holds
        # the privilege-separation directory /run/sshd that sshd insists on, and sshd reads its
        # files at the paths it sees there.
        self.server.write_file(self.dir / "sshd_config", CONFIG.format(port=self.port, address=self.address,
                                                                      dir=SEEN_AS, cipher=self.cipher))
        self.server.run(["mkdir", "-m", "0755", "--", str(self.dir / "sshd")])
        self.proc = spawn_private(self.server, self.dir, [SSHD, "-D", "-e", "-f", f"{SEEN_AS}/sshd_config"], name="sshd")
        wait_listening(self.server, self.proc, self.port, "sshd")

    def client_options(self) -> list[str]:
        """Batch mode, the run's own keys and known_hosts, the cipher asked for, no user config."""
        return ["-F", "/dev/null", "-i", str(self.client_dir / "client_key"), "-o", "IdentitiesOnly=yes",
                "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
                "-o", f"UserKnownHostsFile={self.client_dir / 'known_hosts'}", "-o", f"Ciphers={self.cipher}",
                "-o", "ConnectTimeout=10", "-P", str(self.port)]

    def remote(self, path: Path) -> str:
        return f"root@{url_host(self.address)}:{path}"

    def stop(self) -> str:
        """Stop sshd; returns its log."""
        if self.proc is None:
            return ""
        self.proc.stop(2)
        return self.proc.output()
