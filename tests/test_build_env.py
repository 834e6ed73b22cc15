"""Root's toolchains follow nothing another user planted (issue 39, items 1-3).

Each test plants, as the unprivileged user nobody, in a fresh sticky directory (like /tmp), what
would make root run a program of nobody's: a .cargo/config.toml with a rustc-wrapper, a
rust-toolchain.toml naming a toolchain of nobody's, a go.work above TMPDIR; and sets in root's
environment what `sudo -E` would pass on (RUSTC_WRAPPER, CARGO_HOME, GOFLAGS, GOPROXY, ...).
Each planted program only touches a marker: the marker must not appear, and the real toolchain
must be the one that answered."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import REPO, VPNBENCH
from vpnbench.hosts import build_env
from vpnbench.hosts.builds_install import GO_ENV, build_rows, builder_work_dir, run, run_as_builder, toolchain_version

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="root's builds: run as root")


@pytest.fixture
def sticky():
    """A fresh world-writable sticky directory, like /tmp, for nobody to plant in."""
    path = Path(tempfile.mkdtemp(prefix="vpnbench-sticky-", dir="/tmp"))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path)


def plant(path: Path, text: str, mode: int = 0o644) -> None:
    """Write `text` to `path` as nobody (its directories too)."""
    subprocess.run([*NOBODY, "sh", "-c", f'mkdir -p "$(dirname "$1")" && cat > "$1" && chmod {mode:o} "$1"',
                    "plant", str(path)], input=text, text=True, check=True)
    assert path.stat().st_uid == 65534


def evil_program(path: Path, marker: Path, says: str = "") -> None:
    """A program of nobody's that leaves `marker` when root runs it (then prints `says`, or runs
    what it wraps, so a build that follows it would still succeed)."""
    action = f'echo "{says}"' if says else 'exec "$@"'
    plant(path, f"#!/bin/sh\ntouch {marker}\n{action}\n", 0o755)


def test_a_root_build_reads_no_planted_cargo_config_and_none_of_the_callers_cargo_variables(
        sticky, tmp_path, monkeypatch):
    marker = sticky / "ran-as-root"
    evil_program(sticky / "wrapper", marker)
    wrapper_config = f'[build]\nrustc-wrapper = "{sticky / "wrapper"}"\n'
    plant(sticky / ".cargo" / "config.toml", wrapper_config)  # above a working directory in /tmp
    plant(sticky / "cargo-home" / "config.toml", wrapper_config)  # a CARGO_HOME passed by sudo -E
    (sticky / "work").mkdir()
    monkeypatch.setenv("RUSTC_WRAPPER", str(sticky / "wrapper"))
    monkeypatch.setenv("CARGO_HOME", str(sticky / "cargo-home"))
    monkeypatch.setenv("RUSTFLAGS", "--cfg planted")
    monkeypatch.setenv("PATH", f"{sticky}:{os.environ['PATH']}")
    crate = tmp_path / "toy"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text('[package]\nname = "toy"\nversion = "0.1.0"\nedition = "2021"\n')
    (crate / "src" / "main.rs").write_text('fn main() { println!("toy"); }\n')

    with pytest.raises(build_env.UnsafeBuildPlace, match=r"refusing to run a toolchain in .*vpnbench-sticky-.*/work"):
        run(["cargo", "--version"], "toy", cwd=sticky / "work")  # a cwd anyone could have planted above
    run(["cargo", "build", "-q", "--offline", "--manifest-path", str(crate / "Cargo.toml"),
         "--target-dir", str(tmp_path / "target")], "toy")
    assert (tmp_path / "target" / "debug" / "toy").exists()
    assert not marker.exists(), "root ran the planted rustc-wrapper"


def test_doctor_reports_the_real_cargo_not_the_toolchain_a_planted_rust_toolchain_toml_names(sticky):
    marker = sticky / "ran-as-root"
    fake = sticky / "toolchain"
    for program in ("cargo", "rustc"):
        evil_program(fake / "bin" / program, marker, says=f"{program} 1.99.0 (evil)")
    plant(sticky / "work" / "rust-toolchain.toml", f'[toolchain]\npath = "{fake}"\n')
    real = subprocess.run(["cargo", "--version"], capture_output=True, text=True, cwd="/", check=True,
                          env=build_env.probe_environment()).stdout.split()[:2]

    doctor = subprocess.run([*VPNBENCH, "doctor", "--json"], capture_output=True, text=True, timeout=120,
                            cwd=sticky / "work", env={**os.environ, "PYTHONPATH": str(REPO / "src"),
                                                      "RUSTUP_TOOLCHAIN": str(fake)})
    assert doctor.returncode == 0, doctor.stderr
    cargo_rows = {row["toolchain"] for row in json.loads(doctor.stdout)["builds"] if row["daemon"] == "boringtun"}
    assert cargo_rows == {" ".join(real)} and real[1] != "1.99.0"
    assert not marker.exists(), "root ran the planted toolchain's cargo"
    assert build_rows()  # and in this process, whatever its cwd: the same probe
    os.chdir(sticky / "work")
    try:
        assert toolchain_version(["cargo", "--version"]).split()[:2] == real
    finally:
        os.chdir(REPO)
    assert not marker.exists()


def test_a_go_build_directory_sees_no_planted_go_work_and_none_of_the_callers_go_variables(sticky, monkeypatch):
    marker = sticky / "ran-as-root"
    evil_program(sticky / "toolexec", marker)
    plant(sticky / "go.work", "go 1.21\n\nuse ./evil\n")  # above TMPDIR: where builds used to make their module
    (sticky / "tmp").mkdir()
    planted = {"TMPDIR": str(sticky / "tmp"), "GOWORK": str(sticky / "go.work"), "GOFLAGS": f"-toolexec={sticky}/toolexec",
               "GOPROXY": f"file://{sticky}/proxy", "GOSUMDB": "off", "GONOSUMDB": "*", "GOINSECURE": "*",
               "GOPRIVATE": "*", "GOMODCACHE": str(sticky / "mod"), "GOCACHE": str(sticky / "cache"),
               "GOPATH": str(sticky / "gopath"), "GOENV": str(sticky / "goenv")}
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    module = builder_work_dir("toy")  # the build user's: a Go step runs as that user, never root
    try:
        assert not str(module).startswith(str(sticky))
        (module / "go.mod").write_text("module vpnbench.local/build\n\ngo 1.21\n")
        asked = [name for name in planted if name not in ("TMPDIR", "GOENV")]  # go env reports neither
        seen = json.loads(run_as_builder(["go", "env", "-json", *asked], "toy", module, GO_ENV))
    finally:
        shutil.rmtree(module)
    cache = build_env.builder_caches(build_env.build_user())["go"]
    assert seen == {"GOWORK": "off", "GOFLAGS": GO_ENV["GOFLAGS"],
                    "GOPROXY": "https://proxy.golang.org,direct", "GOSUMDB": "sum.golang.org", "GONOSUMDB": "",
                    "GOINSECURE": "", "GOPRIVATE": "", "GOMODCACHE": str(cache / "mod"),
                    "GOCACHE": str(cache / "build"), "GOPATH": str(cache)}
    assert not marker.exists()


def test_the_build_caches_are_roots_alone_and_one_another_user_made_is_refused(sticky):
    for place in build_env.build_caches().values():
        info = place.stat()
        assert (info.st_uid, info.st_mode & 0o777) == (0, 0o700), place
    theirs = sticky / "cache"
    subprocess.run([*NOBODY, "mkdir", "-m", "700", str(theirs)], check=True)
    with pytest.raises(build_env.UnsafeBuildPlace, match="is not a directory owned by root with mode 0700"):
        build_env.root_only_dir(theirs)


def test_make_run_as_root_from_a_clone_under_tmp_reads_no_planted_cargo_config(sticky):
    marker = sticky / "ran-as-root"
    evil_program(sticky / "wrapper", marker)
    plant(sticky / ".cargo" / "config.toml", f'[build]\nrustc-wrapper = "{sticky / "wrapper"}"\n')
    clone = sticky / "clone"
    clone.mkdir(mode=0o755)
    for name in ("Makefile", "gen/Cargo.toml", "gen/Cargo.lock", "gen/src", ".cargo/config.toml", "vendor"):
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, clone / name)
    made = subprocess.run(["make", "-C", str(clone), "gen-build"], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr
    assert os.access(clone / "gen" / "target" / "release" / "vpnbench-gen", os.X_OK)
    assert not marker.exists(), "make ran the rustc-wrapper planted above the clone"
