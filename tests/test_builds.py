"""The one version table (builds.RECIPES) and the installer that fills /opt/vpnbench from it.

Pure tests of the table, the version checks, the sweep of `version` as a technique axis, the
architecture rule and the registries' refusals read into one line; then real builds (marked
`build`): nebula, the smallest Go recipe, into a temporary prefix (its BUILD.json, its programs'
sha256, a second install cached), a version the module proxy refuses (one line, nothing left
behind), and prefixes another user could have made (refused, nothing written)."""

import dataclasses
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from conftest import REPO, VPNBENCH
from test_extension_points import PlainPad
from vpnbench.campaign.spec import campaign_from_dict, technique_label
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import TechniqueParams, validate_model
from vpnbench.hosts import build_env, builds, builds_install
from vpnbench.hosts.builds_install import (
    TEST_SET,
    InstallError,
    build_rows,
    builder_work_dir,
    cargo_problem,
    failure_reason,
    go_command,
    go_switches,
    install,
    parse_targets,
    run_as_builder,
)
from vpnbench.techniques import TECHNIQUES
from vpnbench.testbeds.probe import THIS_MACHINE, NoProbe

NOBODY = 65534
GOARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
# What the go command printed here for tailscale 1.104.5 (its gvisor pseudo-version is refused).
REFUSED_TAILSCALE = """go: tailscale.com/cmd/tailscaled imports
\ttailscale.com/net/tstun imports
\tgvisor.dev/gvisor/pkg/tcpip/stack/gro: gvisor.dev/gvisor@v0.0.0-20260915211658-a6f909f08a72: reading https://proxy.golang.org/gvisor.dev/gvisor/@v/v0.0.0-20260915211658-a6f909f08a72.zip: 403 Forbidden
\tserver response: This module version is not available.
"""


# ---- the table ----

def test_every_pinned_default_is_a_version_its_recipe_accepts_and_has_its_prefix():
    for name, recipe in builds.RECIPES.items():
        recipe.check_version(recipe.default)
        assert builds.resolve(name, None) == recipe.default
        for program in recipe.programs:
            assert builds.program(name, program) == f"/opt/vpnbench/{name}/{recipe.default}/bin/{program}"
        assert builds.record_command(name) == ["cat", f"/opt/vpnbench/{name}/{recipe.default}/BUILD.json"]


def test_a_bad_version_or_name_is_one_line_naming_the_allowed_values():
    with pytest.raises(ValueError, match=r"'1\.0; rm' is not a version .*'1\.10\.3'"):
        builds.resolve("nebula", "1.0; rm")
    with pytest.raises(ValueError, match="tailscale has no Debian package"):
        builds.resolve("tailscale", builds.DEBIAN)
    assert builds.resolve("nebula", builds.DEBIAN) == builds.DEBIAN  # Debian 12 packages nebula 1.6.1
    assert builds.program("wireguard-go", "wireguard-go", builds.DEBIAN) == "wireguard-go"
    with pytest.raises(ValueError, match="allowed: tailscale, headscale, nebula, wireguard-go, boringtun, rosenpass"):
        builds.recipe("zerotier")


def test_install_targets_test_set_is_every_pinned_default_and_bad_ones_name_the_field():
    assert parse_targets([TEST_SET]) == [(name, r.default) for name, r in builds.RECIPES.items()]
    assert parse_targets(["nebula@1.9.7", "nebula@1.9.7", "boringtun"]) == [("nebula", "1.9.7"), ("boringtun", "0.7.1")]
    with pytest.raises(UserError, match=r"^--install: 'zerotier' is not a daemon vpnbench builds; allowed: tailscale"):
        parse_targets(["zerotier"])
    with pytest.raises(UserError, match=r"^--install nebula@VERSION: 'v1' is not a version"):
        parse_targets(["nebula@v1"])


# ---- a technique's version field, and version as an axis ----

class VersionedParams(TechniqueParams):
    kind: Literal["versioned"] = "versioned"
    version: builds.version_type("nebula") = None


class Versioned(PlainPad):
    kind = "versioned"
    Params = VersionedParams


@pytest.fixture
def versioned_technique():
    TECHNIQUES["versioned"] = Versioned
    yield
    del TECHNIQUES["versioned"]


