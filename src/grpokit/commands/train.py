"""Placeholder: the train command group."""
import typer


def register(app: typer.Typer) -> None:
    pass
