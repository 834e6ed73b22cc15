"""Building a daemon of builds.RECIPES into its root-owned versioned prefix, once.

`install(name, version)` builds the recipe into /opt/vpnbench/<name>/<version>: Go programs from
a throwaway module that `go get`s each program's package at that version (GOTOOLCHAIN fetches the
Go the daemons need from the module proxy), Rust programs with `cargo install --locked`. The
build happens in a private directory beside the target and is renamed into place whole, so a
prefix either holds a complete build with its BUILD.json or does not exist; a prefix with a
valid BUILD.json is done and never written again. A version the registries refuse fails with
their own reason, in one line, leaving nothing behind.

A `git:REF` version (Go daemons) is first resolved to the version the module proxy serves for
it, then built as that version; a `path:/DIR` version is copied by root into a directory of root's
(the build user may read it, nobody else write it) and built from that copy, never in place: the
directory may be another user's, who could change it during the build. Either is built again,
and its prefix replaced whole, when it has moved (another resolved version, another source tree).
Every build's BUILD.json says what it was made from: built_from (module@version, module@REF,
crate@version or the directory), revision (the version, the commit, the directory's git HEAD or
its tree's sha256) and, for a directory, tree_sha256 of the copy that was built.

Everything runs on this machine (the builds are for its architecture, recorded in BUILD.json):
a host of another architecture builds its own there (builds.arch_mismatch says so).
"""

import dataclasses
import datetime
import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import tempfile
import time
import tomllib
import urllib.parse
import urllib.request
from pathlib import Path

import vpnbench
from vpnbench.foundation.errors import UserError
from vpnbench.hosts import build_env, build_sources, builds

# -mod=mod: `go build` may record go.sum lines a package needs that `go get` did not.
GO_ENV = {"GOTOOLCHAIN": builds.GO_TOOLCHAIN, "GOFLAGS": "-buildvcs=false -mod=mod"}
BUILDING = ".building-"  # a build in progress: .<version>.building-XXXX beside its target
BUILD_TIMEOUT_S = 1800  # a step: rosenpass took ~5 min here (2 cores, shared); a slow host several times that


class InstallError(UserError):
    """A build that cannot be made: a refused version, an unsafe prefix, a failed compiler."""


@dataclasses.dataclass(frozen=True)
class Installed:
    name: str
    version: str
    path: Path
    seconds: float
    cached: bool
    revision: str = ""  # for git: and path: builds, what the version resolved to

    def line(self) -> str:
        how = "cached" if self.cached else f"built in {self.seconds:.0f} s"
        at = f" at {self.revision}" if self.revision else ""
        return f"{self.name} {self.version}{at}: {how} ({self.path})"