def test_a_version_field_is_the_exact_version_and_refuses_others_in_one_line():
    assert VersionedParams().version == VersionedParams(version=None).version == "1.10.3"  # the pinned one
    assert VersionedParams(version="1.9.7").version == "1.9.7"
    assert technique_label(VersionedParams()) == "versioned"  # the default is no difference
    assert technique_label(VersionedParams(version="1.9.7")) == "versioned version=1.9.7"
    with pytest.raises(UserError) as refused:
        validate_model(VersionedParams, {"kind": "versioned", "version": "latest"}, "technique[1]")
    assert str(refused.value) == ("technique[1].version: 'latest' is not a version (digits, dots, letters); allowed: a "
                                  "version such as '1.10.3', 'debian', git:REF (a commit, tag or branch of "
                                  "github.com/slackhq/nebula) or path:/DIR (a local source directory)")

    class Debian(BaseModel):
        version: builds.version_type("wireguard-go") = None

    assert Debian(version=builds.DEBIAN).version == builds.DEBIAN


def test_a_list_of_versions_is_swept_like_any_axis(versioned_technique):
    campaign = campaign_from_dict({
        "technique": [{"kind": "versioned", "version": ["1.10.3", "1.9.7"]},
                      {"kind": "versioned", "label": "mesh", "version": ["1.10.3", "1.9.7"]}],
        "measurement": [{"kind": "ping"}]})
    assert [t.version for t in campaign.techniques] == ["1.10.3", "1.9.7"] * 2
    assert [technique_label(t) for t in campaign.techniques] == [
        "versioned version=1.10.3", "versioned version=1.9.7", "mesh version=1.10.3", "mesh version=1.9.7"]


def test_a_bad_version_in_a_sweep_is_refused_naming_its_entry(versioned_technique):
    with pytest.raises(UserError, match=r"^technique\[1\]\.version: 'latest' is not a version"):
        campaign_from_dict({"technique": [{"kind": "versioned", "version": ["1.10.3", "latest"]}],
                            "measurement": [{"kind": "ping"}]})
    with pytest.raises(UserError, match=r"^technique\[1\]\.version: an empty list"):
        campaign_from_dict({"technique": [{"kind": "versioned", "version": []}], "measurement": [{"kind": "ping"}]})


# ---- architectures ----

def test_a_build_for_another_architecture_is_a_reason_never_a_copy():
    record = {"name": "nebula", "version": "1.10.3", "machine": "x86_64"}
    assert builds.arch_mismatch(record, "x86_64\n") is None
    assert builds.arch_mismatch({**record, "machine": "arm64"}, "aarch64") is None  # one architecture, two names
    reason = builds.missing_reason("nebula", None, "server", record=record, host_arch="aarch64")
    assert reason == ("server: nebula 1.10.3 was built for x86_64 but the host is aarch64; build it on that host "
                      "with `vpnbench doctor --install nebula@1.10.3`")
    assert "lacks nebula 1.10.3" in builds.missing_reason("nebula", None, "server", record=record, host_arch="x86_64")


class OtherArchitecture(NoProbe):
    """This machine's files and records, but hosts that say they are aarch64 (a double of one answer)."""

    def outputs(self, argv: list[str]) -> dict[str, str]:
        return {"server": "aarch64\n"} if argv == ["uname", "-m"] else {"server": super().outputs(argv)[THIS_MACHINE]}


def test_the_probe_tells_whether_the_hosts_can_run_a_build():
    """Through the probe, on the hosts that run it (here: this machine, where `make builds` put nebula)."""
    assert builds.unavailable(NoProbe(), "nebula") is None
    assert builds.unavailable(NoProbe(), "nebula", "1.9.6") == (
        "this machine lacks nebula 1.9.6 (/opt/vpnbench/nebula/1.9.6): build it there with "
        "`vpnbench doctor --install nebula@1.9.6`")
    assert builds.unavailable(OtherArchitecture(), "nebula") == (
        f"server: nebula 1.10.3 was built for {platform.machine()} but the host is aarch64; build it on that host "
        "with `vpnbench doctor --install nebula@1.10.3`")


# ---- the registries' answers, and what a machine needs ----

# What the go command printed here for yggdrasil 0.5.14 without its stub (a host the proxy refuses).
REFUSED_YGGDRASIL = """go: downloading suah.dev/protect v1.2.4
go: github.com/yggdrasil-network/yggdrasil-go/cmd/yggdrasil imports
\tsuah.dev/protect: suah.dev/protect@v1.2.4: reading https://proxy.golang.org/suah.dev/protect/@v/v1.2.4.zip: 403 Forbidden
"""


