"""Each private key only on the host that uses it, and wiped there at down() (issue 21).

The hosts are doubles for two remote machines (separate filesystems: what is written to one is
not on the other); what they record is every file written to them and every command run there.
openssl is real: the certificates must verify against the CA that signed them."""

import subprocess
import types
from pathlib import Path

from vpnbench.hosts.base import CommandResult, Host
from vpnbench.techniques.openvpn import OpenVPN, OpenVPNParams


class RemoteDouble(Host):
    def on_this_machine(self) -> bool:
        return False

    def __init__(self, role: str):
        super().__init__(role, None)
        self.files: dict[str, str] = {}
        self.commands: list[list[str]] = []

    def run(self, argv, timeout=30.0, check=True, input=None):
        self.commands.append(list(argv))
        return CommandResult(list(argv), 0, "", "")

    def spawn(self, argv, name, env=None, interactive=False):
        raise NotImplementedError

    def write_file(self, path, data, mode=0o600):
        assert mode == 0o600
        self.files[str(path)] = data

    def pids(self):
        return []

    def has_command(self, name):
        return True


def is_private_key(text: str) -> bool:
    return "PRIVATE KEY" in text


def test_openvpn_tls_keys_go_only_where_they_are_used_and_the_ca_key_nowhere(tmp_path):
    client, server = RemoteDouble("client"), RemoteDouble("server")
    resources = types.SimpleNamespace(dir=tmp_path, path=lambda name: tmp_path / name)
    ctx = types.SimpleNamespace(client=client, server=server, resources=resources)
    tech = OpenVPN(OpenVPNParams(mode="tls"), ctx)
    tech.files, tech.tunnel = [], types.SimpleNamespace(negotiated={}, procs=[])
    args = tech._tls_material()

    keys = {role: {p: t for p, t in host.files.items() if is_private_key(t)} for role, host in
            (("client", client), ("server", server))}
    assert list(keys["server"]) == [str(tmp_path / "ovpn-server.key")]
    assert list(keys["client"]) == [str(tmp_path / "ovpn-client.key")]
    assert list(keys["server"].values()) != list(keys["client"].values())  # two keys, not one copied
    # the CA key: made and used on this machine only, and gone from it
    assert not any("ca.key" in path for host in (client, server) for path in host.files)
    assert list(tmp_path.iterdir()) == []
    # the daemons are pointed at their own files; the shared ones (CA certificate, tls-crypt key) are on both
    assert args["server"][args["server"].index("--key") + 1] == str(tmp_path / "ovpn-server.key")
    assert args["client"][args["client"].index("--key") + 1] == str(tmp_path / "ovpn-client.key")
    for shared in ("ovpn-ca.crt", "ovpn-tls-crypt.key"):
        assert str(tmp_path / shared) in client.files and str(tmp_path / shared) in server.files
    # real certificates: each verifies against the CA certificate that went to the hosts
    ca = tmp_path / "ca.pem"
    ca.write_text(server.files[str(tmp_path / "ovpn-ca.crt")])
    for role, host in (("server", server), ("client", client)):
        leaf = tmp_path / f"{role}.pem"
        leaf.write_text(host.files[str(tmp_path / f"ovpn-{role}.crt")])
        check = subprocess.run(["openssl", "verify", "-CAfile", str(ca), str(leaf)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr

    tech.tunnel.backend = "userspace"
    tech.down()  # every file is wiped on the host it was written to, at once (not at disconnect)
    for host in (client, server):
        wiped = {word for argv in host.commands if argv[:2] == ["sh", "-c"] for word in argv[4:]}
        assert wiped == set(host.files), host.role


def test_every_secret_file_written_is_0600_and_not_on_a_command_line(tmp_path):
    """The static-key mode too: the key goes to both (OpenVPN's design), by file, never argv."""
    client, server = RemoteDouble("client"), RemoteDouble("server")
    resources = types.SimpleNamespace(dir=tmp_path, path=lambda name: tmp_path / name)
    tech = OpenVPN(OpenVPNParams(mode="static", cipher="AES-256-CBC"),
                   types.SimpleNamespace(client=client, server=server, resources=resources))
    tech.files = []
    args = tech._static_key()
    key = tmp_path / "ovpn-static.key"
    assert client.files[str(key)] == server.files[str(key)]
    secret = client.files[str(key)].splitlines()[1]
    assert not any(secret in word for argv in args.values() for word in argv)
    assert Path(args["server"][1]) == key
