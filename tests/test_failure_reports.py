"""Kernel runs that fail say why: on the console and in result.json, with a status of their own where
the task or the model's server is at fault (issue 28)."""

import json
import shutil
import sys
import subprocess
from pathlib import Path

from rich.console import Console

from agent.configuration import load_settings
from agent.runner import run_tasks
from agent.trace import read_trace
from tools.result import KernelResult

sys.path.insert(0, str(Path(__file__).parent))
from llm_servers import ScriptedOpenAIServer  # noqa: E402

SCALE = Path(__file__).parent / "agent_fixtures" / "tasks" / "scale"
COMPILE_ERROR_CODE = """#include <cstdint>
extern "C" void scale(const float* x, float* y, float alpha, int32_t n) {
  for (int i = 0; i < n; i++) y[i] = alpah * x[i];
}"""


def scale_task(tmp_path: Path, edit=None, source: str | None = None) -> Path:
    task_dir = tmp_path / "scale"
    shutil.copytree(SCALE, task_dir)
    if source is not None:
        (task_dir / "kernel.cu").write_text(source)
    raw = json.loads((task_dir / "task.json").read_text())
    if edit:
        edit(raw)
    (task_dir / "task.json").write_text(json.dumps(raw))
    return task_dir / "task.json"


def run(tmp_path: Path, task: Path, **settings) -> tuple[KernelResult, str]:
    """(the result as written to result.json, what the console printed)"""
    console = Console(file=(tmp_path / "console.txt").open("w"), width=200)
    run_tasks([task], load_settings(sandbox="local", **settings), out=tmp_path / "out", console=console)
    console.file.close()
    return KernelResult.read(tmp_path / "out" / "scale"), (tmp_path / "console.txt").read_text()


def closed_url() -> str:
    srv = ScriptedOpenAIServer().start()
    url = srv.base_url
    srv.stop()
    return url


def test_an_llm_server_that_is_not_there_ends_the_kernel_at_its_first_attempt(tmp_path):
    url = closed_url()
    result, printed = run(tmp_path, scale_task(tmp_path), llm="openai-compatible:local-model", llm_base_url=url,
                          budgets={"max_iters": 6})
    assert result.status == "llm_unreachable" and result.iterations == 1
    assert "Connection refused" in result.reason and url.removesuffix("/v1") in result.reason
    assert "llm_unreachable" in printed and "Connection refused" in printed
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    [failed] = trace.of("scale", type="llm_response")
    assert failed["data"]["error"]["attempts"] == 2  # one quick retry, not llm_max_retries per attempt


def test_a_compile_error_is_in_the_result_with_the_compilers_first_lines(tmp_path):
    with ScriptedOpenAIServer([f"```cpp\n{COMPILE_ERROR_CODE}\n```"]) as server:
        result, printed = run(tmp_path, scale_task(tmp_path), llm="openai-compatible:local-model",
                              llm_base_url=server.base_url, budgets={"max_iters": 1})
    assert result.status == "compile_error"
    assert result.reason.startswith("candidate.cpp:3: ") and "alpah" in result.reason
    assert result.details and "alpah" in result.details[0]
    assert json.loads((tmp_path / "out" / "scale" / "result.json").read_text())["reason"] == result.reason
    assert "scale: compile_error" in printed and "alpah" in printed


def test_an_unsupported_kernel_says_which_construct(tmp_path):
    source = ("__global__ void scale_kernel(const float* x, float* y, float alpha, int n) {\n"
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (i < n) { __nanosleep(100); y[i] = alpha * x[i]; }\n}\n")
    result, printed = run(tmp_path, scale_task(tmp_path, source=source))
    assert result.status == "unsupported"
    assert "__nanosleep" in result.reason and "kernel.cu:3" in result.reason
    assert "scale: unsupported" in printed and "__nanosleep" in printed


def test_a_dtype_the_kernel_does_not_take_is_an_invalid_task_and_nothing_runs(tmp_path):
    task = scale_task(tmp_path, lambda raw: raw["buffers"][0].update(dtype="float64"))
    result, printed = run(tmp_path, task)
    assert result.status == "invalid_task"
    assert result.reason.startswith(f"{task}: field 'launches[0].args[0]': buffer 'x' is float64, but parameter")
    assert "'scale_kernel'" in result.reason and "points to float" in result.reason
    assert "scale: invalid_task" in printed and "buffer 'x' is float64" in printed
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    assert not trace.of("scale", type="tool_call")  # no plan, compile or check ran


def test_buffers_larger_than_the_sandbox_memory_are_an_invalid_task(tmp_path):
    task = scale_task(tmp_path, lambda raw: raw["buffers"][0].update(shape=[1_000_000, 1_000_000]))
    result, _ = run(tmp_path, task)
    assert result.status == "invalid_task"
    assert "1,000,000,000,000 elements" in result.reason and "limits.memory_mb" in result.reason


def test_a_cuda_syntax_error_is_an_invalid_task_naming_file_line_and_column(tmp_path):
    source = (SCALE / "kernel.cu").read_text().replace("threadIdx.x;", "threadIdx.x")
    result, printed = run(tmp_path, scale_task(tmp_path, source=source))
    assert result.status == "invalid_task"
    assert f"{tmp_path / 'scale' / 'kernel.cu'}:2:" in result.reason and "expected ';'" in result.reason
    assert "expected ';'" in printed


def test_a_candidates_compile_error_names_the_candidates_own_file(box):
    from tools.spec import load_task
    from tools.verify import check

    task = load_task(SCALE / "task.json")
    code = '#include "missing_header.h"\nextern "C" void scale(const float* x, float* y, float alpha, int n) {}\n'
    report = check(task, code, box, threads=[1], candidate_name="compileerr.cpp")
    assert report.status == "compile_error"
    assert [(o.file, o.line) for o in report.observations] == [("compileerr.cpp", 1)]
    assert [d.file for d in report.build.errors] == ["compileerr.cpp"]


def agent(*args: str, cwd: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_agent_lower_refuses_a_cuda_syntax_error(tmp_path):
    (tmp_path / "bad.cu").write_text("__global__ void k(float* x) {\n    x[0] = 1\n}\n")
    proc = agent("lower", "bad.cu", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == "error: bad.cu:2:13: expected ';' after expression"


def test_agent_lower_says_what_it_left_out_on_stderr_and_keeps_stdout_for_the_code(tmp_path):
    (tmp_path / "app.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n"
                                     "__global__ void t(float* x) { __nanosleep(10); x[0] = 2; }\n"
                                     "void launch(float* x) { k<<<1, 1>>>(x); }\nint main() { return 0; }\n")
    proc = agent("lower", "app.cu", cwd=tmp_path)
    assert proc.returncode == 1  # the __nanosleep kernel is unsupported
    assert "void k(dim3 gridDim" in proc.stdout
    assert not [line for line in proc.stdout.splitlines() if line.startswith(("app.cu:", "left out"))]
    assert "left out (host code): launch (app.cu:3), main (app.cu:4)" in proc.stderr
    assert "app.cu:2: unsupported __nanosleep" in proc.stderr