def test_a_refused_go_module_is_the_proxys_own_reason_in_one_line():
    assert failure_reason(REFUSED_TAILSCALE) == (
        "the Go module proxy refused gvisor.dev/gvisor@v0.0.0-20260915211658-a6f909f08a72: "
        "This module version is not available.")
    assert failure_reason(
        "go: golang.zx2c4.com/wireguard@v1.0: module golang.zx2c4.com: reading https://proxy.golang.org/golang.zx2c4"
        ".com/@v/list: 403 Forbidden\n\tserver response: This module version is not available.\n") == \
        "the Go module proxy refused golang.zx2c4.com/wireguard@v1.0: This module version is not available."
    assert failure_reason(REFUSED_YGGDRASIL) == "the Go module proxy refused suah.dev/protect@v1.2.4: 403 Forbidden"
    assert failure_reason("   Compiling x\nerror: package `y` cannot be built\nwarning: z\n") == \
        "error: package `y` cannot be built"


def test_only_go_1_21_and_newer_fetch_the_toolchain_themselves():
    assert go_switches("go version go1.26.8 linux/amd64") and go_switches("go version go1.21.0 linux/arm64")
    assert not go_switches("go version go1.19.8 linux/amd64") and not go_switches(None)


def test_a_cargo_too_old_for_the_crates_lock_files_is_named_with_what_to_install():
    assert cargo_problem("cargo 1.95.0 (f2d3ce0bd 2026-03-21)") is None
    assert cargo_problem("cargo 1.65.0") == ("cargo 1.65.0 cannot read the crates' version-4 Cargo.lock: "
                                             "cargo >= 1.78 (rustup's stable toolchain; Debian 12's cargo is too old)")
    assert cargo_problem(None).startswith("no cargo on PATH")


def test_doctor_rows_name_each_recipe_its_builds_here_and_what_cannot_be_installed(tmp_path):
    built = tmp_path / "nebula" / "1.9.7"
    built.mkdir(parents=True)
    (built / "BUILD.json").write_text(json.dumps({"name": "nebula", "version": "1.9.7"}))
    rows = {row["daemon"]: row for row in build_rows(tmp_path)}
    assert list(rows) == [*builds.RECIPES, "zerotier", "hyprspace", "mycelium"]
    assert rows["nebula"]["installed"] == ["1.9.7"] and rows["tailscale"]["installed"] == []
    assert builds.GO_TOOLCHAIN in rows["headscale"]["needs"]
    assert "libclang-dev" in rows["rosenpass"]["needs"]
    assert not rows["zerotier"]["buildable"] and "no package in the registries" in rows["zerotier"]["reason"]
    assert not rows["hyprspace"]["buildable"] and "proxy refuses github.com/hyprspace/hyprspace" in rows["hyprspace"]["reason"]
    assert "generated code" in rows["hyprspace"]["reason"] and rows["hyprspace"]["install"] is None
    assert not rows["mycelium"]["buildable"] and "myceliumd crate) is not on crates.io" in rows["mycelium"]["reason"]


# ---- real builds ----

def root_prefix() -> Path:
    """A fresh prefix as the installer wants one: root's, written only by root."""
    root = Path(tempfile.mkdtemp(prefix="vpnbench-test-builds-"))
    root.chmod(0o755)
    return root


@pytest.fixture
def prefix():
    root = root_prefix()
    yield root
    subprocess.run(["rm", "-rf", str(root)], check=True)


@pytest.mark.build
def test_nebula_builds_once_records_what_it_is_and_is_cached_after(prefix):
    first = install("nebula", root=prefix)
    target = prefix / "nebula" / "1.10.3"
    assert (first.cached, first.path) == (False, target)
    record = json.loads((target / "BUILD.json").read_text())
    assert {k: record[k] for k in ("name", "version", "language", "source", "module", "goos", "machine", "vpnbench")} \
        == {"name": "nebula", "version": "1.10.3", "language": "go", "source": "github.com/slackhq/nebula",
            "module": "github.com/slackhq/nebula@v1.10.3", "goos": "linux", "machine": platform.machine(),
            "vpnbench": __import__("vpnbench").__version__}
    assert record["checksum"].startswith("h1:") and builds.GO_TOOLCHAIN in record["toolchain"]
    assert record["built_at"].endswith("Z")
    assert set(record["programs"]) == {"nebula", "nebula-cert"}
    for program, entry in record["programs"].items():
        path = target / "bin" / program
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
    said = subprocess.run([str(target / "bin" / "nebula"), "-version"], capture_output=True, text=True, timeout=10)
    assert "1.10.3" in said.stdout  # the program is the version asked for
    assert stat.S_IMODE(target.stat().st_mode) == 0o755 and target.stat().st_uid == 0
    assert sorted(p.name for p in (prefix / "nebula").iterdir()) == ["1.10.3"]  # no work directory left

    started = time.monotonic()
    again = install("nebula", "1.10.3", root=prefix)
    assert again.cached and time.monotonic() - started < 1
    assert again.line() == f"nebula 1.10.3: cached ({target})"
    assert json.loads((target / "BUILD.json").read_text()) == record  # never written again


