"""`grpokit eval CONFIG --checkpoint DIR`: the base model against a checkpoint on held-out prompts.

Errors end through commands/guard.py: a bad config or checkpoint is exit 2, a failed evaluation exit 1.
"""
from __future__ import annotations

import json
from typing import List, Optional

import typer


def eval_command(
    config: str = typer.Argument(..., help="the run's YAML config"),
    checkpoint: str = typer.Option(..., "--checkpoint", help="a checkpoint directory, or a run directory (its newest checkpoint)"),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="override a config key"),
    k: int = typer.Option(4, "--k", min=1, help="samples per prompt (pass@k)"),
    max_prompts: Optional[int] = typer.Option(None, "--max-prompts", min=1, help="evaluate only the first N held-out prompts"),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", help="default: training.max_completion_length"),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="default: training.temperature; 0 is greedy"),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="prompts per generate call"),
    accuracy: str = typer.Option("auto", "--accuracy", help="reward that decides correctness (auto: numeric_match / math_equivalence / exact_match)"),
    eval_source: Optional[str] = typer.Option(None, "--eval-source", help="a separate eval set (data source string) instead of the held-out split"),
    no_before: bool = typer.Option(False, "--no-before", help="skip the base model"),
    output: Optional[str] = typer.Option(None, "--output", help="default: <run_dir>/eval.json"),
    as_json: bool = typer.Option(False, "--json", help="print eval.json's content instead of a table"),
) -> None:
    """Compare the base model with a checkpoint on held-out prompts: accuracy, pass@k, format rate, rewards, length."""
    from grpokit.config.run_config import load_config
    from grpokit.evaluate import evaluate_checkpoint, format_table

    cfg = load_config(config, set_ or [])

    def progress(label: str, done: int, total: int) -> None:
        typer.echo(f"\r{label}: {done}/{total} prompts", err=True, nl=done == total)

    result = evaluate_checkpoint(
        cfg, checkpoint, k=k, max_new_tokens=max_new_tokens, temperature=temperature, max_prompts=max_prompts,
        batch_size=batch_size, accuracy=None if accuracy == "none" else accuracy, eval_source=eval_source,
        before=not no_before, output=output, progress=progress,
    )
    if as_json:
        typer.echo(json.dumps(result, indent=2, default=str))
        return
    shown, available = result["held_out_prompts"], result["held_out_available"]
    of = f" (of {available})" if shown != available else ""
    typer.echo(f"{result['checkpoint']} on {shown} held-out prompts{of} of {result['data']}")
    typer.echo(format_table(result["before"], result["after"]))
    if result.get("accuracy_note"):
        typer.echo(result["accuracy_note"])
    typer.echo(f"written: {result['path']}")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
