"""The impairment spec, in tc netem's own words.

    delay TIME [JITTER [CORRELATION]] [distribution normal|pareto|paretonormal|uniform]
    loss [random] PERCENT [CORRELATION]  |  loss gemodel P [R [1-H [1-K]]]
    duplicate PERCENT [CORRELATION]
    reorder PERCENT [CORRELATION] [gap N]
    corrupt PERCENT [CORRELATION]
    rate RATE
    limit PACKETS

Units as tc reads them: times in us/usec, ms/msec, s/sec (a unit is required: tc versions
disagree on what a bare number means),
percentages with or without "%", rates in bit/kbit/mbit/gbit (a bare number is bit/s),
bps/kbps/mbps/gbps (bytes per second), with kibit/mibit/... binary variants. The parsed
spec renders back to one canonical string that both backends (tc netem and linkem) read.
"""

import dataclasses
import re

DISTRIBUTIONS = ("normal", "pareto", "paretonormal", "uniform")
KEYWORDS = ("delay", "loss", "duplicate", "reorder", "corrupt", "rate", "limit")

_NUMBER = r"(\d+(?:\.\d+)?)"
_TIME_UNITS = {"us": 1, "usec": 1, "usecs": 1, "ms": 1e3, "msec": 1e3, "msecs": 1e3,
               "s": 1e6, "sec": 1e6, "secs": 1e6}
_RATE_UNITS = {"": 1, "bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
               "kibit": 1024, "mibit": 1024**2, "gibit": 1024**3, "tibit": 1024**4,
               "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9, "tbps": 8e12,
               "kibps": 8 * 1024, "mibps": 8 * 1024**2, "gibps": 8 * 1024**3, "tibps": 8 * 1024**4}


class SpecError(ValueError):
    """A spec word that netem would not accept; the message names it."""


@dataclasses.dataclass(frozen=True)
class NetemSpec:
    delay_us: float = 0.0
    jitter_us: float = 0.0
    delay_corr_pct: float = 0.0
    distribution: str | None = None
    loss_pct: float = 0.0
    loss_corr_pct: float = 0.0
    gemodel: tuple[float, ...] | None = None  # (p, r, 1-h, 1-k) in percent
    duplicate_pct: float = 0.0
    duplicate_corr_pct: float = 0.0
    reorder_pct: float = 0.0
    reorder_corr_pct: float = 0.0
    reorder_gap: int = 0
    corrupt_pct: float = 0.0
    corrupt_corr_pct: float = 0.0
    rate_bps: float = 0.0
    limit: int | None = None

    @property
    def empty(self) -> bool:
        return self == NetemSpec()

    def words(self) -> list[str]:
        """The canonical netem argument list (what `tc qdisc ... netem` and linkem both read)."""
        out: list[str] = []
        if self.limit is not None:
            out += ["limit", str(self.limit)]
        if self.delay_us or self.jitter_us:
            out += ["delay", _time(self.delay_us)]
            if self.jitter_us:
                out.append(_time(self.jitter_us))
                if self.delay_corr_pct:
                    out.append(_pct(self.delay_corr_pct))
            if self.distribution:
                out += ["distribution", self.distribution]
        if self.gemodel:
            out += ["loss", "gemodel", *(_pct(v) for v in self.gemodel)]
        elif self.loss_pct:
            out += ["loss", _pct(self.loss_pct)] + ([_pct(self.loss_corr_pct)] if self.loss_corr_pct else [])
        for name in ("duplicate", "corrupt"):
            pct, corr = getattr(self, f"{name}_pct"), getattr(self, f"{name}_corr_pct")
            if pct:
                out += [name, _pct(pct)] + ([_pct(corr)] if corr else [])
        if self.reorder_pct:
            out += ["reorder", _pct(self.reorder_pct)]
            if self.reorder_corr_pct:
                out.append(_pct(self.reorder_corr_pct))
            if self.reorder_gap:
                out += ["gap", str(self.reorder_gap)]
        if self.rate_bps:
            out += ["rate", _rate(self.rate_bps)]
        return out

    def __str__(self) -> str:
        return " ".join(self.words())


def _time(us: float) -> str:
    if us >= 1000 and (us / 1000).is_integer():
        return f"{us / 1000:g}ms"
    return f"{us:g}us"


def _rate(bps: float) -> str:
    for unit, factor in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)):
        if bps >= factor and (bps / factor).is_integer():
            return f"{bps / factor:g}{unit}"
    return f"{bps:.0f}bit"


def _pct(value: float) -> str:
    return f"{value:g}%"


def parse_time(word: str) -> float:
    """A tc time -> microseconds."""
    match = re.fullmatch(_NUMBER + r"([a-z]*)", word)
    if match and not match.group(2):
        # tc reads a bare number as µs in some versions and ns in others: insist on a unit.
        raise SpecError(f"{word!r} has no unit; write e.g. {word}ms or {word}us")
    if not match or match.group(2) not in _TIME_UNITS:
        raise SpecError(f"{word!r} is not a time; use e.g. 20ms, 500us, 1s")
    return float(match.group(1)) * _TIME_UNITS[match.group(2)]


def parse_percent(word: str) -> float:
    match = re.fullmatch(_NUMBER + r"%?", word)
    if not match:
        raise SpecError(f"{word!r} is not a percentage; use e.g. 1% or 0.5%")
    value = float(match.group(1))
    if value > 100:
        raise SpecError(f"{word!r} is more than 100%")
    return value