@dataclasses.dataclass(frozen=True)
class Source:
    """What one build is made from, and what its BUILD.json says of that."""

    version: str  # as asked (builds.resolve's): "1.10.3", "git:master", "path:/src/wireguard-go"
    fetched: str | None  # the version `go get`/`cargo install` fetch (a registry or git: version)
    tree: Path | None  # a path: version's copy, root's
    facts: dict  # built_from, revision, and resolved (git:) or tree_sha256 (path:)

    def same_as(self, record: dict | None) -> bool:
        """Whether a complete build's record is of this very source (nothing moved since)."""
        return record is not None and all(record.get(key) == value for key, value in self.facts.items())


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_record(path: Path) -> dict | None:
    """The BUILD.json of a complete build at `path`, or None: missing, unreadable, or a program
    it names absent or changed since (its sha256 differs)."""
    try:
        record = json.loads((path / "BUILD.json").read_text())
        programs = record["programs"]
        if all(sha256(path / "bin" / program) == entry["sha256"] for program, entry in programs.items()):
            return record
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def install(name: str, version: str | None = None, *, root: Path = builds.PREFIX) -> Installed:
    """Build `name` at `version` (default: the pinned one) into root/<name>/<version>, unless a
    complete build is there already. `root` is a parameter only so tests can build elsewhere."""
    chosen = builds.resolve(name, version)
    if chosen == builds.DEBIAN:
        raise InstallError(f"{name}@{builds.DEBIAN} is the distribution's package, not a build: "
                           f"apt-get install {builds.recipe(name).debian_package}")
    kind = builds.version_kind(chosen)
    started = time.monotonic()
    # Tests install under a temporary root, whose parents (/tmp) are not root's alone.
    build_env.root_shared_dir(root, InstallError, parents=False)
    parent = root / name
    made_parent = not parent.exists()
    build_env.root_shared_dir(parent, InstallError, parents=False)
    directory = builds.directory(chosen)
    target = parent / directory
    held = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    source = None
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # one installer per daemon at a time
        for stale in parent.glob(f".*{BUILDING}*"):  # its installer died (holding the lock, it would be alive)
            shutil.rmtree(stale, ignore_errors=True)
        existing = read_record(target)
        if existing is not None and kind == "registry":
            return Installed(name, chosen, target, time.monotonic() - started, cached=True)
        if existing is None and (target.exists() or target.is_symlink()):
            raise InstallError(f"{target} exists but holds no complete build (no valid BUILD.json): "
                               f"remove it, then install again")
        try:
            source = prepare_source(builds.recipe(name), chosen)
            # what the line shows: the version a ref resolved to, the commit or tree a directory held
            revision = "" if kind == "registry" else source.facts.get("resolved") or source.facts["revision"]
            if source.same_as(existing):
                return Installed(name, chosen, target, time.monotonic() - started, cached=True, revision=revision)
            work = Path(tempfile.mkdtemp(prefix=f".{directory}{BUILDING}", dir=parent))
            try:
                record = build(builds.recipe(name), source, work)
                (work / "BUILD.json").write_text(json.dumps(record, indent=2) + "\n")
                work.chmod(0o755)
                replace(work, target, parent, directory)
            except BaseException:
                shutil.rmtree(work, ignore_errors=True)
                raise
        except BaseException:
            if made_parent:
                remove_if_empty(parent)
            raise
    finally:
        if source is not None and source.tree is not None:
            shutil.rmtree(source.tree.parent, ignore_errors=True)
        os.close(held)
    return Installed(name, chosen, target, time.monotonic() - started, cached=False, revision=revision)


def replace(work: Path, target: Path, parent: Path, directory: str) -> None:
    """Rename the finished build into place; a git: or path: build whose source has moved is
    replaced whole (renamed aside first: a run never sees half of either)."""
    if not target.exists():
        os.rename(work, target)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{directory}{BUILDING}replaced-", dir=parent))
    os.rename(target, aside)  # over the empty directory mkdtemp made
    os.rename(work, target)
    shutil.rmtree(aside, ignore_errors=True)


def remove_if_empty(directory: Path) -> None:
    try:
        directory.rmdir()  # only when empty: another version's build stays
    except OSError:
        pass


