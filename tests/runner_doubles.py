"""Doubles for the runner's unit tests (as wireguard-go's tuntest and bindtest): a network whose
pings the test scripts, hosts that answer every command of the Host interface from it, a testbed
that implements the runner's whole testbed interface, a clock that only moves when the network
or a stage waits, and a toy technique whose daemons the test can kill. No root, no namespaces:
the runner's logic runs as it does for real, in milliseconds."""

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from vpnbench.foundation.errors import TechniqueError
from vpnbench.foundation.params import TechniqueParams
from vpnbench.hosts.base import CommandFailed, CommandResult, Host, Proc
from vpnbench.techniques.base import BackendStatus, Technique, Tunnel
from vpnbench.techniques.overhead import Expectation
from vpnbench.testbeds.base import CapturePoint, Link, Testbed
from vpnbench.testbeds.probe import KernelProbe, RemoteKernelProbe
from vpnbench.testbeds.spec import TestbedSpec

LINK = Link("client", "c0", "server", "s0", "10.0.0", "fd00:0:0")  # the fake testbed's one link
UNDERLAY = {role: {"ipv4": LINK.addr(LINK.end(role)[0], "ipv4")} for role in ("client", "server")}
TUNNEL = {"client": {"ipv4": "10.99.0.1"}, "server": {"ipv4": "10.99.0.2"}}
LOST = None  # a scripted ping that gets no reply


class FakeClock:
    """The run's clock: time passes only when the network answers (an RTT, a ping's wait for a
    lost reply) or a stage sleeps, so a test waits for nothing."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class FakeNetwork:
    """Every address's round trip, scripted by the test: rtt[address] gives the next reply's RTT
    in ms (or LOST); `script` lists RTTs that come before it, one per ping packet."""

    def __init__(self, clock: FakeClock):
        self.clock = clock
        self.rtt: dict[str, Callable[[], float | None]] = {}
        self.script: dict[str, list[float | None]] = {}
        self.on_measure: Callable[[str], None] | None = None  # called when a measurement's ping starts

    def ping(self, address: str) -> float | None:
        queued = self.script.get(address)
        rtt = queued.pop(0) if queued else self.rtt.get(address, lambda: 0.1)()
        self.clock.sleep(rtt / 1000 if rtt is not None else 1.0)
        return rtt


def ping_output(address: str, rtts: list[float | None]) -> str:
    """What iputils ping prints for these replies (LOST: none for that sequence number)."""
    lines = [f"PING {address} ({address}) 56(84) bytes of data."]
    lines += [f"64 bytes from {address}: icmp_seq={seq} ttl=64 time={rtt:.3f} ms"
              for seq, rtt in enumerate(rtts, start=1) if rtt is not None]
    got = [rtt for rtt in rtts if rtt is not None]
    lines += ["", f"--- {address} ping statistics ---",
              f"{len(rtts)} packets transmitted, {len(got)} received, "
              f"{100 * (len(rtts) - len(got)) // len(rtts)}% packet loss, time 1ms"]
    if got:
        mean = sum(got) / len(got)
        lines.append(f"rtt min/avg/max/mdev = {min(got):.3f}/{mean:.3f}/{max(got):.3f}/0.000 ms")
    return "\n".join(lines) + "\n"


class FakeProc(Proc):
    def __init__(self, name: str, pid: int):
        self.name, self.pid = name, pid
        self.running = True
        self.log = f"{name} started\n"

    def alive(self) -> bool:
        return self.running

    def kill(self) -> None:
        """The test's kill -9."""
        self.running = False
        self.log += "killed\n"

    def wait(self, timeout: float) -> int | None:
        return None if self.running else -9

    def stop(self, timeout: float = 3.0) -> int | None:
        self.running = False
        return 0

    def output(self) -> str:
        return self.log

    def interrupt(self) -> None:
        self.running = False


