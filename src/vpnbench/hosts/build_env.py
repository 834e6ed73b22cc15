"""The environment and working directory in which root runs a toolchain (go, cargo, rustc, rustup).

A toolchain reads more than its arguments: cargo reads .cargo/config.toml in its working
directory and every parent (a `rustc-wrapper` there runs as root), rustup picks the toolchain a
rust-toolchain.toml in any of those names, go reads go.work above its module and GOFLAGS,
GOPROXY, GOSUMDB, GOINSECURE... from the environment, and all of them take their caches and
homes from HOME, TMPDIR, CARGO_HOME, RUSTUP_HOME, GOPATH. Under `sudo -E` or `su` without `-` the
caller's values of all of these reach root. So root runs a toolchain only:

- in a working directory whose every ancestor is root's alone (safe_files.not_ours_alone:
  not /tmp or /var/tmp, where anyone may plant a .cargo/ or a go.work);
- with an environment made here from nothing (allow-listed): PATH a fixed list of system and
  toolchain directories, each root's alone; HOME, CARGO_HOME, GOPATH, GOMODCACHE, GOCACHE and
  TMPDIR under CACHE (root's, 0700, owner and mode checked); RUSTUP_HOME root's own, with
  RUSTUP_TOOLCHAIN pinned to its default so no toolchain file is ever consulted; GOENV and
  GOWORK off; GOPROXY and GOSUMDB the Go defaults, whatever the caller's say.
"""

import os
import pwd
import shlex
import stat
import subprocess
import tomllib
from pathlib import Path

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.safe_files import not_ours_alone

CACHE = Path("/var/cache/vpnbench")  # root's build homes and caches: 0700, never shared
SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
# Where a toolchain is installed by its own installer (rustup under the user's home, Go's tarball,
# the rust Docker image's), searched before the system's directories, each only when ours alone.
TOOLCHAIN_DIRS = ("{home}/.cargo/bin", "/usr/local/go/bin", "/usr/local/cargo/bin")
SAFE_CWD = Path("/")  # where toolchain probes run: no parent a configuration could hide in
# The Go defaults (Go's own go.env): a caller's GOPROXY=file://... or GOSUMDB=off never reaches root.
GO_REGISTRY = {"GOPROXY": "https://proxy.golang.org,direct", "GOSUMDB": "sum.golang.org"}


class UnsafeBuildPlace(UserError):
    """A directory a toolchain would run in or read from that another user could have written."""


def real_home() -> Path:
    """This user's home from the password database, never $HOME (the caller's under sudo -E)."""
    return Path(pwd.getpwuid(os.geteuid()).pw_dir)


def safe_path() -> str:
    """PATH for a toolchain: the toolchains' own directories, then the system's, each kept only
    when it and every directory above it are ours alone. The toolchains' first, as the Makefile
    has it: a rustup cargo (boringtun and rosenpass need >= 1.78) before Debian 12's 1.65, which
    `make test` installs beside it."""
    candidates = [*(entry.format(home=real_home()) for entry in TOOLCHAIN_DIRS), *SYSTEM_PATH]
    return ":".join(entry for entry in candidates if os.path.isdir(entry) and not_ours_alone(entry) is None)


def rustup_settings() -> dict[str, str]:
    """RUSTUP_HOME (this user's own ~/.rustup, when it is ours alone) and RUSTUP_TOOLCHAIN pinned
    to its default toolchain: rustup then never reads a rust-toolchain.toml or an override."""
    home = real_home() / ".rustup"
    if not home.is_dir() or not_ours_alone(home) is not None:
        return {}
    settings = {"RUSTUP_HOME": str(home)}
    try:
        default = tomllib.loads((home / "settings.toml").read_text()).get("default_toolchain")
    except (OSError, tomllib.TOMLDecodeError):
        default = None
    if isinstance(default, str) and default:
        settings["RUSTUP_TOOLCHAIN"] = default
    return settings


