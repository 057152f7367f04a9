"""The trace viewer: open a shipped trace and step through it, the code and observations as
they were at each event; opening what is no trace is one clear error."""

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable

from agent.commands.tui import make_app
from agent.configuration import Settings
from agent.errors import UserError
from agent.trace import read_trace
from agent.tui.screens import TraceScreen

sys.path.insert(0, str(Path(__file__).parent))
from tui_support import SCALE_TASK, screen_text  # noqa: E402

SHIPPED = Path(__file__).parent.parent / "traces" / "openai_two_fixes.jsonl"


def body(app, pane: str) -> str:
    """What a pane holds (all of it, not only what fits on the screen)."""
    content = app.screen.query_one(f"#{pane}-body").content
    return getattr(content, "code", None) or str(content)  # a rich Syntax keeps its code


def test_step_through_a_shipped_trace():
    trace = read_trace(SHIPPED)
    events = trace.events
    first_error = next(i for i, e in enumerate(events) if e["type"] == "observation" and e["data"].get("kind") == "compile")
    second_artifact = [i for i, e in enumerate(events) if e["type"] == "artifact" and e["data"].get("role") == "candidate"][1]

    async def session():
        app = make_app(SHIPPED, Settings(), start=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, TraceScreen)
            assert f"event 1/{len(events)}" in screen_text(app)
            assert body(app, "trace-code") == "(no kernel yet at this step)"

            events_table = app.screen.query_one("#trace-events", DataTable)
            events_table.move_cursor(row=first_error - 1)  # as the arrow keys would, to the event before
            await pilot.press("n")  # attempt 1's compile error
            assert f"event {first_error + 1}/{len(events)}" in screen_text(app)
            assert "alpah" in body(app, "trace-code")  # the code as it was then
            assert "‘alpah’ was not declared" in body(app, "trace-observations")
            assert "mismatch" not in body(app, "trace-observations")  # not yet: attempt 2 is still to come

            await pilot.press("G")  # the last event: the final code, every observation
            assert f"event {len(events)}/{len(events)}" in screen_text(app)
            assert "alpha * x[i]" in body(app, "trace-code") and "alpah" not in body(app, "trace-code")
            assert "mismatch" in body(app, "trace-observations")

            await pilot.press("g")
            assert f"event 1/{len(events)}" in screen_text(app)
            events_table.move_cursor(row=second_artifact)  # attempt 2's code
            await pilot.pause()
            assert "alpah" not in body(app, "trace-code")
            await pilot.press("b")  # one step back: attempt 1's code again
            assert f"event {second_artifact}/{len(events)}" in screen_text(app)
            assert "alpah" in body(app, "trace-code")
            await pilot.press("q")  # the viewer alone: q quits

    asyncio.run(session())


def test_what_is_no_trace_or_task_is_one_clear_error(tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(UserError, match="notes.jsonl: not an agent trace"):
        make_app(bad, Settings(), start=True)
    with pytest.raises(UserError, match="no kernel tasks and no CUDA project here"):
        make_app(tmp_path, Settings(), start=True)
    broken = tmp_path / "task.json"
    broken.write_text('{"name": "x", "cuda_code": "", "buffers": [{"name": "a"}]}')
    with pytest.raises(UserError, match="task.json"):
        make_app(broken, Settings(), start=True, out=tmp_path / "out")
    out = tmp_path / "out"
    out.mkdir()
    (out / "trace.jsonl").write_text("not json\n")  # an earlier run's trace, damaged
    with pytest.raises(UserError, match="trace.jsonl: line 1 is not a JSON trace header"):
        make_app(SCALE_TASK, Settings(), start=True, out=out)
    twins = tmp_path / "twins"
    for name in ("a", "b"):
        (twins / name).mkdir(parents=True)
        shutil.copy(SCALE_TASK, twins / name / "task.json")
        shutil.copy(SCALE_TASK.parent / "kernel.cu", twins / name)
        shutil.copy(SCALE_TASK.parent / "ref.c", twins / name)
    with pytest.raises(UserError, match="another task is also named 'scale'"):
        make_app(twins, Settings(), start=True, out=tmp_path / "out2")


def test_a_repository_opens_with_its_kernels_and_their_cuda(tmp_path):
    project = Path(__file__).parent.parent / "examples" / "projects" / "vector_ops"

    async def session():
        app = make_app(project, Settings(sandbox="local"), start=False, out=tmp_path / "out")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert list(app.view.kernels) == ["vec_add", "saxpy", "scale_clamp"]
            assert "__global__ void vec_add" in app.view.kernels["vec_add"].cuda
            assert "vec_add" in screen_text(app) and "waiting" in screen_text(app)
            await pilot.press("h")  # no per-kernel loop to steer in a repository port: said, not done
            await pilot.pause()
            assert len(app.screen_stack) == 2 and app.session.state == "idle"
            await pilot.press("q")
        assert app.session.close()

    asyncio.run(session())
