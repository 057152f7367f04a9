"""The loop's decisions, budgets and result choice; the compiler translator's fix/optimize; hints."""

from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from agent.configuration import load_settings
from agent.graph import _decide, budget_spent, final_result
from agent.port_graph import _tuning
from agent.llm.scripted import ScriptedModel
from agent.runner import add_hint, kernel_state, run_tasks, set_translator, CHECKPOINT_DB
from agent.state import initial_state
from agent.translators.base import TranslateRequest
from agent.translators.compiler import CompilerTranslator
from agent.translators.llm import LLMTranslator
from tools.observations import Observation
from tools.result import KernelResult
from tools.spec import load_task

FIXTURES = Path(__file__).parent / "agent_fixtures" / "tasks"


def _state(**counters):
    state = initial_state(kernel="k", task={}, base_dir=".", translator="openai:m", run_limits={})
    state["counters"].update(counters)
    return state


def _attempt(n, status, mode="translate", **extra):
    return {"n": n, "mode": mode, "code": "int x;", "status": status, "observations": [], "exhausted": False, "fatal": False, **extra}


def test_failures_go_back_to_fix_and_correct_goes_to_optimize():
    cfg = load_settings()
    state = _state(iterations=1)
    assert _decide(state, _attempt(1, "compile_error"), cfg)["next"] == "fix"
    assert _decide(state, _attempt(1, "incorrect"), cfg)["next"] == "fix"
    assert _decide(state, _attempt(1, "correct"), cfg)["next"] == "optimize"


def test_optimizing_continues_only_while_it_gains():
    cfg = load_settings()
    state = _state(iterations=2)
    faster = _attempt(2, "correct", mode="optimize", best_time_before=1.0, time_s={"candidate": 0.5})
    slower = _attempt(2, "correct", mode="optimize", best_time_before=1.0, time_s={"candidate": 0.99})
    assert _decide(state, faster, cfg)["next"] == "optimize"
    assert _decide(state, slower, cfg) == {"next": "done", "reason": "correct; the last optimization found no further gain"}


def test_exhausted_or_fatal_translator_ends_the_loop():
    cfg = load_settings()
    state = _state(iterations=1)
    assert _decide(state, _attempt(1, "no_code", mode="fix", exhausted=True), cfg)["next"] == "done"
    assert _decide(state, _attempt(1, "no_code", fatal=True), cfg)["next"] == "done"
    assert _decide(state, _attempt(1, "no_code"), cfg)["next"] == "fix"  # a malformed answer: ask again


def test_every_budget_stops_the_loop():
    cfg = load_settings()
    b = cfg.budgets
    assert budget_spent(_state(iterations=1), cfg) is None
    assert "iteration" in budget_spent(_state(iterations=b.max_iters), cfg)
    assert "wall-time" in budget_spent(_state(iterations=1, elapsed_s=b.max_wall_s + 1), cfg)
    # another attempt starts only where checking it, as long as the last one's check, still fits
    assert "too short for another attempt" in budget_spent(
        _state(iterations=1, elapsed_s=0.6 * b.max_wall_s, checking_s=0.5 * b.max_wall_s), cfg)
    assert budget_spent(_state(iterations=1, elapsed_s=0.6 * b.max_wall_s, checking_s=0.3 * b.max_wall_s), cfg) is None
    assert "token" in budget_spent(_state(iterations=1, tokens=b.max_tokens), cfg)
    assert "money" in budget_spent(_state(iterations=1, cost_usd=b.budget_usd), cfg)
    run_nearly_spent = _state(iterations=1, tokens=50)
    run_nearly_spent["run_limits"] = {"tokens": 40}
    assert "token" in budget_spent(run_nearly_spent, cfg)  # what is left of the run's budget counts too
    assert _decide(_state(iterations=b.max_iters), _attempt(1, "incorrect"), cfg)["next"] == "done"


