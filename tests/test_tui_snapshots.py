"""Snapshot tests of the main screens at 80x24: Textual's `export_screenshot()` SVG compared
with the stored one in tests/tui_snapshots/ (UPDATE_TUI_SNAPSHOTS=1 rewrites them after a
deliberate change; a mismatch writes NAME.new.svg beside the stored one and shows a text diff).

The screens show fixed content (a task that was not started, a trace written here with fixed
events), so nothing volatile (times, paths, timings) reaches them.
"""

import asyncio
import sys
from pathlib import Path

from agent.commands.tui import make_app
from agent.configuration import Settings
from agent.trace import TraceWriter

sys.path.insert(0, str(Path(__file__).parent))
from tui_support import COMPILE_ERROR_CODE, GOOD_CODE, SCALE_TASK, assert_snapshot  # noqa: E402

SIZE = (80, 24)
CUDA = (SCALE_TASK.parent / "kernel.cu").read_text()


def write_run(path: Path) -> None:
    """A small finished run of `scale`: attempt 1 does not compile, attempt 2 is correct."""
    with TraceWriter(path, argv=["agent", "port"], config={}, run_id="snapshot") as trace:
        k = {"kernel": "scale"}
        trace.event("node_start", node="run", data={"translator": "openai:gpt-4o", "tasks": ["scale"]})
        trace.event("node_start", node="kernel", **k, data={"thread_id": "scale-0", "resumed": False, "translator": "openai:gpt-4o"})
        trace.event("node_start", node="plan", **k, data={"attempt": 0})
        trace.event("artifact", node="plan", **k, data={"name": "task.json", "role": "task", "content": {"name": "scale", "cuda": "kernel.cu"}})
        trace.event("artifact", node="plan", **k, data={"name": "kernel.cu", "role": "task_file", "encoding": "utf-8", "content": CUDA})
        trace.event("tool_result", node="plan", **k, data={"tool": "plan", "attempt": 0, "result": {"pattern": "elementwise", "lowering": None}})
        trace.event("node_end", node="plan", **k, data={"elapsed_s": 2.0})
        for n, code in ((1, COMPILE_ERROR_CODE), (2, GOOD_CODE)):
            trace.event("node_start", node="translate", **k, data={"attempt": n})
            trace.event("llm_response", node="translate", **k, data={"attempt": n, "reply": {"input_tokens": 1500, "output_tokens": 60, "cost_usd": 0.0043}})
            trace.event("artifact", node="translate", **k, data={"name": f"attempt-{n}.cpp", "role": "candidate", "attempt": n, "mode": "fix" if n > 1 else "translate", "code": code})
            trace.event("node_end", node="translate", **k, data={"elapsed_s": 1.5})
            trace.event("node_start", node="compile", **k, data={"attempt": n})
            trace.event("tool_result", node="compile", **k, data={"tool": "compile", "attempt": n, "result": {"ok": n > 1}})
            if n == 1:
                trace.event("observation", node="compile", **k, data={"kind": "compile", "message": "‘alpah’ was not declared in this scope; did you mean ‘alpha’?", "file": "candidate.cpp", "line": 4, "severity": "error", "data": {}, "attempt": 1})
                trace.event("decision", node="decide", **k, data={"next": "fix", "reason": "attempt 1 ended compile_error"})
        trace.event("node_start", node="test", **k, data={"attempt": 2})
        trace.event("tool_result", node="test", **k, data={"tool": "check", "attempt": 2, "result": {"status": "correct", "max_abs_err": 0.0}})
        trace.event("node_start", node="profile", **k, data={"attempt": 2})
        trace.event("tool_result", node="profile", **k, data={"tool": "profile", "attempt": 2, "result": {"status": "correct", "time_s": {"candidate": 0.001, "reference": 0.0035}, "speedup_vs_reference": 3.5}})
        trace.event("observation", node="profile", **k, data={"kind": "vectorization", "message": "loop vectorized using 32 byte vectors", "file": "scale.cpp", "line": 4, "severity": "info", "data": {}, "attempt": 2})
        trace.event("node_end", node="profile", **k, data={"elapsed_s": 4.0})
        trace.event("decision", node="decide", **k, data={"next": "done", "reason": "iteration budget spent (2 of max_iters=2)"})
        trace.event("node_end", node="kernel", **k, data={"status": "correct", "paused": False})
        trace.event("node_end", node="run", data={"kernels": {"scale": "correct"}})


def shoot(path: Path, out: Path | None, shots: list[tuple[list[str], str]]) -> None:
    """Open the app on PATH; for each (keys, name): press the keys, compare the screen with NAME."""
    async def session():
        app = make_app(path, Settings(sandbox="local"), start=False, out=out)
        app.animation_level = "none"  # a tab's sliding underline would be caught mid-way on a busy machine
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            for keys, name in shots:
                await pilot.press(*keys)
                await pilot.pause()
                assert_snapshot(app, name)
        if app.session is not None:
            assert app.session.close()

    asyncio.run(session())


def test_main_screen_of_a_task_not_started_help_and_hint_prompt(tmp_path):
    shoot(SCALE_TASK, tmp_path / "out", [
        ([], "main_not_started"),
        (["question_mark"], "help"),
        (["escape", "h", *"use a blocked loop"], "hint_prompt"),
    ])


def test_main_screen_of_a_finished_run(tmp_path):
    out = tmp_path / "out"
    write_run(out / "trace.jsonl")
    shoot(SCALE_TASK, out, [(["d"], "main_diff"), (["4"], "main_observations"), (["2"], "main_cpu_error_line")])


def test_trace_viewer(tmp_path):
    trace = tmp_path / "run.jsonl"
    write_run(trace)
    shoot(trace, None, [(["n"] * 13 + ["2"], "trace_viewer_cpu"), (["G", "3"], "trace_viewer_observations")])
