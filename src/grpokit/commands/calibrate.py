"""`grpokit calibrate CONFIG --samples K`: how hard the data is for the base model, before training."""
from __future__ import annotations

import json
from typing import List, Optional

import typer


def calibrate_command(
    config: str = typer.Argument(..., help="YAML run config: its model, data, rewards and num_generations."),
    samples: int = typer.Option(8, "--samples", "-k", min=2, help="Completions per prompt (at least num_generations is best)."),
    prompts: int = typer.Option(32, "--prompts", min=1, help="Training prompts to sample (the first N)."),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="override a key: --set training.num_generations=8"),
    write: Optional[str] = typer.Option(None, "--write", help="Write the in-range rows to this JSONL file."),
    curriculum: bool = typer.Option(False, "--curriculum", help="With --write: easiest prompts first."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole result as JSON."),
) -> None:
    """Sample K completions per prompt with the base model, score them with the config's rewards, and report
    per-prompt pass rates, the predicted share of zero-variance groups and which prompts are too easy or too hard."""
    from grpokit.errors import ConfigError

    try:
        result, rows = _calibrate(config, set_ or [], samples, prompts)
    except ValueError as exc:  # a bad value in the data or the config (ConfigError is one too): exit 2
        raise ConfigError(str(exc)) from None
    from grpokit.evaluate.calibrate import suggestion, write_rows

    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        for p in result["per_prompt"]:
            rate = "n/a" if p["pass_rate"] is None else f"{p['pass_rate']:.2f}"
            typer.echo(f"prompt {p['index']:>4}  pass rate {rate:>5}  P(zero variance) {p['zero_variance']:.2f}  {p['verdict']}")
            # The prompt and one sample: an index alone sends the reader to the data file.
            typer.echo(f"    asked: {_one_line(p.get('prompt', ''))}")
            typer.echo(f"    a sample: {_one_line(p.get('example', ''))}")
        typer.echo(suggestion(result))
    if write:
        count = write_rows(write, rows, result, curriculum=curriculum)
        typer.echo(f"wrote {count} in-range rows to {write}; train on them with data: {{source: {write}, "
                   "prompt_column: prompt, answer_column: answer, system_prompt: null}"
                   + (" and training.shuffle_dataset: false" if curriculum else ""), err=as_json)


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _progress(done: int, total: int) -> None:
    # Sampling K completions per prompt on a CPU takes minutes: say how far it is, on stderr.
    typer.echo(f"calibrate: sampled {done}/{total} prompts", err=True)


def _calibrate(config: str, overrides: list[str], samples: int, prompts: int):
    from grpokit.config.run_config import build_reward_set, load_config
    from grpokit.health.doctor import _load_model
    from grpokit.evaluate import default_accuracy
    from grpokit.evaluate.calibrate import calibrate
    from grpokit.config.profiles import resolve_training
    from grpokit.probe.config import data_rows

    cfg = load_config(config, overrides)
    training = resolve_training(cfg, cfg.final_stage())
    rewards = build_reward_set(cfg, cfg.final_stage())
    rows = data_rows(cfg, prompts)
    model, tokenizer = _load_model(cfg)
    result = calibrate(model, tokenizer, rows, rewards.funcs, rewards.weights, samples=samples,
                       num_generations=int(training["num_generations"]),
                       accuracy=default_accuracy([r.get("answer") for r in rows], cfg.data.answer_format),
                       max_new_tokens=int(training["max_completion_length"]),
                       temperature=float(training["temperature"]), progress=_progress)
    return result, rows


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
