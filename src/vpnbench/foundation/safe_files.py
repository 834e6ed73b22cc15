"""Files and directories root makes where another user might have been first, and their wiping.

vpnbench runs as root; a shared tmpfs such as /dev/shm is writable by everyone, and run ids
are public (/run/vpnbench is 0755). So:

- a directory is made with `mkdir` (never `-p`, which accepts one someone else made) and then
  checked with lstat semantics (`stat` without -L): a directory, owned by root, the mode asked
  for. An existing one is accepted only if it passes the same check, which no other user can
  fake (only root can own a file as root);
- the directory it is made in is checked first: every component from / down must be owned
  by root and not writable by others unless sticky (1777: nobody can rename our entry away);
- files are written to a fresh name (O_CREAT|O_EXCL|O_NOFOLLOW, 0600 before any byte) and
  renamed over the target: a planted symlink is replaced, never followed.

Checks go through the host's own commands, so a namespace, an ssh host and a VM answer
alike. Keys and configurations live in the run's 0700 directory; only random transfer data
goes to the shared tmpfs.
"""

import os
import secrets
import stat
import subprocess
import warnings
from pathlib import Path

from vpnbench.foundation.errors import HostError, UserError

# Remote (and namespace) writes: mktemp makes a fresh 0600 name (O_EXCL), mv -T renames it over
# the target (a symlink there is replaced, not followed; a directory there fails).
REMOTE_WRITE = ('umask 077; tmp=$(mktemp -- "$1.XXXXXXXX") || exit 1; '
                'if cat > "$tmp" && chmod "$2" "$tmp" && mv -fT -- "$tmp" "$1"; then exit 0; fi; '
                'rm -f -- "$tmp"; exit 1')
DIRS_RECORD = "dirs"  # in the run directory: the directories made on this machine, one a line


class UnsafePath(HostError):
    """A path root was about to write through is (or could be) someone else's."""


