"""The bring-up stage: a technique brought up and timed to the first packet through, its wire
proven encrypted, its state kept as evidence when it fails, brought up again when a daemon
died between cells, and the path settled before each cell."""

import dataclasses
import time

from vpnbench.campaign import PlannedCell, TechniqueBlock
from vpnbench.foundation.errors import TechniqueError, VpnbenchError
from vpnbench.foundation.terminal_text import plain
from vpnbench.hosts.base import CommandFailed
from vpnbench.hosts.reach import wait_all_reachable, wait_reachable
from vpnbench.hosts.route import device_mtu, route_device
from vpnbench.measure.base import Cycled, CycleFailed
from vpnbench.measure.ping import rtts
from vpnbench.measure.scaling import fit_tunnel
from vpnbench.run.context import RunContext
from vpnbench.store.records import Bringup, now_iso
from vpnbench.techniques.base import Technique
from vpnbench.techniques.wirecheck import check_wire

SETUP_TIMEOUT = 15.0
# A path has settled when a ping's RTT is within this of the lowest seen (factor × lowest + slack).
SETTLE_FACTOR, SETTLE_SLACK_MS = 1.5, 0.5


class BringUpStage:
    """Keeps one technique of a block up for its cells."""

    def __init__(self, ctx: RunContext, technique: Technique, block: TechniqueBlock, backend: str):
        self.ctx, self.technique, self.block, self.backend = ctx, technique, block, backend
        self.bringup: Bringup | None = None
        self._idle_rtt: dict[tuple[int, str], float] = {}  # (bring-up, impairment) -> lowest RTT seen, ms

    def ready(self) -> Bringup:
        """The bring-up that serves the next cell: the first, or a new one when a daemon died
        since (the old one ends with a daemon-restart event). It may have failed (bringup.ok)."""
        if self.bringup is not None and not self.technique.failure():
            return self.bringup
        if self.bringup is not None:
            self.end(restart_reason=self.technique.failure())
        self.technique.down()
        self.ctx.impair(None)  # bring-up time and the wire proof are taken unimpaired
        self.bringup = self._bring_up()
        if self.block.mtu is not None and self.bringup.ok:
            self._fit_tunnel()
        return self.bringup

    def end(self, restart_reason: str | None = None) -> None:
        bringup = self.bringup
        if bringup is None:
            return
        if bringup.ended_at is None:
            bringup.ended_at = now_iso()
            self.ctx.store.save_bringup(bringup)
        if restart_reason and bringup.ok:
            self.ctx.event("daemon-restart", {"reason": restart_reason}, bringup_id=bringup.id)

    def _bring_up(self) -> Bringup:
        """Bring the technique up, time it to the first packet through, prove what is on the wire.
        A failure keeps what a person would look at: both ends' state and the technique's own."""
        ctx, block, testbed = self.ctx, self.block, self.ctx.testbed
        bringup = Bringup(ctx.run_id, block.label, block.params.kind, self.backend, now_iso(),
                          backend_asked=block.params.settings().get("backend", "auto"))
        started = ctx.clock.monotonic()
        try:
            tunnel = self.technique.up(self.backend)
            wait_through(testbed.client, tunnel.server_addrs[tunnel.family], self._setup_deadline())
            if tunnel.more:  # tunnels = N: set up when every one of them carries a packet
                wait_all_through(testbed.client, [ends.server[tunnel.family] for ends in tunnel.more],
                                 self._setup_deadline())
            bringup.setup_time_s = round(ctx.clock.monotonic() - started, 4)
            bringup.tunnel = tunnel
            bringup.negotiated = tunnel.negotiated
            bringup.facts = tunnel_facts(testbed.client, tunnel.server_addrs[tunnel.family])
            bringup.wire_check = self._wire_check(tunnel)
        except Exception as exc:  # noqa: BLE001 - a daemon's odd failure must not end the campaign
            reason = str(exc) if isinstance(exc, (VpnbenchError, OSError)) else f"{type(exc).__name__}: {exc}"
            bringup.error = f"bring-up failed: {reason}"
            bringup.evidence = self._evidence()
            if isinstance(exc, CommandFailed):  # the whole output of the command that failed, not its last line
                result = exc.result
                bringup.evidence[f"failed command: {' '.join(result.argv)}"] = (result.stdout + result.stderr)[-8000:]
            self.technique.down()
            bringup.ended_at = now_iso()
        ctx.store.save_bringup(bringup)
        if bringup.negotiated.get("warning"):
            ctx.display.say(f"[yellow]{plain(block.label)}: {plain(bringup.negotiated['warning'])}[/]")
        return bringup

    def _setup_deadline(self) -> float:
        """The campaign's set-up timeout, or the default scaled to the testbed (an emulated CPU is slower)."""
        asked = self.ctx.campaign.testbed.setup_timeout
        return asked if asked is not None else SETUP_TIMEOUT * self.ctx.testbed.setup_timeout_scale

    def _evidence(self) -> dict[str, str]:
        """The technique's and the testbed's state dumps; gathering them must never fail the run."""
        evidence: dict[str, str] = {}
        for source in (self.technique.evidence, self.ctx.testbed.evidence):
            try:
                evidence.update(source())
            except Exception as exc:  # noqa: BLE001 - evidence is best-effort by nature
                evidence[f"{source.__qualname__} failed"] = f"{type(exc).__name__}: {exc}"
        return evidence

    def _wire_check(self, tunnel) -> dict:
        testbed = self.ctx.testbed
        points = testbed.capture_points(tunnel.capture_near)
        for point in points:
            if not point.host.has_command("tcpdump"):
                return {"verdict": "not-checked",
                        "detail": f"tcpdump not installed on the {point.host.role} (apt-get install tcpdump)"}
        verdict = check_wire(tunnel, testbed.client, points, self.ctx.resources, tunnel.family)
        return dataclasses.asdict(verdict)

    def _fit_tunnel(self) -> None:
        """Over a swept underlay MTU: the tunnel devices lowered to fit, the facts taken again."""
        bringup, testbed, block = self.bringup, self.ctx.testbed, self.block
        tunnel = bringup.tunnel
        ends = [(testbed.client, tunnel.server_addrs[tunnel.family]), (testbed.server, tunnel.client_addrs[tunnel.family])]
        fitted = fit_tunnel(ends, {**block.params.settings(), "backend": bringup.backend}, block.mtu)
        bringup.facts = {**tunnel_facts(testbed.client, ends[0][1]), "underlay_mtu": block.mtu,
                         **({"tunnel_mtu_lowered_to": fitted} if fitted else {})}
        self.ctx.store.save_bringup(bringup)

    def settle(self, cell: PlannedCell) -> None:
        """Wait (at most settle_max) until a ping through the tunnel is back near the lowest round
        trip seen with this bring-up and impairment, so one cell's queues and TCP state do not leak
        into the next (seen: OpenVPN-over-TCP pings ~10 ms behind the backlog of a 1 Gbit/s UDP cell)."""
        ctx, bringup = self.ctx, self.bringup
        limit = ctx.campaign.info.settle_max
        if limit <= 0:
            return
        address = bringup.tunnel.server_addrs[bringup.tunnel.family]
        key = (bringup.id, cell.impairment.label)
        started = ctx.clock.monotonic()
        settled = False
        while not settled:
            rtt = ping_once(ctx.testbed.client, address)
            if rtt is not None:
                lowest = self._idle_rtt[key] = min(rtt, self._idle_rtt.get(key, rtt))
                settled = rtt <= SETTLE_FACTOR * lowest + SETTLE_SLACK_MS
            if not settled and ctx.clock.monotonic() - started >= limit:
                break
            if not settled:
                ctx.clock.sleep(0.05)
        waited = ctx.clock.monotonic() - started
        if waited >= 0.1:
            ctx.event("settle", {"before": cell.key, "waited_s": round(waited, 3), "rtt_ms": rtt,
                                 "idle_rtt_ms": self._idle_rtt.get(key), "settled": settled}, bringup_id=bringup.id)

    def cycler(self):
        """MeasureContext.cycle for the current bring-up (see cycler)."""
        return cycler(self.technique, self.bringup)