def build(recipe: builds.Recipe, source: Source, work: Path) -> dict:
    """Build every program of the recipe into work/bin; the record of what was built."""
    (work / "bin").mkdir(mode=0o755)
    what = f"{recipe.name} {source.version}"
    if source.tree is not None:
        made = (build_go_tree if recipe.language == "go" else build_rust_tree)(recipe, source.tree, work / "bin", what)
    else:
        made = (build_go if recipe.language == "go" else build_rust)(recipe, source.fetched, work / "bin")
    programs = {}
    for program in recipe.programs:
        path = work / "bin" / program
        path.chmod(0o755)
        programs[program] = {"sha256": sha256(path), "size_bytes": path.stat().st_size}
    return {"name": recipe.name, "version": source.version, "language": recipe.language, "source": recipe.source,
            **made, **source.facts, "machine": platform.machine(), "programs": programs,
            "built_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "vpnbench": vpnbench.__version__}


def run(argv: list[str], what: str, cwd: Path | None = None, env: dict | None = None) -> str:
    """Run a step as root (apt-get); its failure as one line. It runs with build_env's environment
    (nothing of the caller's) plus `env`, in `cwd` (default: /) once cwd and every parent are
    root's alone (cargo, rustup and go read configuration from them)."""
    cwd = cwd or build_env.SAFE_CWD
    build_env.check_cwd(cwd)
    return execute(argv, what, cwd, {**build_env.build_environment(), **(env or {})})


def run_as_builder(argv: list[str], what: str, cwd: Path, env: dict | None = None, *, rust: bool = False) -> str:
    """Run a build step (go, cargo, rustc: a compiler, a module download, a crate's build script
    or proc-macro) as build_env.BUILD_USER, never root, with that user's own caches and nothing of
    the caller's environment, in `cwd` (a directory of builder_work_dir); `rust`: with root's rust
    toolchain mounted read-only where that user can run it."""
    user = build_env.build_user()
    toolchain = build_env.rust_toolchain() if rust else None  # None: the system's cargo on PATH
    environment = {**build_env.builder_environment(build_env.builder_caches(user), toolchain is not None), **(env or {})}
    return execute(build_env.as_builder(argv, user, toolchain), what, cwd, environment)


def execute(argv: list[str], what: str, cwd: Path, env: dict) -> str:
    """The step's output; its failure as one line: the registry's or compiler's own reason."""
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except FileNotFoundError:
        raise InstallError(f"{what}: {argv[0]} is not installed ({install_hint(argv[0])})") from None
    except subprocess.TimeoutExpired:
        raise InstallError(f"{what}: {' '.join(argv[:2])} took over {BUILD_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise InstallError(f"{what}: {failure_reason(done.stderr or done.stdout)}")
    return done.stdout


def install_hint(command: str) -> str:
    if command == "go":
        return "apt-get install golang-go (any Go: vpnbench fetches the Go the daemons need itself)"
    if command in ("cargo", "rustc"):
        return "rustup's stable toolchain; Debian 12's cargo is too old"
    return "apt-get install it"


# The go command names the module version the proxy refused (the first on the line before the
# proxy's own words: "go: golang.zx2c4.com/wireguard@v1.0: module golang.zx2c4.com: reading …").
GO_REFUSED = re.compile(r"(\S+@v[^\s:]+): ")


# A module the proxy would not serve, as the go command reports it while loading a package's imports
# ("\tsuah.dev/protect: suah.dev/protect@v1.2.4: reading https://…/v1.2.4.zip: 403 Forbidden").
GO_READING_REFUSED = re.compile(r"(\S+@v[^\s:]+): reading \S+: (\d{3}\b.*)$")
GO_PROGRESS = ("go: downloading ", "go: finding ", "go: found ", "go: added ", "go: upgraded ")


def failure_reason(output: str) -> str:
    """One line from a failed go/cargo: the registry's answer where there is one, else the last
    error line (never the go command's progress lines)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for number, line in enumerate(lines):
        if line.startswith("server response:"):
            refused = GO_REFUSED.search(lines[number - 1]) if number else None
            said = line.removeprefix("server response:").strip()
            return f"the Go module proxy refused {refused.group(1)}: {said}" if refused else said
    for line in lines:  # no words of the proxy's own: its status
        reading = GO_READING_REFUSED.search(line)
        if reading:
            return f"the Go module proxy refused {reading.group(1)}: {reading.group(2)}"
    errors = [line for line in lines if line.startswith(("error", "go: ")) and not line.startswith(GO_PROGRESS)]
    return (errors or lines[-1:] or ["failed without a message"])[0]


def builder_work_dir(name: str) -> Path:
    """A fresh 0700 directory of the build user's under its own cache (build_env.BUILDER_CACHE):
    never in TMPDIR, whose parent (/tmp, or the caller's choice) may hold anyone's go.work or .cargo/."""
    user = build_env.build_user()
    work = Path(tempfile.mkdtemp(prefix=f"vpnbench-build-{name}-", dir=build_env.builder_caches(user)["work"]))
    os.chown(work, user.pw_uid, user.pw_gid)
    return work


def open_builder_file(work: Path, relative: str) -> int:
    """A file descriptor (read-only) on work/relative once it is a regular file of the build user's
    reached through no symlink (O_NOFOLLOW at each step) with one link: never a root file the build
    user pointed at. The caller closes it."""
    uid = build_env.build_user().pw_uid
    descriptor = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        *directories, name = Path(relative).parts
        for directory in directories:
            inner = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=descriptor)
    except OSError as error:
        raise InstallError(f"the build made no regular file {work / relative}: {error.strerror}") from None
    finally:
        os.close(descriptor)
    info = os.fstat(file)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != uid or info.st_nlink != 1:
        os.close(file)
        raise InstallError(f"{work / relative} is not a regular file of {build_env.BUILD_USER}'s with one link "
                           f"(owner uid {info.st_uid}, mode {stat.filemode(info.st_mode)}): not installed")
    return file


def collect(work: Path, relative: str, destination: Path) -> None:
    """Copy the program the build user made at work/relative into root's `destination` (a new
    file of root's: the build user can neither change nor replace it)."""
    source = open_builder_file(work, relative)
    with os.fdopen(source, "rb") as reader, open(destination, "xb") as writer:
        shutil.copyfileobj(reader, writer, 1 << 20)


def read_builder_text(work: Path, relative: str) -> str:
    with os.fdopen(open_builder_file(work, relative), "rb") as reader:
        return reader.read().decode()


def build_go(recipe: builds.Recipe, version: str, bin_dir: Path) -> dict:
    """A throwaway module requiring each program's package at v<version>, built with -trimpath
    (go install pkg@version refuses modules with replace directives, headscale among them)."""
    what = f"{recipe.name} {version}"
    go = go_command(what)
    if recipe.go_in_module:
        return build_go_in_module(recipe, version, bin_dir, go, what)
    module_dir = builder_work_dir(recipe.name)
    try:
        run_as_builder(["sh", "-ec", 'printf "module vpnbench.local/build\\n\\ngo 1.21\\n" > go.mod'], what, module_dir)
        replaced = add_go_stubs(recipe, go, module_dir, what)
        for package in dict.fromkeys(recipe.programs.values()):
            run_as_builder([go, "get", f"{package}@v{version}"], what, module_dir, GO_ENV)
        ldflags = " ".join(f"-X {name}={value.format(version=version)}" for name, value in recipe.go_version_vars)
        for program, package in recipe.programs.items():
            run_as_builder([go, "build", "-trimpath", *(["-ldflags", ldflags] if ldflags else []), "-o", f"out/{program}",
                            package], what, module_dir, GO_ENV)
            collect(module_dir, f"out/{program}", bin_dir / program)
        go_sum = read_builder_text(module_dir, "go.sum")
        toolchain = run_as_builder([go, "version"], what, module_dir, GO_ENV).strip()
        goos, goarch = run_as_builder([go, "env", "GOOS", "GOARCH"], what, module_dir, GO_ENV).split()
    finally:
        shutil.rmtree(module_dir, ignore_errors=True)
    found = re.search(rf"^{re.escape(recipe.source)} v{re.escape(version)} (h1:\S+)$", go_sum, re.M)
    return {"module": f"{recipe.source}@v{version}", "checksum": found.group(1) if found else None,
            "toolchain": toolchain, "goos": goos, "goarch": goarch, **({"replaced": replaced} if replaced else {})}


def build_go_in_module(recipe: builds.Recipe, version: str, bin_dir: Path, go: str, what: str) -> dict:
    """The module at v<version> downloaded (the proxy's zip, checked against the checksum
    database), copied where the build user may write (the module cache is read-only; the build
    may add go.sum lines) and each program built there, so its go.mod's replace lines apply."""
    install_packages(recipe.build_packages, what)
    work = builder_work_dir(recipe.name)
    try:
        module = f"{recipe.source}@v{version}"
        # first without -json: a refusal is then the go command's own lines on stderr (one line, failure_reason)
        run_as_builder([go, "mod", "download", module], what, work, GO_ENV)
        info = json.loads(run_as_builder([go, "mod", "download", "-json", module], what, work, GO_ENV))
        run_as_builder(["sh", "-ec", 'cp -R "$MODULE_DIR" src && chmod -R u+w src && mkdir out'], what, work,
                       {"MODULE_DIR": str(info["Dir"])})
        source = work / "src"
        for dropped, _ in recipe.go_drop:
            run_as_builder([go, "mod", "edit", f"-droprequire={dropped}", f"-dropreplace={dropped}"], what, source, GO_ENV)
        ldflags = " ".join(f"-X {name}={value.format(version=version)}" for name, value in recipe.go_version_vars)
        for program, package in recipe.programs.items():
            relative = "." + package.removeprefix(recipe.source)  # "./client", "./combined"
            run_as_builder([go, "build", "-trimpath", *(["-ldflags", ldflags] if ldflags else []), "-o",
                            f"../out/{program}", relative], what, source, GO_ENV)
            collect(work, f"out/{program}", bin_dir / program)
        toolchain = run_as_builder([go, "version"], what, source, GO_ENV).strip()
        goos, goarch = run_as_builder([go, "env", "GOOS", "GOARCH"], what, source, GO_ENV).split()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"module": module, "checksum": info.get("Sum"), "toolchain": toolchain, "goos": goos, "goarch": goarch,
            **({"dropped": {dropped: why for dropped, why in recipe.go_drop}} if recipe.go_drop else {})}


def add_go_stubs(recipe: builds.Recipe, go: str, module_dir: Path, what: str) -> dict[str, str]:
    """Each of the recipe's stubs as a local module of the throwaway one, which replaces the real
    module with it (a replace in the main module binds every version the build requires); what
    was replaced and why, for BUILD.json."""
    replaced = {}
    for number, (module, why, source) in enumerate(recipe.go_stubs):
        place = f"stub{number}"
        run_as_builder(["sh", "-ec", 'mkdir "$STUB" && printf "module %s\\n\\ngo 1.21\\n" "$MODULE" > "$STUB/go.mod" '
                                     '&& printf "%s" "$SOURCE" > "$STUB/stub.go"'], what, module_dir,
                       {"STUB": place, "MODULE": module, "SOURCE": source})
        run_as_builder([go, "mod", "edit", f"-replace={module}=./{place}"], what, module_dir, GO_ENV)
        replaced[module] = f"a stub of vpnbench's: {why}"
    return replaced


# ---- git: and path: versions ----

PSEUDO_COMMIT = re.compile(r"\d{14}-([0-9a-f]{12})\Z")  # a pseudo-version ends in its commit's 12 hex digits
HEX_REF = re.compile(r"[0-9a-f]{7,40}\Z")


def prepare_source(recipe: builds.Recipe, version: str) -> Source:
    """What `version` builds: a registry version as it is; git:REF resolved through the module
    proxy; path:/DIR copied (the caller removes source.tree's parent)."""
    kind = builds.version_kind(version)
    if kind == "registry":
        built_from = f"{recipe.source}@v{version}" if recipe.language == "go" else f"{recipe.source}@{version}"
        return Source(version, version, None, {"built_from": built_from, "revision": version})
    what = f"{recipe.name} {version}"
    if kind == "git":
        ref = version.removeprefix(builds.GIT)
        resolved, commit = resolve_git_ref(recipe, ref, what)
        return Source(version, resolved, None, {"built_from": f"{recipe.source}@{ref}", "revision": commit,
                                                "resolved": resolved})
    place = version.removeprefix(builds.PATH)
    if not os.path.isdir(place):
        raise InstallError(f"{what}: {place} is not a directory (path: names the directory of {recipe.name}'s sources)")
    commit = build_sources.git_head(place)
    tree, tree_sha256 = build_sources.copy_sources(place, build_env.build_user().pw_gid)
    return Source(version, None, tree, {"built_from": place, "revision": commit or tree_sha256,
                                        "tree_sha256": tree_sha256})


def resolve_git_ref(recipe: builds.Recipe, ref: str, what: str) -> tuple[str, str]:
    """The version (without its "v") the module proxy serves for a commit, tag or branch of the
    recipe's module, and the commit: the go command's own query (`go list -m module@REF`, as the
    build user). A proxy that answers no queries (this machine's serves only versions) still
    lists the pseudo-versions it holds: a commit hash is matched against their commits."""
    go = go_command(what)
    cwd = builder_work_dir(recipe.name)
    try:
        try:
            info = json.loads(run_as_builder([go, "list", "-m", "-json", f"{recipe.source}@{ref}"], what, cwd, GO_ENV))
        except InstallError as refused:
            if not HEX_REF.match(ref):
                raise
            listed = listed_commit(recipe.source, ref)
            if listed is None:
                raise InstallError(f"{refused}; nor does the proxy list a version of commit {ref}") from None
            info = json.loads(run_as_builder([go, "list", "-m", "-json", f"{recipe.source}@{listed}"], what, cwd, GO_ENV))
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    version = str(info.get("Version") or "")
    if not version.startswith("v"):
        raise InstallError(f"{what}: the Go module proxy resolved {recipe.source}@{ref} to no version")
    origin = info.get("Origin") if isinstance(info.get("Origin"), dict) else {}
    pseudo = PSEUDO_COMMIT.search(version)
    commit = origin.get("Hash") or (pseudo.group(1) if pseudo else version)
    return version.removeprefix("v"), str(commit)


def listed_commit(module: str, ref: str) -> str | None:
    """The one version the module proxy lists (its @v/list) whose commit begins with `ref` (hex),
    or None; several are refused as ambiguous."""
    proxy = build_env.GO_REGISTRY["GOPROXY"].split(",")[0]
    escaped = re.sub(r"[A-Z]", lambda upper: "!" + upper.group(0).lower(), module)  # the proxy's case encoding
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # as the go command runs: no caller's proxy
    try:
        with opener.open(f"{proxy}/{urllib.parse.quote(escaped)}/@v/list", timeout=60) as answer:
            listed = answer.read(1 << 20).decode(errors="replace").split()
    except OSError:
        return None
    matching = [version for version in listed
                if (found := PSEUDO_COMMIT.search(version)) and found.group(1).startswith(ref[:12])]
    if len(matching) > 1:
        raise InstallError(f"{module}@{ref}: the commit prefix matches {len(matching)} versions ({', '.join(matching)}): "
                           f"give more of the commit's hash")
    return matching[0] if matching else None


def go_module_of(tree: Path) -> str | None:
    """The module path a source tree's go.mod declares (root reads root's copy)."""
    try:
        text = (tree / "go.mod").read_text(errors="replace")
    except OSError:
        return None
    found = re.search(r"^module\s+\"?([^\s\"]+)\"?\s*$", text, re.M)
    return found.group(1) if found else None


def build_go_tree(recipe: builds.Recipe, tree: Path, bin_dir: Path, what: str) -> dict:
    """Each program's package built from the copied module (its own go.mod and go.sum; no
    changes to them: the copy is root's, read-only to the build user), output in a directory of
    the build user's and copied out as in build_go."""
    module = go_module_of(tree)
    if module != recipe.source:
        raise InstallError(f"{what}: the directory holds {'module ' + module if module else 'no go.mod'}, not "
                           f"{recipe.source}: give its module's root directory")
    go = go_command(what)
    out = builder_work_dir(recipe.name)
    env = {"GOTOOLCHAIN": builds.GO_TOOLCHAIN, "GOFLAGS": "-buildvcs=false"}
    try:
        for program, package in recipe.programs.items():
            relative = "." + package.removeprefix(recipe.source)  # the module root's "." or "./cmd/tailscaled"
            run_as_builder([go, "build", "-trimpath", "-o", str(out / program), relative], what, tree, env)
            collect(out, program, bin_dir / program)
        toolchain = run_as_builder([go, "version"], what, tree, env).strip()
        goos, goarch = run_as_builder([go, "env", "GOOS", "GOARCH"], what, tree, env).split()
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"module": recipe.source, "checksum": None, "toolchain": toolchain, "goos": goos, "goarch": goarch}


def crate_directory(tree: Path, crate: str) -> Path | None:
    """The directory in a copied tree (itself, or a workspace member up to two levels down) whose
    Cargo.toml is the package `crate`."""
    for manifest in sorted((*tree.glob("Cargo.toml"), *tree.glob("*/Cargo.toml"), *tree.glob("*/*/Cargo.toml"))):
        try:
            package = tomllib.loads(manifest.read_text(errors="replace")).get("package") or {}
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if isinstance(package, dict) and package.get("name") == crate:
            return manifest.parent
    return None


def build_rust_tree(recipe: builds.Recipe, tree: Path, bin_dir: Path, what: str) -> dict:
    """`cargo install --locked --path` of the copied crate (its workspace's Cargo.lock), its
    target directory the build user's own: the copy is never written."""
    crate = crate_directory(tree, recipe.source)
    if crate is None:
        raise InstallError(f"{what}: the directory holds no crate {recipe.source} (a Cargo.toml with that package "
                           f"name, at most two levels down)")
    built = cargo_install(recipe, ["--path", str(crate)], bin_dir, what, own_target=True)
    return {"crate": recipe.source, "checksum": None, **built}


def go_command(what: str) -> str:
    """A go that builds with GO_TOOLCHAIN: this machine's own where it is Go 1.21 or newer (it
    fetches GO_TOOLCHAIN itself), else GO_TOOLCHAIN fetched by the older go from the module proxy
    (golang.org/toolchain, a module like any other: how Debian 12's Go 1.19 gets there)."""
    if toolchain_version(["go", "version"]) is None:
        install_packages(("golang-go",), what)  # Debian's, however old: it only fetches the toolchain
    if go_switches(toolchain_version(["go", "version"])):
        return "go"
    # Fetched into the build user's module cache, by that user: root never runs it or touches its files.
    home = build_env.builder_caches(build_env.build_user())["home"]
    goos, goarch = run_as_builder(["go", "env", "GOOS", "GOARCH"], what, home).split()
    module = f"golang.org/toolchain@v0.0.1-{builds.GO_TOOLCHAIN}.{goos}-{goarch}"
    toolchain = json.loads(run_as_builder(["go", "mod", "download", "-json", module], what, home))["Dir"]
    # the module cache keeps files without their execute bits
    run_as_builder(["find", f"{toolchain}/bin", f"{toolchain}/pkg/tool", "-type", "f", "-exec", "chmod", "0555", "{}", "+"],
                   what, home)
    return f"{toolchain}/bin/go"


def build_rust(recipe: builds.Recipe, version: str, bin_dir: Path) -> dict:
    """`cargo install --locked` (the crate's own Cargo.lock) into a private root; the crate's
    checksum is the sha256 of the .crate file cargo verified against the registry's index."""
    what = f"{recipe.name} {version}"
    built = cargo_install(recipe, [f"{recipe.source}@{version}"], bin_dir, what)
    return {"crate": f"{recipe.source}@{version}", "checksum": crate_checksum(recipe.source, version), **built}


def cargo_install(recipe: builds.Recipe, source: list[str], bin_dir: Path, what: str, own_target: bool = False) -> dict:
    """`cargo install --locked SOURCE` as the build user into a private root, the programs
    collected into bin_dir; the toolchain and target that built them. `own_target`: the target
    directory in that root too (a --path build's sources are a copy the build user cannot write)."""
    cargo_root = builder_work_dir(recipe.name)
    check_cargo(recipe, what, cargo_root)
    try:
        run_as_builder(["cargo", "install", "--locked", "--quiet", *source, "--root", "."], what, cargo_root,
                       {"CARGO_TARGET_DIR": str(cargo_root / "target")} if own_target else None, rust=True)
        for program, binary in recipe.programs.items():
            collect(cargo_root, f"bin/{binary}", bin_dir / program)
        rustc = run_as_builder(["rustc", "-vV"], what, cargo_root, rust=True)
    finally:
        shutil.rmtree(cargo_root, ignore_errors=True)
    host = re.search(r"^host: (\S+)$", rustc, re.M)
    return {"toolchain": rustc.splitlines()[0], "target": host.group(1) if host else None}


def check_cargo(recipe: builds.Recipe, what: str, cargo_root: Path) -> None:
    """Refuse (removing cargo_root) when the build user's cargo cannot build the crates; install
    the Debian packages the build needs."""
    try:  # the cargo the build user runs: root's rustup default, mounted, before the system's
        problem = cargo_problem(run_as_builder(["cargo", "--version"], what, cargo_root, rust=True).strip() or None)
    except InstallError:
        problem = cargo_problem(None)
    if problem:
        shutil.rmtree(cargo_root, ignore_errors=True)
        raise InstallError(f"{what}: {problem}")
    install_packages(recipe.build_packages, what)


def crate_checksum(crate: str, version: str) -> str | None:
    cargo_home = build_env.builder_caches(build_env.build_user())["cargo"]
    for path in sorted(cargo_home.glob(f"registry/cache/*/{crate}-{version}.crate")):
        with os.fdopen(open_builder_file(path.parent, path.name), "rb") as crate_file:
            return "sha256:" + hashlib.file_digest(crate_file, "sha256").hexdigest()
    return None


def install_packages(packages: tuple[str, ...], what: str) -> None:
    """The Debian packages a build needs (bindgen's libclang, ...), installed when missing."""
    missing = [package for package in packages
               if subprocess.run(["dpkg-query", "-W", "-f", "${Status}", package], capture_output=True,
                                 text=True).stdout != "install ok installed"]
    if missing:
        run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing], what,
            env={"DEBIAN_FRONTEND": "noninteractive"})


