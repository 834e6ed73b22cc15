"""Warnings about how a study was measured, from its export-shaped cell records.

Each check reads the cells (keys as `vpnbench export --format json` writes them) and says,
in one sentence per finding, where the numbers may describe something other than the
technique: the generator, a rate limit, a saturated core, a backend that was not the one
asked, one direction only, or a queue too short for the path. Pure: no I/O.
"""

import dataclasses
import math
import re
import statistics
from collections.abc import Iterable

from vpnbench.impair.model import lossy
from vpnbench.measure import MEASUREMENTS
from vpnbench.techniques import is_reference
from vpnbench.testbeds.impair_backends import BACKENDS  # the built-in ones registered with it

SENDER_RECEIVER_GAP = 0.05  # share of the sender's rate
CEILING_MATCH = 0.03  # a tunnel within 3 % of the baseline's throughput
FLAT_CV = 0.005  # throughput varying less than 0.5 % across repetitions
# A tunnel at 85 % or more of an impairment's rate limit: the limit sets its figure (a tunnel's
# own headers take a few % of a shaped link, so it never matches the baseline there within 3 %)
LIMIT_SHARE = 0.85
BUSY_CORE_PCT = 95.0
PACKET_BYTES = 1500  # one MTU-sized packet per queue slot
MSS_BYTES = 1448  # one TCP segment
# TCP cells through a short queue retransmitting at most this share of their segments: the
# queue dropped none of them (a queue that limits TCP drops every round of window growth)
RETRANSMIT_SHARE = 1e-4
# A tail-drop queue that limits TCP fills at the peak of each window and TCP then backs off by at
# most half (Reno's beta 0.5; CUBIC's 0.7), so what sits in it on average is at least half its
# limit. Where the fastest cell through an impairment kept less than this share of the limit in
# the queue (throughput x the time a packet is held there), the queue never filled: the cells'
# losses were the impairment's own (its loss model), not the queue's.
QUEUE_FULL_SHARE = 0.5
# A tunnel adds work to every packet on the same link: carrying more than this many times the
# bare path's throughput is not the tunnel's speed but something the run did not hold still.
BEATS_BARE_PATH = 1.5


@dataclasses.dataclass(frozen=True)
class Ref:
    """Which cells a warning concerns; None fields mean "all" (an impairment's warning names only it)."""

    technique: str | None = None
    impairment: str | None = None
    measurement_label: str | None = None
    repetition: int | None = None


@dataclasses.dataclass(frozen=True)
class MethodologyWarning:
    # sender_receiver_gap, receiver_limited, same_ceiling_as_baseline, flat_throughput, offered_rate_reached,
    # core_saturated, softirq_bound, backend_substituted, one_direction, queue_below_bdp, window_below_bdp,
    # beats_bare_path, congestion_control_under_loss (not among methodology_warnings: the report
    # says it beside the figures)
    code: str
    concerns: tuple[Ref, ...]
    message: str  # one sentence


def methodology_warnings(cells: list[dict]) -> list[MethodologyWarning]:
    """Every check over the cells, in a fixed order; failed and skipped cells are not read."""
    ok = [cell for cell in cells if cell.get("status") == "ok"]
    return [*sender_receiver_gap(ok), *receiver_limited(ok), *ceilings(ok), *busy_cores(ok),
            *backend_substituted(ok), *one_direction(ok), *queue_below_bdp(ok), *fragmentation(ok),
            *beats_bare_path(ok)]


def _groups(cells: Iterable[dict]) -> dict[tuple[str, str, str], list[dict]]:
    out: dict[tuple[str, str, str], list[dict]] = {}
    for cell in cells:
        out.setdefault((cell["technique"], cell["impairment"], cell["measurement_label"]), []).append(cell)
    return out


def _refs(cells: Iterable[dict]) -> tuple[Ref, ...]:
    return tuple(Ref(c["technique"], c["impairment"], c["measurement_label"], c.get("repetition")) for c in cells)


def _metric(cell: dict, name: str) -> float | None:
    value = (cell.get("metrics") or {}).get(name)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _where(key: tuple[str, str, str]) -> str:
    technique, impairment, label = key
    return f"{label} over {technique} ({impairment})"


def rate_text(bps: float) -> str:
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if abs(bps) >= scale:
            return f"{bps / scale:.3g} {unit}"
    return f"{bps:.3g} bit/s"


