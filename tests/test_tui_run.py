"""`agent tui` on a kernel task with the default (compiler) translator: run to the end, closed
mid-run and reopened, paused and resumed; the checkpoint and trace are the ones `agent port` uses."""

import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

from agent.commands.tui import make_app
from agent.configuration import Settings
from agent.runner import CHECKPOINT_DB, kernel_state
from agent.trace import read_trace
from agent.tui.session import FINISHED, PAUSED, RUNNING

sys.path.insert(0, str(Path(__file__).parent))
from tui_support import SCALE_TASK, screen_text, wait_for  # noqa: E402

SIZE = (80, 24)


def starts(trace: Path) -> Counter:
    return Counter(e["node"] for e in read_trace(trace).events if e["type"] == "node_start" and e["kernel"] == "scale")


def test_closed_mid_run_reopened_paused_resumed_runs_to_the_end(tmp_path):
    out = tmp_path / "out"
    cfg = Settings(sandbox="local")

    async def first_session():
        app = make_app(SCALE_TASK, cfg, start=True, out=out)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.view.kernels["scale"].stage == "plan", "the plan step")
            assert app.run_state == RUNNING
            await pilot.press("q")  # quit while plan runs
        return app

    app = asyncio.run(first_session())
    assert app.session.close()  # the step in flight finished and was checkpointed
    saved = kernel_state(out / CHECKPOINT_DB, app.session.thread_ids["scale"])
    assert saved["plan"] and saved["lowering"] and not saved["attempts"]
    assert not (out / "scale" / "result.json").exists()

    async def second_session():
        app = make_app(SCALE_TASK, cfg, start=True, out=out)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            # Reopened where it stopped: the trace of the first session is on screen, and the run continues.
            assert "scale: plan -> elementwise, lowering ok" in app.view.log
            await wait_for(pilot, lambda: app.view.kernels["scale"].stage == "compile", "the compile step")
            await pilot.press("p")
            await wait_for(pilot, lambda: app.run_state == PAUSED, "the pause")
            kernel = app.view.kernels["scale"]
            assert kernel.stage == "paused" and not kernel.finished
            paused_at = kernel_state(out / CHECKPOINT_DB, app.session.thread_ids["scale"])
            assert paused_at["result"] is None and paused_at["attempts"] == []  # mid-attempt
            assert " paused " in screen_text(app).splitlines()[0]

            await pilot.press("s")
            await wait_for(pilot, lambda: app.run_state == FINISHED, "the end of the run")
            kernel = app.view.kernels["scale"]
            assert (kernel.stage, kernel.status, kernel.iterations) == ("done", "correct", 2)
            assert kernel.speedup and kernel.speedup > 0
            table = screen_text(app)
            assert "1/1 done · 1 correct" in table and "scale" in table and "done" in table

            await pilot.press("2")  # the CPU code: the deterministic lowering
            assert 'extern "C" void scale' in kernel.current_code
            assert "1 #include" in screen_text(app)
            await pilot.press("4")
            assert "[vectorization]" in screen_text(app) or "[profile]" in screen_text(app)
            await pilot.press("d")
            await pilot.pause()
            assert "lowering → attempt 1" in screen_text(app) and "are the same code" in screen_text(app)
            await pilot.press("q")
        return app

    app = asyncio.run(second_session())
    assert app.session.close()
    result = json.loads((out / "scale" / "result.json").read_text())
    assert result["status"] == "correct" and result["backend"] == "compiler"
    assert (out / "scale" / "scale.cpp").read_text() == app.view.kernels["scale"].current_code
    counts = starts(out / "trace.jsonl")
    assert counts["plan"] == 1  # not redone after the reopening
    assert counts["compile"] == counts["test"] == counts["profile"] == 1
    assert counts["kernel"] == 3  # first session, reopened, resumed after the pause