TEST_SET = "test-set"  # what the test suite needs: every daemon at its pinned default


def parse_targets(items: list[str]) -> list[tuple[str, str]]:
    """`--install` values (NAME, NAME@VERSION or test-set) as (name, version); a bad one is one
    line naming the field and the allowed values (UserError: exit 2), before anything is built."""
    targets: list[tuple[str, str]] = []
    for item in items:
        if item == TEST_SET:
            targets += [(name, recipe.default) for name, recipe in builds.RECIPES.items()]
            continue
        name, _, version = item.partition("@")
        if name not in builds.RECIPES:
            raise UserError(f"--install: {name!r} is not a daemon vpnbench builds; allowed: "
                            f"{', '.join(builds.RECIPES)} (each as NAME or NAME@VERSION), or {TEST_SET}")
        try:
            chosen = builds.resolve(name, version or None)
        except ValueError as error:
            raise UserError(f"--install {name}@VERSION: {error}") from None
        place = chosen.removeprefix(builds.PATH)
        if builds.version_kind(chosen) == "path" and not os.path.isdir(place):
            raise UserError(f"--install {name}@{chosen}: {place} is not a directory (path: names the directory "
                            f"of {name}'s sources on this machine)")
        targets.append((name, chosen))
    return list(dict.fromkeys(targets))