def sender_receiver_gap(cells: list[dict], limit: float = SENDER_RECEIVER_GAP) -> list[MethodologyWarning]:
    """Cells whose sender pushed more than `limit` above what the receiver got: the figure shown
    is the receiver's (throughput_bps), and the gap is data lost or still in flight at the end.
    One finding per measurement: an impairment sweep gaps in most of its groups (S1's rehearsal
    printed 78 findings, one per technique × impairment), which a reader can only take in per
    measurement, with each technique's range."""
    found: dict[str, list[tuple[tuple[str, str, str], list[dict], list[dict]]]] = {}
    for key, group in _groups(cells).items():
        gapped = [c for c in group if _gap(c) is not None and _gap(c) > limit]
        if gapped:
            found.setdefault(key[2], []).append((key, group, gapped))
    out = []
    for label, groups in found.items():
        if len(groups) == 1:
            key, group, gapped = groups[0]
            sent = statistics.fmean(_metric(c, "sender_throughput_bps") for c in gapped)
            got = statistics.fmean(_metric(c, "throughput_bps") for c in gapped)
            message = (f"{_where(key)}: the sender sent {rate_text(sent)} but the receiver got {rate_text(got)} "
                       f"({1 - got / sent:.0%} less) in {len(gapped)} of {len(group)} repetitions; the receiver's "
                       "figure is the one reported.")
        else:
            message = _gaps_per_technique(label, groups, sum(len(g) for _, g, _ in groups))
        out.append(MethodologyWarning("sender_receiver_gap", _refs(c for _, _, gapped in groups for c in gapped),
                                      message))
    return out


def _gaps_per_technique(label: str, groups: list, cells: int) -> str:
    by_technique: dict[str, list[float]] = {}
    impairments: dict[str, set[str]] = {}
    for (technique, impairment, _), _, gapped in groups:
        by_technique.setdefault(technique, []).extend(_gap(c) for c in gapped)
        impairments.setdefault(technique, set()).add(impairment)
    parts = []
    for technique, gaps in by_technique.items():
        low, high = min(gaps), max(gaps)
        spread = f"{low:.0%}" if round(low, 2) == round(high, 2) else f"{low:.0%}–{high:.0%}"
        where = impairments_text(sorted(impairments[technique]))
        parts.append(f"{technique} {spread} less ({where})")
    gapped = sum(len(g) for _, _, g in groups)
    return (f"{label}: the receiver got more than {SENDER_RECEIVER_GAP:.0%} less than the sender sent in {gapped} "
            f"of {cells} cells — {'; '.join(parts)}; the receiver's figure is the one reported.")


LIMIT_GOALS = {"ndr": "NDR", "pdr": "PDR", "knee": "knee"}  # metrics `{goal}_limit_receiver` name these


def receiver_limited(cells: list[dict]) -> list[MethodologyWarning]:
    """A rate search's NDR/PDR or a sweep's knee whose loss happened at the receiving socket (the
    server's tunnel device got the packets, the receiving program did not read them): the
    receiver, not the technique, set the figure (seen here: a baseline's NDR of 187-467 Mbit/s on
    a busy 2-core machine). One finding per measurement."""
    by_label: dict[str, dict[str, list[dict]]] = {}
    for cell in cells:
        goals = [name for goal, name in LIMIT_GOALS.items() if _metric(cell, f"{goal}_limit_receiver")]
        for name in goals:
            by_label.setdefault(cell["measurement_label"], {}).setdefault(name, []).append(cell)
    out = []
    for label, goals in by_label.items():
        hit = list({id(c): c for found in goals.values() for c in found}.values())
        where = sorted({f"{c['technique']}" + (f" ({c['impairment']})" if c["impairment"] != "none" else "")
                        for c in hit})
        out.append(MethodologyWarning("receiver_limited", _refs(hit), (
            f"{label}: the {' and '.join(goals)} of {', '.join(where)} met the receiving socket's limit (the packets "
            "reached the server's tunnel device, the receiving program did not read them all): the receiver, not "
            "the technique, set the figure; use vpnbench-gen (tool = \"gen\") or pin the receiver to its own core.")))
    return out


def _gap(cell: dict) -> float | None:
    sent, got = _metric(cell, "sender_throughput_bps"), _metric(cell, "throughput_bps")
    return None if not sent or got is None else (sent - got) / sent


