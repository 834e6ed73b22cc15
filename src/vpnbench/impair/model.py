"""[[impairment]] entries of a campaign, and their expansion into concrete impairments.

An entry gives its spec in one of four ways: `netem = "..."` (netem's words), a named
`profile`, structured keys (`delay`, `jitter`, `loss`, ...), or separate `egress`
(client -> server) and `ingress` (server -> client) specs for an asymmetric link. A value
written as a range (`delay 0..100ms step 10ms`) makes the entry a sweep.
"""

import dataclasses

from pydantic import BaseModel, ConfigDict, model_validator

from vpnbench.impair.profiles import PROFILES, Placement
from vpnbench.impair.registry import BackendName
from vpnbench.impair.spec import NetemSpec, SpecError, parse_netem
from vpnbench.impair.sweep import expand_sweep

STRUCTURED = ("delay", "jitter", "correlation", "distribution", "loss", "duplicate", "reorder", "gap",
              "corrupt", "rate", "limit")


class ImpairmentParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str | None = None
    netem: str | None = None
    profile: str | None = None
    egress: str | None = None  # client -> server
    ingress: str | None = None  # server -> client
    delay: str | None = None
    jitter: str | None = None
    correlation: str | None = None  # of the delay
    distribution: str | None = None
    loss: str | None = None
    duplicate: str | None = None
    reorder: str | None = None
    gap: int | None = None
    corrupt: str | None = None
    rate: str | None = None
    limit: int | None = None
    placement: Placement = "auto"  # auto: the profile's own placement, if it names one (profiles.py)
    backend: BackendName = "auto"

    @model_validator(mode="after")
    def one_way_of_saying_it(self):
        ways = [name for name, given in (
            ("netem", self.netem is not None), ("profile", self.profile is not None),
            ("egress/ingress", self.egress is not None or self.ingress is not None),
            ("structured keys", any(getattr(self, key) is not None for key in STRUCTURED))) if given]
        if len(ways) > 1:
            raise ValueError(f"give the spec one way, not {' and '.join(ways)}")
        if self.profile is not None and self.profile not in PROFILES:
            raise ValueError(f"profile {self.profile!r} is not known; allowed: {', '.join(PROFILES)}")
        return self

    def placement_meant(self) -> str:
        """Where the entry acts: its own placement, else (auto) its profile's."""
        if self.placement == "auto" and self.profile is not None:
            return PROFILES[self.profile].placement
        return self.placement

    def spec_text(self) -> str:
        """Both directions' spec as netem words ('' for no impairment)."""
        if self.netem is not None:
            return self.netem
        if self.profile is not None:
            return PROFILES[self.profile].netem
        words = []
        if self.delay is not None or self.jitter is not None:
            words += ["delay", self.delay or "0ms"]
            if self.jitter is not None:
                words.append(self.jitter)
                if self.correlation is not None:
                    words.append(self.correlation)
            if self.distribution is not None:
                words += ["distribution", self.distribution]
        for key in ("loss", "duplicate", "corrupt", "rate", "limit"):
            if getattr(self, key) is not None:
                words += [key, str(getattr(self, key))]
        if self.reorder is not None:
            words += ["reorder", self.reorder] + (["gap", str(self.gap)] if self.gap else [])
        return " ".join(words)


@dataclasses.dataclass(frozen=True)
class Impairment:
    """One concrete impairment a cell runs under."""

    label: str
    egress: NetemSpec
    ingress: NetemSpec
    backend: str  # as asked: auto / netem / linkem (the runner resolves auto)
    placement: str
    profile: str | None = None

    def params(self) -> dict:
        return {"egress": str(self.egress), "ingress": str(self.ingress), "backend": self.backend,
                "placement": self.placement, "profile": self.profile,
                "egress_spec": dataclasses.asdict(self.egress), "ingress_spec": dataclasses.asdict(self.ingress)}


NONE = Impairment("none", NetemSpec(), NetemSpec(), "auto", "auto")


def expand_impairment(params: ImpairmentParams) -> list[Impairment]:
    """One entry -> the impairments it stands for (several when it sweeps)."""
    if params.egress is not None or params.ingress is not None:
        egress_texts, ingress_texts = expand_sweep(params.egress or ""), expand_sweep(params.ingress or "")
        if len(egress_texts) > 1 and len(ingress_texts) > 1:
            raise SpecError("sweep egress or ingress, not both")
        pairs = [(e, i) for e in egress_texts for i in ingress_texts]
    else:
        pairs = [(text, text) for text in expand_sweep(params.spec_text())]
    result = []
    for egress_text, ingress_text in pairs:
        egress, ingress = parse_netem(egress_text), parse_netem(ingress_text)
        result.append(Impairment(_label(params, egress_text, ingress_text, len(pairs) > 1), egress, ingress,
                                 params.backend, params.placement_meant(), params.profile))
    return result


def _label(params: ImpairmentParams, egress: str, ingress: str, swept: bool) -> str:
    """The user's words (a sweep step keeps its value, e.g. 'delay 0ms'), not the canonical form."""
    if params.label and not swept:
        return params.label
    egress, ingress = " ".join(egress.split()), " ".join(ingress.split())
    if egress == ingress:
        text = egress or "none"
    else:
        text = f"egress {egress or 'none'} / ingress {ingress or 'none'}"
    if params.label:  # a sweep's label prefixes every step
        return f"{params.label}: {text}"
    return params.profile if params.profile and not swept else text


def lossy(cell: dict) -> bool:
    """Does a stored cell's impairment drop packets (loss or a Gilbert-Elliott model, either way)?"""
    params = cell.get("impairment_params") or {}
    return any((spec := params.get(side) or {}).get("loss_pct") or spec.get("gemodel")
               for side in ("egress_spec", "ingress_spec"))
