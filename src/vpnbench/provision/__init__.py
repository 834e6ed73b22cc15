"""`vpnbench provision INVENTORY`: install what a campaign needs on an Ansible inventory's hosts.

What is needed is never a second list: the Debian packages are those the campaign's techniques
and measurements declare (`packages` on their classes, tools.py) plus the testbed's own tools;
vpnbench-gen when a measurement uses it (tool = "gen"), of each host's architecture; the
campaign's [testbed] sysctls. Without --campaign: everything any technique or measurement may
need. The playbook (playbook.yml beside this file) is run by ansible-runner; its events say what
changed, host by host. --check runs it in Ansible's check mode: what would change, nothing changed.

Host keys are verified as in hosts/ssh.py: Ansible's ssh gets StrictHostKeyChecking=yes (first
on its command line, so no inventory setting weakens it), and an unknown host key fails the host
with one line; --trust-new-host-keys makes it accept-new (a host's first contact writes its key
to known_hosts; a changed key is still refused).
"""

import os
import tarfile
import tempfile
from dataclasses import dataclass, field
from importlib import resources as package_files
from pathlib import Path

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.tools import TESTBED_PACKAGES, known_packages
from vpnbench.hosts.arch import elf_arch, normalize
from vpnbench.hosts.inventory import ansible_command, ansible_env, first_error, inventory_hosts
from vpnbench.hosts.ssh import NO_FORWARDING
from vpnbench.measure import MEASUREMENTS
from vpnbench.measure.gen import GEN_NAME, REPO_GEN, gen_binary
from vpnbench.techniques import TECHNIQUES

GEN_SOURCE = REPO_GEN.parents[2]  # gen/: the crate a host of another architecture builds
# its dependencies' sources (cargo vendor) and the configuration that points cargo at them, beside it
VENDORED = (".cargo/config.toml", "vendor")
BASE_PACKAGES = {"sysctl": "procps", "unshare": "util-linux"}  # testbeds/ssh.py BASE_TOOLS beside TESTBED_PACKAGES


@dataclass
class Needs:
    """What the hosts get: packages, whether vpnbench-gen, sysctls."""

    packages: list[str]
    gen: bool
    sysctls: dict[str, str] = field(default_factory=dict)


def campaign_needs(campaign=None) -> Needs:
    """From the declarations: the testbed's tools, each technique's packages, and each
    measurement's client and server tools as its parameters choose them (tool = "iperf2", ...)."""
    base = {**TESTBED_PACKAGES, **BASE_PACKAGES}
    if campaign is None:
        return Needs(sorted(set(base.values()) | set(known_packages().values())), gen=True)
    packages = set(base.values())
    for params in campaign.techniques:
        packages.update(TECHNIQUES[params.kind].packages.values())
    for params in campaign.measurements:
        kind = MEASUREMENTS[params.kind]
        client_tools, server_tools = kind(params).needed_tools()
        names = {**base, **kind.packages}
        packages.update(names.get(tool, tool) for tool in (*client_tools, *server_tools))
    gen = any(getattr(params, "tool", None) == "gen" for params in campaign.measurements)
    sysctls = {key: " ".join(str(value).split()) for key, value in campaign.testbed.sysctls.items()}
    return Needs(sorted(packages), gen, sysctls)


ANSIBLE_SSH_ARGS = "-C -o ControlMaster=auto -o ControlPersist=60s"  # Ansible's ssh_args default


def ssh_args(hostvars: dict, trust_new_host_keys: bool) -> str:
    """A host's ssh_args for Ansible: the host key policy and hosts/ssh.py's forced options first
    (ssh takes an option's first value, and ssh_args open Ansible's ssh command line), then the
    inventory's own ansible_ssh_args (else $ANSIBLE_SSH_ARGS, else Ansible's default)."""
    policy = "accept-new" if trust_new_host_keys else "yes"
    own = hostvars.get("ansible_ssh_args") or os.environ.get("ANSIBLE_SSH_ARGS") or ANSIBLE_SSH_ARGS
    return " ".join(["-o", f"StrictHostKeyChecking={policy}", *NO_FORWARDING, str(own)])


def pick_hosts(known: dict[str, dict], wanted: str | None, path: str) -> list[str]:
    if not wanted:
        return sorted(known)
    names = [name.strip() for name in wanted.split(",") if name.strip()]
    for name in names:
        if name not in known:
            raise UserError(f"--hosts: {name!r} is not in {path}; hosts there: {', '.join(sorted(known))}")
    return names


def gen_binaries(given: list[str]) -> dict[str, str]:
    """architecture -> binary: this machine's (when built) and each --gen ARCH=PATH, every one
    checked to be an executable of the architecture it is given for."""
    binaries = {}
    local = gen_binary()
    if local and elf_arch(local):
        binaries[elf_arch(local)] = str(Path(local).resolve())
    for item in given:
        arch, sep, path = item.partition("=")
        arch = normalize(arch)
        if not sep or not arch or not path:
            raise UserError(f"--gen: {item!r} is not ARCH=PATH (e.g. aarch64=gen/target/aarch64-unknown-linux-gnu/"
                            f"release/{GEN_NAME})")
        if not os.access(path, os.X_OK):
            raise UserError(f"--gen: {path}: no such executable")
        built_for = elf_arch(path)
        if built_for != arch:
            raise UserError(f"--gen: {path} is built for {built_for or 'no known architecture'}, not {arch}")
        binaries[arch] = str(Path(path).resolve())
    return binaries


@dataclass
class Outcome:
    lines: list[str]  # host: what changed (or would)
    changed_hosts: int
    failed: list[str]
    hosts: int