class FakeHost(Host):
    """A host of the fake testbed: pings go to the network, every other command succeeds
    silently (host facts, route lookups), files are kept in memory; it has every installed file
    but those the test puts in `absent`."""

    def __init__(self, role: str, network: FakeNetwork, commands: tuple[str, ...] = ("ping", "ip", "sh")):
        super().__init__(role, None)
        self.network, self.commands = network, set(commands)
        self.files: dict[Path, bytes] = {}
        self.absent: set[str] = set()
        self.procs: list[FakeProc] = []
        self.ran: list[list[str]] = []

    def run(self, argv: list[str], timeout: float = 30.0, check: bool = True,
            input: str | None = None) -> CommandResult:
        self.ran.append(list(argv))
        if argv[0] == "ping":
            count = int(argv[argv.index("-c") + 1])
            address = argv[-1]
            if count > 1 and self.network.on_measure is not None:
                self.network.on_measure(address)
            if "-w" in argv:  # a deadline: ping sends until `count` replies came, or the deadline passed
                deadline, replies = self.network.clock.now + float(argv[argv.index("-w") + 1]), []
                while sum(r is not None for r in replies) < count and self.network.clock.now < deadline:
                    replies.append(self.network.ping(address))
            else:
                replies = [self.network.ping(address) for _ in range(count)]
            output = ping_output(address, replies)
            result = CommandResult(argv, 0 if " 0 received" not in output else 1, output, "")
        else:
            result = CommandResult(argv, 0, "", "")
        if check and not result.ok:
            raise CommandFailed(result)
        return result

    def spawn(self, argv: list[str], name: str, env: dict[str, str] | None = None,
              interactive: bool = False) -> FakeProc:
        proc = FakeProc(name, 40000 + len(self.procs))
        self.procs.append(proc)
        return proc

    def write_file(self, path: Path, data: str | bytes, mode: int = 0o600) -> None:
        self.files[Path(path)] = data.encode() if isinstance(data, str) else data

    def read_file(self, path: Path) -> bytes:
        return self.files[Path(path)]

    def remove_file(self, path: Path) -> None:
        self.files.pop(Path(path), None)

    def pids(self) -> list[int]:
        return [proc.pid for proc in self.procs if proc.running]

    def has_command(self, name: str) -> bool:
        return name in self.commands

    def has_file(self, path: str) -> bool:
        return str(path) not in self.absent


class FakeProbe(RemoteKernelProbe):
    """The testbed's kernels have what the test says; files and command outputs are asked of
    the fake hosts, as a remote testbed's probe asks its hosts."""

    def __init__(self, hosts: list[Host], qdiscs: tuple[str, ...] = ()):
        super().__init__(hosts)
        self.qdiscs = qdiscs

    def has_link_type(self, kind: str, on_ethernet: bool = False) -> bool:
        return False

    def has_qdisc(self, kind: str) -> bool:
        return kind in self.qdiscs

    def accepts(self, commands: list[list[str]]) -> bool:
        return False

    def has_command(self, name: str) -> bool:
        return True  # the fake hosts run whatever a toy technique asks for

