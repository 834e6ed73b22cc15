"""The registry of impairment backends, by name.

A backend is one module: a subclass of `impair_backends.ImpairmentBackend` that declares its
name, availability probe, whether it needs a bump-in-the-wire hop, the testbed kinds it may
run on and its default queue limit, and is registered with `register`. The campaign schema's
allowed values, doctor, the runner's choice and the methodology checks read this registry.
This module imports nothing of vpnbench, so the schema (impair.model, the testbed spec) can use
it: the names are looked up when a value is validated. The built-in backends are registered
where the runtime is assembled (impair_backends.py), which the campaign loads with its schema.
"""

from typing import Annotated

from pydantic import AfterValidator

BACKENDS: dict[str, type] = {}  # name -> ImpairmentBackend subclass, in the order auto tries them


def register(cls: type) -> type:
    BACKENDS[cls.name] = cls
    return cls


def allowed_names() -> tuple[str, ...]:
    return ("auto", *BACKENDS)


def _known(value: str) -> str:
    if value not in allowed_names():
        raise ValueError(f"{value!r} is not allowed; allowed values: {', '.join(map(repr, allowed_names()))}")
    return value


def allowed_here(testbed_kind: str, besides: str = "") -> str:
    """The backend values a testbed of this kind allows, other than `besides`, as a message says them."""
    return ", ".join(["auto", *(n for n, c in BACKENDS.items() if n != besides and testbed_kind in c.testbeds)])


def wrong_kind(name: str, testbed_kind: str) -> str | None:
    """None when backend `name` may run on a testbed of this kind (or is not known); else why not."""
    cls = BACKENDS.get(name)
    if cls is None or testbed_kind in cls.testbeds:
        return None
    return f"{name!r} runs on kind = {' or '.join(map(repr, cls.testbeds))} only"


BackendName = Annotated[str, AfterValidator(_known)]  # "auto" or a registered backend's name
