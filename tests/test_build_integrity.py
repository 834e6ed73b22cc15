"""A build under /opt/vpnbench is checked on its host before a run uses it (owner, mode, sha256
against BUILD.json), and a version with a trailing newline is no version (issue 39, item 7)."""

import pytest

from vpnbench.hosts import builds
from vpnbench.testbeds.probe import THIS_MACHINE, NoProbe

NEBULA = builds.recipe("nebula").default


def test_a_version_with_a_trailing_newline_is_refused():
    with pytest.raises(ValueError, match="is not a version"):
        builds.recipe("nebula").check_version(f"{NEBULA}\n")
    builds.recipe("nebula").check_version(NEBULA)


class Altered(NoProbe):
    """This machine's answers, but for one command, whose output is replaced as given."""

    def __init__(self, command: list[str], output):
        self.command, self.output = command, output

    def outputs(self, argv: list[str]) -> dict[str, str]:
        real = super().outputs(argv)[THIS_MACHINE]
        return {THIS_MACHINE: self.output(real) if argv == self.command else real}


def first_byte_flipped(sums: str) -> str:
    return "".join(("0" if line[0] != "0" else "1") + line[1:] + "\n" for line in sums.splitlines())


def writable_by_others(owners: str) -> str:
    lines = owners.splitlines()
    uid, _, path = lines[0].split(" ", 2)
    return "\n".join([f"{uid} 757 {path}", *lines[1:]]) + "\n"


def a_users(owners: str) -> str:
    return "\n".join(f"65534 {line.split(' ', 1)[1]}" if line.endswith("/bin") else line
                     for line in owners.splitlines()) + "\n"


@pytest.mark.skipif(not builds.installed("nebula").get(NEBULA), reason="nebula's pinned build is not here (make builds)")
@pytest.mark.parametrize("command, change, said", [
    (builds.sums_command("nebula", NEBULA), first_byte_flipped, "'s sha256 is "),
    (builds.owners_command("nebula", NEBULA), writable_by_others, " with mode 757, where only root may write"),
    (builds.owners_command("nebula", NEBULA), a_users, "/bin is owned by uid 65534"),
])
def test_a_build_changed_since_it_was_made_is_a_reason_not_run(command, change, said):
    assert builds.unavailable(NoProbe(), "nebula") is None  # as built: usable
    reason = builds.unavailable(Altered(command, change), "nebula")
    assert reason.startswith(f"this machine: nebula {NEBULA} (/opt/vpnbench/nebula/{NEBULA}) is not as built: ")
    assert said in reason and reason.endswith(f"build it again with `vpnbench doctor --install nebula@{NEBULA}`")
