"""Getting the C++ translation out of a model's answer, or saying why there is none.

Accepted answers, in order of preference: a JSON object {"code": ..., "notes": ...}
(structured output, possibly inside a ```json fence), else a fenced code block
(```cpp, ```c++, ```cxx, ```c or bare ```; the largest one that defines the entry,
the last one on ties), else bare C++ that defines the entry. A truncated answer or an
unreadable one yields an Observation(kind="llm") instead of code.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from tools.observations import Observation

CODE_LANGS = {"", "cpp", "c++", "cxx", "cc", "c", "cuda", "hpp", "h"}
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n", re.MULTILINE)
CLOSED_BLOCK = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass
class Extraction:
    code: str | None
    notes: str = ""
    observations: list[Observation] = field(default_factory=list)


@dataclass
class _Block:
    lang: str
    body: str
    closed: bool


def extract_code(text: str, *, entry: str | None = None, truncated: bool = False) -> Extraction:
    text = (text or "").strip()
    if not text:
        why = "the answer was cut off before any text (token limit)" if truncated else "the answer was empty"
        return _fail(why, truncated)
    found = _from_json(text, truncated)
    if found is None:
        found = _from_fences(text, entry, truncated)
    if found is None:
        found = _bare_code(text, entry, truncated)
    if truncated and found.code is None and found.observations[0].data["reason"] != "truncated":
        # Whatever is wrong with a cut-off answer, the cut is the cause to report.
        return _fail(f"the answer was cut off at the token limit ({found.observations[0].message})", True)
    if truncated and found.code is not None:
        found.observations.append(_llm(
            "the answer was cut off at the token limit after the code; check the code is complete", "warning",
            reason="truncated"))
    if found.code is not None and entry and not re.search(rf"\b{re.escape(entry)}\s*\(", found.code):
        found.observations.append(_llm(f"the code does not define the entry function {entry}()", "warning",
                                       reason="no_entry"))
    return found


def _from_json(text: str, truncated: bool) -> Extraction | None:
    """None when the answer is not meant as JSON; else the code or the reason it is unreadable."""
    candidate = text
    fenced = re.fullmatch(r"(`{3,})[ \t]*json[ \t]*\n(.*?)\n?\1", text, re.DOTALL | re.IGNORECASE)
    if fenced:
        candidate = fenced.group(2).strip()
    if not candidate.startswith("{"):
        return None
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as exc:
        if FENCE.search(text):
            return None  # prose that merely starts with a brace; the fences decide
        if truncated:
            return _fail("the answer was cut off at the token limit inside the JSON answer; the code is incomplete",
                         True)
        return _fail(f"the answer looks like JSON but does not parse: {exc.msg} at line {exc.lineno} "
                     f"column {exc.colno}", False, reason="malformed_json")
    if not isinstance(data, dict) or not isinstance(data.get("code"), str):
        return _fail('the JSON answer has no string field "code"', False, reason="malformed_json")
    code = _strip_fence(data["code"]).strip()
    notes = data.get("notes") if isinstance(data.get("notes"), str) else ""
    if not code:
        return _fail('the JSON answer has an empty "code" field', False, reason="empty_code")
    return Extraction(code=code + "\n", notes=notes)


def _strip_fence(code: str) -> str:
    """Models sometimes wrap the JSON field's code in a fence as well."""
    if not code.lstrip().startswith(("```", "~~~")):
        return code
    blocks = _blocks(code.lstrip())
    return blocks[0].body if blocks and blocks[0].lang in CODE_LANGS else code


def _blocks(text: str) -> list[_Block]:
    blocks, pos = [], 0
    while True:
        opening = FENCE.search(text, pos)
        if not opening:
            return blocks
        fence, lang = opening.group(1), opening.group(2).lower()
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = closing.search(text, opening.end())
        if not end:
            blocks.append(_Block(lang, text[opening.end():], closed=False))
            return blocks
        blocks.append(_Block(lang, text[opening.end():end.start()], closed=True))
        pos = end.end()


def _from_fences(text: str, entry: str | None, truncated: bool) -> Extraction | None:
    blocks = [b for b in _blocks(text) if b.lang in CODE_LANGS and b.body.strip()]
    if not blocks:
        return None
    closed = [b for b in blocks if b.closed]
    open_tail = blocks[-1] if not blocks[-1].closed else None
    if open_tail and (truncated or not closed):
        if truncated:
            return _fail("the answer was cut off at the token limit inside a code block; the code is incomplete",
                         True)
        # The model forgot the closing fence but stopped on its own: the code is likely whole.
        result = Extraction(code=open_tail.body.strip() + "\n")
        result.observations.append(_llm("the answer's last code block has no closing fence", "warning",
                                        reason="unterminated_fence"))
        return result
    pool = [b for b in closed if entry and re.search(rf"\b{re.escape(entry)}\s*\(", b.body)] or closed
    best = max(reversed(pool), key=lambda b: len(b.body))  # largest; the last one on ties
    return Extraction(code=best.body.strip() + "\n", notes=_prose(text))


def _bare_code(text: str, entry: str | None, truncated: bool) -> Extraction:
    looks_like_cpp = ("#include" in text or 'extern "C"' in text) and (not entry or entry in text)
    if looks_like_cpp and not truncated:
        return Extraction(code=text + "\n")
    if truncated:
        return _fail("the answer was cut off at the token limit before a complete code block", True)
    return _fail("the answer contains no code block (expected the C++ translation in a ```cpp fenced block)",
                 False, reason="no_code")


def _prose(text: str) -> str:
    """The answer's text outside closed code blocks: the model's notes."""
    return CLOSED_BLOCK.sub("", text).strip()[:4000]


def _fail(message: str, truncated: bool, *, reason: str | None = None) -> Extraction:
    return Extraction(code=None, observations=[_llm(message, "error", reason=reason or ("truncated" if truncated
                                                                                            else "unreadable"))])


def _llm(message: str, severity: str, *, reason: str) -> Observation:
    return Observation(kind="llm", message=message, severity=severity, data={"reason": reason})
