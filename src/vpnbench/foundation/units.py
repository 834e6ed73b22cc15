"""Parsing of durations, bit rates and sizes as users write them in campaign files."""

import re

_NUMBER = r"^\s*(\d+(?:\.\d+)?)\s*"
_DURATION = re.compile(_NUMBER + r"(us|ms|s|m|h)?\s*$")
_DURATION_FACTORS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_RATE = re.compile(_NUMBER + r"([kKmMgG]?)(?:bit|bps|bit/s)?\s*$")
_RATE_FACTORS = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}
_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgG]?)\s*$")
_SIZE_FACTORS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def _parse(value, pattern: re.Pattern, factors: dict, what: str, how: str) -> float:
    """A number with an optional unit suffix -> the number times the unit's factor (> 0)."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a {what}; {how}")
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        match = pattern.match(str(value))
        if not match:
            raise ValueError(f"{value!r} is not a {what}; {how}")
        unit = match.group(2)
        number = float(match.group(1)) * factors[unit.lower() if unit is not None else None]
    if number <= 0:
        raise ValueError(f"{value!r} is not a positive {what}; {how}")
    return number


def parse_duration(value: str | int | float) -> float:
    """'2s', '500ms', '0.05s', '1m', 3 -> seconds."""
    return _parse(value, _DURATION, _DURATION_FACTORS, "duration",
                  "use a positive number with unit us, ms, s, m or h, e.g. '2s'")


def parse_duration_or_off(value: str | int | float) -> float:
    """A duration, or 0 ('0', '0s', 0) where a setting says 0 turns it off."""
    match = None if isinstance(value, (int, float)) else _DURATION.match(str(value))
    number = float(match.group(1)) if match else value
    return 0.0 if isinstance(number, (int, float)) and not isinstance(number, bool) and number == 0 \
        else parse_duration(value)


def parse_rate(value: str | int | float) -> int:
    """'50M', '1G', '400m', '2.5Gbit', 1000000 -> bits per second."""
    return int(_parse(value, _RATE, _RATE_FACTORS, "rate", "use bits/s with optional K, M or G suffix, e.g. '50M'"))


def parse_size(value: str | int) -> int:
    """'256K', '2M', 65536 -> bytes (binary units, as iperf3 -w reads them)."""
    if isinstance(value, float):
        raise ValueError(f"{value!r} is not a size; use whole bytes with optional K, M or G suffix, e.g. '256K'")
    return int(_parse(value, _SIZE, _SIZE_FACTORS, "size", "use bytes with optional K, M or G suffix, e.g. '256K'"))


def format_rate(bps: float) -> str:
    """Compact iperf-style rate: 50000000 -> '50M'."""
    for suffix, factor in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if bps >= factor and bps % factor == 0:
            return f"{int(bps // factor)}{suffix}"
    return str(int(bps))


_RANGE = re.compile(r"^\s*(\S+?)\s*\.\.\s*(\S+?)\s+step\s+(-?\S+)\s*$")
_RANGE_HOW = "use 'FROM..TO step STEP' with bits/s (optional K, M or G suffix), e.g. '25M..400M step 25M', or a list"
MAX_RATE_STEPS = 1000


def parse_rate_list(value) -> list[int]:
    """'25M..400M step 25M' (both ends included), ['10M', '50M'] or one rate -> bits/s, ascending.
    A zero or negative step, an empty range or an empty list is an error before anything runs."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(f"an empty list has no rates; {_RANGE_HOW}")
        return sorted({parse_rate(v) for v in value})
    if isinstance(value, str) and ".." in value:
        return _rate_range(value)
    return [parse_rate(value)]


def _rate_range(text: str) -> list[int]:
    match = _RANGE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a rate range; {_RANGE_HOW}")
    first, last = (_range_end(text, part) for part in match.group(1, 2))
    step_text = match.group(3)
    try:
        step = parse_rate(step_text)
    except ValueError:
        raise ValueError(f"{text!r}: the step {step_text!r} is not a positive rate; {_RANGE_HOW}") from None
    if first > last:
        raise ValueError(f"{text!r} is an empty range (it starts above its end); {_RANGE_HOW}")
    count = int((last - first) // step) + 1
    if count > MAX_RATE_STEPS:
        raise ValueError(f"{text!r} has {count} steps, more than {MAX_RATE_STEPS}; use a larger step")
    return [first + i * step for i in range(count)]


def _range_end(text: str, part: str) -> int:
    try:
        return parse_rate(part)
    except ValueError:
        raise ValueError(f"{text!r}: {part!r} is not a rate; {_RANGE_HOW}") from None