def ceilings(cells: list[dict], match: float = CEILING_MATCH, flat_cv: float = FLAT_CV) -> list[MethodologyWarning]:
    """Throughput that a limit outside the technique may have set: a tunnel within `match` of
    the baseline under the same impairment and measurement (encryption costs something; equal
    figures suggest both hit the same ceiling), or repetitions that vary less than `flat_cv`
    (a shaper or the generator's own rate gives that; a real data path wobbles). Groups that
    delivered a UDP measurement's offered rate get one warning per measurement instead: they
    show the technique keeps up at that rate, not what it can carry. Where the impairment sets a
    rate the warning says so: a tunnel that matches the baseline there compares the link's limit,
    not the techniques (the impairment was asked for, the conclusion "costs nothing" was not)."""
    groups = {key: group for key, group in _groups(cells).items() if _throughputs(group)}
    offered = {key: group for key, group in groups.items() if _at_offered_rate(group, match)}
    baselines = {(key[1], key[2]): _throughputs(group) for key, group in groups.items() if _is_baseline(group)}
    hits: dict[str, list[_Hit]] = {"same_ceiling_as_baseline": [], "rate_limit_reached": [], "flat_throughput": []}
    for key, group in groups.items():
        if key in offered:
            continue
        values, base = _throughputs(group), baselines.get((key[1], key[2]))
        mean = statistics.fmean(values)
        # A baseline that moved nothing is no ceiling to compare with (and no divisor).
        base_mean = statistics.fmean(base) if base else 0.0
        limit = _rate_limited(group[0])
        if base_mean > 0 and not _is_baseline(group) and abs(mean / base_mean - 1) <= match:
            cause = (f"the impairment's rate limit ({rate_text(limit)}) is what is measured, not the tunnel"
                     if limit else "a rate limit or the traffic generator may be what is measured, not the tunnel")
            hits["same_ceiling_as_baseline"].append(_Hit(key, group, (
                f"{_where(key)} reaches {rate_text(mean)}, within {match:.0%} of the baseline's "
                f"{rate_text(base_mean)}: {cause}."), mean, bool(limit)))
        elif limit and not _is_baseline(group) and mean >= LIMIT_SHARE * limit:
            hits["rate_limit_reached"].append(_Hit(key, group, (
                f"{_where(key)} reaches {rate_text(mean)}, {mean / limit * 100:.0f} % of the impairment's rate limit "
                f"({rate_text(limit)}): the limit is what is measured, not the tunnel; its headers alone make it "
                "a few % slower than the baseline there."), mean / limit * 100))
        if not limit and len(values) >= 3 and statistics.stdev(values) < flat_cv * abs(mean):
            hits["flat_throughput"].append(_Hit(key, group, (
                f"{_where(key)} varies less than {flat_cv:.1%} over {len(values)} repetitions at "
                f"{rate_text(mean)}: a rate limit or the traffic generator may be what is measured."), mean))

    def same_ceiling(label: str, found: list[_Hit]) -> str:
        limited = {hit.limited for hit in found}
        cause = ("the impairments' rate limits are what is measured, not the tunnel" if limited == {True} else
                 "a rate limit or the traffic generator may be what is measured, not the tunnel" if limited == {False}
                 else "the impairment's rate limit where it sets one, else a rate limit or the traffic generator, "
                      "may be what is measured, not the tunnel")
        return (f"{label}: {_cells_text(found)} reach within {match:.0%} of the baseline's throughput under the same "
                f"impairment ({_span([hit.value for hit in found], rate_text)}): {cause}.")

    def limit_reached(label: str, found: list[_Hit]) -> str:
        shares = _span([hit.value for hit in found], lambda share: f"{share:.0f}")
        return (f"{label}: {_cells_text(found)} reach {shares} % of the impairments' rate limits: the limit is what is "
                "measured, not the tunnel; a tunnel's headers alone make it a few % slower than the baseline there.")

    def flat(label: str, found: list[_Hit]) -> str:
        return (f"{label}: {_cells_text(found)} vary less than {flat_cv:.1%} over their repetitions "
                f"({_span([hit.value for hit in found], rate_text)}): a rate limit or the traffic generator may be "
                "what is measured.")

    return [*_offered_rate_reached(offered),
            *_one_per_measurement("same_ceiling_as_baseline", hits["same_ceiling_as_baseline"], same_ceiling),
            *_one_per_measurement("rate_limit_reached", hits["rate_limit_reached"], limit_reached),
            *_one_per_measurement("flat_throughput", hits["flat_throughput"], flat)]


