"""Extraction of the C++ translation from model answers, and the prompt templates."""

from __future__ import annotations

import json

import pytest

import prompts
from agent.llm.extract import extract_code

CODE = 'extern "C" void scale(float* x, int n) {\n  for (int i = 0; i < n; ++i) x[i] *= 2;\n}'


def reasons(found) -> list[str]:
    return [o.data["reason"] for o in found.observations]


def test_structured_json() -> None:
    found = extract_code(json.dumps({"code": CODE, "notes": "doubled"}), entry="scale")
    assert found.code == CODE + "\n" and found.notes == "doubled" and not found.observations


def test_json_in_a_json_fence_with_fenced_code_inside() -> None:
    answer = "```json\n" + json.dumps({"code": f"```cpp\n{CODE}\n```", "notes": ""}) + "\n```"
    assert extract_code(answer, entry="scale").code == CODE + "\n"


@pytest.mark.parametrize("lang", ["cpp", "c++", "", "C++ title=x.cpp"])
def test_fenced_block(lang: str) -> None:
    found = extract_code(f"Here it is.\n```{lang}\n{CODE}\n```\nIt doubles.", entry="scale")
    assert found.code == CODE + "\n" and not found.observations
    assert found.notes == "Here it is.\n\nIt doubles."


def test_block_defining_the_entry_wins_then_the_largest_then_the_last() -> None:
    helper = "static inline float twice(float v) { return v * 2.0f; /* a long helper, longer than the entry */ }"
    answer = f"```cpp\n{helper}\n```\n```cpp\n{CODE}\n```\n```bash\ng++ -O3 x.cpp -o x -fopenmp && ./x\n```"
    assert extract_code(answer, entry="scale").code == CODE + "\n"
    two = f"```cpp\n{CODE}\n```\nBetter:\n```cpp\n// v2\n{CODE}\n```"
    assert extract_code(two, entry="scale").code.startswith("// v2")
    same = "```cpp\nint a;\n```\n```cpp\nint b;\n```"
    assert extract_code(same).code == "int b;\n"


def test_bare_code_is_accepted() -> None:
    found = extract_code('#include <cmath>\n' + CODE, entry="scale")
    assert found.code.startswith("#include <cmath>")


def test_truncated_inside_block_is_an_observation() -> None:
    found = extract_code("```cpp\n" + CODE[:30], entry="scale", truncated=True)
    assert found.code is None and reasons(found) == ["truncated"]
    assert "cut off" in found.observations[0].message and found.observations[0].severity == "error"


def test_truncated_json_is_an_observation() -> None:
    found = extract_code(json.dumps({"code": CODE})[:40], entry="scale", truncated=True)
    assert found.code is None and reasons(found) == ["truncated"]


def test_truncated_after_a_complete_block_keeps_the_code_with_a_warning() -> None:
    found = extract_code(f"```cpp\n{CODE}\n```\nNotes that go on and", entry="scale", truncated=True)
    assert found.code == CODE + "\n" and reasons(found) == ["truncated"]
    assert found.observations[0].severity == "warning"


def test_unterminated_fence_without_truncation_is_accepted_with_a_warning() -> None:
    found = extract_code(f"```cpp\n{CODE}\n", entry="scale")
    assert found.code == CODE + "\n" and reasons(found) == ["unterminated_fence"]


@pytest.mark.parametrize("answer, reason", [
    ('{"code": "int x;", "notes": }', "malformed_json"),
    ('{"notes": "forgot the code"}', "malformed_json"),
    ('{"code": "  ", "notes": ""}', "empty_code"),
    ("I cannot do that.", "no_code"),
    ("", "unreadable"),
])
def test_unusable_answers_become_observations(answer: str, reason: str) -> None:
    found = extract_code(answer, entry="scale")
    assert found.code is None and reasons(found) == [reason]
    assert found.observations[0].kind == "llm"


def test_missing_entry_is_a_warning() -> None:
    found = extract_code("```cpp\nvoid other() {}\n```", entry="scale")
    assert found.code == "void other() {}\n" and reasons(found) == ["no_entry"]


def test_render_templates_and_errors() -> None:
    text = prompts.render("output_code_block")
    assert "```cpp" in text
    assert "extern \"C\"" in prompts.render("system")
    with pytest.raises(prompts.PromptError, match="no value given for \\$task"):
        prompts.render("translate", attempt=1)
    with pytest.raises(prompts.PromptError, match="no such prompt template"):
        prompts.render("nonexistent")


def test_truncated_tool_input_reports_the_cut() -> None:
    found = extract_code("{}", entry="scale", truncated=True)
    assert found.code is None and reasons(found) == ["truncated"] and "cut off" in found.observations[0].message
