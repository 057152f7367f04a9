"""`agent bench`: not built yet."""

from ..errors import NotBuiltYet


def run(*args, **kwargs) -> int:
    raise NotBuiltYet("`agent bench` is not built yet")