TASK_CHANGES = {  # playbook task -> what its change is, (done, would be done)
    "vpnbench sysctls": ("sysctls written to /etc/sysctl.d/60-vpnbench.conf",
                         "sysctls would be written to /etc/sysctl.d/60-vpnbench.conf"),
    "vpnbench-gen directory": ("directory for vpnbench-gen made", "directory for vpnbench-gen would be made"),
    "vpnbench-gen": ("vpnbench-gen ({arch}) installed", "vpnbench-gen ({arch}) would be installed"),
    "vpnbench-gen would be built": ("", "vpnbench-gen ({arch}) would be built with the host's cargo"),
    "vpnbench-gen built": ("vpnbench-gen ({arch}) built with the host's cargo and installed", ""),
}


HOST_KEY_REFUSED = ("its host key is not in known_hosts (or has changed): refused; add the host's key to "
                    "known_hosts, or give --trust-new-host-keys to accept a new host's key on first contact")


def summarize(events: list[dict], check: bool) -> Outcome:
    missing: dict[str, list[str]] = {}
    arch: dict[str, str] = {}
    lines, failed, changed, seen = [], [], set(), set()
    for event in events:
        data = event.get("event_data", {})
        host, task, res = data.get("host"), data.get("task", ""), data.get("res") or {}
        if not host:
            continue
        seen.add(host)
        kind = event.get("event")
        if kind == "runner_on_ok":
            facts = res.get("ansible_facts", {})
            if task == "vpnbench missing packages":
                missing[host], arch[host] = facts.get("vpnbench_missing", []), facts.get("vpnbench_arch", "")
            if not res.get("changed"):
                continue
            changed.add(host)
            if task == "vpnbench packages":
                verb = "would be installed" if check else "installed"
                lines += [f"host {host}: package {name} {verb}" for name in missing.get(host, [])]
            else:
                done, would = TASK_CHANGES.get(task, (f"{task}: changed", f"{task}: would change"))
                lines.append(f"host {host}: {(would if check else done).format(arch=arch.get(host, '?'))}")
        elif kind in ("runner_on_failed", "runner_on_unreachable") and not data.get("ignore_errors"):
            reason = " ".join(str(res.get("msg") or res.get("stderr") or "failed").split())
            if kind == "runner_on_unreachable" and "Host key verification failed" in reason:
                reason = HOST_KEY_REFUSED
            failed.append(f"host {host}: {'unreachable' if kind == 'runner_on_unreachable' else task}: {reason}")
    return Outcome(lines, len(changed), failed, len(seen))


def pack_gen_source(archive: Path) -> None:
    """gen/ without target/ (only what cargo reads) and, in the same places as here, the vendored
    sources of its dependencies with the configuration pointing cargo at them, so the host builds
    offline. One archive: Ansible's copy of a directory would take a round trip per file."""
    def root_owned_source(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if info.name == "./target":
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(archive, "w:gz") as tar:
        tar.add(GEN_SOURCE, ".", filter=root_owned_source)
        for name in VENDORED:
            tar.add(GEN_SOURCE.parent / name, f"./{name}", filter=root_owned_source)


def provision(inventory: str, check: bool = False, campaign=None, hosts: str | None = None,
              gen: list[str] = (), forks: int = 5, trust_new_host_keys: bool = False) -> tuple[Outcome, Needs]:
    import ansible_runner  # noqa: PLC0415 - only this command needs it (and it is slow to import)

    known = inventory_hosts(inventory)
    chosen = pick_hosts(known, hosts, inventory)
    needs = campaign_needs(campaign)
    binaries = gen_binaries(list(gen)) if needs.gen or gen else {}  # a bad --gen is refused either way
    if needs.gen and not binaries and not GEN_SOURCE.joinpath("Cargo.toml").exists():
        raise UserError(f"provision: {GEN_NAME} is not built here and its source is not beside vpnbench; "
                        "`make` builds it, or give --gen ARCH=PATH")
    playbook = package_files.files("vpnbench.provision").joinpath("playbook.yml")
    with tempfile.TemporaryDirectory(prefix="vpnbench-provision-") as private:
        source = Path(private) / "gen-source.tar.gz"
        if needs.gen and GEN_SOURCE.joinpath("Cargo.toml").exists():
            pack_gen_source(source)
        extravars = {"vpnbench_packages": needs.packages, "vpnbench_sysctls": needs.sysctls,
                     "vpnbench_gen": binaries if needs.gen else {},
                     "vpnbench_gen_build": needs.gen and source.exists(), "vpnbench_gen_source": str(source),
                     # an extra variable outranks the inventory's; the inventory's own value is inside
                     "vpnbench_ssh_args": {host: ssh_args(known[host], trust_new_host_keys) for host in chosen},
                     "ansible_ssh_args": "{{ vpnbench_ssh_args[inventory_hostname] }}"}
        if needs.gen and not binaries:
            extravars["vpnbench_gen"] = {"none": ""}  # gen wanted, none built here: every host builds its own
        result = ansible_runner.run(
            private_data_dir=private, playbook=str(playbook), inventory=str(Path(inventory).resolve()),
            limit=",".join(chosen), forks=forks, extravars=extravars,
            cmdline="--check" if check else None, quiet=True, suppress_env_files=True,
            # ansible-runner finds ansible-playbook on the PATH it is given: this environment's first
            envvars={**ansible_env(), "PATH": f"{Path(ansible_command('ansible-playbook')).parent}:{os.environ.get('PATH', '')}"})
        outcome = summarize(list(result.events), check)
        if result.rc != 0 and not outcome.failed:
            stdout = result.stdout.read() if hasattr(result.stdout, "read") else ""
            outcome.failed.append(f"ansible-playbook: exit {result.rc}: {first_error(stdout) or result.status}")
    return outcome, needs