def toolchain_version(argv: list[str]) -> str | None:
    """The first line a toolchain prints about itself, or None when it is not installed. Asked from
    / with nothing of the caller's environment: a rust-toolchain.toml or .cargo/ in the caller's
    working directory, or a RUSTUP_TOOLCHAIN, never names the cargo root runs."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=build_env.SAFE_CWD,
                              env=build_env.probe_environment())
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else None


# boringtun-cli and rosenpass ship a version-4 Cargo.lock, which `cargo install --locked` uses and cargo reads
# from 1.78 on (Debian 12's cargo 1.65 refuses it: "lock file version `4` was found").
CARGO_MINIMUM = (1, 78)
GO_MINIMUM = (1, 21)  # the first Go whose go command fetches another toolchain itself (GOTOOLCHAIN)


def version_at_least(version_line: str | None, minimum: tuple[int, int]) -> bool:
    """Whether a toolchain's version line (`go version`, `cargo --version`) names minimum or newer."""
    found = re.search(r"(?:go|cargo |rustc )(\d+)\.(\d+)", version_line or "")
    return bool(found) and (int(found.group(1)), int(found.group(2))) >= minimum


def cargo_problem(version_line: str | None) -> str | None:
    """Why this machine's cargo cannot build the crates, or None."""
    if version_line is None:
        return f"no cargo on PATH: {install_hint('cargo')}"
    if not version_at_least(version_line, CARGO_MINIMUM):
        return (f"{' '.join(version_line.split()[:2])} cannot read the crates' version-4 Cargo.lock: "
                f"cargo >= {'.'.join(map(str, CARGO_MINIMUM))} ({install_hint('cargo')})")
    return None


