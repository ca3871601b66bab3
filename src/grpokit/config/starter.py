"""`grpokit init`'s starting config: a task's preset rewards, with a data file's columns mapped."""
from __future__ import annotations

from grpokit.data.columns import COLUMN_GUESSES, guess_column
from grpokit.data.config import parse_source
from grpokit.data.files import columns_of
from grpokit.errors import ConfigError
from grpokit.rewards.presets import get_preset
from grpokit.rewards.registry import RewardConfigError

# Tasks that can start with no data file at all.
SYNTHETIC_FOR = {"math_reasoning": "synthetic:arithmetic", "json_output": "synthetic:json"}


def _data_section(task: str, data: str, roles) -> dict:
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
    section: dict = {"source": data, "prompt_column": prompt, "answer_column": None, "columns": {}}
    for role in roles:
        found = guess_column([c for c in available if c != prompt], role)
        if found is None:
            raise ConfigError(
                f"task {task!r} scores against a {role!r} column, and {data} has none of "
                f"{', '.join(COLUMN_GUESSES[role])}; its columns are {available}"
            )
        if role == "answer":
            section["answer_column"] = found
        else:
            section["columns"][found] = role
    if not section["columns"]:
        del section["columns"]
    return section


def build_init_config(task: str, data: str | None, name: str | None, model: str | None) -> dict:
    """A starting config for `task` from its preset, with `data`'s columns mapped."""
    try:
        spec = get_preset(task)
    except RewardConfigError as exc:
        raise ConfigError(str(exc)) from exc
    if data is None:
        if spec.name not in SYNTHETIC_FOR:
            raise ConfigError(f"task {spec.name!r} needs a data file: pass --data FILE (.csv, .jsonl or .parquet)")
        data_cfg = {"source": SYNTHETIC_FOR[spec.name]}
    else:
        data_cfg = _data_section(spec.name, data, spec.columns)
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
