"""NDR and PDR by MLRsearch (FD.io CSIT's search), kept pure behind one call: the search sees
only `run_trial(duration, load_pps) -> TrialCounts`, so it runs the same on any generator and
on a simulated one in unit tests."""

import dataclasses
from typing import Protocol

from MLRsearch import AbstractMeasurer, Config, MeasurementResult, MultipleLossRatioSearch, SearchGoal

from vpnbench.measure.pacing import sent_in_full


class TrialSource(Protocol):
    def run_trial(self, duration: float, load_pps: float): ...


@dataclasses.dataclass
class SearchOutcome:
    bounds: dict[str, tuple[float | None, float | None]]  # goal -> (relevant lower, upper bound) in packets/s


class _Measurer(AbstractMeasurer):
    def __init__(self, source: TrialSource, length: int):
        self.source, self.length = source, length

    def measure(self, intended_duration: float, intended_load: float) -> MeasurementResult:
        counts = self.source.run_trial(intended_duration, intended_load)
        # The trial as it ran: a generator that takes whole seconds runs 1.2 s as 2 s, and the load
        # it was meant to send is the load times that, not times the 1.2 s asked (else a generator
        # sending 60 % of the load would count as having sent it all).
        ran = max(counts.trial_s or intended_duration, intended_duration)
        return MeasurementResult(intended_duration=ran, intended_load=intended_load,
                                 offered_count=int(counts.sent_packets),
                                 forwarding_count=int(min(counts.received_packets, counts.sent_packets)),
                                 offered_duration=counts.duration or ran,
                                 intended_count=intended_count(counts.sent_packets, intended_load * ran,
                                                               self.length, ran))


def intended_count(sent: float, intended: float, length: int, duration: float) -> int:
    """What MLRsearch should think was meant to be sent. A generator within its pacing's own
    tolerance of the load sent it (iperf3 paces a little under its target: 0.05 % short would
    fail every zero-loss trial); one further short did not, and MLRsearch counts its unsent
    packets as lost, so a generator that cannot keep up never makes a load look good (a 2.5 %
    shortfall once passed as sent in full: the bound was 3 %, six times the pacing's)."""
    return int(sent) if sent_in_full(sent, intended, length, duration) else max(int(intended), int(sent))


def search(source: TrialSource, params) -> SearchOutcome:
    """params: min_rate/max_rate (bits/s), length, ndr_loss, pdr_loss, relative_width, trial_duration,
    final_trial_duration, duration_sum, budget."""
    per_packet = 8 * params.length
    goals = {name: SearchGoal(loss_ratio=loss, relative_width=params.relative_width,
                              initial_trial_duration=params.trial_duration,
                              final_trial_duration=params.final_trial_duration, duration_sum=params.duration_sum,
                              preceding_targets=2, fail_fast=False)
             for name, loss in (("ndr", params.ndr_loss), ("pdr", params.pdr_loss))}
    config = Config()
    config.goals = list({goal: None for goal in goals.values()})  # equal goals (ndr_loss == pdr_loss) once
    low, high = params.min_rate / per_packet, params.max_rate / per_packet
    if high > config.min_load:  # MLRsearch checks each against the other's current value
        config.max_load, config.min_load = high, low
    else:
        config.min_load, config.max_load = low, high
    config.search_duration_max = params.budget
    config.warmup_duration = None
    results = MultipleLossRatioSearch(config=config).search(measurer=_Measurer(source, params.length), debug=lambda _: None)
    bounds = {}
    for name, goal in goals.items():
        result = results[goal]
        lower, upper = result.relevant_lower_bound, result.relevant_upper_bound
        bounds[name] = (float(lower) if lower is not None else None, float(upper) if upper is not None else None)
    return SearchOutcome(bounds)