@dataclasses.dataclass
class _Hit:
    """One group of cells (technique × impairment × measurement) a check found."""

    key: tuple[str, str, str]
    cells: list[dict]  # the cells it concerns
    message: str  # the finding's sentence when it is its measurement's only one
    value: float = 0.0  # what a sentence for several groups gives the range of
    limited: bool = False  # the impairment sets a rate
    place: tuple[str, str] = ("", "")  # (host or "machine", core number or "softirq") a busy-core finding names


def _one_per_measurement(code: str, hits: list[_Hit], several) -> list[MethodologyWarning]:
    """One finding per measurement label: a hit's own sentence when it is the label's only one,
    else several(label, hits) naming them compactly (a 7-point delay sweep gave 35 findings, one
    per technique × impairment, that a reader can only take in per measurement)."""
    by_label: dict[str, list[_Hit]] = {}
    for hit in hits:
        by_label.setdefault(hit.key[2], []).append(hit)
    return [MethodologyWarning(code, _refs({id(c): c for hit in found for c in hit.cells}.values()),
                               found[0].message if len(found) == 1 else several(label, found))
            for label, found in by_label.items()]


def _span(values: list[float], text) -> str:
    """'a' or 'a–b' of the values, each as text gives it."""
    low, high = text(min(values)), text(max(values))
    return low if low == high else f"{low}–{high}"


NUMBERED = re.compile(r"^(?P<what>.*\S)\s+(?P<number>\d+(?:\.\d+)?)(?P<unit>[a-z%]*)$")


def impairments_text(names: Iterable[str]) -> str:
    """Impairments named compactly: a sweep's points as one range ('delay 10–100 ms', 'loss 0–5 %'),
    "none" as "no impairment", any other name as it is."""
    sweeps: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for name in dict.fromkeys(names):
        found = NUMBERED.match(name)
        key = (found["what"], found["unit"]) if found else (name, "")
        sweeps.setdefault(key, []).append((float(found["number"]) if found else 0.0, name))
    parts = []
    for (what, unit), points in sweeps.items():
        if len(points) == 1:
            parts.append("no impairment" if points[0][1] == "none" else points[0][1])
        else:
            parts.append(f"{what} {_span([number for number, _ in points], lambda n: f'{n:g}')} {unit}".rstrip())
    return ", ".join(parts)


def _cells_text(found: list[_Hit]) -> str:
    """'wireguard, ipsec at delay 10–100 ms; openvpn at no impairment (14 cells)': the techniques
    that share a set of impairments together."""
    impairments: dict[str, list[str]] = {}
    for hit in found:
        impairments.setdefault(hit.key[0], []).append(hit.key[1])
    techniques: dict[str, list[str]] = {}
    for technique, names in impairments.items():
        techniques.setdefault(impairments_text(names), []).append(technique)
    cells = len({id(c) for hit in found for c in hit.cells})
    return "; ".join(f"{', '.join(names)} at {where}" for where, names in techniques.items()) + f" ({cells} cells)"


def _offered_rate_reached(offered: dict[tuple[str, str, str], list[dict]]) -> list[MethodologyWarning]:
    by_label: dict[str, list[tuple[str, str, str]]] = {}
    for key in offered:
        by_label.setdefault(key[2], []).append(key)
    out = []
    for label, keys in by_label.items():
        rate = offered[keys[0]][0]["measurement_params"]["rate"]
        techniques = list(dict.fromkeys(key[0] for key in keys))
        they = "they keep" if len(techniques) > 1 else "it keeps"
        out.append(MethodologyWarning("offered_rate_reached", tuple(r for k in keys for r in _refs(offered[k])), (
            f"{label}: {', '.join(techniques)} delivered the offered {rate_text(rate)}; this shows {they} up at "
            "that rate, not what it can carry.")))
    return out


def _at_offered_rate(group: list[dict], match: float) -> bool:
    rate = (group[0].get("measurement_params") or {}).get("rate")
    ok = isinstance(rate, (int, float)) and rate > 0
    return ok and abs(statistics.fmean(_throughputs(group)) / rate - 1) <= match


def _is_baseline(group: list[dict]) -> bool:
    return is_reference(group[0].get("technique_params") or {})


def _throughputs(group: list[dict]) -> list[float]:
    return [v for v in (_metric(c, "throughput_bps") for c in group) if v is not None]


