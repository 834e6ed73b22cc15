"""Sweeps: a netem spec with one value written as a range expands into one spec per step.

    delay 0..100ms step 10ms          -> delay 0ms, delay 10ms, ..., delay 100ms  (11 specs)
    delay 20ms 0..10ms step 1ms       -> jitter 0..10 ms over a fixed 20 ms delay
    loss 0..5% step 0.5%              -> 11 loss rates
"""

import re

from vpnbench.impair.spec import SpecError

_RANGE = re.compile(r"(\d+(?:\.\d+)?)([a-z%]*)\.\.(\d+(?:\.\d+)?)([a-z%]*)\s+step\s+(\d+(?:\.\d+)?)([a-z%]*)")
MAX_STEPS = 1000


def expand_sweep(text: str) -> list[str]:
    """All specs a (possibly) swept spec stands for; a spec without a range is itself."""
    ranges = _RANGE.findall(text)
    if not ranges:
        if ".." in text:
            raise SpecError(f"range in {text!r} needs the form A..B step S, e.g. delay 0..100ms step 10ms")
        return [text]
    if len(ranges) > 1:
        raise SpecError(f"{text!r} sweeps more than one value; sweep one value per impairment")
    start, start_unit, stop, stop_unit, step, step_unit = ranges[0]
    unit = start_unit or stop_unit or step_unit
    if {u for u in (start_unit, stop_unit, step_unit) if u} - {unit}:
        raise SpecError(f"range {start}{start_unit}..{stop}{stop_unit} step {step}{step_unit} mixes units")
    first, last, increment = float(start), float(stop), float(step)
    if increment <= 0 or last < first:
        raise SpecError(f"range {start}..{stop} step {step} must go up by a positive step")
    count = int(round((last - first) / increment)) + 1
    if count > MAX_STEPS:
        raise SpecError(f"range {start}..{stop} step {step} has {count} steps (at most {MAX_STEPS})")
    values = [round(first + i * increment, 9) for i in range(count)]
    return [_RANGE.sub(f"{value:g}{unit}", text, count=1) for value in values]