def probe_environment() -> dict[str, str]:
    """For `go version`, `cargo --version`, `rustc -vV` (doctor, and before a build): nothing of
    the caller's; the user's own homes from the password database."""
    home = real_home()
    return {"PATH": safe_path(), "HOME": str(home), "CARGO_HOME": str(home / ".cargo"), **rustup_settings(),
            "GOENV": "off", "GOWORK": "off", "GOFLAGS": "", "GOTOOLCHAIN": "local", "LANG": "C.UTF-8"}


def root_only_dir(path: Path) -> Path:
    """`path` made 0700 if missing, then refused unless it is a directory of root's that nobody
    else can enter, under parents that are root's alone."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or stat.S_IMODE(info.st_mode) != 0o700:
        raise UnsafeBuildPlace(f"{path} is not a directory owned by root with mode 0700 (owner uid {info.st_uid}, "
                               f"mode {stat.filemode(info.st_mode)}): vpnbench keeps its build caches only "
                               f"where nobody else can write; remove it or fix its owner and mode")
    check_cwd(path)
    return path


def build_caches() -> dict[str, Path]:
    """CACHE and its parts (root's, 0700), made when missing."""
    places = {"cache": root_only_dir(CACHE)}
    for name in ("home", "cargo", "go", "tmp", "work"):
        places[name] = root_only_dir(CACHE / name)
    return places


def build_environment() -> dict[str, str]:
    """What a root build runs with, and nothing else."""
    places = build_caches()
    go = places["go"]
    return {**probe_environment(), "HOME": str(places["home"]), "CARGO_HOME": str(places["cargo"]),
            "TMPDIR": str(places["tmp"]), "GOPATH": str(go), "GOMODCACHE": str(go / "mod"),
            "GOCACHE": str(go / "build"), **GO_REGISTRY, "GOTOOLCHAIN": "local"}


def check_cwd(path: Path) -> None:
    """Refuse to run a toolchain in `path` unless it and every parent are ours alone."""
    problem = not_ours_alone(path)
    if problem:
        raise UnsafeBuildPlace(f"refusing to run a toolchain in {path}: {problem} (cargo, rustup and go read "
                               f"configuration from every parent of their working directory)")


# ---- the unprivileged build user ----
# Compilers, Go's module downloads, and dependencies' build scripts and proc-macros run as this
# system user, never as root; root only copies the binaries it made (builds_install.collect).
BUILD_USER = "vpnbench-build"
# Root's (0755, so the build user can reach its parts); each part is the build user's own, 0700.
BUILDER_CACHE = Path("/var/cache/vpnbench-build")
# Root's empty directory: root's rust toolchain (under /root, 0700) is bind-mounted here read-only,
# in the build's own mount namespace only, so the build user can run cargo and rustc from it.
RUST_MOUNT = BUILDER_CACHE / "rust"


def build_user() -> pwd.struct_passwd:
    """BUILD_USER, created (a system user: no home, no login shell) when missing; refused when it
    is root in disguise (uid or gid 0) or belongs to any group besides its own."""
    try:
        entry = pwd.getpwnam(BUILD_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", str(BUILDER_CACHE / "home"),
                        "--shell", "/usr/sbin/nologin", BUILD_USER], check=True, capture_output=True)
        entry = pwd.getpwnam(BUILD_USER)
    groups = os.getgrouplist(BUILD_USER, entry.pw_gid)
    if entry.pw_uid == 0 or entry.pw_gid == 0 or set(groups) != {entry.pw_gid}:
        raise UnsafeBuildPlace(f"the build user {BUILD_USER} has uid {entry.pw_uid}, gid {entry.pw_gid}, groups "
                               f"{sorted(groups)}: allowed: a uid and gid other than 0 and no group but its own "
                               f"(userdel {BUILD_USER}; vpnbench creates it again)")
    return entry


def builder_dir(path: Path, user: pwd.struct_passwd) -> Path:
    """`path` made the build user's (0700) when missing, then refused unless it is a directory of
    that user's that nobody else can enter (lstat: never a symlink it left there)."""
    try:
        path.mkdir(mode=0o700)
        os.chown(path, user.pw_uid, user.pw_gid)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != user.pw_uid or stat.S_IMODE(info.st_mode) != 0o700:
        raise UnsafeBuildPlace(f"{path} is not a directory owned by {BUILD_USER} with mode 0700 (owner uid "
                               f"{info.st_uid}, mode {stat.filemode(info.st_mode)}): remove it; vpnbench makes it again")
    return path


