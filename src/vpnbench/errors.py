"""Error types that carry a one-line message for the user."""


class UserError(Exception):
    """A mistake in the user's input or environment: reported as one line, exit code 2."""

    exit_code = 2


class TechniqueError(Exception):
    """A technique could not be brought up or died; fails the cells it serves."""


class MeasurementError(Exception):
    """A measurement failed; the cell is stored as failed with this reason and the raw output."""

    def __init__(self, reason: str, raw: dict[str, str] | None = None, metrics: dict | None = None):
        super().__init__(reason)
        self.raw = raw or {}
        self.metrics = metrics or {}
