"""The daemons vpnbench builds itself, at the versions a campaign asks for.

One table (RECIPES) pins each daemon's default version and says how it is built: from the Go
module proxy or from crates.io, once, into a root-owned versioned prefix
(/opt/vpnbench/<name>/<version>) that is never written again. A build records what it is in
BUILD.json beside its programs (module and version, checksum, toolchain, architecture), and a
cell that used it records that, so a result says exactly what ran.

The version "debian" of a daemon with a Debian package means the distribution's own program on
the host's PATH (not built, nothing under the prefix). Two more forms name a build of any source,
so a VPN project's CI can benchmark its own branch (builds_install.py makes them):

- `git:REF`: a commit, tag or branch of a Go daemon's module, resolved by the Go module proxy to
  the (pseudo-)version it serves, built like a registry version. Crates cannot be fetched at a
  git ref here (crates.io serves releases only; this machine reaches no git host): refused.
- `path:/DIR`: the sources in a local directory (a checkout of the module or of the crate's
  workspace), copied by root into a place of root's and built from that copy.

These two live under /opt/vpnbench/<name>/git-<ref> and path-<hash of DIR> (directory()), and,
unlike a registry version, are built again (and replaced whole) when what they name has moved:
the ref resolves to another version, the directory's sources differ.

Techniques ask this module for a program's path (program()) and its build record
(record_command(): a fixed command the host itself runs, so the record is read on the host that
runs the program, never assumed from the controller); unavailable(probe, ...) says, through the
testbed's probe, why the hosts cannot run a build (missing, or built for another architecture:
a build is never copied to a host of another, it is built there). A technique's `version`
parameter is of version_type(name). builds_install.py makes the builds.
"""

import dataclasses
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from vpnbench.hosts.arch import normalize

PREFIX = Path("/opt/vpnbench")
# tailscale and nebula need Go >= 1.27.3; the go command fetches this toolchain from the module
# proxy itself (GOTOOLCHAIN), so a machine's own older Go builds them.
GO_TOOLCHAIN = "go1.27.3"
DEBIAN = "debian"  # the version that means "the distribution's package", where there is one
VERSION_PATTERN = re.compile(r"[0-9][0-9A-Za-z.+~-]{0,63}\Z")  # \Z: "$" would also match before a final newline
GIT = "git:"  # git:REF, a commit, tag or branch of a Go module
PATH = "path:"  # path:/DIR, a local source directory
# What the go command queries as a module version: a commit (hex), a tag, a branch (may hold "/").
GIT_REF_PATTERN = re.compile(r"[0-9A-Za-z][0-9A-Za-z._/+-]{0,127}\Z")
PATH_MAX = 4096


def version_kind(version: str) -> Literal["debian", "git", "path", "registry"]:
    if version == DEBIAN:
        return "debian"
    if version.startswith(GIT):
        return "git"
    if version.startswith(PATH):
        return "path"
    return "registry"