def test_a_budget_that_ends_the_search_is_on_the_result_and_leaves_the_kernel_to_a_rerun(tmp_path):
    cfg = load_settings()
    state = _state(iterations=1, elapsed_s=cfg.budgets.max_wall_s + 1)
    faithful = _attempt(1, "correct", time_s={"candidate": 1e-3})
    decision = _decide(state, faithful, cfg)
    assert decision["next"] == "done" and decision["budget"]
    state["best"] = faithful
    stopped = final_result(state, [faithful], stopped=decision["reason"])
    assert stopped["status"] == "correct" and "wall-time budget spent" in stopped["stopped"]
    assert final_result(state, [faithful])["stopped"] is None
    # the port's record of that kernel: not "no faster version", but a budget, tried again on a rerun
    (tmp_path / "k.cpp").write_text("int x;")
    outcome = SimpleNamespace(out_dir=tmp_path, result=KernelResult(**stopped))
    port = SimpleNamespace(cfg=cfg)
    record = _tuning(port, "k", tmp_path / "task.json", outcome, cfg.tune_budget_s / 3)
    assert record["status"] == "skipped" and record["retry"] and "budget ended its search" in record["note"]
    # given the whole budget: a rerun would give it no more, so it is not retried
    record = _tuning(port, "k", tmp_path / "task.json", outcome, cfg.tune_budget_s)
    assert record["status"] == "skipped" and not record.get("retry") and "a larger --tune-budget" in record["note"]
    # stopped by its count of attempts: a rerun would stop there again, so it is not retried
    outcome.result.iterations = cfg.budgets.max_iters
    record = _tuning(port, "k", tmp_path / "task.json", outcome, cfg.tune_budget_s / 3)
    assert record["status"] == "faithful" and not record.get("retry") and "--max-iters" in record["note"]
    outcome.result.stopped = None
    assert _tuning(port, "k", tmp_path / "task.json", outcome, cfg.tune_budget_s / 3)["status"] == "faithful"


def test_result_is_the_best_correct_attempt_even_after_later_failures():
    state = _state(iterations=3)
    best = _attempt(1, "correct", reference_kind="c", max_abs_err=0.0, time_s={"candidate": 1e-3}, speedup_vs_reference=2.0, threads=2)
    state["best"] = best
    result = final_result(state, [best, _attempt(2, "incorrect"), _attempt(3, "compile_error")])
    assert result["status"] == "correct" and result["attempt"] == 1 and result["speedup_vs_reference"] == 2.0
    state["best"] = None
    assert final_result(state, [_attempt(1, "incorrect"), _attempt(2, "compile_error")])["status"] == "compile_error"
    assert final_result(state, [])["status"] == "unsupported"


def test_compiler_fix_only_reports_and_optimize_uses_the_seam():
    task = load_task(FIXTURES / "scale" / "task.json")
    failure = Observation(kind="mismatch", message="y differs at [3]")
    fix = CompilerTranslator(optimizer=None).translate(TranslateRequest(task, task.source(), mode="fix", observations=[failure]))
    assert fix.code is None and fix.observations and "cannot repair" in fix.observations[0].message
    assert "y differs at [3]" in fix.observations[0].message

    none = CompilerTranslator(optimizer=None)
    none.optimizer = None  # whatever is installed: show the no-optimizer report
    assert none.translate(TranslateRequest(task, "", mode="optimize", best_code="int a;")).code is None

    seen = {}

    def optimizer(task, code, observations, *, threads=None):
        seen.update(code=code, threads=threads)
        return code + "\n// unrolled", "unrolled the loop"

    translator = CompilerTranslator(optimizer=optimizer, options={"threads": 3, "fast_math_ok": False})
    out = translator.translate(TranslateRequest(task, "", mode="optimize", best_code="int a;"))
    assert seen == {"code": "int a;", "threads": 3}  # only the options the optimizer names are passed
    assert out.code.endswith("// unrolled") and out.notes == "unrolled the loop"


BAD = '```cpp\nextern "C" void scale(const float* x, float* y, float alpha, int n) { y[0] = alpah; }\n```'


def test_hint_and_translator_override_reach_the_next_translation(tmp_path):
    cfg = load_settings(llm="openai:scripted-model", sandbox="local", budgets={"max_iters": 2})
    model = ScriptedModel([BAD, BAD], name="openai:scripted-model")
    translator = LLMTranslator(model, cfg)
    console = Console(file=open(tmp_path / "console.txt", "w"))
    task = FIXTURES / "scale" / "task.json"
    out = tmp_path / "out"

    first = run_tasks([task], cfg, out=out, console=console, interrupt_before=["translate"], translator_for=lambda spec: translator)
    assert first[0].paused and not model.calls  # stopped after plan, before any model call
    db = out / CHECKPOINT_DB
    add_hint(db, first[0].thread_id, "remember alpha is a float scalar")
    set_translator(db, first[0].thread_id, "openai:other-model")
    assert kernel_state(db, first[0].thread_id)["translator"] == "openai:other-model"

    asked = []
    second = run_tasks([task], cfg, out=out, console=console, interrupt_before=["translate"],
                       translator_for=lambda spec: asked.append(spec) or translator)
    assert second[0].paused and second[0].resumed
    assert asked == ["openai:other-model"]
    prompt = model.calls[0]["messages"][0]["content"]
    assert "remember alpha is a float scalar" in prompt


