"""`grpokit recipes` and `grpokit init`: the shipped recipes, and a starting config for a task."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("recipes")
    def recipes(as_json: bool = typer.Option(False, "--json", help="machine-readable output")) -> None:
        """List the shipped recipes: what each trains for and the hardware it needs."""
        from grpokit.config.recipes import recipe_summary, recipes_dir

        rows = [recipe_summary(p) for p in sorted(recipes_dir().glob("*.yaml"))]
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        from rich.console import Console
        from rich.table import Table

        table = Table("recipe", "trains for", "model", "hardware", "stages")
        for r in rows:
            table.add_row(r["recipe"], r["trains_for"], r["model"], r["hardware"], str(r["stages"]))
        Console(width=200).print(table)
        typer.echo(f"Run one: grpokit train {recipes_dir()}/<recipe>.yaml")

    @app.command("init")
    def init(
        task: str = typer.Argument(..., help="math | code | qa | kb_qa | summarization | json"),
        data: Optional[str] = typer.Option(None, "--data", help="your .csv/.jsonl/.parquet file"),
        prompt_column: Optional[str] = typer.Option(None, "--prompt-column", help="the column with the prompts"),
        answer_column: Optional[str] = typer.Option(None, "--answer-column", help="the column with the gold answers"),
        output: Path = typer.Option(None, "--output", "-o", help="where to write (default <task>.yaml)"),
        name: Optional[str] = typer.Option(None, "--name", help="run name"),
        model: Optional[str] = typer.Option(None, "--model", help="HF id, local dir or .gguf"),
        force: bool = typer.Option(False, "--force", help="overwrite an existing file"),
        timed: Optional[bool] = typer.Option(None, "--time/--no-time",
                                             help="time a step on this machine (default: when run in a terminal)"),
    ) -> None:
        """Write a starting config for TASK from its preset, with --data's columns mapped and validated."""
        import yaml

        from grpokit.config.run_config import load_config
        from grpokit.config.starter import bom_note, build_init_config, starter_comment
        from grpokit.errors import ConfigError

        # A ConfigError here is printed by grpokit.commands.guard (exit 2).
        cfg = build_init_config(task, data, name, model, prompt_column, answer_column)
        note = bom_note(data)
        if note:
            typer.echo(note)
        target = output or Path(f"{cfg['name']}.yaml")
        if target.exists() and not force:
            raise ConfigError(f"{target} exists; pass --force to overwrite or --output to pick another path")
        draft = target.with_name(f".{target.name}.draft")
        draft.write_text(starter_comment(cfg) + yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
        try:
            written = load_config(draft)
            if data is not None:
                from grpokit.data import load_data

                load_data(written.data)  # every row, so an empty prompt is named (file and line) now
        except BaseException:
            draft.unlink(missing_ok=True)
            raise
        draft.replace(target)
        typer.echo(f"wrote {target}")
        for line in starter_comment(cfg).splitlines():
            typer.echo(line.lstrip("# "))  # what the run will cost, as the file says it
        if timed if timed is not None else sys.stdout.isatty():
            typer.echo(_timed_step(written))
        typer.echo(f"next: grpokit doctor {target} && grpokit train {target}")


def _timed_step(cfg) -> str:
    """The seconds a step of `cfg` takes on this machine, from doctor's probe (health.step_time)."""
    import statistics

    from grpokit.data import load_data
    from grpokit.health.doctor import _load_model, prompt_lengths
    from grpokit.health.step_time import describe, step_seconds

    try:
        model, tokenizer = _load_model(cfg)
        train_set = load_data(cfg.data)[0]
        rows = [dict(train_set[i]) for i in range(min(50, len(train_set)))]
        seconds, plan, _ = step_seconds(cfg, model, tokenizer, int(statistics.median(prompt_lengths(tokenizer, rows))))
    except Exception as exc:  # advice only: the config is written either way
        return f"could not time a step here ({exc!r}); grpokit doctor tries again"
    return f"time: {describe(seconds, plan)} (measured now; a busier or idler machine moves it)"