def directory(version: str) -> str:
    """The directory name of a build under /opt/vpnbench/<name>/: a registry version is its own;
    git:REF is git-REF (git-<hash> where REF holds a "/"), path:/DIR is path-<hash of DIR>. None
    begins with a digit, so none can be a registry version's."""
    kind = version_kind(version)
    if kind == "registry":
        return version
    named = version.removeprefix(GIT if kind == "git" else PATH)
    if kind == "git" and "/" not in named:
        return f"git-{named}"
    return f"{kind}-{hashlib.sha256(named.encode()).hexdigest()[:16]}"


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How one daemon is built, and the version a campaign gets when it names none."""

    name: str
    default: str  # the pinned build: what `doctor --install NAME` builds and the tests use
    language: Literal["go", "rust"]
    source: str  # the Go module path, or the crate's name
    programs: dict[str, str]  # program -> Go package path that builds it, or the crate's binary name
    debian_package: str | None = None  # the package the version "debian" means, if any
    build_packages: tuple[str, ...] = ()  # Debian packages the build itself needs
    why_pinned: str = ""
    # Go: -X settings (package.variable -> value, "{version}" the version built) for a daemon that
    # reports its version only when its release build injects it
    go_version_vars: tuple[tuple[str, str], ...] = ()
    # Go: modules the proxy here does not serve, replaced by a stub that does what the real one
    # does on Linux (module -> (why, its one Go file)); BUILD.json records each replacement
    go_stubs: tuple[tuple[str, str, str], ...] = ()
    # Go: build inside the module's own source tree, not from a module that requires it: a
    # module's `replace` lines apply only when it is the main module (netbird's forks of
    # wireguard-go, pion/ice and dex are reached only through them)
    go_in_module: bool = False
    # Go, built inside the module: requirements dropped from its go.mod (with their replace lines)
    # before the build, each (module, why): one no built program imports, whose replacement the
    # proxy refuses; BUILD.json records each
    go_drop: tuple[tuple[str, str], ...] = ()

    def allowed_forms(self) -> str:
        """The version forms this daemon takes, for a refusal's one line."""
        forms = [f"a version such as {self.default!r}"]
        if self.debian_package:
            forms.append(repr(DEBIAN))
        if self.language == "go":
            forms.append(f"{GIT}REF (a commit, tag or branch of {self.source})")
        return ", ".join(forms) + f" or {PATH}/DIR (a local source directory)"

    def check_version(self, version: str) -> None:
        """Raise ValueError (one line naming the allowed values) for a version this cannot mean.
        Pure: a path: directory is looked at only by the installer (a campaign names a build
        made from it, which its hosts hold; the sources need not be where the campaign runs)."""
        kind = version_kind(version)
        if kind == "debian":
            if self.debian_package is None:
                raise ValueError(f"{self.name} has no Debian package; give {self.allowed_forms()}")
        elif kind == "git":
            ref = version.removeprefix(GIT)
            if self.language != "go":
                raise ValueError(f"{version!r}: {self.name} is a crate, and crates.io serves no git refs (nor does this "
                                 f"machine reach a git host); allowed: {self.allowed_forms()}")
            if not GIT_REF_PATTERN.match(ref) or ".." in ref:
                raise ValueError(f"{version!r} is not a git ref (a commit, tag or branch: letters, digits and . _ / + -, "
                                 f"e.g. 'git:ecfc5a8d5446'); allowed: {self.allowed_forms()}")
        elif kind == "path":
            place = version.removeprefix(PATH)
            if not place.startswith("/") or len(place) > PATH_MAX or any(ord(c) < 32 or c == "\x7f" for c in place):
                raise ValueError(f"{version!r} is not a source directory: {PATH} takes an absolute path, e.g. "
                                 f"'{PATH}/src/{self.name}'")
        elif not VERSION_PATTERN.match(version):
            raise ValueError(f"{version!r} is not a version (digits, dots, letters); allowed: {self.allowed_forms()}")


# yggdrasil, yggdrasilctl and genkeys call only Pledge (cmd/*/main.go of 0.5.14).
YGGDRASIL_PROTECT_STUB = """// Package protect stands in for suah.dev/protect (vpnbench's build: see builds.py).
package protect

// Pledge is OpenBSD's pledge(2); elsewhere the real package returns nil, as this does.
func Pledge(promises string) error { return nil }

// Unveil is OpenBSD's unveil(2); elsewhere the real package returns nil, as this does.
func Unveil(path string, flags string) error { return nil }

// UnveilBlock ends unveil's changes on OpenBSD; elsewhere it returns nil.
func UnveilBlock() error { return nil }
"""

