"""Replace one section of bench/RESULTS.md, leaving the others (written by other scripts) alone."""

import re
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


def write_section(heading: str, body: str) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    section = f"## {heading}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text.rstrip("\n") + "\n")