@pytest.mark.build
def test_yggdrasil_builds_with_its_refused_module_stubbed_recorded_and_its_version_injected(prefix):
    """Every yggdrasil-go release imports suah.dev/protect, whose host the proxy here refuses (403):
    without the recipe's stub the build fails; with it, BUILD.json says what was replaced and why."""
    recipe = builds.RECIPES["yggdrasil"]
    unstubbed = dataclasses.replace(recipe, go_stubs=())
    with pytest.raises(InstallError, match=r"^yggdrasil 0\.5\.14: the Go module proxy refused suah\.dev/protect@v1\.2\.4: "
                                           r"403 Forbidden$"):
        builds_install.build(unstubbed, builds_install.prepare_source(unstubbed, "0.5.14"), _work_dir(prefix))
    built = install("yggdrasil", root=prefix)
    record = json.loads((built.path / "BUILD.json").read_text())
    assert set(record["replaced"]) == {"suah.dev/protect"} and "403" in record["replaced"]["suah.dev/protect"]
    assert record["module"] == "github.com/yggdrasil-network/yggdrasil-go@v0.5.14" and record["checksum"].startswith("h1:")
    said = subprocess.run([str(built.path / "bin" / "yggdrasil"), "-version"], capture_output=True, text=True, timeout=10)
    assert "Build version: 0.5.14" in said.stdout  # -X at the build, as upstream's releases; else "unknown"


@pytest.mark.build
def test_netbird_builds_inside_its_module_with_its_refused_ui_requirement_dropped_and_recorded(prefix):
    """netbird's go.mod replaces wails/v3 (its desktop UI's toolkit) by a fork the proxy refuses
    (403), and building the combined server loads the whole module graph: with the requirement
    kept the build fails in one line; dropped, both programs build and BUILD.json says why."""
    recipe = builds.RECIPES["netbird"]
    kept = dataclasses.replace(recipe, go_drop=())
    with pytest.raises(InstallError, match=r"^netbird 0\.77\.1: the Go module proxy refused github\.com/netbirdio/wails/v3@"
                                           r"[^\n]*This module version is not available\.$"):
        builds_install.build(kept, builds_install.prepare_source(kept, "0.77.1"), _work_dir(prefix))
    built = install("netbird", root=prefix)
    record = json.loads((built.path / "BUILD.json").read_text())
    assert set(record["dropped"]) == {"github.com/wailsapp/wails/v3"} and "403" in record["dropped"]["github.com/wailsapp/wails/v3"]
    assert record["module"] == "github.com/netbirdio/netbird@v0.77.1" and record["checksum"].startswith("h1:")
    assert set(record["programs"]) == {"netbird", "netbird-server"}
    said = subprocess.run([str(built.path / "bin" / "netbird"), "version"], capture_output=True, text=True, timeout=10)
    assert said.stdout.strip() == "0.77.1"  # -X at the build, as upstream's goreleaser; else "development"


def _work_dir(prefix: Path) -> Path:
    work = prefix / "work"
    work.mkdir(mode=0o755)
    return work


@pytest.mark.build
@pytest.mark.parametrize("name", ["nebula", "netbird"])  # netbird: built inside its module (go_in_module)
def test_a_version_the_proxy_refuses_fails_in_one_line_and_leaves_nothing(prefix, name):
    with pytest.raises(InstallError) as refused:
        install(name, "9.9.9", root=prefix)
    message = str(refused.value)
    assert message.startswith(f"{name} 9.9.9: ") and "\n" not in message
    assert "v9.9.9" in message  # the proxy's reason names the version it refused
    assert list(prefix.iterdir()) == []  # no partial prefix, not even the daemon's directory


