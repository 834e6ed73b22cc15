"""A `path:` version's sources: copied by root into a directory of root's, never built in place.

The directory a `path:/DIR` version names may be another user's (a CI runner's checkout), who
could change it while a build reads it, or plant a symlink to a file only root may read. So root
copies it first, reading it without ever following a symbolic link (each directory opened
O_NOFOLLOW from its parent's descriptor: a directory swapped for a link mid-copy is refused,
not followed), into a fresh directory of root's that only the build user's group may read and
nobody but root may write; the build user builds from that copy, and the copy's tree sha256
(computed from the very bytes written) is what BUILD.json records. Symbolic links are copied as
links (the build user resolves them with its own rights); a file with several hard links (it
may be someone else's file linked in), a device, FIFO or socket is refused; `.git` is not
copied (its HEAD is read for the record, as a commit hash or nothing).
"""

import hashlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from vpnbench.foundation.errors import UserError
from vpnbench.hosts import build_env

SOURCES = build_env.BUILDER_CACHE / "sources"  # root's 0755: the copies, each root's, read by the build user's group
SKIPPED = {".git"}  # never copied: history, not sources (and possibly large)
MAX_BYTES = 1 << 30  # a wireguard-go checkout is ~1 MB, tailscale's ~40 MB: 1 GiB is no checkout
MAX_ENTRIES = 200_000
COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")  # sha1 or sha256 object name
REF_NAME = re.compile(r"refs/[A-Za-z0-9._/+-]+\Z")


class SourceError(UserError):
    """A source directory that cannot be copied for a build, said in one line."""


def copy_sources(place: str, group: int) -> tuple[Path, str]:
    """A copy of `place` in a fresh directory of root's under SOURCES, and its tree sha256. The
    caller removes the copy's parent (the fresh directory) when done."""
    base = build_env.root_shared_dir(SOURCES)
    build_env.root_shared_dir(build_env.BUILDER_CACHE)
    holder = Path(tempfile.mkdtemp(prefix="copy-", dir=base))
    try:
        os.chown(holder, 0, group)
        holder.chmod(0o750)
        try:
            top = os.open(place, os.O_RDONLY | os.O_DIRECTORY)  # the named directory itself may be a link
        except OSError as error:
            raise SourceError(f"{place}: {error.strerror}") from None
        copy = holder / "tree"
        lines: list[str] = []
        try:
            copy_directory(top, copy, "", group, lines, [0, 0], place)
        finally:
            os.close(top)
    except BaseException:
        shutil.rmtree(holder, ignore_errors=True)
        raise
    return copy, "sha256:" + hashlib.sha256("".join(sorted(lines)).encode()).hexdigest()


def copy_directory(source_fd: int, destination: Path, relative: str, group: int, lines: list[str],
                   totals: list[int], place: str) -> None:
    destination.mkdir(mode=0o750)
    os.chown(destination, 0, group)
    for entry in sorted(os.scandir(source_fd), key=lambda item: item.name):
        name = entry.name
        path = f"{relative}{name}"
        if name in SKIPPED:
            continue
        totals[1] += 1
        if totals[1] > MAX_ENTRIES:
            raise SourceError(f"{place} holds over {MAX_ENTRIES} files: not a source checkout")
        info = os.lstat(name, dir_fd=source_fd)
        if stat.S_ISLNK(info.st_mode):
            target = os.readlink(name, dir_fd=source_fd)
            os.symlink(target, destination / name)
            os.lchown(destination / name, 0, group)
            lines.append(f"link {path}\0{target}\n")
        elif stat.S_ISDIR(info.st_mode):
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=source_fd)
            try:
                copy_directory(inner, destination / name, f"{path}/", group, lines, totals, place)
            finally:
                os.close(inner)
        elif stat.S_ISREG(info.st_mode):
            lines.append(copy_file(source_fd, name, destination / name, group, totals, f"{place}/{path}", path))
        else:
            raise SourceError(f"{place}/{path} is a {kind_of(info.st_mode)}: a source directory holds only files, "
                              f"directories and symbolic links")


def copy_file(source_fd: int, name: str, destination: Path, group: int, totals: list[int], shown: str,
              path: str) -> str:
    """Copy one regular file (opened without following a link, checked on its descriptor); its
    line of the tree's manifest."""
    try:
        file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=source_fd)
    except OSError as error:
        raise SourceError(f"{shown}: {error.strerror}") from None
    digest = hashlib.sha256()
    with os.fdopen(file, "rb") as reader:
        info = os.fstat(reader.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(f"{shown} changed into a {kind_of(info.st_mode)} while it was copied")
        if info.st_nlink != 1:
            raise SourceError(f"{shown} has {info.st_nlink} hard links (it may be another user's file linked in): "
                              f"copy the sources without hard links")
        executable = bool(info.st_mode & 0o111)
        with open(destination, "xb") as writer:
            os.fchown(writer.fileno(), 0, group)
            os.fchmod(writer.fileno(), 0o750 if executable else 0o640)
            for block in iter(lambda: reader.read(1 << 20), b""):
                totals[0] += len(block)
                if totals[0] > MAX_BYTES:
                    raise SourceError(f"the sources under {shown.rsplit('/', 1)[0]} exceed {MAX_BYTES >> 20} MiB: "
                                      f"not a source checkout")
                digest.update(block)
                writer.write(block)
    return f"file {path}\0{'x' if executable else '-'} {digest.hexdigest()}\n"


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def git_head(place: str) -> str | None:
    """The commit a git checkout at `place` has checked out (its .git's HEAD, followed through one
    symbolic ref, a worktree's gitdir and packed-refs), or None: not a checkout, or nothing that
    reads as a commit hash. Read as files, never by running git (whose configuration in the
    checkout could run programs); only a commit hash is ever returned."""
    dot_git = Path(place) / ".git"
    git_dir = dot_git
    if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
        said = read_line(dot_git)
        if not said or not said.startswith("gitdir: "):
            return None
        git_dir = (Path(place) / said.removeprefix("gitdir: ")).resolve()
    head = read_line(git_dir / "HEAD")
    if head is None:
        return None
    if COMMIT.match(head):
        return head
    if not head.startswith("ref: ") or not REF_NAME.match(ref := head.removeprefix("ref: ")) or ".." in ref:
        return None
    common = read_line(git_dir / "commondir")
    common_dir = (git_dir / common).resolve() if common else git_dir
    for directory in dict.fromkeys((git_dir, common_dir)):
        found = read_line(directory / ref)
        if found and COMMIT.match(found):
            return found
    try:
        packed = (common_dir / "packed-refs").read_text(errors="replace")
    except OSError:
        return None
    for line in packed.splitlines():
        commit, _, name = line.partition(" ")
        if name == ref and COMMIT.match(commit):
            return commit
    return None


def read_line(path: Path) -> str | None:
    try:
        with open(path, "rb") as file:
            return file.read(4096).decode(errors="replace").split("\n", 1)[0].strip()
    except OSError:
        return None
