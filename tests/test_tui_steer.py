"""Steering a kernel from the TUI through its checkpoint: a hint that reaches the next
attempt's prompt, the diff between attempts, accepting an attempt, changing the translator.
The model is the real openai client against the scripted local server (tests/llm_servers.py)."""

import asyncio
import json
import sys
from pathlib import Path

from agent.commands.tui import make_app
from agent.configuration import Settings
from agent.runner import CHECKPOINT_DB, kernel_state
from agent.trace import read_trace
from agent.tui.session import FINISHED

sys.path.insert(0, str(Path(__file__).parent))
from llm_servers import ScriptedOpenAIServer  # noqa: E402
from tui_support import COMPILE_ERROR_CODE, GOOD_CODE, SCALE_TASK, answer, screen_text, wait_for  # noqa: E402

HINT = "the variable is called alpha, not alpah"


def test_hint_reaches_the_next_attempt_then_diff_accept_and_translator(tmp_path):
    out = tmp_path / "out"
    with ScriptedOpenAIServer([answer(COMPILE_ERROR_CODE), answer(GOOD_CODE)]) as server:
        cfg = Settings(llm="openai-compatible:m", llm_base_url=server.base_url, sandbox="local", budgets={"max_iters": 1})

        async def session():
            app = make_app(SCALE_TASK, cfg, start=True, out=out)
            async with app.run_test(size=(80, 24)) as pilot:
                kernel = lambda: app.view.kernels["scale"]  # noqa: E731
                await wait_for(pilot, lambda: app.run_state == FINISHED, "the first attempt's end")
                assert (kernel().stage, kernel().status) == ("failed", "compile_error")  # budget of one attempt spent
                await pilot.press("2")
                assert "❱ 4" in screen_text(app)  # the compiler's error line, marked in the code
                await pilot.press("d")
                assert "lowering → attempt 1" in screen_text(app)

                await pilot.press("h")
                await pilot.press(*HINT, "enter")
                # The finished kernel gets another attempt; the run starts again on its own.
                await wait_for(pilot, lambda: kernel().iterations == 2 and kernel().finished, "the hinted attempt's end")
                await wait_for(pilot, lambda: app.run_state == FINISHED, "the run's end")
                assert (kernel().stage, kernel().status) == ("done", "correct")
                assert any(o["kind"] == "human" and o["message"] == HINT for o in kernel().observations)

                await pilot.pause()
                text = screen_text(app)  # the diff tab: attempt 1 against attempt 2
                assert "attempt 1 → attempt 2" in text
                assert "-  for (int i = 0; i < n; i++) y[i] = alpah * x[i];" in text
                assert "+  for (int i = 0; i < n; i++) y[i] = alpha * x[i];" in text
                await pilot.press("left_square_bracket")  # the left side back to the lowering
                assert "lowering → attempt 2" in screen_text(app)
                await pilot.press("4")
                assert f"[human] {HINT}" in screen_text(app)

                await pilot.press("a")  # accept attempt 1 (it did not compile): the result says so
                await pilot.press("enter")
                await wait_for(pilot, lambda: kernel().status == "compile_error", "the accepted attempt")
                await pilot.press("a", "down", "enter")  # then attempt 2 again
                await wait_for(pilot, lambda: kernel().status == "correct", "the accepted attempt")

                await pilot.press("m")
                await pilot.press(*"compiler", "enter")  # the prompt's text is selected: typing replaces it
                await wait_for(pilot, lambda: kernel().translator == "compiler", "the translator change")
                await pilot.press("m")
                await pilot.press(*"nosuch:model", "enter")
                await pilot.pause()
                assert kernel().translator == "compiler"  # refused, with a message
                await pilot.press("q")
            return app

        app = asyncio.run(session())
        assert app.session.close()
    # The hint went to the model with the second request, as a human observation, and only there.
    prompts = [json.dumps(r.body) for r in server.requests]
    assert len(prompts) == 2 and HINT not in prompts[0] and HINT in prompts[1] and "hint from the user" in prompts[1]
    saved = kernel_state(out / CHECKPOINT_DB, app.session.thread_ids["scale"])
    assert saved["translator"] == "compiler" and saved["result"]["attempt"] == 2
    assert json.loads((out / "scale" / "result.json").read_text())["status"] == "correct"
    assert (out / "scale" / "scale.cpp").read_text().strip() == GOOD_CODE
    user = [e["data"] for e in read_trace(out / "trace.jsonl").events if e["node"] == "user"]
    assert [d.get("kind") or d.get("next") for d in user] == ["human", "fix", "done", "done", "continue"]
