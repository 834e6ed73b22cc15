"""The campaign fields that run a program, name a file or reach beyond the testbed: declared once.

A campaign file is a root script (docs/config.md: Security): these fields are why. A lab
worker runs campaigns it reads from a shared database, so it takes none of them from a queued
job unless its own file says so (vpnbench.lab.trust). tests/test_trust.py walks the whole
schema: any field whose name or type says hook, command, file, path or address must be here or
in that test's reviewed list with its reason, so this list cannot drift from the schema.
"""

import dataclasses

from vpnbench.measure import MEASUREMENTS
from vpnbench.techniques import TECHNIQUES
from vpnbench.testbeds.spec import TestbedSpec

# [testbed] keys a lab worker's own file decides: a queued job never carries them.
TESTBED_OWNED = {
    "kind": "which machines run the campaign (this machine's namespaces, ssh hosts, VMs)",
    "inventory": "an Ansible inventory file (an executable one is run)",
    "hosts": "the machines reached over ssh, and their addresses",
    "ssh": "ssh's config file (a ProxyCommand there runs a command), identity and known-hosts files",
    "sysctls": "kernel settings applied as root on the hosts",
}

# Technique and measurement fields a worker runs only when its file's [worker] allow names them.
PRIVILEGED = {
    "technique.external.up_hook": "a command run as root on the worker's machine",
    "technique.external.down_hook": "a command run as root on the worker's machine",
    "technique.external.server_ipv4": "an address the measurements' traffic and pings go to, on any network",
    "technique.external.server_ipv6": "an address the measurements' traffic and pings go to, on any network",
    "technique.external.client_ipv4": "an address the measurements' traffic and pings go to, on any network",
    "technique.external.client_ipv6": "an address the measurements' traffic and pings go to, on any network",
    "measurement.transfer.directory": "a directory on the hosts that root writes into",
}


@dataclasses.dataclass(frozen=True)
class Setting:
    """A privileged field a campaign sets: its name in the lists above, where it stands, why it matters."""

    name: str  # testbed.sysctls, technique.external.up_hook
    where: str  # as validation names it: testbed.sysctls, technique[2].up_hook
    why: str

    @property
    def testbed_owned(self) -> bool:
        return self.name.removeprefix("testbed.") in TESTBED_OWNED


def privileged_settings(source: dict) -> list[Setting]:
    """The privileged fields a campaign's input (the dict of its file) sets to other than their
    defaults, read from the raw input: a worker asks before validating it, since validating an
    inventory runs Ansible on it. Parameter models take exactly their entries' keys (no aliases;
    tests/test_trust.py checks), so a key not seen here is not a field set."""
    found = []
    testbed = source.get("testbed")
    if isinstance(testbed, dict):
        found += [Setting(f"testbed.{key}", f"testbed.{key}", why) for key, why in TESTBED_OWNED.items()
                  if key in testbed and not _says_nothing(testbed[key], TestbedSpec.model_fields[key].default)]
    for section, registry in (("technique", TECHNIQUES), ("measurement", MEASUREMENTS)):
        entries = source.get(section)
        for number, entry in enumerate(entries if isinstance(entries, list) else [], start=1):
            kind = entry.get("kind") if isinstance(entry, dict) else None
            if not isinstance(kind, str) or kind not in registry:
                continue  # validation refuses it with one line
            for key, value in entry.items():
                name = f"{section}.{kind}.{key}"
                if name in PRIVILEGED and not _says_nothing(value, registry[kind].Params.model_fields[key].default):
                    found.append(Setting(name, f"{section}[{number}].{key}", PRIVILEGED[name]))
    return found


def _says_nothing(value, default) -> bool:
    """An empty value or the default: the campaign asks for nothing the defaults would not do."""
    return value is None or value == {} or value == [] or value == default
