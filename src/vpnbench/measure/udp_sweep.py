"""A UDP rate sweep (S1): one iperf3 test per offered rate, to find where a technique stops
keeping up. Each step is a Trial; the sender's and the receiver's view are both kept, because
S1 saw WireGuard and OpenVPN keep *sending* at the target while the receiver dropped. Both
ends' tunnel device counters around each step say where a step's loss happened, so the knee
says which limit it met (path, tunnel device, receiving socket, generator).

CPU per step: iperf3's own process CPU on both ends (its end.cpu_utilization_percent) is in
each trial's data; the hosts' whole CPU is the monitor's time series over the cell, which the
steps' start and end times (trial data) slice.
"""

import time
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from vpnbench.foundation.errors import MeasurementError
from vpnbench.foundation.params import Duration, Family, Params
from vpnbench.foundation.units import format_rate, parse_rate_list
from vpnbench.measure.base import CPU_FIGURES, Column, Headline, MeasureContext, Measurement, MeasureResult
from vpnbench.measure.generators import (
    LOSS_SITES,
    SPLIT_NAMES,
    counter_comparison,
    dominant_site,
    interface_counters,
    limit_text,
    loss_split,
    lost_at,
)
from vpnbench.measure.iperf import run_iperf
from vpnbench.measure.pacing import sending_tolerance
from vpnbench.measure.udp import udp_metrics
from vpnbench.store.records import Trial

RateList = Annotated[list[int], BeforeValidator(parse_rate_list)]


class UdpSweepParams(Params):
    kind: Literal["udp_sweep"] = "udp_sweep"
    rate: RateList = Field(default_factory=lambda: parse_rate_list("25M..400M step 25M"))
    length: int = Field(1300, ge=16, le=65507)  # datagram payload bytes
    duration: Duration = 5.0  # per step
    max_loss: float = Field(0.01, ge=0.0, le=1.0)  # loss ratio a step may have and still keep up
    family: Family = "ipv4"


class UdpSweep(Measurement):
    kind = "udp_sweep"
    Params = UdpSweepParams
    tools = ("iperf3", "ip")
    packages = {"iperf3": "iperf3", "ip": "iproute2"}
    server_tools = ("iperf3", "ss", "ip")
    columns = (Column("knee_bps", "knee Mbit/s", 1e-6), Column("max_received_bps", "max recv Mbit/s", 1e-6),
               Column("top_sent_bps", "top sent Mbit/s", 1e-6), Column("top_received_bps", "top recv Mbit/s", 1e-6),
               Column("top_loss_pct", "top loss %"))
    headline = Headline(("knee_bps", "max_received_bps"), "UDP sweep (Mbit/s)", 1e-6, log=True,
                        names=("knee", "max received"))
    figures = ("headline", "received_vs_offered", "rtt_cdf", "time_series", "host_cpu", *CPU_FIGURES)
    captions = ("outcome",)

    @classmethod
    def headline_text(cls, metrics: dict) -> str:
        knee = metrics.get("knee_bps")
        knee_text = f"knee {knee / 1e6:.0f} Mbit/s" if knee is not None else "no knee (first step did not keep up)"
        site = next((site for site in LOSS_SITES if metrics.get(f"knee_limit_{site}")), None)
        knee_text += limit_text(site, {k: int(metrics[f"knee_lost_{k}"]) for k in SPLIT_NAMES
                                       if f"knee_lost_{k}" in metrics})
        top = f"top step sent {metrics.get('top_sent_bps', 0) / 1e6:.0f} / received " \
              f"{metrics.get('top_received_bps', 0) / 1e6:.0f} Mbit/s"
        return f"{knee_text}, {top}"

    @classmethod
    def rehearsed(cls, params: Params, seconds: float, pings: int) -> Params:
        ends = sorted({params.rate[0], params.rate[-1]})
        return params.model_copy(update={"rate": ends, "duration": min(params.duration, seconds)})

    def expected_seconds(self) -> float:
        return len(self.params.rate) * (self.params.duration + 1.0)

    def run(self, ctx: MeasureContext) -> MeasureResult:
        p = self.params
        started = time.monotonic()
        raw: dict[str, str] = {}
        steps: list[Step] = []
        shape = {"length": p.length, "duration": p.duration}
        for number, rate in enumerate(p.rate, 1):
            step_start = time.monotonic() - started
            args = ["-u", "-b", str(rate), "-l", str(p.length), "-t", f"{p.duration:g}"]
            before = interface_counters(ctx, p.family)
            try:
                doc, step_raw = run_iperf(ctx, p.family, args, p.duration)
                step = Step(rate, udp_metrics(doc), _cpu(doc), **shape)
                step.count(before, interface_counters(ctx, p.family))
            except MeasurementError as exc:
                step_raw, step = exc.raw, Step(rate, {}, {}, error=str(exc), **shape)
            except (KeyError, TypeError) as exc:
                step = Step(rate, {}, {}, error=f"unexpected iperf3 UDP JSON: missing {exc}", **shape)
            step.start, step.end = step_start, time.monotonic() - started
            raw.update({f"step{number}_{name}": text for name, text in step_raw.items()})
            steps.append(step)
        if not any(s.ok for s in steps):
            raise MeasurementError(f"every step of the sweep failed; first: {steps[0].error}", raw)
        raw["sweep"] = describe(steps, p.max_loss)
        return MeasureResult(sweep_metrics(steps, p.max_loss), raw, series=sweep_series(steps),
                             trials=[s.trial(n, p.length, p.duration) for n, s in enumerate(steps, 1)])

    def default_label(self) -> str:
        rates = self.params.rate
        label = f"udp_sweep_{format_rate(rates[0])}-{format_rate(rates[-1])}_{self.params.length}"
        return label + ("_v6" if self.params.family == "ipv6" else "")


