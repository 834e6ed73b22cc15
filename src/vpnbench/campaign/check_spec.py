"""The campaign's [check] table and `vpnbench check --threshold`: how far a metric may move
against a reference before a CI job fails. Pure data, validated as the rest of the campaign:
bad input is one line naming the field and the allowed values.

    [check]
    default = "10%"                      # each headline metric, in its bad direction; "off": only those below
    [check.thresholds]
    "tcp.throughput_bps" = "-5%"         # may not fall by more than 5 %
    "setup.setup_time_s" = "+20%"        # may not rise by more than 20 %
    "ping.rtt_avg_ms" = "off"            # not checked

A key is MEASUREMENT.METRIC: the measurement's label (its kind unless labelled) and a metric
of its cells. On the command line the same as `--threshold tcp.throughput_bps:-5%`.
"""

import dataclasses
import re

from pydantic import BaseModel, ConfigDict, field_validator

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import validate_model

DEFAULT_PERCENT = 10.0
MOST_PERCENT = 1000.0
OFF = "off"
SIGNED = re.compile(r"^\s*([+-])\s*(\d+(?:\.\d+)?)\s*%\s*$")
UNSIGNED = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
# The measurement is all before the last dot: a label may hold spaces and dots ("tcp 4 streams").
KEY = re.compile(r"^(?P<measurement>\S.*)\.(?P<metric>[A-Za-z0-9_]+)$")
ALLOWED_LIMIT = ("a signed percentage: '-5%' (may not fall by more than 5 %), '+20%' (may not rise by more "
                 f"than 20 %), up to {MOST_PERCENT:g} %; or 'off'")
ALLOWED_KEY = "MEASUREMENT.METRIC, e.g. 'tcp.throughput_bps' (the measurement's label, a metric of its cells)"


@dataclasses.dataclass(frozen=True)
class Threshold:
    """How far one measurement's metric may move: `limit` is a signed share (-0.05: may not fall
    by more than 5 %), None when the metric is not checked ('off')."""

    measurement: str  # the measurement's label (or kind)
    metric: str
    limit: float | None
    source: str  # "[check]", "--threshold"

    @property
    def allowed(self) -> str:
        return "off" if self.limit is None else f"{self.limit:+.0%}" if self.limit * 100 == round(self.limit * 100) \
            else f"{self.limit:+.1%}"


def parse_limit(text, where: str) -> float | None:
    """'-5%' -> -0.05, '+20%' -> 0.2, 'off' -> None; anything else is one line naming `where`."""
    if isinstance(text, str) and text.strip().lower() == OFF:
        return None
    found = SIGNED.match(text) if isinstance(text, str) else None
    if not found or float(found.group(2)) > MOST_PERCENT:
        raise UserError(f"{where}: {text!r} is not allowed; allowed values: {ALLOWED_LIMIT}")
    return float(found.group(2)) / 100 * (-1 if found.group(1) == "-" else 1)


def parse_key(key: str, where: str) -> tuple[str, str]:
    found = KEY.match(key) if isinstance(key, str) else None
    if not found:
        raise UserError(f"{where}: {key!r} is not allowed; allowed values: {ALLOWED_KEY}")
    return found.group("measurement"), found.group("metric")


def parse_threshold(text: str) -> Threshold:
    """`--threshold MEASUREMENT.METRIC:LIMIT`, e.g. tcp.throughput_bps:-5%."""
    key, colon, limit = text.rpartition(":")
    if not colon:
        raise UserError(f"--threshold: {text!r} is not allowed; allowed values: MEASUREMENT.METRIC:LIMIT, e.g. "
                        "tcp.throughput_bps:-5% or setup.setup_time_s:+20% or ping.rtt_avg_ms:off")
    measurement, metric = parse_key(key, "--threshold")
    return Threshold(measurement, metric, parse_limit(limit, f"--threshold {key}"), "--threshold")


class CheckSpec(BaseModel):
    """The [check] table as written; `thresholds()` reads it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default: str = f"{DEFAULT_PERCENT:g}%"
    thresholds: dict[str, str] = {}

    @field_validator("default")
    @classmethod
    def _default(cls, value: str) -> str:
        if value.strip().lower() != OFF and _unsigned_share(value) is None:
            raise ValueError(f"{value!r} is not allowed; allowed values: a percentage such as '10%' (each headline "
                             f"metric may move at most that far in its bad direction), up to {MOST_PERCENT:g} %; "
                             "or 'off' (only the metrics in [check.thresholds])")
        return value

    @property
    def default_share(self) -> float | None:
        """The headline metrics' allowed move as a share (0.1), None when 'off'."""
        return None if self.default.strip().lower() == OFF else _unsigned_share(self.default)

    def thresholds_named(self) -> list[Threshold]:
        out = []
        for key, limit in self.thresholds.items():
            where = f"check.thresholds.{key!r}" if "." in key else f"check.thresholds.{key}"
            measurement, metric = parse_key(key, where)
            out.append(Threshold(measurement, metric, parse_limit(limit, where), "[check]"))
        return out


def _unsigned_share(text: str) -> float | None:
    found = UNSIGNED.match(text)
    if not found or float(found.group(1)) > MOST_PERCENT:
        return None
    return float(found.group(1)) / 100


def check_spec(data: dict, measurement_labels: list[str] | None = None) -> CheckSpec:
    """The campaign's [check] table validated (a missing one: the defaults); with the campaign's
    measurement labels, a threshold of a measurement it does not have is refused too."""
    table = data.get("check", {})
    if not isinstance(table, dict):
        raise UserError("check: must be a table ([check])")
    thresholds = table.get("thresholds", {})
    if not isinstance(thresholds, dict) or not all(isinstance(v, str) for v in thresholds.values()):
        raise UserError(f"check.thresholds: must be a table of strings; allowed values: {ALLOWED_LIMIT}")
    spec = validate_model(CheckSpec, table, "check")
    for threshold in spec.thresholds_named():
        if measurement_labels is not None and threshold.measurement not in measurement_labels:
            raise UserError(f"check.thresholds.{threshold.measurement}.{threshold.metric}: measurement "
                            f"{threshold.measurement!r} is not in this campaign; allowed values: "
                            + ", ".join(measurement_labels))
    return spec
