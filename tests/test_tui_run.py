"""`agent tui` on a kernel task: the default (compiler) translator runs it to the end while the
app is closed mid-run and reopened, paused and resumed; then the user steers the finished kernel
through its checkpoint (another translator, a hint that reaches the next attempt's prompt, the
diff between attempts, accepting an attempt). The model is the real openai client against the
scripted local server (tests/llm_servers.py). Checkpoints and trace are the ones `agent port` uses.

One compiler run (module fixture) serves every test: the plan step alone takes many seconds.
Its budget is one attempt, so the run is the lowering alone (no optimizer rounds).
"""

import asyncio
import json
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent.commands.tui import make_app
from agent.configuration import Settings
from agent.runner import CHECKPOINT_DB, kernel_state
from agent.trace import read_trace
from agent.tui.model import FINISHED, PAUSED, RUNNING

sys.path.insert(0, str(Path(__file__).parent))
from llm_servers import ScriptedOpenAIServer  # noqa: E402
from tui_support import COMPILE_ERROR_CODE, GOOD_CODE, SCALE_TASK, answer, screen_text, wait_for  # noqa: E402

SIZE = (80, 24)
HINT = "keep the loop simple: one multiply per element"


@dataclass
class CompilerRun:
    out: Path
    thread_id: str = ""
    seen: dict = field(default_factory=dict)  # what the app showed and the checkpoint held along the way


def node_starts(trace: Path) -> Counter:
    """(node, attempt) -> how often it started."""
    return Counter((e["node"], e["data"].get("attempt")) for e in read_trace(trace).events
                   if e["type"] == "node_start" and e["kernel"] == "scale")


@pytest.fixture(scope="module")
def compiler_run(tmp_path_factory) -> CompilerRun:
    run = CompilerRun(tmp_path_factory.mktemp("tui") / "out")
    cfg = Settings(sandbox="local", budgets={"max_iters": 1})

    async def first_session():
        app = make_app(SCALE_TASK, cfg, start=True, out=run.out)
        async with app.run_test(size=SIZE) as pilot:
            # quit while the plan step runs, or the first attempt's translate: with the precompiled
            # shim the plan can be over before a busy machine's app shows it (then 4 setup errors)
            await wait_for(pilot, lambda: app.view.kernels["scale"].stage in ("plan", "translate"), "the plan step")
            run.seen["state while planning"] = app.run_state
            await pilot.press("q")
        return app

    app = asyncio.run(first_session())
    run.seen["closed in time"] = app.session.close()  # the step in flight finishes and is checkpointed
    run.thread_id = app.session.thread_ids["scale"]
    run.seen["after quit"] = kernel_state(run.out / CHECKPOINT_DB, run.thread_id)
    run.seen["result after quit"] = (run.out / "scale" / "result.json").exists()

    async def second_session():
        app = make_app(SCALE_TASK, cfg, start=True, out=run.out)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            run.seen["log on reopening"] = list(app.view.log)
            # translate (or compile, where the first session quit during translate) is the first step
            # after reopening; pausing during it, compile or test stops the run mid-attempt, before
            # profile and decide. With the precompiled shim translate
            # and compile can be over in a fraction of a second, too soon to be seen on a busy machine
            await wait_for(pilot, lambda: app.view.kernels["scale"].stage in ("translate", "compile", "test"),
                           "the first attempt")
            await pilot.press("p")
            await wait_for(pilot, lambda: app.run_state == PAUSED, "the pause")
            run.seen["stage when paused"] = app.view.kernels["scale"].stage
            run.seen["checkpoint when paused"] = kernel_state(run.out / CHECKPOINT_DB, run.thread_id)
            run.seen["screen when paused"] = screen_text(app)
            await pilot.press("s")
            await wait_for(pilot, lambda: app.run_state == FINISHED, "the end of the run")
            run.seen["kernel"] = app.view.kernels["scale"]
            run.seen["screen"] = screen_text(app)
            for key in ("2", "4", "d"):
                await pilot.press(key)
                await pilot.pause()
                run.seen[f"screen {key}"] = screen_text(app)
            await pilot.press("q")
        return app

    app = asyncio.run(second_session())
    run.seen["closed at the end"] = app.session.close()
    return run


def test_closing_mid_run_and_reopening_continues_from_the_checkpoint(compiler_run):
    seen = compiler_run.seen
    assert seen["state while planning"] == RUNNING and seen["closed in time"]
    after_quit = seen["after quit"]  # the plan that was running when the app closed is checkpointed
    assert after_quit["plan"] and after_quit["lowering"] and after_quit["attempts"] == []
    assert not seen["result after quit"]
    assert "scale: plan -> elementwise, lowering ok" in seen["log on reopening"]  # the first session's trace, shown
    counts = node_starts(compiler_run.out / "trace.jsonl")
    assert counts[("plan", 0)] == 1  # not redone after reopening
    assert counts[("compile", 1)] == counts[("test", 1)] == counts[("profile", 1)] == 1
    assert counts[("kernel", None)] == 3  # first session, reopened, resumed after the pause


