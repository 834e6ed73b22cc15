"""A fake "external encryptor" for tests: a wireguard-go pair that vpnbench's external
technique knows nothing about, brought up and down as its hook.

    python fake_encryptor.py up|down

It reads the testbed from the VPNBENCH_* environment the hook gets, puts a wireguard-go
interface in the client and the server namespaces (inner 10.77.0.0/24, fd77::/64, UDP port
51999 on the underlay) and removes them again. Keys stay in the run's private directory.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

PORT = 51999
INNER = {"client": ("10.77.0.1", "fd77::1"), "server": ("10.77.0.2", "fd77::2")}


def run(netns: str, *argv: str, stdin: str | None = None) -> str:
    return subprocess.run(["ip", "netns", "exec", netns, *argv], input=stdin, capture_output=True,
                          text=True, check=True).stdout


def up(env: dict) -> None:
    run_dir = Path(env["VPNBENCH_RUN_DIR"])
    keys = {}
    for role in ("client", "server"):
        private = subprocess.run(["wg", "genkey"], capture_output=True, text=True, check=True).stdout
        public = subprocess.run(["wg", "pubkey"], input=private, capture_output=True, text=True, check=True).stdout
        path = run_dir / f"fake-{role}.key"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, private.encode())
        os.close(fd)
        keys[role] = (path, public.strip())
    for role, peer in (("client", "server"), ("server", "client")):
        netns, iface = env[f"VPNBENCH_{role.upper()}_NETNS"], iface_name(env, role)
        # wireguard-go daemonizes; it lives in the namespace until its interface is deleted.
        subprocess.run(["ip", "netns", "exec", netns, "wireguard-go", iface], check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run(["ip", "netns", "exec", netns, "wg", "show", iface], capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        endpoint = env[f"VPNBENCH_{peer.upper()}_UNDERLAY_IPV4"]
        run(netns, "wg", "set", iface, "listen-port", str(PORT), "private-key", str(keys[role][0]),
            "peer", keys[peer][1], "endpoint", f"{endpoint}:{PORT}",
            "allowed-ips", f"{INNER[peer][0]}/32,{INNER[peer][1]}/128")
        run(netns, "ip", "addr", "add", f"{INNER[role][0]}/24", "dev", iface)
        run(netns, "ip", "-6", "addr", "add", f"{INNER[role][1]}/64", "dev", iface, "nodad")
        run(netns, "ip", "link", "set", iface, "mtu", "1420", "up")
    for path, _ in keys.values():
        path.write_bytes(b"\0" * path.stat().st_size)
        path.unlink()


def down(env: dict) -> None:
    for role in ("client", "server"):
        netns = env[f"VPNBENCH_{role.upper()}_NETNS"]
        subprocess.run(["ip", "netns", "exec", netns, "ip", "link", "del", iface_name(env, role)], capture_output=True)
    # wireguard-go leaves on its own once its interface is gone. While it lingers it keeps the
    # control socket path and UDP port an `up` right after this one reuses (same names), and
    # the new pair would be configured through, or receive on, the leaving daemon's sockets.
    names = {iface_name(env, role).encode() for role in ("client", "server")}
    for _ in range(200):
        if not any(argv and b"wireguard-go" in argv[0] and argv[-1] in names for argv in _commands()):
            break
        time.sleep(0.05)


def _commands() -> list[list[bytes]]:
    commands = []
    for proc in Path("/proc").iterdir():
        try:
            commands.append([part for part in (proc / "cmdline").read_bytes().split(b"\0") if part])
        except OSError:
            continue
    return commands


def iface_name(env: dict, role: str) -> str:
    # wireguard-go's socket path is machine-wide: tag it with the run id like vpnbench does.
    return f"vpb{env['VPNBENCH_RUN_ID']}f{role[0]}"


if __name__ == "__main__":
    os.environ["WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD"] = "1"
    {"up": up, "down": down}[sys.argv[1]](dict(os.environ))
