"""linkem and gen build with the distribution's own toolchain, as on a stock Debian 12 without rustup.

Debian 12 ships cargo 1.65 and rustc 1.63: the crates declare rust-version 1.63, keep their lock
files at version 3 (the last cargo 1.65 reads) and take their dependencies from vendor/ through
.cargo/config.toml. Each crate is built here from scratch with /usr/bin/cargo and /usr/bin/rustc
only (no rustup on PATH, an empty CARGO_HOME, offline, --locked), the way `make` builds it there,
and its own tests (which `make test` runs with that cargo there) are type-checked with it.
"""
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CARGO, RUSTC = Path("/usr/bin/cargo"), Path("/usr/bin/rustc")
CRATES = {"linkem": "vpnbench-linkem", "gen": "vpnbench-gen"}  # crate directory -> its binary


def distribution_toolchain_env(cargo_home: Path, target_dir: Path) -> dict[str, str]:
    """Only the distribution's programs, nothing from a rustup or a user's cargo configuration."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(cargo_home.parent), "CARGO_HOME": str(cargo_home),
            "RUSTC": str(RUSTC), "CARGO_TARGET_DIR": str(target_dir), "LANG": "C.UTF-8"}


def distribution_cargo(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    # cwd: cargo reads .cargo/config.toml (the vendored sources) from the directory it runs in
    return subprocess.run([str(CARGO), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("crate", sorted(CRATES))
def test_crate_builds_offline_with_the_distributions_cargo(crate, tmp_path):
    for program in (CARGO, RUSTC):
        if not program.exists():
            pytest.skip(f"{program} (the distribution's) is not installed: `scripts/install-deps.sh cargo` installs it")
    cargo_home = tmp_path / "home" / ".cargo"
    cargo_home.mkdir(parents=True)
    env = distribution_toolchain_env(cargo_home, tmp_path / "target")
    manifest = str(ROOT / crate / "Cargo.toml")
    lock = (ROOT / crate / "Cargo.lock").read_bytes()

    build = distribution_cargo("build", "--release", "--offline", "--locked", "--manifest-path", manifest, env=env)
    assert build.returncode == 0, f"{CARGO} build of {crate}/ failed:\n{build.stderr[-4000:]}"
    # the crate's own tests compile with this rustc too: `make test` runs them with it on such a machine
    tests = distribution_cargo("check", "--release", "--tests", "--offline", "--locked", "--manifest-path", manifest,
                               env=env)
    assert tests.returncode == 0, f"{CARGO} check --tests of {crate}/ failed:\n{tests.stderr[-4000:]}"

    binary = tmp_path / "target" / "release" / CRATES[crate]
    usage = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=10)
    assert usage.returncode == 0 and usage.stdout.startswith(f"usage: {CRATES[crate]} "), usage
    assert (ROOT / crate / "Cargo.lock").read_bytes() == lock  # read as it is, never rewritten
    assert not (cargo_home / "registry").exists()  # nothing fetched: every source was vendor/'s
