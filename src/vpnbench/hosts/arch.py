"""Which CPU architecture a host runs and a binary was built for.

vpnbench-gen is a native binary: a remote host without its own gets a copy of this machine's
(measure/gen.py), which only runs there when both are of one architecture. A run checks that
before its first cell (`check_gen_arch`), never copying a binary a host cannot execute, and
`vpnbench provision` uses the same names to pick (or build) the binary each host gets.
"""

import weakref
from pathlib import Path

from vpnbench.foundation.errors import UserError

# ELF e_machine -> the name `uname -m` prints for that architecture.
ELF_MACHINES = {3: "i686", 40: "armv7l", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
# What else uname -m may print for the same architecture.
ALIASES = {"amd64": "x86_64", "arm64": "aarch64", "armv6l": "armv7l", "armhf": "armv7l",
           "i386": "i686", "i486": "i686", "i586": "i686"}


def normalize(machine: str) -> str:
    machine = machine.strip()
    return ALIASES.get(machine, machine)


def elf_arch(path: str | Path) -> str | None:
    """The architecture an ELF executable was built for (None: not an ELF file we know)."""
    try:
        with open(path, "rb") as f:
            header = f.read(20)
    except OSError:
        return None
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    order = "little" if header[5] == 1 else "big"
    return ELF_MACHINES.get(int.from_bytes(header[18:20], order))


_ARCH: "weakref.WeakKeyDictionary[object, str]" = weakref.WeakKeyDictionary()  # host -> its `uname -m`


def host_arch(host) -> str:
    """`uname -m` on the host, remembered on it (one round trip per host and run)."""
    if host not in _ARCH:
        _ARCH[host] = normalize(host.run(["uname", "-m"], timeout=10).stdout)
    return _ARCH[host]


def gen_arch_problem(host, local_binary: str) -> str | None:
    """Why this machine's vpnbench-gen must not go to `host`, or None when it may (or need not)."""
    built_for = elf_arch(local_binary)
    there = host_arch(host)
    if built_for is None or built_for == there:
        return None
    return (f"{host.role}: the host is {there} but this machine's vpnbench-gen ({local_binary}) is {built_for}; "
            f"install one built for {there} on its PATH (vpnbench provision INVENTORY builds it there, "
            f"or give --gen {there}=PATH)")


def check_gen_arch(hosts, local_binary: str | None, gen_command: str = "vpnbench-gen") -> None:
    """Before the run: every remote host without its own vpnbench-gen must be able to run this
    machine's copy. One line naming the host and both architectures, exit 2, nothing copied."""
    if local_binary is None:
        return
    for host in hosts:
        if host.on_this_machine() or host.has_command(gen_command):
            continue
        problem = gen_arch_problem(host, local_binary)
        if problem:
            raise UserError(problem)
