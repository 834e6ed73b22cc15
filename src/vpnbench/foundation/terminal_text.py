"""Text from the results database on a terminal (issue 28 item 9).

Every string a worker, a campaign file or a tool's output put into the database (host names,
testbed and technique labels, errors) is printed through `plain`: rich would take its [tags]
for markup (`[blink red]`), and an ESC or other control byte would reach the terminal and drive
it (`\\x1b[2J` clears the screen, an OSC sequence retitles the window or writes the clipboard).
Such characters are shown as their Python escapes instead, so what was stored is seen as it is."""

import re

from rich.markup import escape

# C0 controls but tab and newline, DEL, C1 controls (0x9b is a one-byte CSI on some terminals),
# and Unicode's bidirectional overrides and isolates, which reorder what the eye reads.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(value: object) -> str:
    """value with its control characters as \\xNN: for text printed without markup."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(value))


def plain(value: object) -> str:
    """value as rich markup that prints exactly its characters, control characters as \\xNN."""
    return escape(visible(value))
