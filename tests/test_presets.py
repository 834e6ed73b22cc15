"""Every campaign shipped with vpnbench validates, and `vpnbench presets` lists it."""

import pytest

from conftest import run_cli
from vpnbench.campaign import expand
from vpnbench.cli import load_campaign_or_preset, preset_files


@pytest.mark.parametrize("name", sorted(preset_files()))
def test_preset_validates_and_expands(name):
    campaign = load_campaign_or_preset(name)
    assert campaign.name
    assert sum(len(block.cells) for block in expand(campaign)) > 0


def test_presets_command_lists_every_preset():
    result = run_cli("presets")
    assert result.returncode == 0, result.stderr
    for name in preset_files():
        assert name in result.stdout
    assert {"demo", "smoke", "impairments"} <= set(preset_files())
