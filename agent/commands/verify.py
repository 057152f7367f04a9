"""`agent verify`: not built yet."""

from ..errors import NotBuiltYet


def run(*args, **kwargs) -> int:
    raise NotBuiltYet("`agent verify` is not built yet")
