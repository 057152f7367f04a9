"""Helpers for the TUI tests: waiting on the app, screen text, SVG snapshots."""

from __future__ import annotations

import difflib
import html
import os
import re
import time
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "tui_snapshots"
UPDATE = os.environ.get("UPDATE_TUI_SNAPSHOTS") == "1"
WAIT_S = int(os.environ.get("TUI_TEST_WAIT_S", "300"))  # generous: a busy machine; a run normally takes seconds

SCALE_TASK = Path(__file__).parent / "agent_fixtures" / "tasks" / "scale" / "task.json"
GOOD_CODE = """#include <cstdint>
extern "C" void scale(const float* x, float* y, float alpha, int32_t n) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++) y[i] = alpha * x[i];
}"""
COMPILE_ERROR_CODE = GOOD_CODE.replace("y[i] = alpha", "y[i] = alpah")


def answer(code: str) -> str:
    return f"Here is the CPU version.\n\n```cpp\n{code}\n```\n"


async def wait_for(pilot, condition, what: str) -> None:
    """Let the app run until `condition()` holds; fails (never hangs) when it does not come."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if not pilot.app.is_running:
            raise AssertionError(f"the app stopped while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {WAIT_S}s:\n{screen_text(pilot.app)}")
        await pilot.pause(0.05)


_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)" textLength="[\d.]+" clip-path="[^"]*">(.*?)</text>')
CHAR_W = 12.2  # Textual's SVG cell width


def svg_text(svg: str) -> str:
    """The characters of an exported screenshot, row by row."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, chars in _TEXT.findall(svg):
        rows.setdefault(float(y), []).append((float(x), html.unescape(chars)))
    lines = []
    for y in sorted(rows):
        line = ""
        for x, chars in sorted(rows[y]):
            line = line.ljust(round(x / CHAR_W)) + chars
        lines.append(line.replace("\xa0", " ").rstrip())
    return "\n".join(lines)


def screen_text(app) -> str:
    return svg_text(app.export_screenshot())


def normalise(svg: str, *volatile: str) -> str:
    for value in volatile:
        svg = svg.replace(html.escape(value).replace(" ", "&#160;"), "VOLATILE").replace(value, "VOLATILE")
    return svg


def assert_snapshot(app, name: str, *volatile: str) -> None:
    """The screen matches tests/tui_snapshots/NAME.svg (UPDATE_TUI_SNAPSHOTS=1 rewrites it)."""
    svg = normalise(app.export_screenshot(title="agent tui"), *volatile)
    path = SNAPSHOTS / f"{name}.svg"
    if UPDATE or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(svg)
        if not UPDATE:
            raise AssertionError(f"{path} did not exist and was written: check it, then run again")
        return
    stored = path.read_text()
    if svg != stored:
        (path.parent / f"{name}.new.svg").write_text(svg)
        diff = "\n".join(difflib.unified_diff(svg_text(stored).splitlines(), svg_text(svg).splitlines(),
                                              "stored", "now", lineterm=""))
        raise AssertionError(f"{name}: the screen differs from {path} (new one: {name}.new.svg; "
                             f"UPDATE_TUI_SNAPSHOTS=1 accepts it). Text diff (empty: only colours or layout):\n{diff}")
