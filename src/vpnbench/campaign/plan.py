"""Expanding a campaign into the ordered cells the runner executes.

The order is the studies' order: a technique is brought up once, then for each impairment
(changed in place) all of its cells run, then the technique is brought down. Within a technique the order can be shuffled (seeded) so that
drift over time does not line up with one measurement.
"""

import dataclasses
import random

from vpnbench.campaign.spec import Campaign, measurement_label, technique_label
from vpnbench.impair.model import Impairment
from vpnbench.measure import MEASUREMENTS
from vpnbench.params import Params


@dataclasses.dataclass(frozen=True)
class Cell:
    technique: str
    impairment: Impairment
    measurement: str
    measurement_params: Params
    repetition: int

    @property
    def key(self) -> str:
        """Identifies the cell within its campaign; --resume skips keys already done."""
        return f"{self.technique}|{self.impairment.label}|{self.measurement}|{self.repetition}"


@dataclasses.dataclass(frozen=True)
class TechniqueBlock:
    label: str
    params: Params
    cells: list[Cell]


def expand(campaign: Campaign, repetitions: range | None = None) -> list[TechniqueBlock]:
    """Every technique's cells, for the campaign's repetitions (or those given: adaptive
    repetitions expand one round at a time); a kind that does not repeat (a soak: hours, its
    seconds are its samples) has one cell, repetition 1."""
    rng = random.Random(campaign.info.seed)
    repetitions = repetitions or range(1, campaign.info.most_repetitions + 1)
    blocks = []
    for tech in campaign.techniques:
        label = technique_label(tech)
        cells = [
            Cell(label, impairment, measurement_label(meas), meas, rep)
            for impairment in campaign.impairments
            for meas in campaign.measurements
            for rep in repetitions if rep == 1 or MEASUREMENTS[meas.kind].repeats
        ]
        if campaign.info.order == "shuffled":
            rng.shuffle(cells)
        blocks.append(TechniqueBlock(label, tech, cells))
    return blocks
