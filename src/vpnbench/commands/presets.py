"""What a preset asks of a machine and of its user's time: its cells, the seconds its
measurements are expected to take (each kind's expected_seconds, the figure the harness-overhead
benchmark uses) and the daemons vpnbench must build for it (`vpnbench doctor --install`)."""

import dataclasses

from vpnbench.campaign import Campaign, expand
from vpnbench.hosts import builds
from vpnbench.measure import MEASUREMENTS


@dataclasses.dataclass(frozen=True)
class PresetNeeds:
    cells: int
    measuring_seconds: float  # the measurements alone: bring-ups and impairment changes come on top
    builds: tuple[str, ...]  # recipe names, in builds.RECIPES order


def preset_needs(campaign: Campaign) -> PresetNeeds:
    cells = [cell for block in expand(campaign) for cell in block.cells]
    seconds = sum(MEASUREMENTS[cell.measurement_params.kind](cell.measurement_params).expected_seconds()
                  for cell in cells)
    return PresetNeeds(len(cells), seconds, needed_builds(campaign))


def needed_builds(campaign: Campaign) -> tuple[str, ...]:
    """The builds a campaign's techniques use: a technique whose kind is a build's name (nebula,
    tailscale, rosenpass), a field whose value names one (implementation = "boringtun"), or a
    `NAME_version` field (tailscale's headscale_version) — except where the campaign asks for
    Debian's package."""
    needed = set()
    for technique in campaign.techniques:
        values = technique.model_dump()
        for name in builds.RECIPES:
            version = values.get("version") if name == technique.kind else values.get(f"{name}_version")
            if version == builds.DEBIAN:
                continue
            if name == technique.kind or f"{name}_version" in values or name in values.values():
                needed.add(name)
    return tuple(name for name in builds.RECIPES if name in needed)


def duration_text(seconds: float) -> str:
    minutes = seconds / 60
    return f"{seconds:.0f} s" if seconds < 90 else f"{minutes:.0f} min" if minutes < 90 else f"{minutes / 60:.1f} h"


def runnable(needs_builds: tuple[str, ...], kinds: set[str], available_kinds: set[str], built: set[str]) -> bool:
    """A preset this machine can run now: a backend of each of its technique kinds available here,
    and each build it needs installed."""
    return kinds <= available_kinds and set(needs_builds) <= built