def _rate_limited(cell: dict) -> float | None:
    """The lowest rate the cell's impairment sets, in bit/s, or None."""
    params = cell.get("impairment_params") or {}
    rates = [(params.get(side) or {}).get("rate_bps") for side in ("egress_spec", "ingress_spec")]
    return min((r for r in rates if r), default=None)


def busy_cores(cells: list[dict], busy: float = BUSY_CORE_PCT) -> list[MethodologyWarning]:
    """A core at or above `busy` % on either host, or softirq work amounting to that much of one
    core (cpu_softirq_pct is a share of all the host's cores, so × their number gives cores'
    worth; a flow's packets are handled on one core): the CPU may set the figure. Hosts whose
    cores are not pinned (cpu_pinned false, the netns default) all watch the same cores, so
    their findings are told once, as the machine's. One finding per check and measurement
    (the 18-cell demo told 10 busy cores, one per group and core)."""
    hits: dict[str, list[_Hit]] = {"core_saturated": [], "softirq_bound": []}
    for key, group in _groups(cells).items():
        found: dict[tuple[str, str], dict[int, dict]] = {}
        for cell in group:
            hosts = cell.get("hosts") or {}
            # A core a pinned host owns is told by that host, not again as the machine's.
            owned = {str(core) for facts in hosts.values() if facts.get("cpu_pinned", True)
                     for core in facts.get("cores") or []}
            for host, facts in hosts.items():
                pinned = facts.get("cpu_pinned", True)
                for what in _saturation(facts, busy):
                    if pinned or what == "softirq" or what not in owned:
                        found.setdefault((host if pinned else "machine", what), {})[id(cell)] = cell
        for (where, what), hit in found.items():
            detail = ("softirq work filled a core" if what == "softirq" else f"core {what} was at least {busy:g} % busy")
            place = "machine (its hosts share the cores)" if where == "machine" else where
            hits["softirq_bound" if what == "softirq" else "core_saturated"].append(_Hit(key, list(hit.values()), (
                f"{_where(key)}: on the {place} {detail} in {len(hit)} of {len(group)} repetitions; "
                "the CPU, not the network, may set the figure."), place=(where, what)))

    def several(label: str, found: list[_Hit]) -> str:
        places = list(dict.fromkeys(hit.place for hit in found))
        named = ", ".join(f"the {where}'s" + ("" if what == "softirq" else f" core {what}") for where, what in places)
        shared = " (its hosts share the cores)" if any(where == "machine" for where, _ in places) else ""
        detail = ("softirq work filled a core" if places[0][1] == "softirq"
                  else f"a core was at least {busy:g} % busy")
        return f"{label}: {detail} on {named}{shared} in {_cells_text(found)}; the CPU, not the network, may set the figure."

    return [*_one_per_measurement("core_saturated", hits["core_saturated"], several),
            *_one_per_measurement("softirq_bound", hits["softirq_bound"], several)]


def _saturation(facts: dict, busy: float) -> list[str]:
    per_core = facts.get("cpu_per_core_pct") or []
    cores = facts.get("cores") or list(range(len(per_core)))
    found = [str(core) for core, pct in zip(cores, per_core) if isinstance(pct, (int, float)) and pct >= busy]
    softirq = facts.get("cpu_softirq_pct")
    if isinstance(softirq, (int, float)) and cores and softirq * len(cores) >= busy:
        found.append("softirq")
    return found


def backend_substituted(cells: list[dict]) -> list[MethodologyWarning]:
    """The backend that ran (technique_params.backend) is not the one asked (backend_asked,
    where recorded and not "auto")."""
    out = []
    for key, group in _groups(cells).items():
        params = group[0].get("technique_params") or {}
        asked, ran = params.get("backend_asked"), params.get("backend")
        if asked and asked != "auto" and ran and ran != asked:
            out.append(MethodologyWarning("backend_substituted", (Ref(technique=key[0]),), (
                f"{key[0]} ran on the {ran} backend, not the {asked} one asked for: its figures describe {ran}.")))
    return list({w.concerns: w for w in out}.values())


