"""`agent lower`: not built yet."""

from ..errors import NotBuiltYet


def run(*args, **kwargs) -> int:
    raise NotBuiltYet("`agent lower` is not built yet")