def test_plan_infers_a_missing_launch_and_later_steps_use_it(tmp_path):
    import json

    raw = json.loads((FIXTURES / "scale" / "task.json").read_text())
    del raw["launches"]
    task_dir = tmp_path / "scale"
    task_dir.mkdir()
    for name in ("kernel.cu", "ref.c"):
        (task_dir / name).write_text((FIXTURES / "scale" / name).read_text())
    (task_dir / "task.json").write_text(json.dumps(raw))
    out = tmp_path / "out"
    console = Console(file=open(tmp_path / "console.txt", "w"))
    [paused] = run_tasks([task_dir / "task.json"], load_settings(sandbox="local"), out=out, console=console, interrupt_before=["translate"])
    state = kernel_state(out / CHECKPOINT_DB, paused.thread_id)
    assert state["task"]["launches"] == [
        {"kernel": "scale_kernel", "grid": [20], "block": [256], "shared_bytes": 0, "template_args": [], "args": ["x", "y", "alpha", "n"]}
    ]
    assert state["plan"]["launches"].startswith("inferred: scale_kernel<<<20, 256>>>")
    assert state["lowering"] and 'extern "C" void scale(' in state["lowering"]
    assert state["plan"]["kernels"] == ["scale_kernel"] and state["plan"]["pattern"] == "elementwise"


def test_launches_are_not_guessed_where_one_1d_launch_is_not_safe():
    import json

    from agent.toolbox import infer_launches
    from tools.cuda import CudaModule
    from tools.cuda.frontend import KernelInfo, Param
    from tools.spec import parse_task

    raw = json.loads((FIXTURES / "scale" / "task.json").read_text())
    del raw["launches"]
    task = parse_task(raw, base_dir=FIXTURES / "scale")
    params = [Param(name=n, type="float *") for n in ("x", "y", "alpha", "n")]
    one = KernelInfo(name="scale_kernel", params=params, file="k.cu", line=1)
    assert infer_launches(task, CudaModule(filename="k.cu", kernels=[one]))[0] is not None
    two = CudaModule(filename="k.cu", kernels=[one, one.model_copy(update={"name": "other"})])
    launches, why, _, _ = infer_launches(task, two)
    assert launches is None and why.startswith("not given, and not inferred") and "other" in why
    odd = KernelInfo(name="k", params=[Param(name="zz", type="int")], file="k.cu", line=1)
    launches, why, _, _ = infer_launches(task, CudaModule(filename="k.cu", kernels=[odd]))
    assert launches is None and "['zz'] match no buffer" in why


def test_the_faithful_lowering_of_a_task_whose_reference_it_is_is_neither_checked_nor_timed(tmp_path):
    """A port's captured launch has the faithful lowering as its reference, and the run that captured
    it ran that lowering: checking that attempt compares it with itself, and the optimizer times
    its variants against it anyway. A search
    that ends for lack of time without a faster version says so: the budget, not "nothing faster"."""
    import json

    from tools.optimize import Proposal

    raw = json.loads((FIXTURES / "scale" / "task.json").read_text())
    raw["reference"] = {"kind": "lowered"}
    (tmp_path / "scale").mkdir()
    import numpy as np

    np.save(tmp_path / "scale" / "x.npy", np.linspace(-1, 1, 5000, dtype=np.float32))
    raw["buffers"][0]["data"] = "x.npy"  # captured: the launch's input as a run of the program had it
    (tmp_path / "scale" / "kernel.cu").write_text((FIXTURES / "scale" / "kernel.cu").read_text())
    (tmp_path / "scale" / "task.json").write_text(json.dumps(raw))
    searched = []

    def optimizer(task, code, observations, *, max_seconds=None):
        searched.append(code)
        return Proposal(code, "optimizer: nothing kept", [], improved=False, stopped="the optimizer's search ran out of time (5s of 5s)")

    translator = CompilerTranslator(optimizer=optimizer)
    out = tmp_path / "out"
    console = Console(file=open(tmp_path / "console.txt", "w"))
    [outcome] = run_tasks([tmp_path / "scale" / "task.json"], load_settings(sandbox="local"), out=out, console=console,
                          translator_for=lambda spec: translator)
    events = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines() if line.strip()]
    tools = [e["data"]["tool"] for e in events if e.get("type") == "tool_call"]
    assert "check" not in tools and "profile" not in tools, tools
    assert any(e.get("type") == "decision" and e["data"].get("check") == "not run" for e in events)
    assert len(searched) == 1  # the faithful lowering went to the optimizer, whose answer was not tested again
    assert outcome.result.status == "correct" and outcome.result.iterations == 2
    assert outcome.result.stopped == "the optimizer's search ran out of time (5s of 5s)"
