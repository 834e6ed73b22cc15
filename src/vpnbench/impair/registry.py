"""The registry of impairment backends, by name.

A backend is one module: a subclass of `impair.backends.ImpairmentBackend` that declares its
name, availability probe, whether it needs a bump-in-the-wire hop, the testbed kinds it may
run on and its default queue limit, and is registered with `@register`. The campaign schema's
allowed values, doctor, the runner's choice and the methodology checks read this registry.
This module imports nothing, so the schema (impair.model, the testbed spec) can use it.
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


def kind_error(name: str, testbed_kind: str) -> str | None:
    """Why backend `name` cannot run on a testbed of this kind (None: it may)."""
    cls = BACKENDS.get(name)
    if cls is None or testbed_kind in cls.testbeds:
        return None
    usable = [other for other, c in BACKENDS.items() if testbed_kind in c.testbeds]
    return (f"{name!r} runs on kind = {' or '.join(map(repr, cls.testbeds))} only; "
            f"allowed here: {', '.join(['auto', *usable])}")


BackendName = Annotated[str, AfterValidator(_known)]  # "auto" or a registered backend's name
