"""Any build as a version (issue 43 item 2): `git:REF` of a Go daemon's module and `path:/DIR`,
a local source directory, besides a registry version.

Pure tests of the version forms and their refusals; the copy a `path:` build is made from
(never the directory itself: another user's directory is copied by root, without following a
link); then real builds of wireguard-go (marked `build`: ~2 s each once the build user's module
cache holds the pinned pseudo-version, which `make builds` fetches) into a temporary prefix: from
a directory (its git HEAD recorded, the program runs, built again when the sources change), from
a directory another user owns (the original never written, the root-owned copy is what was
built), and from a commit, resolved through the module proxy to the pinned pseudo-version."""

import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import VPNBENCH
from vpnbench.foundation.errors import UserError
from vpnbench.hosts import build_env, build_sources, builds, builds_install
from vpnbench.hosts.builds_install import InstallError, install, parse_targets

NOBODY = 65534
WIREGUARD = builds.RECIPES["wireguard-go"]
PINNED_COMMIT = WIREGUARD.default.rsplit("-", 1)[1]  # a pseudo-version's last 12 hex digits are its commit


# ---- the version forms ----

def test_git_and_path_versions_have_their_own_prefix_and_refuse_bad_forms_in_one_line():
    assert builds.resolve("wireguard-go", "path:/src/wireguard-go/") == "path:/src/wireguard-go"  # one spelling
    path_build = builds.program("wireguard-go", "wireguard-go", "path:/src//wireguard-go")
    digest = hashlib.sha256(b"/src/wireguard-go").hexdigest()[:16]
    assert path_build == f"/opt/vpnbench/wireguard-go/path-{digest}/bin/wireguard-go"
    assert builds.program("tailscale", "tailscaled", "git:main") == "/opt/vpnbench/tailscale/git-main/bin/tailscaled"
    branch = hashlib.sha256(b"feature/gso").hexdigest()[:16]
    assert builds.prefix("nebula", "git:feature/gso") == Path(f"/opt/vpnbench/nebula/git-{branch}")  # no "/" in a name
    assert builds.missing_reason("wireguard-go", "path:/src/wg", "h1").endswith(
        "build it there with `vpnbench doctor --install wireguard-go@path:/src/wg`")
    with pytest.raises(ValueError) as crate:
        builds.resolve("boringtun", "git:0123abcd")
    assert str(crate.value) == ("'git:0123abcd': boringtun is a crate, and crates.io serves no git refs (nor does this "
                                "machine reach a git host); allowed: a version such as '0.7.1' or path:/DIR (a local "
                                "source directory)")
    with pytest.raises(ValueError, match=r"^'path:src/wg' is not a source directory: path: takes an absolute path"):
        builds.resolve("wireguard-go", "path:src/wg")
    with pytest.raises(ValueError, match=r"^'git:\.\./x' is not a git ref .*allowed: .*git:REF .*or path:/DIR"):
        builds.resolve("wireguard-go", "git:../x")
    with pytest.raises(ValueError, match=r"^'path:/a\\nb' is not a source directory"):
        builds.resolve("wireguard-go", "path:/a\nb")


def test_install_targets_check_the_directory_before_anything_is_built(tmp_path):
    assert parse_targets([f"wireguard-go@path:{tmp_path}/", "nebula@git:v1.10.3"]) == [
        ("wireguard-go", f"path:{tmp_path}"), ("nebula", "git:v1.10.3")]
    with pytest.raises(UserError) as missing:
        parse_targets([f"wireguard-go@path:{tmp_path}/nowhere"])
    assert str(missing.value) == (f"--install wireguard-go@path:{tmp_path}/nowhere: {tmp_path}/nowhere is not a "
                                  f"directory (path: names the directory of wireguard-go's sources on this machine)")


@pytest.mark.parametrize("item, said", [
    ("rosenpass@git:main", "vpnbench: error: --install rosenpass@VERSION: 'git:main': rosenpass is a crate, and "
                           "crates.io serves no git refs (nor does this machine reach a git host); allowed: a version "
                           "such as '0.2.3' or path:/DIR (a local source directory)"),
    ("wireguard-go@path:/nonexistent/wireguard-go", "vpnbench: error: --install wireguard-go@path:/nonexistent/"
     "wireguard-go: /nonexistent/wireguard-go is not a directory (path: names the directory of wireguard-go's "
     "sources on this machine)"),
])
def test_the_cli_refuses_a_crate_git_ref_and_a_missing_directory_in_one_line_with_exit_2(item, said):
    done = subprocess.run([*VPNBENCH, "doctor", "--install", item], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr.strip().splitlines(), done.stdout) == (2, [said], "")


