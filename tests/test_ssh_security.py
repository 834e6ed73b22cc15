"""Issue 21 on the ssh test lab (sshd in namespaces, see sshlab.py): servers listen only on the
measured address, OpenVPN's TLS mode works with each private key only on the host that uses it,
and neither a run nor a kill -9 + cleanup leaves a key file on any host.

The lab's machines share this machine's filesystem, so "on a host" is read from what the run
itself records per host (remote-<role>.json: every file it wrote there), sampled while it runs."""

import json
import re
import secrets
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import VPNBENCH, leftovers, run_cli
from sshlab import SshLab
from test_ssh_hosts import lab  # noqa: F401 - the lab fixture: sshd in namespaces, checked for strays
from vpnbench.hosts.resources import run_id_prefix

pytestmark = pytest.mark.netns
# Beside another machine test (make test, two at a time) the key files are looked for machine-wide
# but for those in the other worker's runs (their ids do not start with ours): its keys, its run's.
OTHERS_RUN = re.compile(r"/(?:run/vpnbench/|dev/shm/vpnbench-)(?P<run>[0-9a-f]+)")

SERVERS = ("iperf3", "iperf", "vpnbench-gen")
OPENVPN_INNER_SERVER = "10.98.0.2"


class Watcher(threading.Thread):
    """Samples, every 50 ms while a run goes on: the server machine's listening sockets
    (`ss -ltnup` in its namespace) and the files the run has recorded per host."""

    def __init__(self, lab: SshLab):
        super().__init__(daemon=True)
        self.lab, self.stop = lab, threading.Event()
        self.sockets: set[tuple[str, str, str]] = set()  # (process, proto, local address:port)
        self.files: dict[str, set[str]] = {}  # role -> every file recorded as written there

    def run(self) -> None:
        while not self.stop.is_set():
            out = subprocess.run(["ip", "netns", "exec", self.lab.ns["server"], "ss", "-Hltunp"],
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                fields = line.split()
                name = re.search(r'users:\(\("([^"]+)"', line)
                if name and len(fields) >= 5:
                    self.sockets.add((name[1], fields[0], fields[4]))
            for record in Path("/run/vpnbench").glob(f"{run_id_prefix()}*/remote-*.json"):
                try:
                    files = json.loads(record.read_text())["files"]
                except (OSError, ValueError, KeyError):
                    continue
                self.files.setdefault(record.stem.removeprefix("remote-"), set()).update(files)
            time.sleep(0.05)


def in_lab(lab, *args, timeout=300):
    return subprocess.run([*lab.exec_argv(), *VPNBENCH, *args], capture_output=True, text=True, timeout=timeout)


def export(db: Path) -> list[dict]:
    out = db.with_suffix(".json")
    assert run_cli("export", str(db), "--format", "json", "-o", str(out)).returncode == 0
    return json.loads(out.read_text())


def key_files(*roots: Path) -> list[str]:
    """Every file under roots that holds a private key (or is named like a key)."""
    found = []
    for root in roots:
        for path in root.rglob("*") if root.is_dir() else []:
            if path.is_file() and not path.is_symlink():
                try:
                    text = path.read_bytes()[:1 << 16]
                except OSError:
                    continue
                if b"PRIVATE KEY" in text or b"OpenVPN Static key" in text or path.name.endswith(".key"):
                    found.append(str(path))
    return [path for path in found if not in_another_workers_run(path)]


def in_another_workers_run(path: str) -> bool:
    run = OTHERS_RUN.match(path)
    return bool(run_id_prefix() and run and not run["run"].startswith(run_id_prefix()))


def test_openvpn_tls_on_ssh_hosts_keys_only_where_used_and_servers_only_on_the_target(tmp_path, lab):
    campaign = lab.testbed_toml() + """
[[technique]]
kind = "openvpn"
mode = "tls"

[[measurement]]
kind = "tcp"
duration = "2s"

[[measurement]]
kind = "tcp"
tool = "iperf2"
duration = "2s"

[[measurement]]
kind = "udp"
tool = "gen"
rate = "20M"
length = 1200
duration = "2s"
"""
    (tmp_path / "c.toml").write_text(campaign)
    watcher = Watcher(lab)
    watcher.start()
    try:
        proc = in_lab(lab, "run", str(tmp_path / "c.toml"), "--db", str(tmp_path / "c.db"))
    finally:
        watcher.stop.set()
        watcher.join()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cells = export(tmp_path / "c.db")
    assert len(cells) == 3
    for cell in cells:
        assert cell["status"] == "ok", cell["error"]
        assert cell["wire_check"] == "encrypted"  # the proof: only ciphertext on the underlay
    assert cells[0]["negotiated"]["mode"] == "tls" and "control_channel" in cells[0]["negotiated"]

    # each server was seen listening, and only on the tunnel address the measurement targets
    seen = {name for name, _, _ in watcher.sockets}
    assert {"iperf3", "iperf", "vpnbench-gen-se"} <= seen, watcher.sockets
    for name, proto, local in watcher.sockets:
        if name.startswith(SERVERS) or name == "vpnbench-gen-se":
            address = local.rsplit(":", 1)[0].strip("[]").removeprefix("::ffff:")  # gen's dual-stack UDP socket
            assert address == OPENVPN_INNER_SERVER, (name, proto, local)

    # each private key only on the host that uses it; the CA key on none
    on = {role: {Path(f).name for f in files} for role, files in watcher.files.items()}
    assert "ovpn-server.key" in on["server"] and "ovpn-server.key" not in on["client"]
    assert "ovpn-client.key" in on["client"] and "ovpn-client.key" not in on["server"]
    assert not any("ca.key" in name for names in on.values() for name in names)
    assert leftovers() == []
    assert key_files(Path("/run/vpnbench"), Path("/dev/shm")) == []


def killed_mid_transfer(lab: SshLab, tmp_path: Path, size: str, directory: Path | None = None) -> None:
    """A run of OpenVPN and an scp transfer of `size` on the lab, killed (-9) once the copy is
    under way: the keys of OpenVPN, sshd and scp are then on the hosts."""
    campaign = lab.testbed_toml() + f"""
[[technique]]
kind = "openvpn"
mode = "tls"

[[measurement]]
kind = "transfer"
protocol = "scp"
size = "{size}"
""" + (f'directory = "{directory}"\n' if directory else "")
    (tmp_path / "k.toml").write_text(campaign)
    proc = subprocess.Popen([*lab.exec_argv(), *VPNBENCH, "run", str(tmp_path / "k.toml"), "--db",
                             str(tmp_path / "k.db")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not any(lab.comm(p) == "scp" for p in lab.pids("client")):  # the copy is under way
            assert proc.poll() is None and time.monotonic() < deadline, "no scp started"
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        proc.kill()  # ip netns exec execs python: this is vpnbench itself
        proc.wait(10)


def test_kill9_then_cleanup_leaves_no_key_file_on_any_host(tmp_path, lab):
    """Killed mid-transfer: sshd's host key, the client key, OpenVPN's keys and the random data
    in a custom transfer directory are on the hosts; cleanup reconnects and wipes every one."""
    custom = Path("/dev/shm") / f"vpbt-xfer-{secrets.token_hex(3)}"  # root's 0755: a valid directory
    custom.mkdir(mode=0o755)
    try:
        killed_mid_transfer(lab, tmp_path, size="768M", directory=custom)
        left = key_files(Path("/run/vpnbench"), custom)
        assert any(name.endswith("host_key") for name in left), left  # sshd's, in the cell's private directory
        assert any(name.endswith("ovpn-server.key") for name in left), left
        assert not any(custom.rglob("*key*")), "a key on the shared tmpfs"
        assert list(custom.glob("vpnbench-*/*/original.bin")), "the random data was not where expected"

        cleanup = in_lab(lab, "cleanup", timeout=120)
        assert cleanup.returncode == 0, cleanup.stderr
        assert "remote directory" in cleanup.stdout and str(custom) in cleanup.stdout, cleanup.stdout
        assert key_files(Path("/run/vpnbench"), Path("/dev/shm")) == []
        assert list(custom.iterdir()) == []
        assert leftovers() == []
        # the cell's sshd too (its process title overwrites the environment cleanup once checked),
        # and with it the server's scp of the transfer under way
        assert "remote process" in cleanup.stdout
        assert lab.strays() == []
    finally:
        subprocess.run(["rm", "-rf", "--", str(custom)])
