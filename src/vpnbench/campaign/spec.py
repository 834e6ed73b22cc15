"""The campaign file: what to compare (techniques), how (measurements), how often, where.

Validation happens here, completely, before any host is touched: an unknown key, kind,
backend or unit is one line naming the field and the allowed values.
"""

import dataclasses
import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from vpnbench.campaign.check_spec import check_spec
from vpnbench.foundation.errors import UserError
from vpnbench.foundation.params import DurationOrOff, Params, validate_model
from vpnbench.impair.model import NONE as NO_IMPAIRMENT
from vpnbench.impair.model import Impairment, ImpairmentParams, expand_impairment
from vpnbench.impair.spec import SpecError
from vpnbench.measure import MEASUREMENTS
from vpnbench.measure.scaling import expand_lists
from vpnbench.techniques import TECHNIQUES
from vpnbench.testbeds.impair_backends import BACKENDS  # noqa: F401 - the built-in backends registered: the schema allows their names
from vpnbench.testbeds.mesh_spec import MAX_NODES, MIN_NODES, nat_per_node
from vpnbench.testbeds.spec import TestbedSpec

SECTIONS = ("campaign", "testbed", "technique", "impairment", "measurement", "check")


def _repetitions(value):
    """A whole number of repetitions, or "auto" (repeat until the interval is narrow enough)."""
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10_000):
        return value
    raise ValueError(f"{value!r} is not allowed; allowed values: a whole number from 1 to 10000, or 'auto'")


class CampaignInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("campaign", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    repetitions: Annotated[int | str, BeforeValidator(_repetitions)] = 1
    # repetitions = "auto": each cell is repeated (interleaved across techniques) until the 95 %
    # confidence interval of its first metric is within ci_target of its mean, at least
    # min_repetitions and at most max_repetitions times.
    min_repetitions: int = Field(3, ge=2, le=1000)
    max_repetitions: int = Field(10, ge=2, le=10_000)
    ci_target: float = Field(0.05, gt=0, lt=1)  # relative half-width of the 95 % CI
    # Before each cell, wait until the tunnel's round trip is back near its idle value (bounded by
    # settle_max), so the queues and TCP state one cell leaves do not leak into the next; 0 turns it off.
    settle_max: DurationOrOff = Field(3.0, ge=0, le=60)

    @model_validator(mode="after")
    def _repetition_bounds(self):
        if self.max_repetitions < self.min_repetitions:
            raise ValueError(f"max_repetitions: {self.max_repetitions} is below min_repetitions "
                             f"({self.min_repetitions}); allowed: at least min_repetitions")
        return self

    @property
    def adaptive(self) -> bool:
        return self.repetitions == "auto"

    @property
    def most_repetitions(self) -> int:
        return self.max_repetitions if self.adaptive else self.repetitions
    order: Literal["sequential", "shuffled"] = "sequential"  # shuffled: random order within a technique
    seed: int = 0


@dataclasses.dataclass(frozen=True)
class Campaign:
    info: CampaignInfo
    testbed: TestbedSpec
    techniques: list[Params]
    measurements: list[Params]
    source: dict  # the validated input, stored with the run
    impairments: list[Impairment] = dataclasses.field(default_factory=lambda: [NO_IMPAIRMENT])
    # measurement label -> the impairment labels it runs under ([[measurement]] `impairments`);
    # a measurement not named runs under every impairment
    only_under: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def runs_under(self, measurement: Params, impairment: Impairment) -> bool:
        labels = self.only_under.get(measurement_label(measurement))
        return labels is None or impairment.label in labels

    @property
    def impaired(self) -> bool:
        """True when the campaign has [[impairment]] entries (and so needs a backend)."""
        return self.impairments != [NO_IMPAIRMENT]

    def impairment_backend_asked(self) -> str:
        """The one backend the campaign asks for: auto, netem or linkem."""
        asked = {i.backend for i in self.impairments if i.backend != "auto"}
        return asked.pop() if asked else self.testbed.impairment_backend

    @property
    def name(self) -> str:
        return self.info.name


def load_campaign(path: str | Path) -> Campaign:
    return campaign_from_dict(_read_toml(path))


def load_testbed(path: str | Path) -> TestbedSpec:
    """Only the [testbed] of a campaign file (or of a file that has nothing else)."""
    return validate_model(TestbedSpec, testbed_table(path), "testbed")


def testbed_table(path: str | Path) -> dict:
    """The [testbed] table of a file as written (a worker lays it over a queued campaign's)."""
    return section_table(_read_toml(path), "testbed")


def _read_toml(path: str | Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UserError(f"campaign file {str(path)!r}: no such file") from None
    except OSError as exc:
        raise UserError(f"campaign file {str(path)!r}: {exc.strerror}") from None
    return parse_toml(text, path)


def parse_toml(text: str, path: str | Path) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"campaign file {str(path)!r}: not valid TOML: {exc}") from None


def campaign_from_dict(data: dict) -> Campaign:
    for key in data:
        if key not in SECTIONS:
            raise UserError(f"{key}: unknown section; allowed sections: {', '.join(SECTIONS)}")
    info = validate_model(CampaignInfo, section_table(data, "campaign"), "campaign")
    testbed = validate_model(TestbedSpec, section_table(data, "testbed"), "testbed")
    techniques = _entries(data, "technique", TECHNIQUES)
    measurements = _entries(data, "measurement", MEASUREMENTS)
    _require_unique([technique_label(t) for t in techniques], "technique")
    _require_unique([measurement_label(m) for m in measurements], "measurement")
    _require_rekeyable(techniques, measurements)
    _require_measurable(techniques, measurements, testbed)
    _require_runnable_on(techniques, testbed)
    impairments = _impairments(data, testbed) or [NO_IMPAIRMENT]
    check_spec(data, [measurement_label(m) for m in measurements])  # `vpnbench check` reads it from the stored run
    return Campaign(info, testbed, techniques, measurements, data, impairments, _only_under(data, impairments))


def _only_under(data: dict, impairments: list[Impairment]) -> dict[str, tuple[str, ...]]:
    """Each [[measurement]]'s `impairments` (the labels of the impairments it runs under, e.g. a
    black-hole cell unimpaired beside set-ups under a loss ladder), checked against the campaign's."""
    known = [impairment.label for impairment in impairments]
    only: dict[str, tuple[str, ...]] = {}
    for number, entry in enumerate(data.get("measurement") or [], start=1):
        if "impairments" not in entry:
            continue
        where = f"measurement[{number}].impairments"
        labels = entry["impairments"]
        labels = [labels] if isinstance(labels, str) else labels
        if not isinstance(labels, list) or not labels or not all(isinstance(label, str) for label in labels):
            raise UserError(f"{where}: must be an impairment's label or a list of them; allowed values: "
                            + ", ".join(map(repr, known)))
        for label in labels:
            if label not in known:
                raise UserError(f"{where}: {label!r} is not an impairment of this campaign; allowed values: "
                                + ", ".join(map(repr, known)))
        stripped = {k: v for k, v in entry.items() if k != "impairments"}
        for params in _entries({"measurement": [stripped]}, "measurement", MEASUREMENTS):
            only[measurement_label(params)] = tuple(labels)
    return only


def _impairments(data: dict, testbed: TestbedSpec) -> list[Impairment]:
    return [impairment for entry in _impairment_entries(data, testbed) for impairment in entry]


def _impairment_entries(data: dict, testbed: TestbedSpec) -> list[list[Impairment]]:
    """Each [[impairment]] entry expanded (several impairments when it sweeps), validated."""
    entries = data.get("impairment", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UserError("impairment: must be an array of tables ([[impairment]])")
    result: list[list[Impairment]] = []
    backends: dict[str, int] = {}
    for number, entry in enumerate(entries, start=1):
        where = f"impairment[{number}]"
        params = validate_model(ImpairmentParams, entry, where)
        try:
            expanded = expand_impairment(params)
        except SpecError as exc:
            field = next((k for k in ("netem", "egress", "ingress") if entry.get(k) is not None), "spec")
            raise UserError(f"{where}.{field}: {exc}") from None
        if any(one.placement == "router" for one in expanded) and not testbed.router:
            raise UserError(f"{where}.placement: 'router' needs [testbed] router = true; allowed here: auto, endpoints")
        if params.backend != "auto":
            backends.setdefault(params.backend, number)
        result.append(expanded)
    if len(backends) > 1:
        (first, a), (second, b) = list(backends.items())[:2]
        raise UserError(f"impairment[{b}].backend: {second!r} differs from {first!r} of impairment[{a}]; "
                        "one impairment backend per campaign")
    _require_unique([i.label for entry in result for i in entry], "impairment")
    return result


REHEARSAL_SECONDS = 2.0
REHEARSAL_PINGS = 10


def rehearsal(campaign: Campaign) -> Campaign:
    """The campaign cut down to minutes, to try on new hardware before a run of hours.

    Every technique is brought up and proven, every measurement runs once with short traffic,
    and every [[impairment]] entry is applied at the two ends of its sweep: whatever a full run
    would trip over (a missing cipher, a daemon that will not start, an impairment the backend
    refuses) shows up in the rehearsal too. It is stored under its own campaign name, so it never
    mixes with (or resumes into) the real results.
    """
    info = campaign.info.model_copy(update={"name": f"{campaign.name}-rehearsal", "repetitions": 1})
    impairments = [NO_IMPAIRMENT]
    if campaign.impaired:
        entries = _impairment_entries(campaign.source, campaign.testbed)
        impairments = [point for entry in entries for point in (entry[0], entry[-1])[:len(entry)]]
        named = {label for labels in campaign.only_under.values() for label in labels}
        impairments += [i for i in campaign.impairments if i.label in named and i not in impairments]
    measurements = [MEASUREMENTS[m.kind].rehearsed(m, REHEARSAL_SECONDS, REHEARSAL_PINGS)
                    for m in _swept_ends(campaign)]
    testbed = campaign.testbed.model_copy(update={axis: _ends(getattr(campaign.testbed, axis))
                                                  for axis in ("cores", "mtu")})
    return dataclasses.replace(campaign, info=info, measurements=measurements, impairments=impairments,
                               testbed=testbed)


def _ends(values: list) -> list:
    """A swept list at its two ends (the scaling axes' rehearsal)."""
    return list(dict.fromkeys(values[:1] + values[-1:]))


def _swept_ends(campaign: Campaign) -> list[Params]:
    """The measurements with each swept list (streams) cut to its two ends."""
    entries = campaign.source.get("measurement")
    if not entries:
        return campaign.measurements
    trimmed = [{k: _ends(v) if k in LIST_AXES and isinstance(v, list) else v for k, v in entry.items()}
               for entry in entries]
    return _entries({"measurement": trimmed}, "measurement", MEASUREMENTS)


def technique_label(params: Params) -> str:
    """The name a technique goes by in tables: its label, or its kind plus what differs from defaults."""
    if params.label:
        return params.label
    extra = params.non_default_settings()
    return params.kind + "".join(f" {k}={_show(v)}" for k, v in extra.items())


def measurement_label(params: Params) -> str:
    return MEASUREMENTS[params.kind](params).label()


def _show(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def section_table(data: dict, section: str) -> dict:
    value = data.get(section, {})
    if not isinstance(value, dict):
        raise UserError(f"{section}: must be a table ([{section}])")
    return value


def _entries(data: dict, section: str, registry: dict) -> list[Params]:
    entries = data.get(section)
    if not entries:
        raise UserError(f"{section}: at least one [[{section}]] is required; kinds: {', '.join(registry)}")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UserError(f"{section}: must be an array of tables ([[{section}]])")
    result = []
    for number, entry in enumerate(entries, start=1):
        where = f"{section}[{number}]"
        kind = entry.get("kind")
        if kind is None:
            raise UserError(f"{where}.kind: required key is missing; allowed values: {', '.join(registry)}")
        if kind not in registry:
            raise UserError(f"{where}.kind: {kind!r} is not allowed; allowed values: {', '.join(registry)}")
        axes = TECHNIQUE_AXES if section == "technique" else LIST_AXES
        if section == "measurement":  # which impairments it runs under: the campaign's (_only_under)
            entry = {k: v for k, v in entry.items() if k != "impairments"}
        points = [validate_model(registry[kind].Params, point, where) for point in _points(entry, where, axes)]
        if section == "technique":
            for params in points:
                _require_tunnels_allowed(params, where)
        swept = tuple(k for k in axes if isinstance(entry.get(k), list))
        named = [_name_swept(params, entry, axes) for params in points] if section == "technique" else points
        result += [params.swept(swept) for params in named]
    return result


LIST_AXES = ("streams",)  # measurement keys a list sweeps: one measurement per value (S3's scaling)
# technique keys a list sweeps: one technique per value (a daemon's builds, the tunnels it holds)
TECHNIQUE_AXES = ("version", "tunnels")


def _points(entry: dict, where: str, axes: tuple[str, ...]) -> list[dict]:
    """The entry, or one entry per value of its swept keys; a label gets the value appended."""
    try:
        points = expand_lists(entry, axes)
    except ValueError as exc:
        raise UserError(f"{where}.{exc}") from None
    if len(points) > 1 and entry.get("label"):
        points = [{**p, "label": entry["label"] + "".join(f" {k}={p[k]}" for k in axes
                                                          if isinstance(entry.get(k), list))} for p in points]
    return points


def _name_swept(params: Params, entry: dict, axes: tuple[str, ...]) -> Params:
    """An unlabelled technique's swept values name each of its points, the default's too, after
    its other settings and in the same order at every point (`nebula version=1.10.3` beside
    `nebula version=1.9.7`, `ipsec cipher=x tunnels=1` beside `ipsec cipher=x tunnels=10`)."""
    swept = [k for k in axes if isinstance(entry.get(k), list)]
    if not swept or entry.get("label"):
        return params
    fixed = {k: v for k, v in params.non_default_settings().items() if k not in swept}
    label = params.kind + "".join(f" {k}={_show(v)}" for k, v in fixed.items())
    return params.model_copy(update={"label": label + "".join(f" {k}={_show(getattr(params, k))}" for k in swept)})


def _require_tunnels_allowed(params: Params, where: str) -> None:
    ceiling, reason = TECHNIQUES[params.kind].tunnel_ceiling(params)
    if params.tunnels > ceiling:
        raise UserError(f"{where}.tunnels: {params.tunnels} is more than {params.kind} allows here ({reason}); "
                        f"allowed values: 1 to {ceiling}")


def _require_rekeyable(techniques: list[Params], measurements: list[Params]) -> None:
    """A measurement that renews keys (Measurement.renews_keys: rekey, rekey_rate, rate_search with
    rekey_in_trials) runs on every technique of the campaign: each must rekey on demand, but the
    baseline where the kind runs it as the control."""
    for where, measurement in enumerate(measurements, start=1):
        need = MEASUREMENTS[measurement.kind].renews_keys(measurement)
        if need is None:
            continue
        for number, params in enumerate(techniques, start=1):
            if need == "control" and TECHNIQUES[params.kind].is_reference:
                continue  # it runs the same without rekeys: the control the others are compared with
            reason = TECHNIQUES[params.kind].cannot_rekey(params)
            if reason:
                able = [kind for kind, cls in TECHNIQUES.items() if _rekeys_by_default(cls)]
                raise UserError(f"technique[{number}]: {reason}, so measurement[{where}] (kind = "
                                f"\"{measurement.kind}\") cannot run on it; allowed technique kinds: {', '.join(able)}")


def _require_measurable(techniques: list[Params], measurements: list[Params], testbed: TestbedSpec) -> None:
    """What a kind needs of the testbed (a router) or of every technique (a server to restart)."""
    for number, params in enumerate(measurements, start=1):
        reason = MEASUREMENTS[params.kind].refused(params, techniques, testbed)
        if reason:
            raise UserError(f"measurement[{number}].{reason}")


def _require_runnable_on(techniques: list[Params], testbed: TestbedSpec) -> None:
    """What a technique must not do to the machines of this kind of testbed."""
    meshes = sorted({params.kind for params in techniques if TECHNIQUES[params.kind].mesh})
    if meshes and testbed.nodes is None:
        raise UserError(f"testbed.nodes: {', '.join(meshes)} brings up a mesh of nodes and needs a mesh testbed; "
                        f"allowed: nodes = {MIN_NODES} to {MAX_NODES} in [testbed] (kind = \"local\")")
    pairs = [(number, params.kind) for number, params in enumerate(techniques, start=1)
             if not TECHNIQUES[params.kind].mesh]
    if testbed.nodes is not None and pairs:
        # A technique between two hosts runs between the mesh testbed's first two nodes, which need
        # an open path to each other: it does not traverse NATs.
        behind = [f"n{i}: {nat}" for i, nat in enumerate(nat_per_node(testbed.nat, testbed.nodes)[:2]) if nat != "none"]
        if behind:
            number, kind = pairs[0]
            raise UserError(f"testbed.nat: technique[{number}] ({kind}) runs between nodes n0 and n1, and "
                            f"{', '.join(behind)} stands between them (it does not traverse NATs); allowed: "
                            "\"none\" for n0 and n1, or only mesh techniques")
    for number, params in enumerate(techniques, start=1):
        reason = TECHNIQUES[params.kind].refused_on(params, testbed.kind)
        if reason:
            raise UserError(f"technique[{number}].{reason}")


def _rekeys_by_default(cls) -> bool:
    try:
        return cls.cannot_rekey(cls.Params()) is None
    except ValueError:  # a technique whose parameters have required keys (external)
        return False


def _require_unique(labels: list[str], section: str) -> None:
    seen = set()
    for number, label in enumerate(labels, start=1):
        if label in seen:
            raise UserError(f"{section}[{number}].label: {label!r} is used twice; give each {section} a distinct label")
        seen.add(label)
