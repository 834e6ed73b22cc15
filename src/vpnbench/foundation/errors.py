"""One error hierarchy: everything vpnbench raises on purpose is a VpnbenchError.

The runner decides what an error means by its class, not by a list of built-in types:
a UserError stops before anything is touched, a TestbedError stops the run cleanly, a
TechniqueError fails the cells of one bring-up, a MeasurementError fails one cell, and a
HostError (a command that failed or timed out on a host) fails whatever it was part of.
"""


class VpnbenchError(Exception):
    """Base of every error vpnbench raises on purpose; its text is one line for the user."""


class UserError(VpnbenchError):
    """A mistake in the user's input or environment: reported as one line, exit code 2."""

    exit_code = 2


class TestbedError(UserError):
    """The testbed or the impairment backend could not be set up: the run stops, cleanly."""

    __test__ = False
    exit_code = 1


class HostError(VpnbenchError):
    """A host could not do what was asked (a command failed, a daemon did not start)."""


class TechniqueError(VpnbenchError):
    """A technique could not be brought up or died; fails the cells it serves."""


class ImpairmentError(VpnbenchError):
    """An impairment could not be applied or changed."""


class MeasurementError(VpnbenchError):
    """A measurement failed; the cell is stored as failed with this reason and the raw output."""

    def __init__(self, reason: str, raw: dict[str, str] | None = None, metrics: dict | None = None):
        super().__init__(reason)
        self.raw = raw or {}
        self.metrics = metrics or {}


class SchemaError(UserError):
    """A results file this version cannot read (written by a newer vpnbench)."""