def test_a_campaign_version_field_takes_git_and_path_versions(tmp_path):
    from vpnbench.foundation.params import validate_model
    from vpnbench.techniques.nebula import NebulaParams

    assert validate_model(NebulaParams, {"kind": "nebula", "version": "path:/ci/nebula/"}, "technique[1]").version \
        == "path:/ci/nebula"  # the sources need not be here: the hosts hold the build made from them
    assert validate_model(NebulaParams, {"kind": "nebula", "version": "git:0123abcd"}, "technique[1]").version \
        == "git:0123abcd"
    with pytest.raises(UserError, match=r"^technique\[1\]\.version: 'path:ci' is not a source directory"):
        validate_model(NebulaParams, {"kind": "nebula", "version": "path:ci"}, "technique[1]")


def test_reports_name_a_git_or_path_build_with_its_revision():
    from vpnbench.foundation.daemon_version import ran_version

    build = {"name": "wireguard-go", "version": "path:/src/wg", "toolchain": "go version go1.27.3 linux/amd64",
             "built_from": "/src/wg", "revision": "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"}
    said = ran_version({"implementation": "wireguard-go", "version": "path:/src/wg", "build": build})
    assert said.label == "wireguard-go path:/src/wg@1a2b3c4d5e6f (go1.27.3)"
    tree = ran_version({"implementation": "wireguard-go", "version": "path:/src/wg",
                        "build": {**build, "revision": "sha256:" + "ab" * 32}})
    assert tree.label == "wireguard-go path:/src/wg@abababababab (go1.27.3)" and tree != said  # two commits, two builds
    pinned = ran_version({"implementation": "wireguard-go", "version": WIREGUARD.default,
                          "build": {**build, "version": WIREGUARD.default, "revision": WIREGUARD.default}})
    assert pinned.version == WIREGUARD.default  # a registry version is its own revision


# ---- the copy a path: build is made from ----

