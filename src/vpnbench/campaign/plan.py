"""Expanding a campaign into the ordered cells the runner executes.

The order is the studies' order: a technique is brought up once, then for each impairment
(changed in place) all of its cells run, then the technique is brought down. Within a technique the order can be shuffled (seeded) so that
drift over time does not line up with one measurement.
"""

import dataclasses
import random

from vpnbench.campaign.spec import Campaign, measurement_label, technique_label
from vpnbench.foundation.params import Params, set_family
from vpnbench.impair.model import Impairment
from vpnbench.measure import MEASUREMENTS
from vpnbench.techniques import TECHNIQUES


@dataclasses.dataclass(frozen=True)
class PlannedCell:
    """One cell of the plan (what to run); records.Cell is what a run stored of it."""

    technique: str
    impairment: Impairment
    measurement: str
    measurement_params: Params
    repetition: int
    cores: int | None = None  # [testbed] cores: the client's and server's processes on this many cores each
    mtu: int | None = None  # [testbed] mtu: the underlay's MTU (set before the bring-up)

    @property
    def key(self) -> str:
        """Identifies the cell within its campaign; --resume skips keys already done."""
        return f"{self.technique}|{self.impairment.label}|{self.measurement}|{self.repetition}"

    def scaling_params(self) -> dict:
        """The scaling axes this cell sets, stored with its measurement_params."""
        return {k: v for k, v in (("cores", self.cores), ("mtu", self.mtu)) if v is not None}


@dataclasses.dataclass(frozen=True)
class TechniqueBlock:
    label: str
    params: Params
    cells: list[PlannedCell]
    index: int = 0  # the technique's place in the campaign (its resolved backend's)
    mtu: int | None = None  # the underlay MTU this bring-up runs over ([testbed] mtu)


def expand(campaign: Campaign, repetitions: range | None = None) -> list[TechniqueBlock]:
    """Every technique's cells, for the campaign's repetitions (or those given: adaptive
    repetitions expand one round at a time); a kind that does not repeat (a soak: hours, its
    seconds are its samples) has one cell, repetition 1."""
    rng = random.Random(campaign.info.seed)
    repetitions = repetitions or range(1, campaign.info.most_repetitions + 1)
    blocks = []
    cores_axis, mtu_axis = campaign.testbed.cores or [None], campaign.testbed.mtu or [None]
    for index, tech in enumerate(campaign.techniques):
        label = technique_label(tech)
        for mtu in mtu_axis:  # a bring-up per underlay MTU: the tunnel is made over it
            cells = [
                PlannedCell(label, impairment, measurement_label(meas) + axes_suffix(cores, mtu), over_overlay(meas, tech),
                            rep, cores, mtu)
                for impairment in campaign.impairments
                for meas in campaign.measurements
                if campaign.runs_under(meas, impairment)
                for cores in cores_axis
                for rep in repetitions if rep == 1 or MEASUREMENTS[meas.kind].repeats
            ]
            if campaign.info.order == "shuffled":
                rng.shuffle(cells)
            blocks.append(TechniqueBlock(label, tech, cells, index, mtu))
    return blocks


def over_overlay(meas: Params, tech: Params) -> Params:
    """The measurement as it runs through this technique: a `family` left unset is the technique's
    overlay family (Yggdrasil's is IPv6 only), and stored as such with each cell; one set is kept.
    The cell's label stays the campaign's measurement's: its cells are compared with the others'."""
    family = TECHNIQUES[tech.kind].overlay_family
    if "family" not in type(meas).model_fields or set_family(meas) is not None or meas.family == family:
        return meas
    return meas.model_copy(update={"family": family})


def axes_suffix(cores: int | None, mtu: int | None) -> str:
    """What the scaling axes add to a measurement's label, so each point is its own group."""
    return (f" cores={cores}" if cores is not None else "") + (f" mtu={mtu}" if mtu is not None else "")