def write_private(path: Path, payload: bytes, mode: int = 0o600) -> None:
    """Write a local file through a fresh name in its directory and rename it into place."""
    path = Path(path)
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        tmp = f".{path.name}.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
        try:
            os.fchmod(fd, mode)
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            os.unlink(tmp, dir_fd=dir_fd)
            raise
        os.close(fd)
        os.rename(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def read_own_file(path: str, where: str, forbidden: int, allowed: str) -> bytes:
    """A local file that decides what root does (a key, a worker's trust): refused unless it is
    a regular file of this user without the forbidden mode bits, and read through the descriptor
    that was checked, so it cannot be swapped in between."""
    try:
        with open(path, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & forbidden:
                raise UserError(f"{where}: owned by uid {info.st_uid} with mode {stat.S_IMODE(info.st_mode):04o}; "
                                f"allowed: a regular file of this user (uid {os.geteuid()}) {allowed}")
            return file.read()
    except OSError as exc:
        raise UserError(f"{where}: {exc.strerror}") from None


def _stat(host, paths: list[str]) -> list[tuple[int, int, str]]:
    """(uid, mode bits, file type) of each path, without following a final symlink."""
    result = host.run(["stat", "-c", "%u %a %F", "--", *paths], check=False, timeout=15)
    lines = result.stdout.splitlines()
    if not result.ok or len(lines) != len(paths):
        raise UnsafePath(f"cannot check {paths[-1]} on {host.role}: {result.describe_failure()}")
    return [(int(uid), int(mode, 8), kind) for uid, mode, kind in (line.split(" ", 2) for line in lines)]


def path_facts(host, paths: list[str]) -> list[tuple[int, int, str]]:
    """(owner uid, mode bits, file type) of each path on the host, a final symlink not followed."""
    return _stat(host, paths)


def check_parent(host, directory: Path) -> Path:
    """The directory's real path, once every component of it is safe for root to create in."""
    real = host.run(["readlink", "-e", "--", str(directory)], check=False, timeout=15).stdout.strip()
    if not real.startswith("/"):
        raise UnsafePath(f"directory {str(directory)!r} does not exist on {host.role}")
    parts = Path(real).parts
    chain = [str(Path(*parts[:i + 1])) for i in range(len(parts))]
    for path, (uid, mode, kind) in zip(chain, _stat(host, chain)):
        if kind != "directory" or uid != 0 or (mode & 0o022 and not mode & 0o1000):
            raise UnsafePath(f"directory {str(directory)!r} on {host.role}: {path} is owned by uid {uid} with "
                             f"mode {mode:o}; allowed: directories owned by root, not writable by others "
                             f"unless sticky (like /dev/shm)")
    return Path(real)


def make_dir(host, path: Path, mode: int = 0o700, reuse: bool = False) -> Path:
    """mkdir (never -p), then check it is root's, a real directory, with `mode`. reuse: one that
    already exists passes if it has exactly those properties (only root could have made it)."""
    made = host.run(["mkdir", "-m", f"{mode:o}", "--", str(path)], check=False, timeout=15)
    if not made.ok and not reuse:
        raise UnsafePath(f"{path} on {host.role}: {made.describe_failure()}; refusing to use it")
    uid, bits, kind = _stat(host, [str(path)])[0]
    if kind != "directory" or uid != 0 or bits & 0o7777 != mode:
        raise UnsafePath(f"{path} on {host.role} already exists and is not this run's ({kind}, uid {uid}, "
                         f"mode {bits:o}): refusing to write there")
    return Path(path)


def recorded_dirs(record: Path) -> list[str]:
    try:
        return record.read_text().splitlines()
    except FileNotFoundError:
        return []


def wipe(host, path: Path) -> None:
    """Shred a file, or a directory's small files (keys, configurations), and remove it, on the
    host that holds it: a remote copy is gone at down(), not when the connection closes."""
    wipe_paths(host.run, [str(path)], host.role)


def wipe_here(paths: list[str | Path]) -> list[str]:
    """Wipe paths on this machine (the run directory, a cleanup's recorded directories)."""
    return wipe_paths(run_here, [str(p) for p in paths], "this machine")


def run_here(argv: list[str], timeout: float = 30.0, check: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout,
                          stdin=subprocess.DEVNULL)


# One wipe for every host, this machine included (sh -c WIPE_SCRIPT wipe PATH...). For each path
# that is there it prints "removed<TAB>path", or "left<TAB>path<TAB>uid mode type" and touches
# nothing when the path is not root's to wipe (it prints nothing for a path that is not there).
# What makes it safe as root:
# - it works only inside a directory that is root's (the user it runs as: an ssh lab user need
#   not be root) and not writable by group or others, checked with stat once it is in it: nobody
#   else can add, rename or swap an entry there, so no symbolic link or hard link can appear
#   under a name it is about to shred;
# - a directory is entered with cd, then checked to be the very one the path names (same device
#   and inode as the path's own lstat: not a symbolic link, not a directory swapped in), and
#   everything after works relative to it: a later change of the path does not matter;
# - a file is wiped from inside its directory, which must pass the same owner and mode check;
# - find never follows a symbolic link (-P), and does not descend to shred in a subdirectory that
#   is not root's or that others can write (it is removed, not shredded: its names could change).
# Files under SMALL_BYTES are overwritten (shred: one random pass, then zeros, then truncated) before
# they are unlinked; larger ones are the transfers' random data, only removed. shred syncs each
# pass to the device, and its default -u renames a file down to one letter with a sync per rename
# (a name is no secret here): where the run directory is on a disk, three passes and the renames
# cost ~30 ms a file, ~1.9 s for a 10-cell run's logs (bench/RESULTS.md, "overhead stages"); one
# pass and a plain unlink ~10 ms. One pass leaves nothing of the old bytes for software to read.
SMALL_BYTES = 1 << 20
# find -size counts in whole units, rounded up: "-1M" matches only empty files. In bytes (c) it
# is exact: -size -1048576c is every file of at most 1048575 bytes.
WIPE_SCRIPT = rf"""
me=$(id -u)
for p; do
  cd / && {{ [ -e "$p" ] || [ -L "$p" ]; }} || continue
  if [ -d "$p" ] && [ ! -L "$p" ]; then
    cd -P -- "$p" 2>/dev/null && [ "$(stat -c %d:%i .)" = "$(stat -c %d:%i -- "$p" 2>/dev/null)" ] && what=. || what=
  else
    cd -P -- "$(dirname -- "$p")" 2>/dev/null && what="./$(basename -- "$p")" || what=
  fi
  here=$(stat -c '%u %a' .)
  if [ -z "$what" ] || [ "${{here% *}}" != "$me" ] || [ $((0${{here#* }} & 022)) != 0 ]; then
    found=$(stat -c '%u %a %F' -- "$p" 2>/dev/null) && printf 'left\t%s\t%s\n' "$p" "$found"
    continue
  fi
  find "$what" -xdev \( -type d \( ! -user "$me" -o -perm /022 \) -prune \) \
    -o -type f -size -{SMALL_BYTES}c -exec shred -n 1 -z --remove=unlink -- {{}} + 2>/dev/null
  if [ "$what" = . ]; then
    find . -xdev -mindepth 1 -delete 2>/dev/null; cd / && rmdir -- "$p" 2>/dev/null
  else
    rm -f -- "$what"
  fi && printf 'removed\t%s\n' "$p"
done
exit 0
"""


def wipe_command(paths: list[str]) -> list[str]:
    """The argv that wipes these paths on a host (cleanup's reconnected runner uses it too)."""
    return ["sh", "-c", WIPE_SCRIPT, "wipe", *paths]


def wipe_paths(run, paths: list[str], where: str) -> list[str]:
    """Wipe paths through run (a host's run(), or this machine's); the paths removed. A path left
    alone (someone else's, or in a directory others can write) is named in one warning line."""
    if not paths:
        return []
    result = run(wipe_command(paths), timeout=120, check=False)
    removed = []
    for line in result.stdout.splitlines():
        verdict, path, *found = line.split("\t")
        if verdict == "removed":
            removed.append(path)
        elif verdict == "left":
            warnings.warn(left_alone(path, where, found[0] if found else ""), stacklevel=2)
    return removed


def left_alone(path: str, where: str, found: str) -> str:
    """The one line that names a path the wipe did not touch, and why."""
    uid, mode, kind = (found.split(" ", 2) + ["?", "?", "?"])[:3]
    return (f"left {path} on {where} untouched: a {kind} owned by uid {uid}, mode {mode}, where only a "
            f"directory of root's that nobody else can write is wiped (another user may have made it); "
            f"remove it yourself if it is not theirs")


def not_ours_alone(path: str | Path) -> str | None:
    """Why a local path root is about to run a tool in (or read its configuration, its caches,
    its toolchain from) could hold what another user put there, or None: the path and every
    directory above it must exist, be owned by root or this user, and be writable by neither
    group nor others. Stricter than check_parent: a sticky directory (/tmp, /var/tmp) is refused
    too, since anyone may add an entry such as .cargo/ or go.work to it, and cargo, rustup and
    go look for theirs in every parent of their working directory."""
    owners = {0, os.geteuid()}
    try:
        real = Path(path).resolve(strict=True)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    for component in (real, *real.parents):
        info = os.lstat(component)
        if info.st_uid not in owners or info.st_mode & 0o022:
            return (f"{component} is owned by uid {info.st_uid} with mode {stat.S_IMODE(info.st_mode):04o}; "
                    f"allowed: every directory from / down owned by root (or uid {os.geteuid()}), "
                    f"writable by neither group nor others")
    return None
