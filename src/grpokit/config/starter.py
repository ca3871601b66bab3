"""`grpokit init`'s starting config: a task's preset rewards, with a data file's columns mapped."""
from __future__ import annotations

from grpokit.config.starter_math import FEW_SHOT_PROMPT, MATH_DATA, MATH_NOTE, MATH_TRAINING
from grpokit.data.columns import COLUMN_GUESSES, guess_column
from grpokit.data.config import parse_source
from grpokit.data.files import columns_of
from grpokit.data.locations import starts_with_bom
from grpokit.errors import ConfigError
from grpokit.rewards.presets import get_preset
from grpokit.rewards.registry import RewardConfigError

# Tasks that can start with no data file at all.
SYNTHETIC_FOR = {"math_reasoning": "synthetic:arithmetic", "json_output": "synthetic:json"}


def _named(available: list[str], column: str, option: str, data: str) -> str:
    if column not in available:
        raise ConfigError(f"{option} {column!r}: {data} has no such column; its columns are {available}")
    return column


def _data_section(task: str, data: str, roles, prompt_column: str | None, answer_column: str | None) -> dict:
    source = parse_source(data)
    if source.kind != "file":
        raise ConfigError(f"--data takes a local .csv, .jsonl or .parquet file, got {data!r}")
    available = columns_of(source.name, source.fmt)
    if prompt_column is not None:
        prompt = _named(available, prompt_column, "--prompt-column", data)
    else:
        prompt = guess_column(available, "prompt")
    if prompt is None:
        raise ConfigError(
            f"{data} has no prompt column I recognise (looked for {', '.join(COLUMN_GUESSES['prompt'])}); "
            f"its columns are {available}: name it with --prompt-column COLUMN"
        )
    section: dict = {"source": data, "prompt_column": prompt, "answer_column": None, "columns": {}}
    taken = {prompt}
    if answer_column is not None:
        section["answer_column"] = _named(available, answer_column, "--answer-column", data)
        taken.add(answer_column)
    for role in roles:
        if role == "answer" and section["answer_column"]:
            continue
        found = guess_column([c for c in available if c not in taken], role)
        if found is None:
            option = " (or name it with --answer-column COLUMN)" if role == "answer" else ""
            raise ConfigError(
                f"task {task!r} scores against a {role!r} column, and {data} has none of "
                f"{', '.join(COLUMN_GUESSES[role])}{option}; its columns are {available}"
            )
        taken.add(found)
        if role == "answer":
            section["answer_column"] = found
        else:
            section["columns"][found] = role
        if role == "sources":
            section["context_column"] = found  # the documents are shown in the prompt, numbered as cited
    if section["answer_column"] is None:
        # A gold answer the preset does not score still feeds evaluation's accuracy and the report.
        section["answer_column"] = guess_column([c for c in available if c not in taken], "answer")
    if not section["columns"]:
        del section["columns"]
    return section


def bom_note(data: str | None) -> str | None:
    """A line for `init` to print when the file starts with a byte-order mark, which grpokit reads past."""
    if data is None:
        return None
    source = parse_source(data)
    if source.kind == "file" and starts_with_bom(source.name):
        return (f"note: {data} starts with a UTF-8 byte-order mark (BOM; Excel's \"CSV UTF-8\" writes one); "
                "grpokit reads past it, so the first column is named as you see it")
    return None


def build_init_config(task: str, data: str | None, name: str | None, model: str | None,
                      prompt_column: str | None = None, answer_column: str | None = None) -> dict:
    """A starting config for `task` from its preset, with `data`'s columns mapped."""
    try:
        spec = get_preset(task)
    except RewardConfigError as exc:
        raise ConfigError(str(exc)) from exc
    if data is None:
        if spec.name not in SYNTHETIC_FOR:
            raise ConfigError(f"task {spec.name!r} needs a data file: pass --data FILE (.csv, .jsonl or .parquet)")
        if prompt_column or answer_column:
            raise ConfigError("--prompt-column and --answer-column name columns of --data FILE; pass --data too")
        data_cfg = {"source": SYNTHETIC_FOR[spec.name]}
    else:
        data_cfg = _data_section(spec.name, data, spec.columns, prompt_column, answer_column)
    if spec.system_prompt is not None:
        data_cfg["system_prompt"] = spec.system_prompt
    # LoRA wants a far larger step than TRL's full fine-tuning default of 1e-6.
    training = {**CPU_RUN, "learning_rate": 1.0e-4}
    if spec.name == "math_reasoning" and data is None:
        # The synthetic word problems: a prompt and length the bundled model answers in (starter_math).
        data_cfg.update(MATH_DATA)
        training.update(MATH_TRAINING)
    return {
        "name": name or f"{spec.name.replace('_', '-')}",
        "description": spec.description,
        "model": {"name": model or "bundled:smollm2-135m-instruct"},
        "data": data_cfg,
        "rewards": spec.spec(),
        "profile": "cpu",
        "training": training,
    }


# A first run that ends within the hour on this project's 2-core CPU with the bundled 135M model.
# The old defaults, 8 x 256 tokens and 200 steps, took 139-316 s a step here (8-10 hours). A step's
# time scales with the tokens it generates and trains on, so 8 x 128 is 70-158 s at that rate and 20
# steps 23-53 min. benchmarks/results/step_time_estimate.json has doctor's prediction against real
# steps of this config; at a load average of 8 (other jobs on the cores) a step took far longer.
CPU_RUN = {"num_generations": 8, "max_completion_length": 128, "max_steps": 20, "save_steps": 10}
CPU_STEP_S = 158  # the slow end of the range above: the written comment quotes it


def step_seconds(completion_tokens: int) -> int:
    """The slow-end step time for shorter completions: a step's time scales with its tokens."""
    return max(1, round(CPU_STEP_S * completion_tokens / CPU_RUN["max_completion_length"]))


def starter_comment(cfg: dict) -> str:
    """The lines `init` writes above the config: what the run will cost, and where that figure comes from."""
    training = cfg.get("training", {})
    keys = ("num_generations", "max_steps")
    length = training.get("max_completion_length")
    if (cfg.get("profile") != "cpu" or any(training.get(k) != CPU_RUN[k] for k in keys)
            or not isinstance(length, int) or not 0 < length <= CPU_RUN["max_completion_length"]):
        return ""
    step_s = step_seconds(length)
    minutes = step_s * CPU_RUN["max_steps"] / 60
    return (f"# CPU defaults: {CPU_RUN['num_generations']} completions x {length} tokens "
            f"per step, {CPU_RUN['max_steps']} steps: up to ~{step_s} s a step on 2 CPU cores, ~{minutes:.0f} min "
            "in all (longer on busy cores).\n# `grpokit doctor` times a step on this machine; raise max_steps once "
            "it learns.\n" + (MATH_NOTE if cfg.get("data", {}).get("system_prompt") == FEW_SHOT_PROMPT else ""))