RECIPES: dict[str, Recipe] = {recipe.name: recipe for recipe in (
    Recipe("tailscale", "1.102.0", "go", "tailscale.com",
           {"tailscaled": "tailscale.com/cmd/tailscaled", "tailscale": "tailscale.com/cmd/tailscale"},
           why_pinned="1.104.x needs a gvisor pseudo-version the Go module proxy refuses"),
    Recipe("headscale", "0.26.1", "go", "github.com/juanfont/headscale",
           {"headscale": "github.com/juanfont/headscale/cmd/headscale"},
           why_pinned="the proxy lists no versions of it, so it is built from a module that requires it"),
    Recipe("nebula", "1.10.3", "go", "github.com/slackhq/nebula",
           {"nebula": "github.com/slackhq/nebula/cmd/nebula",
            "nebula-cert": "github.com/slackhq/nebula/cmd/nebula-cert"}, debian_package="nebula",
           why_pinned="1.11.x and 1.12.0 need a fork of netlink the proxy does not serve; Debian's is 1.6.1"),
    Recipe("wireguard-go", "0.0.0-20260522210424-ecfc5a8d5446", "go", "golang.zx2c4.com/wireguard",
           {"wireguard-go": "golang.zx2c4.com/wireguard"}, debian_package="wireguard-go",
           why_pinned="the newest commit the proxy serves (wireguard-go has no module tags), after the 2023 GSO/GRO rework; Debian 12 has 0.0.20220316"),
    Recipe("boringtun", "0.7.1", "rust", "boringtun-cli", {"boringtun-cli": "boringtun-cli"}),
    Recipe("rosenpass", "0.2.3", "rust", "rosenpass", {"rosenpass": "rosenpass"},
           build_packages=("cmake", "libclang-dev", "libsodium-dev")),
    Recipe("yggdrasil", "0.5.14", "go", "github.com/yggdrasil-network/yggdrasil-go",
           {"yggdrasil": "github.com/yggdrasil-network/yggdrasil-go/cmd/yggdrasil",
            "yggdrasilctl": "github.com/yggdrasil-network/yggdrasil-go/cmd/yggdrasilctl"},
           go_version_vars=(("github.com/yggdrasil-network/yggdrasil-go/src/version.buildName", "yggdrasil"),
                            ("github.com/yggdrasil-network/yggdrasil-go/src/version.buildVersion", "{version}")),
           go_stubs=(("suah.dev/protect",
                      "its host is not one the Go module proxy here serves (403); the real package wraps OpenBSD's "
                      "pledge(2) and unveil(2) and does nothing on Linux, as this stub does",
                      YGGDRASIL_PROTECT_STUB),),
           why_pinned="the only version the proxy lists, and the 0.5 protocol; Debian's 0.4.7 speaks 0.4's"),
    Recipe("vpncloud", "2.3.0", "rust", "vpncloud", {"vpncloud": "vpncloud"},
           why_pinned="the newest on crates.io (2021); upstream has released nothing since"),
    Recipe("easytier", "2.0.3", "rust", "easytier", {"easytier-core": "easytier-core", "easytier-cli": "easytier-cli"},
           # its build.rs compiles .proto files with protoc, and they import the well-known types, which
           # Debian ships apart from protoc: without libprotobuf-dev the build script fails with "protoc
           # failed: google/protobuf/timestamp.proto: File not found"
           build_packages=("protobuf-compiler", "libprotobuf-dev"),
           why_pinned="the newest on crates.io (Oct 2024); upstream has moved on, its GitHub releases are 2.1 and later, "
                      "which it no longer publishes to crates.io"),
    # Not a daemon: the quic measurement's client and server. vpn-bench's qperf (rbruenig/qperf, C
    # on quicly) is in no registry this machine reaches; crates.io has no published quinn perf,
    # quiche apps or s2n-quic tools, and the Go module proxy refuses github.com/quic-go/perf (403).
    # BoringSSL comes inside the tquic crate and is built with cmake.
    Recipe("tquic", "1.6.0", "rust", "tquic_tools", {"tquic_client": "tquic_client", "tquic_server": "tquic_server"},
           build_packages=("cmake",),
           why_pinned="the newest tquic_tools on crates.io; the quic measurement's parsers read its output"),
    # the client and the combined server (management, signal, relay, the embedded identity provider)
    Recipe("netbird", "0.77.1", "go", "github.com/netbirdio/netbird",
           {"netbird": "github.com/netbirdio/netbird/client",
            "netbird-server": "github.com/netbirdio/netbird/combined"},
           go_version_vars=(("github.com/netbirdio/netbird/version.version", "{version}"),),
           go_in_module=True,
           build_packages=("gcc",),  # the management store's SQLite driver (mattn/go-sqlite3) is cgo
           go_drop=(("github.com/wailsapp/wails/v3",
                     "the desktop UI's toolkit (client/ui only; neither program imports it), replaced in go.mod by "
                     "github.com/netbirdio/wails/v3@v3.0.0-beta.3.0.20260810103952-24e716aea4db, which the proxy "
                     "refuses (403); building ./combined loads the whole module graph, its go.mod included"),),
           why_pinned="the issue's version; the proxy serves it (its @v/list answers 403, so no newer one can be "
                      "listed) and its go.mod's replace lines need a build inside the module"),
    # innernet's two crates are two recipes (a recipe is one crate); the technique needs both
    Recipe("innernet", "2.0.0", "rust", "innernet", {"innernet": "innernet"},
           why_pinned="the newest on crates.io (2025), the version of innernet-server it speaks to"),
    Recipe("innernet-server", "2.0.0", "rust", "innernet-server", {"innernet-server": "innernet-server"},
           build_packages=("libsqlite3-dev", "pkg-config"),
           why_pinned="the newest on crates.io (2025); rusqlite links the system's SQLite (not bundled on glibc)"),
)}