def root_shared_dir(path: Path, error: type[UserError] = UnsafeBuildPlace, *, parents: bool = True) -> Path:
    """`path` made root's 0755 when missing; refused (with `error`) unless root's alone (others
    may enter). With `parents`, every parent must be ours alone too (a toolchain runs there)."""
    try:
        path.mkdir(mode=0o755)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise error(f"{path} is not a directory owned by root and writable only by it (owner uid "
                    f"{info.st_uid}, mode {stat.filemode(info.st_mode)}): vpnbench builds in no path another "
                    f"user could have made; remove it or fix its owner and mode")
    if parents:
        check_cwd(path)
    return path


def builder_caches(user: pwd.struct_passwd) -> dict[str, Path]:
    """BUILDER_CACHE (root's) and the build user's homes and caches in it, made when missing."""
    places = {"cache": root_shared_dir(BUILDER_CACHE), "rust": root_shared_dir(RUST_MOUNT)}
    for name in ("home", "cargo", "go", "tmp", "work"):
        places[name] = builder_dir(BUILDER_CACHE / name, user)
    return places


def rust_toolchain() -> Path | None:
    """Root's default rustup toolchain directory (what RUSTUP_TOOLCHAIN pins for root), or None."""
    settings = rustup_settings()
    if "RUSTUP_TOOLCHAIN" not in settings:
        return None
    toolchain = Path(settings["RUSTUP_HOME"]) / "toolchains" / settings["RUSTUP_TOOLCHAIN"]
    return toolchain if (toolchain / "bin" / "cargo").is_file() and not_ours_alone(toolchain) is None else None


def reachable_by_all(path: str) -> bool:
    """Whether every directory from / down to `path` can be entered by any user (o+x)."""
    real = Path(path).resolve()
    return real.is_dir() and all(os.stat(part).st_mode & 0o001 for part in (real, *real.parents))


def builder_environment(places: dict[str, Path], rust_mounted: bool) -> dict[str, str]:
    """What the build user's steps run with, and nothing else: root's PATH minus what it cannot
    reach (root's home), the mounted rust toolchain first when there is one, and its own caches."""
    path = [entry for entry in safe_path().split(":") if entry and reachable_by_all(entry)]
    rust = {"RUSTC": str(RUST_MOUNT / "bin" / "rustc")} if rust_mounted else {}
    if rust_mounted:
        path.insert(0, str(RUST_MOUNT / "bin"))
    go = places["go"]
    return {"PATH": ":".join(path), "HOME": str(places["home"]), "CARGO_HOME": str(places["cargo"]),
            "TMPDIR": str(places["tmp"]), "GOPATH": str(go), "GOMODCACHE": str(go / "mod"),
            "GOCACHE": str(go / "build"), **GO_REGISTRY, "GOENV": "off", "GOWORK": "off", "GOFLAGS": "",
            "GOTOOLCHAIN": "local", "LANG": "C.UTF-8", **rust}


def as_builder(argv: list[str], user: pwd.struct_passwd, toolchain: Path | None) -> list[str]:
    """`argv` run as the build user: in a private mount namespace (where root's rust `toolchain`,
    if any, is bind-mounted read-only at RUST_MOUNT), then setpriv drops to the user with no
    capabilities, none inheritable or in the bounding set, and no_new_privs (no setuid regains root)."""
    drop = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]
    mount = (["mount", "--bind", "-o", "ro,nosuid,nodev", "--", str(toolchain), str(RUST_MOUNT)] if toolchain else ["true"])
    # sh mounts (its arguments quoted: fixed paths of root's), then becomes setpriv, in the namespace
    # unshare made (private propagation: the mount is never seen outside it, and ends with it)
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-ec",
            f'{shlex.join(mount)}; exec "$@"', "sh", *drop, *argv]