def one_direction(cells: list[dict]) -> list[MethodologyWarning]:
    """A measurement kind with a `reverse` parameter measured in one direction only: the
    receiver's side is often the busier one (S1), so one direction can hide the bottleneck."""
    directions: dict[str, set[bool]] = {}
    for cell in cells:
        params = cell.get("measurement_params") or {}
        if "reverse" in params:
            directions.setdefault(cell["measurement"], set()).add(bool(params["reverse"]))
    out = []
    for kind, seen in directions.items():
        if len(seen) == 1:
            way = "server to client" if True in seen else "client to server"
            missing = "false" if True in seen else "true"
            concerns = tuple(sorted({Ref(measurement_label=c["measurement_label"]) for c in cells
                                     if c["measurement"] == kind}, key=lambda r: r.measurement_label))
            out.append(MethodologyWarning("one_direction", concerns, (
                f"{kind} was measured from {way} only; add a {kind} measurement with reverse = {missing} "
                "to see the other side's bottleneck.")))
    return out


IP_HEADER_BYTES = {"ipv4": 28, "ipv6": 48}  # IP + UDP headers around a datagram's payload


def fragmentation(cells: list[dict]) -> list[MethodologyWarning]:
    """UDP datagrams larger than the tunnel interface's MTU allows: they are fragmented inside
    the tunnel (S1 saw it with 1400-byte datagrams and sent 1300), so the measurement counts
    fragment reassembly and the loss of either fragment, not the technique's packet path."""
    out, seen = [], set()
    for cell in cells:
        params, tunnel = cell.get("measurement_params") or {}, cell.get("tunnel") or {}
        length, mtu = params.get("length"), tunnel.get("interface_mtu")
        if not isinstance(length, int) or not isinstance(mtu, int):
            continue
        packet = length + IP_HEADER_BYTES.get(params.get("family", "ipv4"), 28)
        key = (cell["technique"], cell["measurement_label"])
        if packet > mtu and key not in seen:
            seen.add(key)
            out.append(MethodologyWarning("fragmentation", (Ref(cell["technique"], None, cell["measurement_label"]),), (
                f"{cell['measurement_label']} over {cell['technique']}: {length}-byte datagrams make {packet}-byte "
                f"packets, above the tunnel interface's MTU of {mtu} ({tunnel.get('interface')}): they are "
                f"fragmented, so fragments, not packets, are measured; use length = {mtu - (packet - length)} or less.")))
    return out


def queue_below_bdp(cells: list[dict], packet_bytes: int = PACKET_BYTES) -> list[MethodologyWarning]:
    """An impairment whose queue limit (netem's default 1000 packets unless given) holds fewer
    packets than the path's bandwidth × (delay + jitter) in that direction: the queue drops what
    is in flight and TCP stays far below the path's rate (measured here: netem's limit 1000 held
    one stream through delay 40ms to 0.50-0.64 Gbit/s, against 4.7-5.0 Gbit/s with limit 100000).
    The bandwidth is the impairment's rate where set, else the highest throughput measured in
    these cells. linkem's default limit holds the delay line (LinkemBackend.default_limit), so it is
    rarely short. Where the TCP cells through the impairment retransmitted (next to) nothing, the
    queue dropped none of their segments: the TCP window, not the queue, was the lower limit,
    and the warning (window_below_bdp) names it instead. Nor is the queue named where it never
    filled: where the fastest cell through the impairment kept fewer packets in it than
    QUEUE_FULL_SHARE of the limit (TCP at 50 Mbit/s through 1 % loss and 20 ms: 83 packets
    against 1000), or where the emulator itself counted no drop at its queue limit (linkem's
    dropped_limit, netem's drops without a loss model: the cells' impairment_queue_drops_<direction>)."""
    capacity = max((v for c in cells if (v := _metric(c, "throughput_bps")) is not None), default=0.0)
    out, seen = [], set()
    for cell in cells:
        params = cell.get("impairment_params") or {}
        if cell["impairment"] in seen or not params:
            continue
        seen.add(cell["impairment"])
        through = [c for c in cells if c["impairment"] == cell["impairment"]]
        window = _window_in_flight(through, params)
        measured = max((v for c in through if (v := _metric(c, "throughput_bps")) is not None), default=None)
        sides = ("egress_spec", "ingress_spec")
        if params.get("egress_spec") == params.get("ingress_spec"):
            sides = ("egress_spec",)  # one finding for both directions
        for side in sides:
            directions = ("egress", "ingress") if len(sides) == 1 else (side.removesuffix("_spec"),)
            seen_through = QueueSeen(measured, _queue_drops(through, directions))
            finding = _queue_finding(params, side, capacity, packet_bytes, window, seen_through)
            if finding:
                code, text = finding
                way = "both directions" if len(sides) == 1 else side.removesuffix("_spec")
                out.append(MethodologyWarning(code, (Ref(impairment=cell["impairment"]),),
                                              f"impairment {cell['impairment']!r}, {way}: {text}"))
    return out