@pytest.mark.build
def test_a_build_whose_installer_died_is_removed_by_the_next(prefix):
    stale = prefix / "nebula" / ".1.10.3.building-k1ll3d"
    (stale / "bin").mkdir(parents=True)
    (stale / "bin" / "nebula").write_bytes(b"half a binary")
    with pytest.raises(InstallError):
        install("nebula", "9.9.9", root=prefix)
    assert list((prefix / "nebula").iterdir()) == []


@pytest.mark.build
def test_the_cli_builds_into_opt_vpnbench_once_then_says_cached():
    """What `make builds` runs: each build one line, "built in X s" the first time, "cached" after."""
    lines = []
    for _ in range(2):
        done = subprocess.run([*VPNBENCH, "doctor", "--install", "nebula"], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        lines.append(done.stdout.strip())
    assert re.fullmatch(r"nebula 1\.10\.3: (built in \d+ s|cached) \(/opt/vpnbench/nebula/1\.10\.3\)", lines[0])
    assert lines[1] == "nebula 1.10.3: cached (/opt/vpnbench/nebula/1.10.3)"


def test_the_cli_refuses_a_bad_install_in_one_line_with_exit_2():
    done = subprocess.run([*VPNBENCH, "doctor", "--install", "nebula@latest"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "vpnbench: error: --install nebula@VERSION: 'latest' is not a version (digits, dots, letters); allowed: a "
        "version such as '1.10.3', 'debian', git:REF (a commit, tag or branch of github.com/slackhq/nebula) or "
        "path:/DIR (a local source directory)"]


def test_a_prefix_another_user_could_have_made_is_never_written_into(prefix):
    os.chown(prefix, NOBODY, NOBODY)
    with pytest.raises(InstallError, match=rf"^{prefix} is not a directory owned by root and writable only by it"):
        install("nebula", root=prefix)
    assert list(prefix.iterdir()) == []

    os.chown(prefix, 0, 0)
    (prefix / "nebula").mkdir(mode=0o755)
    os.chown(prefix / "nebula", NOBODY, NOBODY)
    with pytest.raises(InstallError, match=rf"^{prefix}/nebula is not a directory owned by root"):
        install("nebula", root=prefix)
    assert list((prefix / "nebula").iterdir()) == []

    os.chown(prefix / "nebula", 0, 0)
    (prefix / "nebula").chmod(0o775)  # root's, but its group may write
    with pytest.raises(InstallError, match=r"mode drwxrwxr-x"):
        install("nebula", root=prefix)
    assert list((prefix / "nebula").iterdir()) == []


def test_a_prefix_holding_something_else_is_not_taken_for_a_build(prefix):
    stray = prefix / "nebula" / "1.10.3"
    stray.mkdir(parents=True, mode=0o755)
    (stray / "BUILD.json").write_text(json.dumps({"programs": {"nebula": {"sha256": "0" * 64}}}))
    with pytest.raises(InstallError, match=r"holds no complete build \(no valid BUILD.json\): remove it"):
        install("nebula", root=prefix)
    assert sorted(p.name for p in (prefix / "nebula").iterdir()) == ["1.10.3"]


def debian_go_before_1_21() -> str | None:
    """Debian's own Go older than GOTOOLCHAIN (Debian 12: golang-1.19-go), if installed."""
    for go in sorted(Path("/usr/lib").glob("go-1.*/bin/go")):
        if not go_switches(subprocess.run([str(go), "version"], capture_output=True, text=True).stdout):
            return str(go)
    return None


@pytest.mark.build
def test_debian_12s_go_1_19_builds_with_the_toolchain_it_fetches_from_the_proxy(prefix, tmp_path, monkeypatch):
    """A stock Debian 12 has Go 1.19, which knows no GOTOOLCHAIN: it fetches go1.27.3 as a module."""
    old_go = debian_go_before_1_21()
    if old_go is None:
        pytest.skip("no Debian Go older than 1.21 here (Debian 12: apt-get install golang-1.19-go)")
    (tmp_path / "go").symlink_to(old_go)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/sbin:/usr/bin:/sbin:/bin")
    assert go_command("test").endswith(f"/golang.org/toolchain@v0.0.1-{builds.GO_TOOLCHAIN}.linux-{GOARCH}/bin/go")
    built = install("nebula", root=prefix)
    record = json.loads((built.path / "BUILD.json").read_text())
    assert record["toolchain"] == f"go version {builds.GO_TOOLCHAIN} linux/{record['goarch']}"
    assert "1.10.3" in subprocess.run([str(built.path / "bin" / "nebula"), "-version"], capture_output=True,
                                      text=True, timeout=10).stdout


BUILDER_PROBE = "id -u; grep CapEff /proc/self/status; (echo x >> {planted}) 2>/dev/null && echo wrote || echo refused"


@pytest.mark.build
@pytest.mark.parametrize("name", ["wireguard-go", "boringtun"])
def test_compilers_and_build_scripts_run_as_the_build_user_and_root_installs_a_copy(name, prefix, monkeypatch):
    """Issue 39 item 3: go, cargo, build scripts and proc-macros run as vpnbench-build (no
    capabilities); root copies what it made into its own prefix and records its sha256."""
    builder = build_env.build_user()
    planted = prefix / "root-only"  # root's, readable by all: only writing it is refused
    planted.write_text("root's\n")
    planted.chmod(0o644)
    seen = []
    real_collect = builds_install.collect

    def collect_seen(work, relative, destination):
        """While the build runs: who made the output, and who the build steps are."""
        probe = run_as_builder(["sh", "-c", BUILDER_PROBE.format(planted=shlex.quote(str(planted)))], "probe", work,
                               rust=name == "boringtun").split("\n")
        seen.append({"output_owner": os.lstat(work / relative).st_uid, "work_owner": os.lstat(work).st_uid,
                     "uid": int(probe[0]), "capabilities": probe[1].split()[1], "planted": probe[2]})
        real_collect(work, relative, destination)

    monkeypatch.setattr(builds_install, "collect", collect_seen)
    built = install(name, root=prefix)
    assert seen and all(step == {"output_owner": builder.pw_uid, "work_owner": builder.pw_uid, "uid": builder.pw_uid,
                                 "capabilities": "0000000000000000", "planted": "refused"} for step in seen)
    assert planted.read_text() == "root's\n"
    record = json.loads((built.path / "BUILD.json").read_text())
    for program, entry in record["programs"].items():
        info = os.lstat(built.path / "bin" / program)
        assert (stat.S_ISREG(info.st_mode), info.st_uid, stat.S_IMODE(info.st_mode)) == (True, 0, 0o755)
        assert hashlib.sha256((built.path / "bin" / program).read_bytes()).hexdigest() == entry["sha256"]
    caches = build_env.builder_caches(builder)
    if name == "wireguard-go":  # the module was fetched into the build user's cache, by it
        module = caches["go"] / "mod" / f"golang.zx2c4.com/wireguard@v{built.version}"
        assert os.lstat(module).st_uid == builder.pw_uid
    else:  # the crate cargo verified is in the build user's cache, and it is the one recorded
        crate = caches["cargo"].glob(f"registry/cache/*/boringtun-cli-{built.version}.crate")
        assert record["checksum"] in {"sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() for path in crate}


def test_root_installs_only_a_regular_file_the_build_user_made(tmp_path):
    """A symlink to a root file, or a file of root's, in the build user's output is never copied."""
    work = builder_work_dir("test")
    try:
        run_as_builder(["ln", "-s", "/etc/shadow", "linked"], "test", work)
        with pytest.raises(InstallError, match="made no regular file .*linked"):
            builds_install.collect(work, "linked", tmp_path / "linked")
        (work / "roots").write_text("root's")
        with pytest.raises(InstallError, match="not a regular file of vpnbench-build's"):
            builds_install.collect(work, "roots", tmp_path / "roots")
        run_as_builder(["sh", "-c", "echo made > made"], "test", work)
        builds_install.collect(work, "made", tmp_path / "made")
    finally:
        shutil.rmtree(work)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["made"]
    assert os.lstat(tmp_path / "made").st_uid == 0 and (tmp_path / "made").read_text() == "made\n"


def test_make_test_builds_the_test_set_and_make_demo_builds_nothing():
    """`make -n` prints the steps without running them."""
    def steps(target: str) -> str:
        return subprocess.run(["make", "-n", "-C", str(REPO), target], capture_output=True, text=True,
                              timeout=30, check=True).stdout

    for target in ("test-host", "test-kernel"):
        assert f"vpnbench doctor --install {TEST_SET}" in steps(target)
    assert "doctor --install" not in steps("demo")