# Daemons teams ask about that vpnbench cannot install here, each with the reason (doctor shows them).
# Checked against the registries this machine reaches (the Go module proxy as GOPROXY names it,
# crates.io through cargo); the peer mesh benchmark (vpn-bench) compares all three.
NOT_INSTALLABLE = {
    "zerotier": "no package in the registries vpnbench installs from (Debian has no zerotier-one; it is "
                "neither a Go module nor a crate): ZeroTier ships only its own apt repository",
    "hyprspace": "the Go module proxy refuses github.com/hyprspace/hyprspace (403 \"This module version is not "
                 "available\", its version list included), and its build needs generated code: the schema "
                 "package comes from a Nix job (//go:generate nix run ..#dev-generate-schemas), not the module",
    "mycelium": "its daemon (threefoldtech/mycelium's myceliumd crate) is not on crates.io; the crates named "
                "mycelium, mycelium-cli and mycelium-api there are other projects",
}


def recipe(name: str) -> Recipe:
    if name not in RECIPES:
        raise ValueError(f"{name!r} is not a daemon vpnbench builds; allowed: {', '.join(RECIPES)}")
    return RECIPES[name]


def resolve(name: str, version: str | None) -> str:
    """The version a campaign's `version` means: its own, or the pinned build. (A technique that
    ran the distribution's program before versions could be chosen keeps that as its own default:
    the wireguard technique's unset version is Debian's wireguard-go, so `make demo` builds nothing.)"""
    chosen = version or recipe(name).default
    recipe(name).check_version(chosen)
    if version_kind(chosen) == "path":  # one spelling per directory: "/src/wg/" and "/src//wg" are "/src/wg"
        return PATH + os.path.normpath(chosen.removeprefix(PATH))
    return chosen


def prefix(name: str, version: str | None = None) -> Path:
    """Where that build lives (on every host that runs it): /opt/vpnbench/<name>/<version>."""
    return PREFIX / name / directory(resolve(name, version))


def program(name: str, program_name: str, version: str | None = None) -> str:
    """The path of one program of a build on a host (absolute), or, for the version "debian",
    the program's name as the distribution installs it (found on the host's PATH)."""
    chosen = resolve(name, version)
    if program_name not in recipe(name).programs:
        raise ValueError(f"{name} builds no program {program_name!r}; it builds {', '.join(recipe(name).programs)}")
    if chosen == DEBIAN:
        return program_name
    return str(PREFIX / name / directory(chosen) / "bin" / program_name)


def record_path(name: str, version: str | None = None) -> str:
    return str(prefix(name, version) / "BUILD.json")


def record_command(name: str, version: str | None = None) -> list[str]:
    """A fixed command printing, on the host that runs it, what this build is: BUILD.json for a
    build of vpnbench's, or the Debian package's name and version for "debian"."""
    chosen = resolve(name, version)
    if chosen == DEBIAN:
        package = recipe(name).debian_package
        return ["dpkg-query", "-W", "-f", '{"source": "debian", "package": "${Package}", "version": "${Version}", '
                                          '"architecture": "${Architecture}"}', package]
    return ["cat", record_path(name, chosen)]


def missing_reason(name: str, version: str | None, where: str, record: dict | None = None,
                   host_arch: str | None = None) -> str:
    """Why a build is not usable on a host (`where` names it), and the one command that fixes it.
    Given the build's record and the host's `uname -m`, a build for another architecture is the
    reason (a build is never copied to a host of another architecture: it is built there)."""
    chosen = resolve(name, version)
    mismatch = arch_mismatch(record, host_arch) if record and host_arch else None
    if mismatch:
        return (f"{where}: {mismatch}; build it on that host with `vpnbench doctor --install {name}@{chosen}`")
    if chosen == DEBIAN:
        package = recipe(name).debian_package
        return f"{where} lacks {name} (Debian): apt-get install {package}"
    return (f"{where} lacks {name} {chosen} ({prefix(name, chosen)}): build it there with "
            f"`vpnbench doctor --install {name}@{chosen}`")


def arch_mismatch(record: dict, host_arch: str) -> str | None:
    """Why a build (its BUILD.json) cannot run on a host whose `uname -m` is host_arch, or None."""
    built_for = normalize(str(record.get("machine", "")))
    if built_for == normalize(host_arch):
        return None
    return (f"{record.get('name', 'the')} {record.get('version', '')} was built for {built_for or 'an unrecorded architecture'}"
            f" but the host is {normalize(host_arch)}")