def test_the_copy_is_roots_links_stay_links_and_special_files_are_refused(tmp_path):
    source = tmp_path / "src"
    (source / "cmd").mkdir(parents=True)
    (source / "cmd" / "main.go").write_text("package main\n")
    (source / "run.sh").write_text("#!/bin/sh\n")
    (source / "run.sh").chmod(0o755)
    (source / "secret").symlink_to("/etc/shadow")  # root follows no link: the copy holds the link, not the file
    (source / ".git").mkdir()
    (source / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    group = build_env.build_user().pw_gid
    copies_before = set(build_env.root_shared_dir(build_sources.SOURCES).iterdir())
    copy, tree = build_sources.copy_sources(str(source), group)
    try:
        assert copy.parent.parent == build_sources.SOURCES
        assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == ["cmd", "cmd/main.go", "run.sh", "secret"]
        assert os.readlink(copy / "secret") == "/etc/shadow"
        for path in (copy.parent, copy, copy / "cmd", copy / "cmd" / "main.go", copy / "run.sh"):
            info = os.lstat(path)
            assert (info.st_uid, info.st_gid, info.st_mode & 0o027) == (0, group, 0), path  # root's; group reads
        assert stat.S_IMODE(os.lstat(copy / "run.sh").st_mode) == 0o750
        again, same = build_sources.copy_sources(str(source), group)
        shutil.rmtree(again.parent)
        (source / "cmd" / "main.go").write_text("package main // changed\n")
        changed, other = build_sources.copy_sources(str(source), group)
        shutil.rmtree(changed.parent)
        assert tree.startswith("sha256:") and same == tree and other != tree
    finally:
        shutil.rmtree(copy.parent)
    os.mkfifo(source / "pipe")  # copied, it would block the installer on open
    with pytest.raises(build_sources.SourceError, match=rf"^{source}/pipe is a FIFO: a source directory holds only"):
        build_sources.copy_sources(str(source), group)
    (source / "pipe").unlink()
    os.link(source / "run.sh", source / "linked.sh")
    with pytest.raises(build_sources.SourceError, match=r"linked.sh has 2 hard links"):
        build_sources.copy_sources(str(source), group)
    assert set(build_sources.SOURCES.iterdir()) == copies_before  # a refused copy is removed


def git(*argv: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_git_head_reads_a_branch_a_detached_head_packed_refs_and_a_worktree(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git("init", "-q", "-b", "main", cwd=checkout)
    (checkout / "f").write_text("1\n")
    git("add", "f", cwd=checkout)
    git("commit", "-q", "-m", "one", cwd=checkout)
    head = git("rev-parse", "HEAD", cwd=checkout)
    assert build_sources.git_head(str(checkout)) == head
    git("pack-refs", "--all", cwd=checkout)
    assert not (checkout / ".git" / "refs" / "heads" / "main").exists()
    assert build_sources.git_head(str(checkout)) == head
    git("worktree", "add", "-q", "--detach", str(tmp_path / "other"), cwd=checkout)
    assert build_sources.git_head(str(tmp_path / "other")) == head
    git("worktree", "add", "-q", "-b", "side", str(tmp_path / "side"), cwd=checkout)
    assert build_sources.git_head(str(tmp_path / "side")) == head
    assert build_sources.git_head(str(tmp_path)) is None  # not a checkout
    (checkout / ".git" / "HEAD").write_text("ref: ../../../../etc/passwd\n")
    assert build_sources.git_head(str(checkout)) is None


# ---- real builds ----

@pytest.fixture
def prefix():
    root = Path(tempfile.mkdtemp(prefix="vpnbench-test-builds-"))
    root.chmod(0o755)
    yield root
    subprocess.run(["rm", "-rf", str(root)], check=True)


def pinned_module_source() -> Path:
    """The pinned wireguard-go's module source, as the build user's module cache holds it."""
    cached = (build_env.BUILDER_CACHE / "go" / "mod" / "golang.zx2c4.com" / f"wireguard@v{WIREGUARD.default}")
    if not cached.is_dir():
        pytest.skip(f"{cached} is missing: `vpnbench doctor --install wireguard-go` fetches it")
    return cached


@pytest.fixture
def checkout(tmp_path):
    """A git checkout of wireguard-go's sources (the pinned module's files, committed)."""
    tree = tmp_path / "wireguard-go"
    shutil.copytree(pinned_module_source(), tree)
    subprocess.run(["chmod", "-R", "u+w", str(tree)], check=True)  # the module cache's copies are read-only
    git("init", "-q", "-b", "main", cwd=tree)
    git("add", "-A", cwd=tree)
    git("commit", "-q", "-m", "wireguard-go", cwd=tree)
    return tree


def runs(program: Path) -> str:
    return subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=10).stdout


@pytest.mark.build
def test_a_directory_builds_records_its_head_and_is_built_again_when_its_sources_change(checkout, prefix):
    version = f"path:{checkout}"
    first = install("wireguard-go", version, root=prefix)
    head = git("rev-parse", "HEAD", cwd=checkout)
    target = prefix / "wireguard-go" / builds.directory(version)
    assert (first.cached, first.path, first.revision) == (False, target, head)
    record = json.loads((target / "BUILD.json").read_text())
    assert {key: record[key] for key in ("name", "version", "source", "module", "checksum", "built_from", "revision")} \
        == {"name": "wireguard-go", "version": version, "source": "golang.zx2c4.com/wireguard",
            "module": "golang.zx2c4.com/wireguard", "checksum": None, "built_from": str(checkout), "revision": head}
    assert record["tree_sha256"].startswith("sha256:") and builds.GO_TOOLCHAIN in record["toolchain"]
    program = target / "bin" / "wireguard-go"
    assert record["programs"]["wireguard-go"]["sha256"] == hashlib.sha256(program.read_bytes()).hexdigest()
    assert runs(program).startswith("wireguard-go v0.0.2")  # it runs: "wireguard-go v0.0.20250522" here
    assert builds.installed("wireguard-go", prefix) == {version: record}  # listed by the version asked
    assert install("wireguard-go", version, root=prefix).cached

    # A commit on the branch: the same directory, other sources, a build that says so.
    with open(checkout / "version.go", "a") as version_go:
        version_go.write("\nconst benchmarkedBranch = true\n")
    git("commit", "-q", "-am", "a change", cwd=checkout)
    second = install("wireguard-go", version, root=prefix)
    changed = json.loads((target / "BUILD.json").read_text())
    assert (second.cached, changed["revision"]) == (False, git("rev-parse", "HEAD", cwd=checkout))
    assert changed["tree_sha256"] != record["tree_sha256"]
    assert sorted(p.name for p in (prefix / "wireguard-go").iterdir()) == [target.name]  # replaced whole
    assert runs(program).startswith("wireguard-go v0.0.2")


@pytest.mark.build
def test_another_users_directory_is_built_from_roots_copy_and_never_written(checkout, prefix, monkeypatch):
    """A directory nobody (another user) owns and could change mid-build: root copies it, the
    build user builds the copy (which it cannot write), and the original is exactly as before."""
    shutil.rmtree(checkout / ".git")  # not a checkout: the revision is the tree's sha256
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(checkout)], check=True)
    def snapshot() -> dict:
        return {str(p): (p.lstat().st_mtime_ns, p.read_bytes() if p.is_file() else None) for p in checkout.rglob("*")}
    before = snapshot()
    seen = []
    real_run = builds_install.run_as_builder

    def run_seen(argv, what, cwd, env=None, *, rust=False):
        if "build" in argv[1:2]:  # `go build`: where it runs, and whether the build user can write there
            probe = real_run(["sh", "-c", "(echo x > planted) 2>/dev/null && echo wrote || echo refused"], what, cwd)
            seen.append((cwd, probe.strip()))
        return real_run(argv, what, cwd, env, rust=rust)

    monkeypatch.setattr(builds_install, "run_as_builder", run_seen)
    built = install("wireguard-go", f"path:{checkout}", root=prefix)
    (where, wrote), = seen
    assert where.parent.parent == build_sources.SOURCES and where != checkout and wrote == "refused"
    assert not where.exists()  # the copy is removed once built
    record = json.loads((built.path / "BUILD.json").read_text())
    group = build_env.build_user().pw_gid
    copy, tree = build_sources.copy_sources(str(checkout), group)  # the same tree, copied again
    shutil.rmtree(copy.parent)
    assert record["revision"] == record["tree_sha256"] == tree == built.revision
    assert snapshot() == before  # not a byte, a time or a file added (no out/, no go.sum)
    assert runs(built.path / "bin" / "wireguard-go").startswith("wireguard-go v0.0.2")