def parse_netem_rate(word: str) -> float:
    """A tc rate -> bits per second."""
    match = re.fullmatch(_NUMBER + r"([a-z]*)", word.lower())
    if not match or match.group(2) not in _RATE_UNITS:
        raise SpecError(f"{word!r} is not a rate; use e.g. 10mbit, 1gbit, 500kbit")
    bps = float(match.group(1)) * _RATE_UNITS[match.group(2)]
    if bps <= 0:
        raise SpecError(f"{word!r} is not a positive rate")
    return bps


class _Words:
    def __init__(self, text: str):
        self.items = text.split()
        self.pos = 0

    def peek(self) -> str | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def take(self) -> str:
        word = self.peek()
        self.pos += 1
        return word

    def optional(self, parse) -> float | None:
        """Parse the next word if it is a value (not the next keyword)."""
        word = self.peek()
        if word is None or word in KEYWORDS or word in ("distribution", "gap"):
            return None
        self.pos += 1
        return parse(word)

    def required(self, keyword: str, parse, what: str):
        word = self.peek()
        if word is None or word in KEYWORDS:
            raise SpecError(f"{keyword!r} needs {what}")
        self.pos += 1
        return parse(word)


def parse_netem(text: str) -> NetemSpec:
    """Parse a netem spec; raise SpecError naming the offending word."""
    words = _Words(text.strip())
    fields: dict = {}
    seen: set[str] = set()
    while (keyword := words.peek()) is not None:
        words.take()
        if keyword not in KEYWORDS:
            raise SpecError(f"unknown word {keyword!r}; allowed: {', '.join(KEYWORDS)}")
        if keyword in seen:
            raise SpecError(f"{keyword!r} given twice")
        seen.add(keyword)
        _PARSERS[keyword](words, fields)
    spec = NetemSpec(**fields)
    if spec.reorder_pct and not spec.delay_us:
        raise SpecError("'reorder' needs a 'delay' (netem reorders by sending some packets without it)")
    return spec


def _parse_delay(words: _Words, fields: dict) -> None:
    fields["delay_us"] = words.required("delay", parse_time, "a time, e.g. delay 20ms")
    jitter = words.optional(parse_time)
    if jitter is not None:
        fields["jitter_us"] = jitter
        corr = words.optional(parse_percent)
        if corr is not None:
            fields["delay_corr_pct"] = corr
    if words.peek() == "distribution":
        words.take()
        name = words.required("distribution", str, f"one of {', '.join(DISTRIBUTIONS)}")
        if name not in DISTRIBUTIONS:
            raise SpecError(f"distribution {name!r} is not known; allowed: {', '.join(DISTRIBUTIONS)}")
        fields["distribution"] = name


def _parse_loss(words: _Words, fields: dict) -> None:
    if words.peek() == "gemodel":
        words.take()
        values = [words.required("loss gemodel", parse_percent, "P, e.g. loss gemodel 1% 10%")]
        while len(values) < 4 and (value := words.optional(parse_percent)) is not None:
            values.append(value)
        fields["gemodel"] = _gemodel_defaults(values)
        return
    if words.peek() in ("state", "ecn"):
        raise SpecError(f"loss {words.peek()!r} is not supported; use 'loss PERCENT' or 'loss gemodel P R 1-H 1-K'")
    if words.peek() == "random":
        words.take()
    fields["loss_pct"] = words.required("loss", parse_percent, "a percentage, e.g. loss 1%")
    corr = words.optional(parse_percent)
    if corr is not None:
        fields["loss_corr_pct"] = corr


def _gemodel_defaults(values: list[float]) -> tuple[float, ...]:
    """netem's defaults: R = 100 - P, 1-H = 100 (all lost in the bad state), 1-K = 0."""
    p = values[0]
    r = values[1] if len(values) > 1 else 100.0 - p
    one_minus_h = values[2] if len(values) > 2 else 100.0
    one_minus_k = values[3] if len(values) > 3 else 0.0
    return (p, r, one_minus_h, one_minus_k)


def _percent_with_correlation(name: str):
    def parse(words: _Words, fields: dict) -> None:
        fields[f"{name}_pct"] = words.required(name, parse_percent, f"a percentage, e.g. {name} 1%")
        corr = words.optional(parse_percent)
        if corr is not None:
            fields[f"{name}_corr_pct"] = corr
    return parse


def _parse_reorder(words: _Words, fields: dict) -> None:
    _percent_with_correlation("reorder")(words, fields)
    if words.peek() == "gap":
        words.take()
        gap = words.required("gap", str, "a packet count, e.g. gap 5")
        if not gap.isdigit() or int(gap) < 1:
            raise SpecError(f"gap {gap!r} is not a positive packet count")
        fields["reorder_gap"] = int(gap)


def _parse_rate(words: _Words, fields: dict) -> None:
    fields["rate_bps"] = words.required("rate", parse_netem_rate, "a rate, e.g. rate 100mbit")
    if words.optional(str) is not None:
        raise SpecError("rate packet/cell overheads are not supported")


def _parse_limit(words: _Words, fields: dict) -> None:
    value = words.required("limit", str, "a packet count, e.g. limit 1000")
    if not value.isdigit() or int(value) < 1:
        raise SpecError(f"limit {value!r} is not a positive packet count")
    fields["limit"] = int(value)


_PARSERS = {
    "delay": _parse_delay,
    "loss": _parse_loss,
    "duplicate": _percent_with_correlation("duplicate"),
    "reorder": _parse_reorder,
    "corrupt": _percent_with_correlation("corrupt"),
    "rate": _parse_rate,
    "limit": _parse_limit,
}
