"""`agent evaluate`: not built yet."""

from ..errors import NotBuiltYet


def run(*args, **kwargs) -> int:
    raise NotBuiltYet("`agent evaluate` is not built yet")
