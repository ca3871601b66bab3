"""Placeholder: the rewards command group."""
import typer


def register(app: typer.Typer) -> None:
    pass
