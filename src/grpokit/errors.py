"""Errors that the CLI maps to exit codes.

ConfigError (exit 2): the user's input is wrong; the message says what to change.
RunError (exit 1): the run or check failed.
"""


class ConfigError(ValueError):
    """Bad config, bad usage or bad input; exit code 2."""


class RunError(RuntimeError):
    """A run or a check failed; exit code 1."""