def test_pause_stops_between_steps_and_resume_continues(compiler_run):
    seen = compiler_run.seen
    assert seen["stage when paused"] == "paused"
    paused = seen["checkpoint when paused"]
    assert paused["result"] is None and paused["attempts"] == [] and paused["current"]["n"] == 1  # mid-attempt
    assert seen["screen when paused"].splitlines()[0].startswith(" paused ")


def test_the_compiler_run_ends_correct_with_its_code_observations_and_result(compiler_run):
    seen, out = compiler_run.seen, compiler_run.out
    kernel = seen["kernel"]
    assert (kernel.stage, kernel.status, kernel.iterations) == ("done", "correct", 1)
    assert kernel.speedup and kernel.speedup > 0
    assert "1/1 done · 1 correct" in seen["screen"]
    assert 'extern "C" void scale' in kernel.current_code and "  1 #include" in seen["screen 2"]
    assert "[vectorization]" in seen["screen 4"] or "[profile]" in seen["screen 4"]
    assert "lowering → attempt 1" in seen["screen d"] and "are the same code" in seen["screen d"]
    result = json.loads((out / "scale" / "result.json").read_text())
    assert result["status"] == "correct" and result["backend"] == "compiler" and seen["closed at the end"]
    assert (out / "scale" / "scale.cpp").read_text() == kernel.current_code


def test_translator_change_hint_diff_and_accept_through_the_checkpoint(compiler_run, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(compiler_run.out, out)
    with ScriptedOpenAIServer([answer(COMPILE_ERROR_CODE), answer(GOOD_CODE)]) as server:
        cfg = Settings(llm_base_url=server.base_url, sandbox="local", budgets={"max_iters": 3})

        async def session():
            app = make_app(SCALE_TASK, cfg, start=True, out=out)
            async with app.run_test(size=SIZE) as pilot:
                kernel = lambda: app.view.kernels["scale"]  # noqa: E731
                await pilot.pause()
                assert kernel().finished and app.run_state == FINISHED  # nothing to do: not started

                await pilot.press("m")
                await pilot.press(*"nosuch:model", "enter")  # the prompt's text is selected: typing replaces it
                await pilot.pause()
                assert kernel().translator == "compiler"  # refused, with a message
                await pilot.press("m")
                await pilot.press(*"openai-compatible:m", "enter")
                await wait_for(pilot, lambda: kernel().translator == "openai-compatible:m", "the translator change")

                await pilot.press("h")
                await pilot.press(*HINT, "enter")
                # The finished kernel gets another attempt (optimize: it was correct) and runs at once.
                await wait_for(pilot, lambda: kernel().iterations == 3 and kernel().finished, "the model's attempts")
                await wait_for(pilot, lambda: app.run_state == FINISHED, "the run's end")
                assert [kernel().attempts[n].status for n in (2, 3)] == ["compile_error", "correct"]
                assert kernel().status == "correct"

                await pilot.press("d")
                await pilot.pause()
                text = screen_text(app)  # the diff tab: attempt 2 against attempt 3
                assert "attempt 2 → attempt 3" in text
                assert "-  for (int i = 0; i < n; i++) y[i] = alpah * x[i];" in text
                assert "+  for (int i = 0; i < n; i++) y[i] = alpha * x[i];" in text
                await pilot.press("left_square_bracket")  # versions: lowering, attempts 1, 2, 3
                assert "attempt 1 → attempt 3" in screen_text(app)
                await pilot.press("4")
                shown = app.main.query_one("#observations-body").content  # the whole list, not only what fits
                assert f"[human] {HINT}" in str(shown)

                await pilot.press("a", "enter")  # accept attempt 1, the compiler's
                await wait_for(pilot, lambda: kernel().accepted == 1, "the accepted attempt")
                await pilot.press("q")
            return app

        app = asyncio.run(session())
        assert app.session.close()
    # The hint went to the model with the next attempt's request (attempt 2), as a user hint, and only there.
    prompts = [json.dumps(r.body) for r in server.requests]
    assert len(prompts) == 2 and HINT in prompts[0] and "hint from the user" in prompts[0] and HINT not in prompts[1]
    assert "alpah" in prompts[1]  # attempt 3 was asked to fix attempt 2's compile error
    saved = kernel_state(out / CHECKPOINT_DB, compiler_run.thread_id)
    assert saved["translator"] == "openai-compatible:m" and saved["result"]["attempt"] == 1
    result = json.loads((out / "scale" / "result.json").read_text())
    assert result["status"] == "correct" and result["iterations"] == 3
    assert (out / "scale" / "scale.cpp").read_text() == app.view.kernels["scale"].attempts[1].code
    user = [e["data"] for e in read_trace(out / "trace.jsonl").events if e["node"] == "user"]
    assert [d.get("kind") or d.get("next") for d in user] == ["continue", "human", "optimize", "done"]
