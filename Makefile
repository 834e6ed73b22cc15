# vpnbench: `make demo` and `make test` install what is missing, build, and run.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The kernel VM's accelerator: auto (KVM when a probe boot proves it works here, else TCG), kvm, tcg.
ACCEL ?= auto
# A rustup toolchain when there is one, else the distribution's cargo (/usr/bin): both build the
# crates offline from vendor/ (.cargo/config.toml), with the lock files as they are (--locked).
# (this user's home from the password database: under sudo -E, $HOME is the caller's)
export PATH := $(shell getent passwd $$(id -u) | cut -d: -f6)/.cargo/bin:$(PATH)
CARGO_FLAGS := --release --offline --locked
# cargo reads .cargo/config.toml, and rustup rust-toolchain.toml, in its working directory and in
# every parent: run as root from a clone under /tmp, anyone's /tmp/.cargo/config.toml (a
# rustc-wrapper) would run as root. So cargo runs from / (nothing above it), told this checkout's
# configuration (vendor/) with --config and its crate with an absolute --manifest-path.
CARGO := cd / && cargo
CARGO_CONFIG := --config $(CURDIR)/.cargo/config.toml

.PHONY: all deps demo lint test test-host test-kernel test-unit bench clean

all: deps

deps: .stamps/system $(BIN)/vpnbench bytecode linkem-build gen-build

# Checked every time (cheap): a package removed by hand is installed again.
.stamps/system: FORCE
	@mkdir -p .stamps
	@scripts/install-deps.sh
	@touch $@

$(BIN)/vpnbench: requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --disable-pip-version-check -r requirements.lock
	@$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

.PHONY: bytecode linkem-build gen-build
# Every `vpnbench` starts by importing ~70 of its own modules: compiled once here, since an
# environment with PYTHONDONTWRITEBYTECODE would otherwise compile them on every start (~0.1 s).
bytecode: $(BIN)/vpnbench
	@$(BIN)/python -m compileall -q src

linkem-build:
	@$(CARGO) build -q $(CARGO_FLAGS) $(CARGO_CONFIG) --manifest-path $(CURDIR)/linkem/Cargo.toml

gen-build:
	@$(CARGO) build -q $(CARGO_FLAGS) $(CARGO_CONFIG) --manifest-path $(CURDIR)/gen/Cargo.toml

demo: deps
	$(BIN)/vpnbench demo

# Everything: the linter, linkem's and gen's own tests, the host suite, the kernel data paths in
# the VM, then the VM testbed, each stage's wall time printed at the end (scripts/test-suite.sh).
# test-host and test-kernel run some of the stages.
test: lint kernel-deps browser-deps cargo-deps builds
	scripts/test-suite.sh

# ruff, configured in pyproject.toml (a modest rule set the whole tree passes).
lint: deps
	$(BIN)/ruff check .

test-host: deps kernel-deps browser-deps cargo-deps builds
	$(CARGO) test -q $(CARGO_FLAGS) $(CARGO_CONFIG) --manifest-path $(CURDIR)/linkem/Cargo.toml
	$(CARGO) test -q $(CARGO_FLAGS) $(CARGO_CONFIG) --manifest-path $(CURDIR)/gen/Cargo.toml
	$(BIN)/python -m pytest -q -n auto --dist worksteal --machine-tests=none -m "not vmtestbed" tests
	$(BIN)/python -m pytest -q --machine-tests=only -m "not vmtestbed" --durations=25 tests

# Tests marked `vm`, inside a QEMU VM booting the distribution kernel (scripts/kernel-vm-tests.sh):
# under TCG the stage took 834-1 202 s on 2 cores, ~2 800 s with the CPU halved; a guest that does
# not boot fails in seconds.
test-kernel: deps kernel-deps builds
	ACCEL=$(ACCEL) scripts/kernel-vm-tests.sh
	$(BIN)/python -m pytest -q -m vmtestbed --durations=10 tests

.PHONY: kernel-deps browser-deps cargo-deps builds
# The daemons the suite runs at their pinned versions (vpnbench/hosts/builds.py), each built once into
# /opt/vpnbench/<name>/<version> (~14 min on a fresh machine); seconds when all are built. Not
# part of `make demo`, which runs none of them.
builds: deps
	$(BIN)/vpnbench doctor --install test-set

kernel-deps:
	@scripts/install-deps.sh kernel

browser-deps:
	@scripts/install-deps.sh browser

cargo-deps:
	@scripts/install-deps.sh cargo

test-unit: deps
	$(BIN)/python -m pytest -q tests -m "not netns"

bench: deps
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/gen.py

clean:
	rm -rf $(VENV) .stamps linkem/target gen/target

FORCE:
