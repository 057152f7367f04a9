"""Re-record the traces shipped in traces/ (.venv/bin/python traces/record.py [compiler] [openai]).

- compiler_scale.jsonl: the default `compiler` translator on tests/agent_fixtures/tasks/scale.
- openai_two_fixes.jsonl: `openai:gpt-4o` through the real openai client against the scripted
  local server (tests/llm_servers.py): a compile error, then a wrong result, then correct code.
Both are replayed by tests/test_agent_replay.py; re-record them when a tool's verdicts or
messages change on purpose.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from rich.console import Console  # noqa: E402

from agent.configuration import load_settings  # noqa: E402
from agent.runner import run_tasks  # noqa: E402

TASK = Path("tests/agent_fixtures/tasks/scale/task.json")
GOOD = """#include <cstdint>
extern "C" void scale(const float* x, float* y, float alpha, int32_t n) {
  #pragma omp parallel for simd
  for (int i = 0; i < n; i++) y[i] = alpha * x[i];
}"""
COMPILE_ERROR = GOOD.replace("y[i] = alpha", "y[i] = alpah")
WRONG = GOOD.replace("alpha * x[i]", "alpha + x[i]")


def record(name: str, settings) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        [outcome] = run_tasks([TASK], settings, out=Path(tmp), console=Console(stderr=True))
        print(f"{name}: {outcome.result.status} after {outcome.result.iterations} iterations")
        shutil.copy(Path(tmp) / "trace.jsonl", ROOT / "traces" / name)


def main(which: list[str]) -> None:
    from llm_servers import ScriptedOpenAIServer

    os.chdir(ROOT)
    if "compiler" in which:
        record("compiler_scale.jsonl", load_settings(llm="compiler", sandbox="local"))
    if "openai" not in which:
        return
    answers = [f"```cpp\n{code}\n```" for code in (COMPILE_ERROR, WRONG, GOOD)]
    with ScriptedOpenAIServer(answers) as server:
        os.environ["OPENAI_BASE_URL"] = server.base_url
        os.environ.setdefault("OPENAI_API_KEY", "sk-recording-not-a-real-key")
        record("openai_two_fixes.jsonl", load_settings(llm="openai:gpt-4o", sandbox="local", budgets={"max_iters": 3}))


if __name__ == "__main__":
    main(sys.argv[1:] or ["compiler", "openai"])
