"""Impairment backends: kernel netem qdiscs, or linkem bridging the link in userspace.

Both take the same two specs, egress (client -> server) and ingress (server -> client),
and change them in place between cells without rebuilding anything. Each class declares what
the rest of vpnbench needs to know of it and is registered by name (impair/registry.py): the
built-in ones at the end of this module, so whoever imports it finds them registered.
"""

import abc
import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import ClassVar

from vpnbench.foundation.errors import ImpairmentError, UserError
from vpnbench.impair.model import Impairment
from vpnbench.impair.registry import BACKENDS, allowed_here, register, wrong_kind
from vpnbench.impair.spec import NetemSpec
from vpnbench.testbeds.base import Testbed

TESTBED_KINDS = ("local", "ssh", "vm")
NETEM_DEFAULT_LIMIT = 1000  # packets: netem's queue when the spec gives no limit
# linkem's default queue (linkem/src/spec.rs `effective_limit`): see LinkemBackend.default_limit
FRAME_BYTES = 1514  # one MTU-sized Ethernet frame per queue slot
LINE_RATE_BPS = 10e9  # the delay line's assumed line rate when no rate is set
MAX_DEFAULT_LIMIT = 1_000_000

LINKEM_NAME = "vpnbench-linkem"
REPO_LINKEM = Path(__file__).resolve().parents[3] / "linkem" / "target" / "release" / LINKEM_NAME


