"""`agent port`: not built yet."""

from ..errors import NotBuiltYet


def run(*args, **kwargs) -> int:
    raise NotBuiltYet("`agent port` is not built yet")
