"""The `grpokit` command: a thin layer that parses, then calls the library.

Each command group lives in grpokit/commands/<group>.py and adds itself to the
app through `register(app)`; heavy imports stay inside the command bodies so
`grpokit --help` is instant.
Exit codes: 0 success, 1 the run or check failed, 2 bad usage or bad config; an
unexpected exception prints one line and the path of its traceback log, exit 1.
"""
from __future__ import annotations

import importlib

import typer

from grpokit.commands.guard import guard_all

app = typer.Typer(
    name="grpokit",
    help="GRPO training toolkit: rewards, sandboxed code scoring, one-file training recipes, health checks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# One module per command group; each owns its commands.
_COMMAND_MODULES = ("rewards", "train", "health", "scale", "recipes", "calibrate", "judge")

for _name in _COMMAND_MODULES:
    importlib.import_module(f"grpokit.commands.{_name}").register(app)

# Last, so every command above ends its errors the same way (grpokit/commands/guard.py).
guard_all(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