def linkem_binary() -> str | None:
    """$VPNBENCH_LINKEM, then PATH, then the binary `make` builds in this checkout."""
    for candidate in (os.environ.get("VPNBENCH_LINKEM"), shutil.which(LINKEM_NAME), str(REPO_LINKEM)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class ImpairmentBackend(abc.ABC):
    name: ClassVar[str]
    needs_bump: ClassVar[bool] = False  # it needs a bump-in-the-wire hop, which the testbed then builds
    testbeds: ClassVar[tuple[str, ...]] = TESTBED_KINDS  # the testbed kinds it may run on

    @classmethod
    @abc.abstractmethod
    def unavailable(cls, probe) -> str | None:
        """None when it can run where `probe` (a KernelProbe of the testbed's hosts) looks; else why not."""

    @classmethod
    def kernel_rows(cls, probe) -> dict[str, bool]:
        """doctor's kernel feature rows for this backend: row name -> does the kernel have it."""
        return {}

    @classmethod
    def default_limit(cls, spec: dict) -> int | None:
        """Packets it queues per direction for a spec (NetemSpec's fields) that gives no limit;
        None where it sizes its queue so that the queue is not what limits (methodology reads it)."""
        return NETEM_DEFAULT_LIMIT

    @classmethod
    @abc.abstractmethod
    def create(cls, testbed: Testbed) -> "ImpairmentBackend":
        """The backend for a testbed whose links exist (built with a bump if needs_bump)."""

    def start(self) -> None:
        """Called once the testbed's links exist, before it is checked for reachability."""

    @abc.abstractmethod
    def apply(self, impairment: Impairment) -> None: ...

    def clear(self) -> None:
        self.apply(Impairment("none", NetemSpec(), NetemSpec(), self.name, "auto"))

    @abc.abstractmethod
    def placement_of(self, impairment: Impairment) -> str:
        """Where this impairment really acts: router, endpoints or link (linkem's bump)."""

    def stop(self) -> None:
        self.clear()

    def stats(self) -> dict:
        return {}

    def queue_drops(self, before: dict, after: dict) -> dict[str, int]:
        """Packets dropped at the queue limit between two stats() reads, per direction (egress:
        client -> server) the backend can tell them apart in; {} where it cannot
        (methodology.queue_below_bdp reads them)."""
        return {}

    def facts(self) -> dict:
        """What else a cell's impairment_params should record about how it was applied."""
        return {}


class NetemBackend(ImpairmentBackend):
    """A netem qdisc on the egress of each direction: the router's two sides (default when
    there is a router whose kernel has netem), or the endpoints' own interfaces (S1's way)."""

    name = "netem"

    @classmethod
    def unavailable(cls, probe) -> str | None:
        return None if probe.has_qdisc("netem") else "the kernel has no sch_netem"

    @classmethod
    def kernel_rows(cls, probe) -> dict[str, bool]:
        return {"netem": probe.has_qdisc("netem")}

    @classmethod
    def create(cls, testbed: Testbed) -> "NetemBackend":
        return cls(testbed)

    def __init__(self, testbed: Testbed):
        self.has_router = testbed.router is not None
        self.netem_on_router = testbed.netem_on_router  # the VM testbed's router: this machine's kernel
        first, last = testbed.links[0], testbed.links[-1]
        self.targets = {
            # client -> server leaves the router towards the server, and vice versa
            "router": {"egress": (testbed.hosts[last.a], last.a_iface),
                       "ingress": (testbed.hosts[first.a], first.a_iface)},
            "endpoints": {"egress": (testbed.client, _iface_of(testbed, "client")),
                          "ingress": (testbed.server, _iface_of(testbed, "server"))},
        }
        self._active: dict[tuple[str, str], tuple[object, NetemSpec]] = {}  # (role, iface) -> (host, spec)
        self._direction: dict[tuple[str, str], str] = {}  # (role, iface) -> egress or ingress
        self.senders = [(testbed.client, _iface_of(testbed, "client")), (testbed.server, _iface_of(testbed, "server"))]
        self._gso_default: dict[str, str] | None = None  # the senders' gso_max_segs while limited

    def placement_of(self, impairment: Impairment) -> str:
        if impairment.placement == "auto":
            return "router" if self.has_router and self.netem_on_router else "endpoints"
        if impairment.placement == "router" and not self.netem_on_router:
            raise ImpairmentError("placement: 'router' needs netem in the router's kernel, and this testbed's "
                                  "router is a namespace of a machine without sch_netem; allowed here: auto, endpoints")
        return impairment.placement

    def apply(self, impairment: Impairment) -> None:
        wanted = {}
        for direction, spec in (("egress", impairment.egress), ("ingress", impairment.ingress)):
            host, iface = self.targets[self.placement_of(impairment)][direction]
            if not spec.empty:
                wanted[(host.role, iface)] = (host, spec)
                self._direction[(host.role, iface)] = direction
        self._limit_segmentation(any(spec.rate_bps for _, spec in wanted.values()))
        for key in self._active.keys() - wanted.keys():
            host, _ = self._active.pop(key)
            host.run(["tc", "qdisc", "del", "dev", key[1], "root"], check=False)
        for key, (host, spec) in wanted.items():
            previous = self._active.get(key, (None, None))[1]
            if previous is not None and _keeps_stale_settings(previous, spec):
                host.run(["tc", "qdisc", "del", "dev", key[1], "root"], check=False)
            # replace = change in place when the qdisc exists, so queues are not rebuilt
            host.run(["tc", "qdisc", "replace", "dev", key[1], "root", "netem", *spec.words()])
            self._active[key] = (host, spec)

    def _limit_segmentation(self, limit: bool) -> None:
        """netem's rate charges a GSO super-packet (up to 64 KiB) as one packet: measured in the
        kernel VM, 10 Mbit/s gave 0.91-1.05 x the rate, erratically. With the endpoints sending
        single-segment packets (gso_max_segs 1) it gives 0.956 x, the wire-frame ceiling that
        linkem shows too. So segmentation is limited while a rate is set, and restored after."""
        if limit == (self._gso_default is not None):
            return
        if limit:
            self._gso_default = {}
            for host, iface in self.senders:
                details = host.run(["ip", "-d", "link", "show", "dev", iface]).stdout
                match = re.search(r"gso_max_segs (\d+)", details)
                self._gso_default[host.role] = match.group(1) if match else "65535"
                host.run(["ip", "link", "set", "dev", iface, "gso_max_segs", "1"])
        else:
            for host, iface in self.senders:
                host.run(["ip", "link", "set", "dev", iface, "gso_max_segs", self._gso_default[host.role]])
            self._gso_default = None

    def facts(self) -> dict:
        return {"gso_max_segs_1": self._gso_default is not None}

    def stats(self) -> dict:
        """Each active netem qdisc's counters (`tc -s -j qdisc show`) by direction, and whether
        its spec drops packets itself (loss: then its drop counter holds those too)."""
        out = {}
        for key, (host, spec) in self._active.items():
            shown = host.run(["tc", "-s", "-j", "qdisc", "show", "dev", key[1]], check=False)
            try:
                qdiscs = json.loads(shown.stdout)
            except ValueError:
                continue
            netem = next((q for q in qdiscs if isinstance(q, dict) and q.get("kind") == "netem"), None)
            if netem is not None:
                out[self._direction[key]] = {"packets": netem.get("packets"), "drops": netem.get("drops"),
                                             "backlog_packets": netem.get("qlen"),
                                             "loss_model": bool(spec.loss_pct or spec.gemodel)}
        return out

    def queue_drops(self, before: dict, after: dict) -> dict[str, int]:
        """netem counts a packet its loss model drops and one its queue limit drops alike: its
        drops are the queue's only where the spec has no loss model."""
        return {direction: n for direction, now in after.items() if not now.get("loss_model")
                and (n := _counter_delta(before.get(direction), now, "drops")) is not None}


# netem keeps these settings from an earlier spec on a change that does not mention them:
# tc sends each group's netlink attribute only when something in it is set. So dropping a
# group entirely needs a fresh qdisc; changing it is an ordinary in-place change.
STICKY_GROUPS = (
    ("delay_corr_pct", "loss_corr_pct", "duplicate_corr_pct"),  # TCA_NETEM_CORR
    ("distribution",),  # TCA_NETEM_DELAY_DIST
    ("gemodel",),  # TCA_NETEM_LOSS
    ("reorder_pct", "reorder_corr_pct"),  # TCA_NETEM_REORDER
    ("corrupt_pct", "corrupt_corr_pct"),  # TCA_NETEM_CORRUPT
    ("rate_bps",),  # TCA_NETEM_RATE
)


def _keeps_stale_settings(previous: NetemSpec, new: NetemSpec) -> bool:
    def has(spec, group):
        return any(getattr(spec, field) for field in group)
    return any(has(previous, group) and not has(new, group) for group in STICKY_GROUPS)


def _iface_of(testbed: Testbed, role: str) -> str:
    for link in testbed.links:
        if link.a == role:
            return link.a_iface
        if link.b == role:
            return link.b_iface
    raise KeyError(role)


class LinkemBackend(ImpairmentBackend):
    """linkem bridges the two halves of the bumped link; specs change over its stdin."""

    name = "linkem"
    needs_bump = True
    testbeds = ("local",)

    @classmethod
    def default_limit(cls, spec: dict) -> int | None:
        """netem's default `limit 1000` counts the frames on its delay line, so `delay 40ms` alone
        caps a per-packet flow (a tunnel's UDP underlay) at 1000 frames per 40 ms. linkem's default
        holds the delay line: without a rate, netem's 1000 frames plus the delay line at 10 Gbit/s;
        with a rate, twice the rate's bandwidth-delay product (at least 1000)."""
        hold_s = ((spec.get("delay_us") or 0) + (spec.get("jitter_us") or 0)) / 1e6
        rate_bps = spec.get("rate_bps") or 0
        if not rate_bps:
            limit = NETEM_DEFAULT_LIMIT + math.ceil(LINE_RATE_BPS / 8 * hold_s / FRAME_BYTES)
        else:
            limit = max(math.ceil(2 * rate_bps / 8 * hold_s / FRAME_BYTES), NETEM_DEFAULT_LIMIT)
        return min(limit, MAX_DEFAULT_LIMIT)

    @classmethod
    def unavailable(cls, probe) -> str | None:
        return None if linkem_binary() else "linkem is not built (run `make`, or set VPNBENCH_LINKEM)"

    @classmethod
    def create(cls, testbed: Testbed) -> "LinkemBackend":
        return cls(testbed, linkem_binary())

    def __init__(self, testbed: Testbed, binary: str):
        bump = testbed.bump_point()
        if bump is None:
            raise ImpairmentError("linkem needs a testbed built with a bump")
        self.host, self.a, self.b = bump
        self.binary = binary
        self.proc = None

    def start(self) -> None:
        # While a direction's spec is empty linkem forwards in the kernel (a tcx redirect at a
        # bridge's speed); bench/linkem measures both paths side by side.
        self.proc = self.host.spawn([self.binary, "--a", self.a, "--b", self.b], name="linkem", interactive=True)
        line = self.proc.read_line(10)
        if line.strip() != "ready":
            raise ImpairmentError(f"linkem did not start: {line} {self.proc.output().strip()[-300:]}")

    def placement_of(self, impairment: Impairment) -> str:
        """The bump sits on the link next to the server, whatever was asked. linkem cannot sit on
        a host's egress: it bridges two interfaces of its own namespace and is no qdisc in the
        sender's stack. For "endpoints" (each host's egress: vpn-bench's profiles since Dec 2025)
        it is the closest equivalent there is: on a path of two hosts a packet meets exactly one
        egress impairment per direction either way, the client's spec (a2b) going to the server
        and the server's (b2a) coming back, so each direction's delay, jitter, loss and
        reordering are drawn from the same numbers. What differs is only where the queue is: in
        the sending host's stack for a host's netem, on the wire for linkem, as on a router.
        Recorded as "link"."""
        return "link"

    def _set(self, direction: str, spec: NetemSpec) -> None:
        reply = self.proc.request(f"set {direction} {spec}".rstrip())
        if reply != "ok":
            raise ImpairmentError(f"linkem refused '{spec}': {reply}")

    def apply(self, impairment: Impairment) -> None:
        self._set("a2b", impairment.egress)  # a faces the client: a2b is client -> server
        self._set("b2a", impairment.ingress)

    def stats(self) -> dict:
        try:
            return json.loads(self.proc.request("stats"))
        except (OSError, ValueError, TimeoutError, EOFError):
            return {}

    def queue_drops(self, before: dict, after: dict) -> dict[str, int]:
        """linkem counts its queue limit's drops apart from its loss model's (dropped_limit)."""
        directions = {"egress": "a2b", "ingress": "b2a"}  # a faces the client
        return {direction: n for direction, key in directions.items()
                if (n := _counter_delta(before.get(key), after.get(key), "dropped_limit")) is not None}

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.alive()


def _counter_delta(before: dict | None, after: dict | None, name: str) -> int | None:
    """after[name] - before[name]; None when either is missing or the counter went back (the
    qdisc or linkem was replaced between the reads)."""
    old, new = (before or {}).get(name), (after or {}).get(name)
    if not isinstance(old, int) or not isinstance(new, int) or new < old:
        return None
    return new - old


def choose_backend(asked: str, testbed_kind: str, probe) -> str:
    """The backend a campaign's impairments run on: the one asked for, or (auto) the first
    registered one that may run on this testbed kind and is available; UserError naming why not."""
    reasons = []
    for name in [*BACKENDS] if asked == "auto" else [asked]:
        missing = BACKENDS[name].unavailable(probe)
        reason = wrong_kind(name, testbed_kind) or (missing and f"{name!r} is not available: {missing}")
        if not reason:
            return name
        reasons.append(reason)
    if asked != "auto":
        raise UserError(f"impairment.backend: {reasons[0]}; allowed here: {allowed_here(testbed_kind, asked)}")
    raise UserError("impairment.backend: no backend can run here (" + "; ".join(reasons) + ")")


for built_in in (NetemBackend, LinkemBackend):  # auto tries them in this order
    register(built_in)
