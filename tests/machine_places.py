"""The places a daemon writes to by default on the machine (its state, logs, sockets, caches), and a
snapshot of them that sees a write into one that existed before the run, not only one the run made:
a check of existence alone passes wherever an earlier install had made the directory already."""

from pathlib import Path

DAEMON_DEFAULT_PLACES = [
    Path("/var/lib/tailscale"), Path("/var/run/tailscale"), Path("/var/cache/tailscale"),
    Path("/root/.cache/Tailscale"), Path("/root/.local/share/tailscale"),
    Path("/var/lib/headscale"), Path("/var/run/headscale"), Path("/etc/headscale"),
    Path("/etc/nebula"), Path("/etc/tinc"),
    Path("/etc/innernet"), Path("/var/lib/innernet"), Path("/etc/innernet-server"), Path("/var/lib/innernet-server"),
    Path("/var/lib/netbird"), Path("/etc/netbird"), Path("/var/log/netbird"), Path("/var/run/netbird"),
    Path("/var/run/netbird.sock"), Path("/etc/wiretrustee"), Path("/etc/ssh/ssh_config.d"),
]


def _state(path: Path):
    """None where absent; else what a write into it changes (its own mtime, and every entry's)."""
    if not path.exists():
        return None
    stat = path.stat()
    own = (stat.st_mtime_ns, stat.st_size)
    if not path.is_dir():
        return own
    return own, {str(entry.relative_to(path)): (entry.lstat().st_mtime_ns, entry.lstat().st_size)
                 for entry in sorted(path.rglob("*"))}


def snapshot(places=DAEMON_DEFAULT_PLACES) -> dict[str, object]:
    return {str(place): _state(place) for place in places}


def changed(before: dict[str, object], places=DAEMON_DEFAULT_PLACES) -> list[str]:
    """The places whose state differs from the snapshot: made, removed or written into."""
    after = snapshot(places)
    return [place for place in after if after[place] != before.get(place)]
