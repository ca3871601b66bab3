"""`grpokit recipes` and `grpokit init`: many task configs managed from one place."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

# What each profile needs to run; derived from the recipe, so the list cannot drift.
HARDWARE = {
    "cpu": "any CPU (a GPU is used when present)",
    "memory": "1 CUDA GPU; 8-bit AdamW with bitsandbytes",
    "vllm": "CUDA GPU(s) with vLLM",
    "unsloth": "1 CUDA GPU with Unsloth",
}

# Column names people use for each role, most common first.
COLUMN_GUESSES = {
    "prompt": ("prompt", "question", "problem", "input", "instruction", "query", "document", "article", "text"),
    "answer": ("answer", "solution", "output", "target", "label", "gold", "response"),
    "tests": ("tests", "test", "test_code", "test_list", "test_cases"),
    "reference": ("reference", "summary", "highlights", "target", "abstract"),
    "schema": ("schema", "json_schema"),
}

# Tasks that can start with no data file at all.
SYNTHETIC_FOR = {"math_reasoning": "synthetic:arithmetic", "json_output": "synthetic:json"}


def recipes_dir() -> Path:
    """configs/ of this checkout (src layout), else of the current directory."""
    here = Path(__file__).resolve().parents[3] / "configs"
    return here if here.is_dir() else Path.cwd() / "configs"


def recipe_summary(path: Path) -> dict:
    import yaml

    text = path.read_text()
    raw = yaml.safe_load(text) or {}
    # The recipe's opening comment block says what it trains for.
    lead = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lead.append(line.lstrip("# ").strip())
    comment = " ".join(lead)
    profile = raw.get("profile", "cpu")
    return {
        "recipe": path.stem,
        "path": str(path),
        "trains_for": raw.get("description") or comment,
        "model": (raw.get("model") or {}).get("name", "bundled:smollm2-135m-instruct"),
        "profile": profile,
        "hardware": HARDWARE.get(profile, profile),
        "stages": len(raw.get("stages") or []) or 1,
    }


def guess_column(available: list[str], role: str) -> str | None:
    lowered = {c.lower(): c for c in available}
    for candidate in COLUMN_GUESSES[role]:
        if candidate in lowered:
            return lowered[candidate]
    return None


def build_init_config(task: str, data: str | None, name: str | None, model: str | None) -> dict:
    """A starting config for `task` from its preset, with `data`'s columns mapped."""
    from grpokit.data.config import parse_source
    from grpokit.data.files import columns_of
    from grpokit.errors import ConfigError
    from grpokit.rewards.presets import get_preset
    from grpokit.rewards.registry import RewardConfigError

    try:
        spec = get_preset(task)
    except RewardConfigError as exc:
        raise ConfigError(str(exc)) from exc
    data_cfg: dict = {}
    if data is None:
        if spec.name not in SYNTHETIC_FOR:
            raise ConfigError(f"task {spec.name!r} needs a data file: pass --data FILE (.csv, .jsonl or .parquet)")
        data_cfg["source"] = SYNTHETIC_FOR[spec.name]
    else:
        source = parse_source(data)
        if source.kind != "file":
            raise ConfigError(f"--data takes a local .csv, .jsonl or .parquet file, got {data!r}")
        available = columns_of(source.name, source.fmt)
        prompt = guess_column(available, "prompt")
        if prompt is None:
            raise ConfigError(
                f"{data} has no prompt column I recognise (looked for {', '.join(COLUMN_GUESSES['prompt'])}); "
                f"its columns are {available}: rename one, or set data.prompt_column in the written config"
            )
        data_cfg = {"source": data, "prompt_column": prompt, "answer_column": None, "columns": {}}
        for role in spec.columns:
            found = guess_column([c for c in available if c != prompt], role)
            if found is None:
                raise ConfigError(
                    f"task {spec.name!r} scores against a {role!r} column, and {data} has none of "
                    f"{', '.join(COLUMN_GUESSES[role])}; its columns are {available}"
                )
            if role == "answer":
                data_cfg["answer_column"] = found
            else:
                data_cfg["columns"][found] = role
        if not data_cfg["columns"]:
            del data_cfg["columns"]
    return {
        "name": name or f"{spec.name.replace('_', '-')}",
        "description": spec.description,
        "model": {"name": model or "bundled:smollm2-135m-instruct"},
        "data": data_cfg,
        "rewards": spec.spec(),
        "profile": "cpu",
        # LoRA wants a far larger step than TRL's full fine-tuning default of 1e-6.
        "training": {"num_generations": 8, "max_completion_length": 256, "max_steps": 200, "save_steps": 100,
                     "learning_rate": 1.0e-4},
    }


def register(app: typer.Typer) -> None:
    @app.command("recipes")
    def recipes(as_json: bool = typer.Option(False, "--json", help="machine-readable output")) -> None:
        """List the shipped recipes: what each trains for and the hardware it needs."""
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
        task: str = typer.Argument(..., help="math | code | qa | summarization | json"),
        data: Optional[str] = typer.Option(None, "--data", help="your .csv/.jsonl/.parquet file"),
        output: Path = typer.Option(None, "--output", "-o", help="where to write (default <task>.yaml)"),
        name: Optional[str] = typer.Option(None, "--name", help="run name"),
        model: Optional[str] = typer.Option(None, "--model", help="HF id, local dir or .gguf"),
        force: bool = typer.Option(False, "--force", help="overwrite an existing file"),
    ) -> None:
        """Write a starting config for TASK from its preset, with --data's columns mapped and validated."""
        import yaml

        from grpokit.config import load_config
        from grpokit.errors import ConfigError

        try:
            cfg = build_init_config(task, data, name, model)
            target = output or Path(f"{cfg['name']}.yaml")
            if target.exists() and not force:
                raise ConfigError(f"{target} exists; pass --force to overwrite or --output to pick another path")
            draft = target.with_name(f".{target.name}.draft")
            draft.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
            try:
                load_config(draft)
            except BaseException:
                draft.unlink(missing_ok=True)
                raise
            draft.replace(target)
        except ConfigError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2)
        typer.echo(f"wrote {target}\nnext: grpokit doctor {target} && grpokit train {target}")
