"""A report as a person sees it: opened in headless Chromium, every <details> opened (the worst
case a reader can make), then measured in the page itself: each table's width against the
page's, and the height in pixels of every bar the bar figures drew."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

WIDTH, HEIGHT = 1280, 900  # a laptop's browser window

MEASURE = """<script>
document.querySelectorAll("details").forEach(d => { d.open = true; });
const page = document.documentElement.clientWidth;
const tables = [...document.querySelectorAll("table")].map(t => {
  const box = t.getBoundingClientRect();
  return {id: t.id || t.className, left: box.left, right: box.right, rows: t.rows.length};
});
const bars = [...document.querySelectorAll('figure[data-type="bars"]')].map(f => ({
  name: f.dataset.name,
  bars: [...f.querySelectorAll('g[id^="bar-"]')].map(g => [g.id, g.getBoundingClientRect().height])}));
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify({page, scroll: document.documentElement.scrollWidth, tables, bars});
document.body.appendChild(out);
</script>"""


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed (make test installs it)")
    return path


def chromium_args(tmp_path: Path, name: str) -> list[str]:
    # A fresh profile directory inside tmp_path: nothing is left in ~/.config.
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
            f"--user-data-dir={tmp_path / f'profile-{name}'}", f"--window-size={WIDTH},{HEIGHT}"]


def measure(html: Path, tmp_path: Path) -> dict:
    """The page's width, each table's left and right edge, each bar figure's bar heights (px)."""
    return run_in_page(html, tmp_path, MEASURE)


def run_in_page(html: Path, tmp_path: Path, script: str) -> dict:
    """What `script` (a <script> element that leaves its findings as JSON in <pre id="measured">)
    measured in the page as Chromium laid it out."""
    probe = tmp_path / f"{html.stem}-measured.html"
    probe.write_text(html.read_text().replace("</body>", script + "\n</body>"))
    dom = subprocess.run([*chromium_args(tmp_path, html.stem), "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.S)
    assert found, "the measuring script did not run"
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def screenshot(html: Path, tmp_path: Path, height: int = 4000) -> Path:
    shot = tmp_path / f"{html.stem}.png"
    args = chromium_args(tmp_path, f"{html.stem}-shot")
    args[-1] = f"--window-size={WIDTH},{height}"
    done = subprocess.run([*args, f"--screenshot={shot}", html.as_uri()], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    return shot


def check_readable(html: Path, tmp_path: Path, min_bar_px: float = 3.0) -> dict:
    """No table wider than the page; every technique's bar in every headline bar figure (throughput,
    RTT, ...) at least min_bar_px tall. CPU bars are left out: an idle client's 1 % beside a busy
    router's 60 % is a true, small bar (on a real demo run: 2.5 px)."""
    sizes = measure(html, tmp_path)
    assert sizes["tables"], "no table measured"
    wide = [t for t in sizes["tables"] if t["right"] > sizes["page"] + 0.5 or t["left"] < -0.5]
    assert not wide, f"tables wider than the {sizes['page']} px page: {wide}"
    assert sizes["scroll"] <= sizes["page"], "the page scrolls sideways"
    for figure in sizes["bars"]:
        assert figure["bars"], f"{figure['name']}: no bars found in the SVG"
        if "-cpu-of-client-and-server-" in figure["name"]:
            continue
        low = [(bar, height) for bar, height in figure["bars"] if height < min_bar_px]
        assert not low, f"{figure['name']}: bars under {min_bar_px} px: {low}"
    return sizes