def cycler(technique: Technique, bringup: Bringup):
    """MeasureContext.cycle for this bring-up: the technique down and up again, timed to up()'s
    return, its key exchange bounded by `timeout` where the daemon allows; the bring-up serves
    the next cells with the new tunnel. A failed up() leaves the technique down (CycleFailed, with
    what the daemons counted before they stopped), so the next cell brings it up afresh (with its
    wire proof)."""
    def cycle(timeout: float | None = None) -> Cycled:
        technique.down()
        started = time.monotonic()
        technique.exchange_timeout = timeout
        try:
            tunnel = technique.up(bringup.backend)
        except (VpnbenchError, OSError) as exc:
            attempts = technique.handshake_attempts()
            died = technique.failure() if technique.tunnel is not None else None  # a daemon's last words, before down()
            technique.down()
            raise CycleFailed(f"{exc}; {died}" if died else str(exc), attempts) from exc
        except BaseException:
            technique.down()
            raise
        finally:
            technique.exchange_timeout = None
        bringup.tunnel = tunnel
        return Cycled(tunnel, round(time.monotonic() - started, 4), technique.handshake_s,
                      technique.handshake_attempts)
    return cycle


def tunnel_facts(client, address: str) -> dict:
    """The interface the client reaches the tunnel's far end through, and its MTU: the MTU a
    technique leaves for traffic, whatever the technique (a tunnel device or the underlay)."""
    device = route_device(client, address)
    return {} if device is None else {"interface": device, "interface_mtu": device_mtu(client, device)}


def ping_once(client, address: str) -> float | None:
    """One ping's round trip in ms, or None when it was lost."""
    result = client.run(["ping", "-n", "-c", "1", "-W", "1", address], timeout=5, check=False)
    replies = rtts(result.stdout)
    return replies[0] if replies else None


def wait_through(client, address: str, timeout: float) -> None:
    """Until the first reply comes back through the tunnel."""
    if wait_reachable(client, address, timeout) is None:
        raise TechniqueError(f"no packet through the tunnel to {address} within {timeout:g} s")


def wait_all_through(client, addresses: list[str], timeout: float) -> None:
    """Until a reply came back through each of these tunnels (tunnels 2..N of a bring-up)."""
    if wait_all_reachable(client, addresses, timeout) is None:
        raise TechniqueError(f"not every one of {len(addresses) + 1} tunnels carried a packet within {timeout:g} s")
