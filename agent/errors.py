"""Errors that reach the user as one clear line (never a traceback)."""


class UserError(Exception):
    """Bad input from the user: the message names the file or field and the cause."""

    exit_code = 1


class NotBuiltYet(UserError):
    """A command whose feature has not been built yet."""

    exit_code = 2