@pytest.mark.build
def test_a_commit_resolves_through_the_module_proxy_to_its_pseudo_version(prefix):
    pinned_module_source()
    version = f"git:{PINNED_COMMIT}"
    built = install("wireguard-go", version, root=prefix)
    assert (built.path, built.revision) == (prefix / "wireguard-go" / f"git-{PINNED_COMMIT}", WIREGUARD.default)
    assert built.line().startswith(f"wireguard-go {version} at {WIREGUARD.default}: built in ")
    record = json.loads((built.path / "BUILD.json").read_text())
    assert {key: record[key] for key in ("version", "module", "built_from", "revision", "resolved")} == {
        "version": version, "module": f"golang.zx2c4.com/wireguard@v{WIREGUARD.default}",
        "built_from": f"golang.zx2c4.com/wireguard@{PINNED_COMMIT}", "revision": PINNED_COMMIT,
        "resolved": WIREGUARD.default}
    assert record["checksum"].startswith("h1:")  # the module proxy's sum, as for a registry version
    assert runs(built.path / "bin" / "wireguard-go").startswith("wireguard-go v0.0.2")
    assert install("wireguard-go", version, root=prefix).cached


@pytest.mark.build
def test_a_commit_the_proxy_does_not_have_fails_in_one_line_and_leaves_nothing(prefix):
    with pytest.raises(InstallError) as refused:
        install("wireguard-go", "git:0000000000ab", root=prefix)
    message = str(refused.value)
    assert message.startswith("wireguard-go git:0000000000ab: ") and "\n" not in message
    assert "0000000000ab" in message.split(": ", 1)[1]  # the proxy's reason names what it refused
    assert list(prefix.iterdir()) == []


def test_a_crate_is_found_in_its_workspace_and_a_foreign_module_is_refused(tmp_path, prefix):
    (tmp_path / "ws" / "boringtun-cli").mkdir(parents=True)
    (tmp_path / "ws" / "Cargo.toml").write_text('[workspace]\nmembers = ["boringtun-cli"]\n')
    (tmp_path / "ws" / "boringtun-cli" / "Cargo.toml").write_text('[package]\nname = "boringtun-cli"\n')
    assert builds_install.crate_directory(tmp_path / "ws", "boringtun-cli") == tmp_path / "ws" / "boringtun-cli"
    assert builds_install.crate_directory(tmp_path / "ws", "rosenpass") is None
    other = tmp_path / "other"
    other.mkdir()
    (other / "go.mod").write_text("module example.com/other\n\ngo 1.21\n")
    with pytest.raises(InstallError) as refused:
        install("wireguard-go", f"path:{other}", root=prefix)
    assert str(refused.value) == (f"wireguard-go path:{other}: the directory holds module example.com/other, not "
                                  f"golang.zx2c4.com/wireguard: give its module's root directory")
    assert list(prefix.iterdir()) == []