def _window_in_flight(cells: list[dict], params: dict) -> tuple[float, float] | None:
    """(throughput, round trip in s) of the fastest TCP cell through an impairment when none of
    its TCP cells retransmitted more than RETRANSMIT_SHARE of their segments (the queue dropped
    nothing they felt, so their window held them back); None when any did or none reports it."""
    tcp = [c for c in cells if c.get("measurement") == "tcp"]
    rtt_s = sum(((params.get(side) or {}).get("delay_us") or 0) for side in ("egress_spec", "ingress_spec")) / 1e6
    if not tcp or rtt_s <= 0:
        return None
    for c in tcp:
        retransmits, received = _metric(c, "retransmits"), _metric(c, "bytes_received")
        if retransmits is None or retransmits > RETRANSMIT_SHARE * (received or 0) / MSS_BYTES:
            return None
    best = max((v for c in tcp if (v := _metric(c, "throughput_bps")) is not None), default=0.0)
    return (best, rtt_s) if best > 0 else None


@dataclasses.dataclass(frozen=True)
class QueueSeen:
    """What went through an impairment's queue: the fastest throughput of its cells (None where
    none reports one), and the drops its emulator counted at the queue limit (None where it
    cannot tell, e.g. netem with a loss model, whose drop counter holds both)."""

    throughput_bps: float | None
    drops: int | None


def _queue_drops(cells: list[dict], directions: tuple[str, ...]) -> int | None:
    """The queue-limit drops the emulator counted over these cells in these directions, or None
    when any cell does not record them."""
    total = 0
    for c in cells:
        for direction in directions:
            value = _metric(c, f"impairment_queue_drops_{direction}")
            if value is None:
                return None
            total += int(value)
    return total


def _queue_finding(params: dict, side: str, capacity: float, packet_bytes: int,
                   window: tuple[float, float] | None, seen: QueueSeen) -> tuple[str, str] | None:
    spec = params.get(side) or {}
    hold_s = ((spec.get("delay_us") or 0) + (spec.get("jitter_us") or 0)) / 1e6
    rate = spec.get("rate_bps") or 0
    backend = params.get("backend_used") or params.get("backend")
    # What the backend queues without a limit: its registry entry (netem's for an older file's "auto").
    declared = BACKENDS.get(backend) or BACKENDS["netem"]
    limit = spec.get("limit")
    if limit is None:
        limit = declared.default_limit(spec)
    if hold_s <= 0 or limit is None:
        return None
    bandwidth = min(rate, capacity) if rate and capacity else rate or capacity
    needed = math.ceil(bandwidth * hold_s / 8 / packet_bytes)
    if bandwidth <= 0 or limit >= needed:
        return None
    given = f"{declared.name}'s default" if spec.get("limit") is None else "the"
    if window:
        reached, rtt_s = window
        return "window_below_bdp", (
            f"TCP's window, not the queue, is the lower limit: the TCP cells through it retransmitted "
            f"(next to) nothing, so {given} queue limit of {limit} packets dropped none of their segments; "
            f"the fastest reached {rate_text(reached)}, {reached * rtt_s / 8 / 1e6:.1f} MB in flight over the "
            f"{rtt_s * 1e3:g} ms round trip, which is its window (socket buffers: tcp_rmem/tcp_wmem or the "
            f"measurement's window); filling {rate_text(bandwidth)} needs a larger window, then a queue limit "
            f"of at least {needed}.")
    if seen.drops == 0:
        return None  # the emulator counted no drop at its queue limit
    queued = (seen.throughput_bps or 0.0) * hold_s / 8 / packet_bytes
    if seen.drops is None and seen.throughput_bps and queued < QUEUE_FULL_SHARE * limit:
        return None  # the queue never filled: the losses were the impairment's own
    counted = f" ({declared.name} counted {seen.drops} packets dropped at the queue limit)" if seen.drops else ""
    cap = limit * packet_bytes * 8 / hold_s
    return "queue_below_bdp", (
        f"{given} queue limit of {limit} packets is below the {needed} packets of {packet_bytes} B in "
        f"flight at {rate_text(bandwidth)} × {hold_s * 1e3:g} ms, so the queue, not the delay, limits "
        f"throughput (to about {rate_text(cap)} with {packet_bytes} B packets, more where GSO packs "
        f"several in one){counted}; set limit to at least {needed}.")


