"""TCP congestion control per technique run, on both ends.

TCP under loss measures the congestion control as much as the technique: bbr (this machine's
default) barely slows for random loss, where a loss-based control (cubic, reno) falls by an
order of magnitude. So a campaign may choose it per technique (`congestion_control = "cubic"`),
checked against what the hosts' kernels offer (net.ipv4.tcp_available_congestion_control)
before any host is changed, and set on both ends before the technique comes up.

The setting is per network namespace. A namespace other than the machine's first may only choose
a control the machine allows (net.ipv4.tcp_allowed_congestion_control, machine-wide): one that is
not allowed is added there for the run and the list put back afterwards (the run directory's
sysctl restore file, so `vpnbench cleanup` puts it back after a kill -9 too).
"""

from pathlib import Path

from vpnbench.foundation.errors import HostError, UserError
from vpnbench.foundation.sysctls import save_and_write
from vpnbench.hosts.base import CommandFailed, Host
from vpnbench.testbeds.probe import KernelProbe

CONTROL = "net.ipv4.tcp_congestion_control"
AVAILABLE = "/proc/sys/net/ipv4/tcp_available_congestion_control"
ALLOWED = "net.ipv4.tcp_allowed_congestion_control"


def asked(techniques: list) -> list[tuple[int, str]]:
    """(technique number, control) for every technique that chooses one."""
    return [(number, params.congestion_control) for number, params in enumerate(techniques, start=1)
            if getattr(params, "congestion_control", None)]


def check_offered(techniques: list, offered: dict[str, list[str]]) -> None:
    """Every chosen control is one each host's kernel offers ("the client", "this machine", ... ->
    its available list), else one line naming the field and the allowed values."""
    for number, control in asked(techniques):
        for role, available in offered.items():
            if control not in available:
                raise UserError(f"technique[{number}].congestion_control: {control!r} is not offered by "
                                f"{role}'s kernel; allowed values: {', '.join(available) or 'none found'}")


def offered(probe: KernelProbe) -> dict[str, list[str]]:
    """What the kernel of each host that runs a technique offers, asked through the testbed's probe
    (a local testbed's namespaces share this machine's): host -> its available list."""
    return {host: text.split() for host, text in probe.outputs(["cat", AVAILABLE]).items()}


def current(host: Host) -> str | None:
    out = host.run(["cat", f"/proc/sys/{CONTROL.replace('.', '/')}"], timeout=15, check=False)
    return (out.stdout.strip() or None) if out.ok else None


def apply(host: Host, control: str, run_dir: Path) -> None:
    """Set `control` on the host. A namespace of this machine refuses one the machine does not
    allow (EPERM): it is allowed machine-wide for the run, then set again."""
    try:
        host.set_sysctl(CONTROL, control)  # a machine of its own (ssh) records the old value to restore
        return
    except CommandFailed as refused:
        if not host.on_this_machine():  # a VM guest sets it in its own first namespace: never refused
            raise _refused(host, control, refused) from None
    allowed = Path(f"/proc/sys/{ALLOWED.replace('.', '/')}").read_text().split()
    if control not in allowed:
        save_and_write(ALLOWED, " ".join([*allowed, control]), run_dir)
    try:
        host.set_sysctl(CONTROL, control)
    except CommandFailed as refused:
        raise _refused(host, control, refused) from None


def _refused(host: Host, control: str, refused: CommandFailed) -> HostError:
    return HostError(f"{host.role}: {CONTROL}={control} refused: {refused.result.stderr.strip()}")


def said(controls: dict[str, str | None]) -> str | None:
    """The control in force on the hosts (role -> control read on it): one name when they agree,
    else each role's."""
    if len(set(controls.values())) == 1:
        return next(iter(controls.values()))
    return ", ".join(f"{role} {control or '?'}" for role, control in controls.items())


def for_run(hosts: list[Host], chosen: str | None, own: dict[str, str | None], run_dir: Path,
            own_just_read: bool = False) -> str | None:
    """Before a technique comes up: its chosen control on both ends, or each host's own (`own`,
    read before the first change) back after a technique that chose one. Returns what is in force,
    as read on each host: after a change read again, otherwise the reading that found nothing to
    change (a second read of an unchanged host cost a command each, ~0.1 s a technique in the TCG VM).
    `own_just_read`: `own` was read a moment ago (the run's first technique), so it is what is set now."""
    in_force = {}
    for host in hosts:
        want = chosen or own.get(host.role)
        control = own.get(host.role) if own_just_read else current(host)
        if want and control != want:
            apply(host, want, run_dir)
            control = current(host)
        in_force[host.role] = control
    return said(in_force)