def installed(name: str, root: Path = PREFIX) -> dict[str, dict]:
    """The builds of `name` on this machine, version -> its BUILD.json (those with a readable one):
    a git: or path: build by the version it was asked as, which its record holds."""
    found = {}
    for path in sorted((root / name).glob("*/BUILD.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        asked = record.get("version") if isinstance(record, dict) else None
        known = isinstance(asked, str) and version_kind(asked) in ("git", "path") and directory(asked) == path.parent.name
        found[asked if known else path.parent.name] = record
    return found


def version_type(name: str):
    """The type of a technique parameter naming a build of `name`: unset means the pinned default,
    which validation puts in its place (so every cell's technique_params holds the exact version,
    and a label names only a version that differs from the default); a given one must pass
    check_version, else one line naming an allowed value, before any host is touched. In a
    technique's Params:

        version: builds.version_type("nebula") = None
    """
    return Annotated[str | None, Field(validate_default=True), AfterValidator(lambda version: resolve(name, version))]


def unavailable(probe, name: str, version: str | None = None) -> str | None:
    """Why the hosts that run a technique cannot run this build of `name`, or None: asked through
    the testbed's probe (testbeds' KernelProbe), on each of those hosts. A host lacking a program,
    or holding a build for another architecture than its own, is the reason."""
    chosen = resolve(name, version)
    for program_name in recipe(name).programs:
        path = program(name, program_name, chosen)
        if chosen == DEBIAN:
            if not probe.has_command(path):
                return missing_reason(name, chosen, "a host")
            continue
        host = probe.host_lacking(path)
        if host:
            return missing_reason(name, chosen, host)
    if chosen == DEBIAN:
        return None
    machines = probe.outputs(["uname", "-m"])
    for host, text in probe.outputs(record_command(name, chosen)).items():
        try:
            record = json.loads(text)
        except ValueError:
            return missing_reason(name, chosen, host)  # programs without their record: not a build of ours
        if arch_mismatch(record, machines.get(host, "")):
            return missing_reason(name, chosen, host, record, machines[host])
        altered = altered_reason(record, probe.outputs(owners_command(name, chosen)).get(host, ""),
                                 probe.outputs(sums_command(name, chosen)).get(host, ""), owners_command(name, chosen)[5:])
        if altered:
            return (f"{host}: {name} {chosen} ({prefix(name, chosen)}) is not as built: {altered}; remove it and build "
                    f"it again with `vpnbench doctor --install {name}@{chosen}`")
    return None


# A build runs as root: before a run uses one, each host it runs on shows that its programs are the
# bytes BUILD.json recorded (sha256) and that nobody but root could have changed them since (the
# programs and every directory above them root's, writable by neither group nor others).
def owners_command(name: str, version: str) -> list[str]:
    """stat (following links, as exec does) of each program and every directory above it."""
    paths: dict[str, None] = {}
    for program_name in recipe(name).programs:
        path = Path(program(name, program_name, version))
        paths.update(dict.fromkeys(str(p) for p in (path, *path.parents)))
    return ["stat", "-L", "-c", "%u %a %n", "--", *paths]


def sums_command(name: str, version: str) -> list[str]:
    return ["sha256sum", "--", *(program(name, program_name, version) for program_name in recipe(name).programs)]


def altered_reason(record: dict, owners: str, sums: str, paths: list[str]) -> str | None:
    """Why a build on a host is not the one its record describes, or None (the outputs of
    owners_command and sums_command there)."""
    seen = {}
    for line in owners.splitlines():
        uid, mode, path = line.split(" ", 2)
        seen[path] = (uid, mode)
        if uid != "0" or int(mode, 8) & 0o022:
            return f"{path} is owned by uid {uid} with mode {mode}, where only root may write"
    if set(paths) - set(seen):
        return f"cannot check the owner of {sorted(set(paths) - set(seen))[0]}"
    expected = {name: entry.get("sha256") for name, entry in (record.get("programs") or {}).items()}
    found = {Path(path).name: digest for digest, path in (line.split(maxsplit=1) for line in sums.splitlines() if line)}
    for program_name, digest in expected.items():
        if found.get(program_name) != digest:
            return f"bin/{program_name}'s sha256 is {found.get(program_name) or 'unreadable'}, not the {digest} BUILD.json records"
    return None