def go_switches(version_line: str | None) -> bool:
    """Whether this go (its `go version`) fetches GO_TOOLCHAIN itself (Go 1.21 or newer)."""
    return version_at_least(version_line, GO_MINIMUM)


def build_rows(root: Path = builds.PREFIX) -> list[dict]:
    """doctor's rows: each daemon vpnbench builds (versions built here, what a build needs, whether
    this machine can build it), then those it cannot install, each with the reason."""
    go = toolchain_version(["go", "version"])
    cargo = toolchain_version(["cargo", "--version"])
    rows = []
    for name, recipe in builds.RECIPES.items():
        if recipe.language == "go":
            needs = " + ".join((f"{builds.GO_TOOLCHAIN}, which any Go (Debian's 1.19 too) fetches from the module proxy",
                                *recipe.build_packages))
            here = go.split()[2] if go else "none: the build installs Debian's golang-go"
            problem = None
        else:
            minimum = ".".join(map(str, CARGO_MINIMUM))
            needs = " + ".join((f"cargo >= {minimum} from crates.io", *recipe.build_packages))
            here, problem = " ".join(cargo.split()[:2]) if cargo else "none", cargo_problem(cargo)
        rows.append({"daemon": name, "default": recipe.default, "installed": list(builds.installed(name, root)),
                     "needs": needs, "toolchain": here or "none", "buildable": problem is None, "reason": problem or "",
                     "install": f"vpnbench doctor --install {name}@{recipe.default}"})
    rows += [{"daemon": name, "default": None, "installed": [], "needs": "", "toolchain": "", "buildable": False, "reason": reason,
              "install": None} for name, reason in builds.NOT_INSTALLABLE.items()]
    return rows