class FakeTestbed(Testbed):
    """The whole Testbed interface over fake hosts (a subclass: a method the runner newly needs
    is the base's, or the double fails to instantiate); it counts what was done to it."""

    def __init__(self, spec: TestbedSpec, network: FakeNetwork, fail_up: str | None = None):
        self.spec, self.network, self.fail_up = spec, network, fail_up
        self.hosts = {role: FakeHost(role, network) for role in ("client", "server")}
        self.links = [LINK]  # impairment backends read it
        self._probe = FakeProbe([self.client, self.server])
        self.pin_note = "not pinned (test double)"
        self.sysctls: dict[str, dict] = {}
        self.calls: list[str] = []

    @property
    def probe(self) -> FakeProbe:
        return self._probe

    @property
    def facts(self) -> dict:
        return {"double": True}

    def families(self) -> tuple[str, ...]:
        return ("ipv4",)

    @property
    def is_up(self) -> bool:
        """Up and not torn down since."""
        return self.calls.count("up") > self.calls.count("down")

    def connect(self) -> None:
        self.calls.append("connect")

    def up(self) -> None:
        self.calls.append("up")
        if self.fail_up:
            raise TechniqueError(self.fail_up)

    def down(self) -> None:
        self.calls.append("down")

    def wait_ready(self, timeout: float = 10.0) -> None:
        self.calls.append("wait_ready")

    def capture_points(self, near: str = "client") -> list[CapturePoint]:
        return [CapturePoint(self.client, "c0", "out")]

    def set_mtu(self, mtu: int) -> None:
        self.calls.append(f"mtu {mtu}")

    def add_bump(self) -> None:
        self.calls.append("bump")

    def evidence(self) -> dict[str, str]:
        return {"client: ip -d link": "c0: <BROADCAST,UP> (fake)"}


class FakeVpnParams(TechniqueParams):
    kind: Literal["fakevpn"] = "fakevpn"


class FakeVpn(Technique):
    """A toy technique: one daemon per end, a tunnel at TUNNEL's addresses. It refuses to come up
    while `refuse` says why."""

    kind = "fakevpn"
    Params = FakeVpnParams
    description = "test double"
    refuse: str | None = None
    unavailable: str | None = None  # why this machine has no backend for it, when it has none
    instances: list["FakeVpn"] = []

    def __init__(self, params, ctx):
        super().__init__(params, ctx)
        FakeVpn.instances.append(self)
        self.ups = 0

    @classmethod
    def backends(cls, probe: KernelProbe) -> list[BackendStatus]:
        return [BackendStatus("userspace", FakeVpn.unavailable is None, FakeVpn.unavailable or "")]

    @classmethod
    def expectation(cls, settings: dict, underlay_mtu: int) -> Expectation:
        return Expectation(underlay_mtu, 0, None, False, "fakevpn: no encapsulation")

    def up(self, backend: str) -> Tunnel:
        self.ups += 1
        if FakeVpn.refuse:
            raise TechniqueError(FakeVpn.refuse)
        procs = [host.spawn(["fakevpn-daemon"], "fakevpn-daemon") for host in (self.ctx.client, self.ctx.server)]
        self.tunnel = Tunnel(backend, dict(TUNNEL["server"]), dict(TUNNEL["client"]), "encrypted", "udp port 9",
                             procs=procs)
        return self.tunnel

    def down(self) -> None:
        if self.tunnel is not None:
            for proc in self.tunnel.procs:
                proc.stop()
        self.tunnel = None

    def evidence(self) -> dict[str, str]:
        return {"client: fakevpn show": "no peer"}

    def kill_daemons(self) -> None:
        for proc in self.tunnel.procs:
            proc.kill()


@dataclasses.dataclass
class Lab:
    """One test's doubles, and the `make` the Runner takes to obtain its testbed."""

    clock: FakeClock
    network: FakeNetwork
    testbeds: list[FakeTestbed] = dataclasses.field(default_factory=list)
    fail_up: str | None = None
    absent: dict[str, set[str]] = dataclasses.field(default_factory=dict)  # role -> files its host lacks

    def make(self, spec: TestbedSpec, resources, bump: bool = False) -> FakeTestbed:
        testbed = FakeTestbed(spec, self.network, self.fail_up)
        for role, paths in self.absent.items():
            testbed.hosts[role].absent = set(paths)
        self.testbeds.append(testbed)
        return testbed


LOCAL = {"kind": "local", "router": False}
SSH_INVENTORY = {"kind": "ssh", "router": False,
                 "hosts": {"client": {"host": "client.test", "iface": "c0", "ipv4": "10.0.0.1"},
                           "server": {"host": "server.test", "iface": "s0", "ipv4": "10.0.0.2"}}}
