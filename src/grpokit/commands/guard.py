"""One way every command ends on an error: a line that says what failed, and an exit code.

The one place a command's error is printed: commands raise, this prints.
ConfigError (and the reward library's RewardConfigError) -> `error: ...`, exit 2 (bad usage, bad config or bad input: the message says
what to change). RunError -> `failed: ...`, exit 1. Anything else is a bug or an
environment problem no check foresaw: its traceback goes to a log file, the terminal
gets one line naming the command, the error and that file, and the exit code is 1.
"""
from __future__ import annotations

import datetime
import functools
import os
import tempfile
import traceback
from pathlib import Path

import click
import typer

from grpokit.errors import ConfigError, RunError
from grpokit.rewards.registry import RewardConfigError
from grpokit.run_directory.ranks import rank


def log_dir() -> Path:
    """$GRPOKIT_LOG_DIR, else ~/.cache/grpokit/logs."""
    return Path(os.environ.get("GRPOKIT_LOG_DIR") or Path.home() / ".cache" / "grpokit" / "logs")


def write_crash_log(command: str) -> Path:
    """The current exception's traceback in a new file; falls back to the temp folder when the log folder is not writable."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    text = f"grpokit {command}\n{traceback.format_exc()}"
    for folder in (log_dir(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"grpokit-{command.replace(' ', '-')}-{stamp}-{os.getpid()}.log"
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            continue
    return Path("(no writable folder for the log)")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _who() -> str:
    # In a multi-process launch a failure can be one rank's alone (its own OOM, a lost peer): say whose.
    return f"rank {rank()}: " if rank() else ""


def guarded(func, command: str):
    """`func` (a command callback) with its errors turned into a message and an exit code."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise  # typer's own ways to end: exit codes and usage errors it already printed
        except (ConfigError, RewardConfigError) as exc:  # RewardConfigError: a bad reward name or parameter
            typer.echo(f"{_who()}error: {exc}", err=True)
            raise typer.Exit(2) from None
        except RunError as exc:
            typer.echo(f"{_who()}failed: {exc}", err=True)
            raise typer.Exit(1) from None
        except Exception as exc:
            log = write_crash_log(command)
            typer.echo(f"{_who()}error: grpokit {command} failed unexpectedly ({type(exc).__name__}: {_one_line(exc)}); "
                       f"the traceback is in {log}", err=True)
            raise typer.Exit(1) from None

    return run


def guard_all(app: typer.Typer, prefix: str = "") -> None:
    """Wrap every command registered on `app` and its sub-apps."""
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__.replace("_command", "").replace("_", "-"))
        info.callback = guarded(info.callback, f"{prefix}{name}")
    for group in app.registered_groups:
        guard_all(group.typer_instance, f"{prefix}{group.name} ")
