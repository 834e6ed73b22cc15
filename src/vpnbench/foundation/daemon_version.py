"""Which build of a daemon a cell ran, read from what its bring-up stored, for every view.

A technique that drives a daemon vpnbench builds (builds.py) puts three keys in its negotiated
record: "implementation" ("wireguard-go"), "version" (the exact version string that ran) and
"build" (the build's BUILD.json as the host printed it: name, version, language, source, module
checksum, toolchain, architecture …; for a distribution's package {"source": "debian", "package",
"version", "architecture"}). The report, `compare` and `trend` name a version only through
`ran_version`, so they say it in the same words: "wireguard-go 0.0.20220316 (debian)",
"wireguard-go 0.0.0-20260522210424-ecfc5a8d5446 (go1.27.3)"; a git: or path: version with the
first 12 hex digits of the revision its build recorded: "wireguard-go path:/src/wg@1a2b3c4d5e6f (go1.27.3)".
"""

import dataclasses
import re

# A toolchain as BUILD.json may say it ("go1.27.3", "go version go1.27.3 linux/amd64",
# "rustc 1.85.0 (4d91de4e4 2025-02-17)"): the words that name it.
TOOLCHAIN = re.compile(r"\bgo\d+(?:\.\d+)*\b|\brustc \d+(?:\.\d+)*\S*")
TOOLCHAIN_KEYS = ("toolchain", "go", "rustc", "compiler")


@dataclasses.dataclass(frozen=True)
class DaemonVersion:
    """What ran: the implementation, its exact version, and how it was built in a word."""

    implementation: str
    version: str
    build: str  # "debian", "go1.27.3", "rustc 1.85.0"; "" when the record does not say
    details: dict = dataclasses.field(default_factory=dict, compare=False, hash=False)  # the build record

    @property
    def label(self) -> str:
        return f"{self.implementation} {self.version}" + (f" ({self.build})" if self.build else "")

    @property
    def details_text(self) -> str:
        """The build record's plain facts in one line (module checksum, toolchain, arch …)."""
        return ", ".join(f"{key} {value}" for key, value in self.details.items()
                         if isinstance(value, (str, int, float)) and value != "")


def ran_version(negotiated: dict | None) -> DaemonVersion | None:
    """The daemon version a bring-up's negotiated record names, or None where it names none
    (the kernel's data path, a technique without a built daemon, a bring-up that failed)."""
    if not negotiated:
        return None
    build = negotiated.get("build") if isinstance(negotiated.get("build"), dict) else {}
    version = negotiated.get("version") or build.get("version")
    built = build.get("version")
    if isinstance(version, str) and isinstance(built, str) and built and version.startswith(f"{built}-ERR-"):
        # The daemon could not read its own build info (tailscale says "1.102.0-ERR-BuildInfo" when
        # built without its ldflags): the version is the one vpnbench recorded when it built it.
        version = built
    if not isinstance(version, str) or not version:
        return None
    revision = build.get("revision")
    if version.startswith(("git:", "path:")) and isinstance(revision, str) and revision:
        # a branch or a directory is a different build at each commit: the label says which
        version = f"{version}@{revision.removeprefix('sha256:')[:12]}"
    implementation = negotiated.get("implementation") or build.get("name") or build.get("package") or ""
    return DaemonVersion(str(implementation), version, build_word(build), dict(build))


def last_ran_version(negotiated_records) -> DaemonVersion | None:
    """The version the last of these negotiated records (oldest first) that names one names: a
    technique's latest bring-up with a built daemon, across restarts."""
    return next(filter(None, (ran_version(negotiated) for negotiated in reversed(list(negotiated_records)))), None)


def build_word(build: dict) -> str:
    """How a build was made, in a word: the distribution's package, or the toolchain that built it."""
    if build.get("source") == "debian":
        return "debian"
    for key in TOOLCHAIN_KEYS:
        said = build.get(key)
        if isinstance(said, str) and said:
            found = TOOLCHAIN.search(said)
            return found.group(0) if found else said.split()[0]
    return ""


def version_change(before: DaemonVersion | None, after: DaemonVersion | None) -> str:
    """'wireguard-go 0.0.20220316 (debian) → 0.0.0-20260522210424-ecfc5a8d5446 (go1.27.3)' where
    the two differ; '' where they do not (or one names no version)."""
    if before == after or before is None or after is None:
        return ""
    return in_turn([before, after])


def in_turn(versions: list[DaemonVersion]) -> str:
    """Versions one after the other, 'A → B → C', each implementation named where it begins."""
    said = []
    for before, version in zip([None, *versions], versions):
        same = before is not None and before.implementation == version.implementation
        said.append(version.label.removeprefix(f"{version.implementation} ") if same else version.label)
    return " → ".join(said)
