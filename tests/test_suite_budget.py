"""make test's stages each have a budget (scripts/test-suite.sh), and the host's tests split into
the ones that run side by side and the ones that need the machine, with none lost between them."""

import re
from pathlib import Path

import pytest

from conftest import needs_the_machine

SUITE = Path(__file__).resolve().parents[1] / "scripts" / "test-suite.sh"


def test_every_stage_has_a_budget_and_every_budget_a_stage():
    text = SUITE.read_text()
    stages = set(re.findall(r'^\s*stage_done "([^"]+)"', text, re.M))
    budgets = set(re.findall(r'^\s+\["([^"]+)"\]=\d+$', text, re.M))
    assert len(stages) == 8 and stages == budgets, (stages, budgets)


class Item:
    def __init__(self, marks=(), fixtures=()):
        self.keywords, self.fixturenames = set(marks), list(fixtures)


@pytest.mark.parametrize("item, needs", [
    (Item(), False),
    (Item(["build"]), False),
    (Item(["netns"]), True),
    (Item(["vm"]), True),
    (Item(["exclusive"]), True),
    (Item(fixtures=["tmp_path", "clean_machine"]), True),
])
def test_what_needs_the_machine_is_what_takes_the_test_lock(item, needs):
    assert needs_the_machine(item) is needs
