"""The `grpokit` command: a thin layer that parses, then calls the library.

Each command group lives in grpokit/commands/<group>.py and adds itself to the
app through `register(app)`; heavy imports stay inside the command bodies so
`grpokit --help` is instant.
Exit codes: 0 success, 1 the run or check failed, 2 bad usage or bad config; an
unexpected exception prints one line and the path of its traceback log, exit 1. Commands
raise ConfigError / RunError and grpokit/commands/guard.py alone prints them.
"""
from __future__ import annotations

import typer

from grpokit.commands import calibrate, doctor, evaluate, judge, recipes, report, rewards, serve, train
from grpokit.commands.guard import guard_all

app = typer.Typer(
    name="grpokit",
    help="GRPO training toolkit: rewards, sandboxed code scoring, one-file training recipes, health checks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# The order here is the order of `grpokit --help`: the run first, then the checks around it.
for _group in (rewards, train, doctor, report, serve, evaluate, recipes, calibrate, judge):
    _group.register(app)

# Last, so every command above ends its errors the same way (grpokit/commands/guard.py).
guard_all(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
