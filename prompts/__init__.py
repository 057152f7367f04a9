"""Prompt templates as files (`<name>.md` beside this module), filled with string.Template.

Placeholders are `$name` / `${name}`; a literal dollar is `$$`. CUDA and C++ go in as
values, never into the templates themselves, so their braces need no escaping.
"""

from __future__ import annotations

import string
from pathlib import Path

HERE = Path(__file__).parent


class PromptError(Exception):
    """A template that does not exist or a value it needs that was not given."""


def template_path(name: str) -> Path:
    return HERE / f"{name}.md"


def render(name: str, **values: object) -> str:
    path = template_path(name)
    try:
        text = path.read_text()
    except FileNotFoundError:
        known = ", ".join(sorted(p.stem for p in HERE.glob("*.md")))
        raise PromptError(f"{path}: no such prompt template (known: {known})") from None
    try:
        return string.Template(text).substitute({k: str(v) for k, v in values.items()})
    except KeyError as exc:
        raise PromptError(f"{path}: no value given for ${exc.args[0]}") from None
    except ValueError as exc:  # a stray '$' in the template
        raise PromptError(f"{path}: bad placeholder ({exc})") from None