def beats_bare_path(cells: list[dict], factor: float = BEATS_BARE_PATH) -> list[MethodologyWarning]:
    """A tunnel whose mean throughput is more than `factor` times the baseline's (the bare path)
    under the same impairment and measurement: what should be impossible, said where it shows.
    Seen with the mesh profiles' TCP (issue 40, item 10): a 2 s flow at 100-130 ms round trips
    lives 15-20 round trips, so under 2.5 % loss one retransmission timeout (200 ms and more)
    decides its figure: the same baseline cell under mesh-high spanned 2.8-24.2 Mbit/s over 10
    runs with linkem here (wireguard-go 6.7-41.3), and no tunnel kept ahead of it over repetitions,
    nor with netem in the kernel VM. One finding per measurement, naming each tunnel, impairment and n."""
    groups = _groups(cells)
    bare = {(impairment, label): group for (_, impairment, label), group in groups.items() if _is_baseline(group)}
    found: dict[str, list[tuple[str, str, float, float, int, int]]] = {}
    for (technique, impairment, label), group in groups.items():
        reference = bare.get((impairment, label))
        if reference is None or _is_baseline(group):
            continue
        tunnel, plain = _throughputs(group), _throughputs(reference)
        if tunnel and plain and statistics.fmean(plain) > 0 and statistics.fmean(tunnel) > factor * statistics.fmean(plain):
            found.setdefault(label, []).append((technique, impairment, statistics.fmean(tunnel),
                                                statistics.fmean(plain), len(tunnel), len(plain)))
    out = []
    for label, hits in found.items():
        said = "; ".join(f"{technique} ({impairment}) {rate_text(mean)} vs the baseline's {rate_text(plain)}, "
                         f"n = {n} and {n_plain}" for technique, impairment, mean, plain, n, n_plain in hits)
        refs = _refs(c for technique, impairment, *_ in hits for c in groups[(technique, impairment, label)])
        out.append(MethodologyWarning("beats_bare_path", refs, (
            f"{label}: a tunnel carried more than {factor:g}× the bare path on the same link ({said}). A "
            "tunnel adds work to every packet, so this is not its speed: under loss and jitter a short "
            "flow's figure is decided by its few retransmission timeouts and varies several-fold between "
            "repetitions; read a difference only with n >= 3 and longer runs.")))
    return out


def congestion_control_under_loss(cells: list[dict]) -> list[MethodologyWarning]:
    """TCP under an impairment that drops packets measures the congestion control as much as the
    technique: bbr barely slows for random loss (S1's rehearsal here: WireGuard 217 -> 217 Mbit/s
    through 5 % loss) where a loss-based control (cubic, reno: S1's Raspberry Pi default) falls by
    an order of magnitude. One note per measurement, naming the control each technique ran with;
    the report prints it beside that measurement's figures (not among the warnings: it is what the
    figures assume, not a fault in them)."""
    by_label: dict[str, list[dict]] = {}
    for cell in cells:
        if "congestion_control" in _captions(cell.get("measurement")) and lossy(cell):
            by_label.setdefault(cell["measurement_label"], []).append(cell)
    out = []
    for label, found in by_label.items():
        controls: dict[str, set[str]] = {}
        for cell in found:
            control = (cell.get("technique_params") or {}).get("congestion_control") or "not recorded"
            controls.setdefault(control, set()).add(cell["technique"])
        said = "; ".join(f"{control} ({', '.join(sorted(techniques))})" for control, techniques in controls.items())
        impairments = ", ".join(sorted({c["impairment"] for c in found}))
        out.append(MethodologyWarning("congestion_control_under_loss", _refs(found), (
            f"{label} under loss ({impairments}): TCP's congestion control was {said}; a loss-based control "
            "(cubic, reno) falls far more under loss than bbr, so these figures hold for that control only.")))
    return out


def _captions(kind: str | None) -> tuple[str, ...]:
    """What a measurement kind declares is said beside its figures (Measurement.captions)."""
    return MEASUREMENTS[kind].captions if kind in MEASUREMENTS else ()
