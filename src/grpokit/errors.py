"""Errors that the CLI maps to exit codes.

ConfigError (exit 2): the user's input is wrong; the message says what to change.
RunError (exit 1): the run or check failed.
RewardConfigError: a reward asked for by a name or with parameters that cannot work; here, not
in the reward registry, so the answer format (a leaf the data config reads) can raise it too.
"""


class ConfigError(ValueError):
    """Bad config, bad usage or bad input; exit code 2."""


class RunError(RuntimeError):
    """A run or a check failed; exit code 1."""


class RewardConfigError(ValueError):
    """A reward was asked for by a name or with parameters that cannot work."""