class Step:
    """One offered rate's outcome: udp_metrics' numbers, iperf3's CPU, or why it failed; length
    and duration are the step's datagram payload bytes and seconds (for sending_tolerance)."""

    def __init__(self, offered_bps: int, metrics: dict[str, float], cpu: dict[str, float], error: str | None = None,
                 *, length: int, duration: float):
        self.offered_bps = offered_bps
        self.metrics = metrics
        self.cpu = cpu
        self.error = error
        self.length, self.duration = length, duration
        self.tolerance = sending_tolerance(offered_bps, length, duration)
        self.start = self.end = 0.0
        self.interfaces: dict = {}
        self.loss_split: dict[str, int] | None = None

    def count(self, before: dict[str, int], after: dict[str, int]) -> None:
        """Both ends' tunnel device counters over the step, and where its loss happened."""
        m = self.metrics
        self.interfaces = counter_comparison(before, after, int(m["sent_packets"]), int(m["received_packets"]))
        self.loss_split = loss_split(self.interfaces) if self.loss_ratio else None

    @property
    def unsent(self) -> int:
        """Datagrams the sender fell short of the offered rate by, where it was short (sent_short)."""
        if not self.sent_short:
            return 0
        return round((self.offered_bps - self.metrics["sender_throughput_bps"]) * self.duration / (8 * self.length))

    @property
    def limit_split(self) -> dict[str, int] | None:
        """loss_split with the datagrams the generator did not send beside the lost ones."""
        if not self.unsent:
            return self.loss_split
        return {"generator": self.unsent, **(self.loss_split or {})}

    @property
    def loss_site(self) -> str | None:
        """The limit this step met (a LOSS_SITES key): of the datagrams it did not deliver, unsent
        (the generator) or lost (where, from the counters), the site of DOMINANT_LOSS_SHARE or
        more, else "mixed"; None when it delivered the offered rate."""
        return dominant_site(self.limit_split)

    @property
    def ok(self) -> bool:
        return self.error is None and "throughput_bps" in self.metrics

    @property
    def loss_ratio(self) -> float | None:
        loss = self.metrics.get("loss_pct")
        return None if loss is None else loss / 100.0

    @property
    def sent_short(self) -> bool:
        """The sender did not send the offered rate (beyond its pacing's own sending_tolerance)."""
        sent = self.metrics.get("sender_throughput_bps")
        return sent is not None and sent < (1 - self.tolerance) * self.offered_bps

    def keeps_up(self, max_loss: float) -> bool:
        """Sent the offered rate and lost no more than max_loss of it: a rate never sent cannot
        be one the technique kept up with."""
        return self.ok and not self.sent_short and self.loss_ratio is not None and self.loss_ratio <= max_loss

    def trial(self, number: int, length: int, duration: float) -> Trial:
        m = self.metrics
        data = {"sender_bps": m.get("sender_throughput_bps"), "receiver_bps": m.get("throughput_bps"),
                "jitter_ms": m.get("jitter_ms"), "lost_packets": m.get("lost_packets"),
                "start_s": round(self.start, 3), "end_s": round(self.end, 3), **self.cpu,
                "interfaces": self.interfaces or None, "loss_site": self.loss_site, "loss_split": self.limit_split}
        if self.error:
            data["error"] = self.error
        return Trial(number, offered_bps=float(self.offered_bps), offered_pps=self.offered_bps / (8 * length),
                     length=length, duration_s=duration, sent_packets=m.get("sent_packets"),
                     received_packets=m.get("received_packets"), loss_ratio=self.loss_ratio,
                     data={k: v for k, v in data.items() if v is not None})


def _cpu(doc: dict) -> dict[str, float]:
    """iperf3's own CPU on both ends (percent of one core's time, user + system)."""
    cpu = doc.get("end", {}).get("cpu_utilization_percent") or {}
    out = {"client_iperf3_cpu_pct": cpu.get("host_total"), "server_iperf3_cpu_pct": cpu.get("remote_total")}
    return {k: float(v) for k, v in out.items() if isinstance(v, (int, float))}


def knee(steps: list[Step], max_loss: float) -> Step | None:
    """The last step of the leading run of steps that keep up (loss <= max_loss): the highest
    rate the technique kept up with before it first fell behind. None when the first step that
    ran lost more. A failed step (the tool's error) tells nothing of loss: it neither ends the run
    nor belongs to it."""
    found = None
    for step in steps:
        if not step.ok:
            continue
        if not step.keeps_up(max_loss):
            break
        found = step
    return found


