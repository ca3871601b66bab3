"""Placeholder: the health command group."""
import typer


def register(app: typer.Typer) -> None:
    pass
