"""Shared pieces of the parameter models that techniques and measurements declare.

Every parameter model forbids unknown keys, so a typo in a campaign file is an error
that names the key and the keys that are allowed.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, StringConstraints, ValidationError

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.units import parse_duration, parse_duration_or_off, parse_rate, parse_size

Duration = Annotated[float, BeforeValidator(parse_duration)]
DurationOrOff = Annotated[float, BeforeValidator(parse_duration_or_off)]  # 0 turns the thing off
Rate = Annotated[int, BeforeValidator(parse_rate)]
Family = Literal["ipv4", "ipv6"]


def set_family(params: "Params") -> str | None:
    """A measurement's `family` where the campaign set it; None where it is left to each technique's
    overlay family (campaign/plan.py's over_overlay; the traffic patterns' refusals)."""
    return params.family if "family" in params.model_fields_set else None


class Params(BaseModel):
    """Base of all technique and measurement parameter models."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    label: str | None = None
    # The keys a campaign swept with a list (`tunnels = [1, 10]`): stored_settings() keeps their
    # values even where settings() leaves a default out, so every point of the axis is on its cell.
    _swept: tuple[str, ...] = PrivateAttr(default=())

    def swept(self, keys: tuple[str, ...]) -> "Params":
        """These params, knowing which of their keys were swept (set once, by the campaign)."""
        self._swept = tuple(keys)
        return self

    def stored_settings(self) -> dict[str, Any]:
        """settings(), with every swept key's value even at its default: `tunnels = [1, 10]` stores
        tunnels = 1 on the first point's cells (settings() leaves it out for the cells stored
        before the axis existed), so a filter on the export by tunnels == 1 finds them."""
        dumped = self.model_dump(mode="json", include=set(self._swept))
        return {**self.settings(), **dumped}

    def settings(self) -> dict[str, Any]:
        """Every parameter except the label, JSON-ready."""
        return self.model_dump(mode="json", exclude={"label"})

    def non_default_settings(self) -> dict[str, Any]:
        defaults = type(self)(kind=self.kind).settings()
        return {k: v for k, v in self.settings().items() if k != "kind" and defaults.get(k) != v}


class TechniqueParams(Params):
    """Base of the techniques' parameter models: what any technique run may set beside its own."""

    # TCP congestion control on both ends for this technique's cells (net.ipv4.tcp_congestion_control);
    # unset: the hosts' own. Checked against what the hosts' kernels offer before any host is touched.
    congestion_control: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]{1,15}$")] | None = None
    # How many tunnels one bring-up holds between the same two hosts, each with its own inner
    # addresses (IPsec: child SAs, WireGuard: peers, OpenVPN: client instances); a list sweeps it.
    # Each technique states its ceiling and why (Technique.tunnel_ceiling), checked with the campaign.
    tunnels: int = Field(1, ge=1, le=10_000)

    def settings(self) -> dict[str, Any]:
        """As Params.settings, without `tunnels` at 1: one tunnel is what every cell stored before
        the axis existed meant, so their settings (and the series that match on them) stay equal."""
        settings = super().settings()
        if settings.get("tunnels") == 1:
            del settings["tunnels"]
        return settings


def validate_model(model: type[BaseModel], data: dict, where: str) -> BaseModel:
    """Validate data against model; turn the first error into a one-line UserError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, model, where)) from None


def describe_validation_error(exc: ValidationError, model: type[BaseModel], where: str) -> str:
    err = exc.errors()[0]
    loc = [str(part) for part in err["loc"] if not isinstance(part, int)]
    field = ".".join(loc)
    path = f"{where}.{field}" if field else where
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = ", ".join(model.model_fields)
        return f"{path}: unknown key; allowed keys: {allowed}"
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return f"{path}: {err['input']!r} is not allowed; allowed values: {expected.replace(' or ', ', ')}"
    if kind in ("bool_type", "bool_parsing"):  # TOML's own true and false
        return f"{path}: {err['input']!r} is not allowed; allowed values: true, false"
    if kind == "missing":
        return f"{path}: required key is missing"
    message = err["msg"].removeprefix("Value error, ")
    if kind == "value_error":  # our own parsers already quote the value
        return f"{path}: {message}"
    return f"{path}: {message} (got {err['input']!r})"


Size = Annotated[int, BeforeValidator(parse_size)]

MIN_MTU = 576  # the smallest IPv4 datagram every host must accept (RFC 791)
MAX_MTU = 65535  # veth's own limit


def core_range_error(asked: list[int], available: int, who: str) -> str | None:
    """Why a cores list does not fit a host with `available` cores, or None (the testbed spec
    checks this machine's; scaling.CorePinner each remote host's)."""
    too_many = [n for n in asked if n > available]
    if not too_many:
        return None
    return f"cores: {too_many[0]} is not allowed; allowed values: 1 to {available} ({who})"