def sweep_metrics(steps: list[Step], max_loss: float) -> dict[str, float]:
    ok = [s for s in steps if s.ok]
    top = ok[-1]
    knee_step = knee(steps, max_loss)
    metrics = {
        "knee_found": 1.0 if knee_step else 0.0,
        "steps": float(len(steps)),
        "failed_steps": float(len(steps) - len(ok)),
        "max_received_bps": max(s.metrics["throughput_bps"] for s in ok),
        "top_offered_bps": float(top.offered_bps),
        "top_sent_bps": top.metrics["sender_throughput_bps"],
        "top_received_bps": top.metrics["throughput_bps"],
        "top_gap_bps": top.metrics["sender_throughput_bps"] - top.metrics["throughput_bps"],
        "top_send_shortfall_bps": top.offered_bps - top.metrics["sender_throughput_bps"],
    }
    if top.loss_ratio is not None:
        metrics["top_loss_pct"] = top.loss_ratio * 100.0
    past = step_past_knee(steps, knee_step)
    if past is not None and past.loss_site:
        metrics[f"knee_limit_{past.loss_site}"] = 1.0
        metrics.update({f"knee_lost_{where}": float(n) for where, n in (past.limit_split or {}).items()})
    if knee_step:
        metrics["knee_bps"] = float(knee_step.offered_bps)
        metrics["knee_at_top"] = 1.0 if past is None else 0.0  # no step that ran lies above: it may lie higher
        metrics["knee_received_bps"] = knee_step.metrics["throughput_bps"]
    return metrics


def step_past_knee(steps: list[Step], knee_step: Step | None) -> Step | None:
    """The step whose loss says which limit the knee met: the first step that ran (no tool
    error) past it (from the first step, without a knee)."""
    past = steps.index(knee_step) + 1 if knee_step else 0
    return next((step for step in steps[past:] if step.ok), None)


def sweep_series(steps: list[Step]) -> dict[str, list[tuple[float, float]]]:
    """Per step, at the step's end (seconds since the sweep began): offered, sent, received, loss."""
    series: dict[str, list[tuple[float, float]]] = {"offered_bps": [], "sender_throughput_bps": [],
                                                    "throughput_bps": [], "loss_pct": []}
    for step in steps:
        if not step.ok:
            continue
        t = round(step.end, 3)
        series["offered_bps"].append((t, float(step.offered_bps)))
        series["sender_throughput_bps"].append((t, step.metrics["sender_throughput_bps"]))
        series["throughput_bps"].append((t, step.metrics["throughput_bps"]))
        if step.loss_ratio is not None:
            series["loss_pct"].append((t, step.loss_ratio * 100.0))
    return {name: points for name, points in series.items() if points}


def describe(steps: list[Step], max_loss: float) -> str:
    """A human-readable table of the sweep, with why the knee is where it is (or absent)."""
    lines = ["offered_Mbps sent_Mbps received_Mbps loss_pct keeps_up lost_at"]
    for s in steps:
        if not s.ok:
            lines.append(f"{s.offered_bps / 1e6:12.1f} failed: {s.error}")
            continue
        loss = "nan" if s.loss_ratio is None else f"{s.loss_ratio * 100:.3f}"
        lines.append(f"{s.offered_bps / 1e6:12.1f} {s.metrics['sender_throughput_bps'] / 1e6:9.1f} "
                     f"{s.metrics['throughput_bps'] / 1e6:13.1f} {loss:>8} {'yes' if s.keeps_up(max_loss) else 'no':>8} "
                     f"{lost_at(s.loss_site, s.limit_split)}")
    found = knee(steps, max_loss)
    past = step_past_knee(steps, found)
    if found is None:
        first = past.offered_bps if past is not None else steps[0].offered_bps
        lines.append(f"no knee: the first step that ran ({first / 1e6:g} Mbit/s) already lost more "
                     f"than {max_loss * 100:g} % or was not sent in full; sweep lower rates")
    elif past is None:
        lines.append(f"every step that ran was sent and kept up (loss <= {max_loss * 100:g} %): the knee is at "
                     "or above the top step that ran")
    elif past.sent_short:
        lines.append(f"knee: {found.offered_bps / 1e6:g} Mbit/s, the last step before the generator sent short of "
                     "the offered rate: the generator's limit, not the technique's")
    else:
        lines.append(f"knee: {found.offered_bps / 1e6:g} Mbit/s, the last step before loss first exceeded "
                     f"{max_loss * 100:g} % (at {past.offered_bps / 1e6:g} Mbit/s)")
    failed = [s for s in steps if not s.ok]
    if failed:
        lines.append(f"{len(failed)} step(s) failed (" + ", ".join(f"{s.offered_bps / 1e6:g}" for s in failed)
                     + " Mbit/s): a tool's error, not loss; skipped by the knee")
    return "\n".join(lines) + "\n"
