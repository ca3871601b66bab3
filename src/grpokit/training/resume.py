"""What `grpokit train --resume` does with a run directory: refuse, do nothing, or train, decided before
anything is written.

A resume continues the same optimisation: the same model and starting weights, the same data in the same
order, the same rewards, the same objective and optimiser. So every key of the run's config.yaml is part of
the run's identity except the ones that say how long the run goes and what it records, and the ones that
say how this machine computes the same run:

- length: training.max_steps and each stage's max_steps (raising it extends a finished run);
- records: the cadence of logs, checkpoints and TRL's evaluation, the held-out `eval:` section, the
  `health:` thresholds (they watch the run, they do not change it), `description`, `name`/`output_dir`
  (the run directory is the run);
- machine: precision and device flags (use_cpu, bf16, fp16, tf32), gradient checkpointing, data-loader
  workers and DDP settings.

Anything else that differs (data source or columns, model, LoRA, rewards and their weights or params,
learning rate, beta, batch, generations, seed, optimiser, stages' names or count, tools, imports) makes the
checkpoint's run a different run: the resume is refused with the keys that differ. A key an older grpokit
did not write in config.yaml reads as its default.

The checkpoint side: per stage, a done marker whose step reaches max_steps is finished; one below it (a
raised max_steps) is extended from the stage's last complete checkpoint, and only when no later stage was
trained on its old final weights; a stage without a marker resumes from its last complete checkpoint.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from grpokit.config import profiles
from grpokit.config.run_config import RewardSpec, RunConfig, StageConfig, dump_yaml
from grpokit.errors import ConfigError
from grpokit.run_directory import layout, progress
from grpokit.training import checkpoints as ckpts

# training: keys a resume may change (the rest of training: is identity). See the module docstring.
TRAINING_MAY_CHANGE = frozenset({
    # length
    "max_steps",
    # what the run records, and how often
    "logging_steps", "logging_first_step", "logging_strategy", "save_steps", "save_strategy",
    "save_total_limit", "eval_steps", "eval_strategy", "per_device_eval_batch_size", "report_to", "run_name",
    "log_completions", "num_completions_to_print", "disable_tqdm",
    # how this machine computes the same run
    "use_cpu", "bf16", "fp16", "tf32", "gradient_checkpointing", "gradient_checkpointing_kwargs",
    "dataloader_num_workers", "dataloader_pin_memory", "ddp_find_unused_parameters", "ddp_timeout",
})
TOP_MAY_CHANGE = frozenset({"name", "description", "output_dir"})
SECTIONS_MAY_CHANGE = frozenset({"health", "eval"})
_INDEX = re.compile(r"\[\d+\]")
_ABSENT = object()


def may_change(key: str) -> bool:
    """True for a dotted config key (`training.max_steps`, `stages[1].training.save_steps`) a resume may change."""
    parts = _INDEX.sub("[*]", key).split(".")
    if parts[0] in TOP_MAY_CHANGE or parts[0] in SECTIONS_MAY_CHANGE:
        return True
    if parts[0] == "training":
        return len(parts) > 1 and parts[1] in TRAINING_MAY_CHANGE
    if parts[0] == "stages[*]" and len(parts) > 1:
        return parts[1] == "max_steps" or (parts[1] == "training" and len(parts) > 2
                                           and parts[2] in TRAINING_MAY_CHANGE)
    return False


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted keys to leaves; a list of mappings (rewards, stages, tools) by index, any other list whole."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out if out or not prefix else {prefix: {}}
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def _defaults() -> dict[str, Any]:
    """The dataclass default of every key a config.yaml holds outside the free-form mappings, with list
    items as `[*]`: what a key an older grpokit did not write meant."""
    out = {k: v for k, v in flatten(dataclasses.asdict(RunConfig())).items() if not k.startswith("training")}
    for prefix, cls in (("rewards[*]", RewardSpec), ("stages[*]", StageConfig)):
        for key, value in flatten(dataclasses.asdict(cls())).items():
            out[f"{prefix}.{key}"] = value
    return out


def identity_changes(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """`key: was -> now` for every identity key that differs between two config.yaml mappings."""
    old, new = flatten(recorded), flatten(now)
    defaults = _defaults()
    changes = []
    for key in list(old) + [k for k in new if k not in old]:
        if may_change(key):
            continue
        a, b = old.get(key, _ABSENT), new.get(key, _ABSENT)
        generic = _INDEX.sub("[*]", key)
        if a is _ABSENT and generic in defaults and b == defaults[generic]:
            continue  # written by a newer grpokit only, at its default
        if b is _ABSENT and generic in defaults and a == defaults[generic]:
            continue
        if a != b:
            changes.append(f"{key}: {_show(a)} -> {_show(b)}")
    return changes


def _show(value: Any) -> str:
    if value is _ABSENT:
        return "(not set)"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def recorded_config(run_dir: Path) -> dict[str, Any] | None:
    """The run's config.yaml as a mapping (None when it is missing or unreadable)."""
    from grpokit.config import safe_yaml

    path = Path(run_dir) / layout.CONFIG
    try:
        data = safe_yaml.load(path.read_bytes(), str(path))
    except Exception:  # a missing or broken file: the caller says it cannot check
        return None
    return data if isinstance(data, dict) else None


def config_mapping(cfg: RunConfig) -> dict[str, Any]:
    """What config.yaml will hold for `cfg`, as the same plain mapping reading it back gives."""
    return yaml.safe_load(dump_yaml(profiles.resolved_config(cfg)))


@dataclass
class StagePlan:
    stage: StageConfig | None
    name: str | None           # None for a run without stages
    action: str                # "done", "extend" or "resume"
    max_steps: int | None
    done_step: int | None = None        # the done marker's step, where there is one
    checkpoint: Path | None = None      # the last complete checkpoint (the resume starts there)

    @property
    def label(self) -> str:
        return f"stage {self.name}" if self.name else "the run"


@dataclass
class ResumePlan:
    stages: list[StagePlan] = field(default_factory=list)
    warning: str = ""           # said before training (config.yaml could not be checked)

    @property
    def nothing_to_do(self) -> bool:
        return all(s.action == "done" for s in self.stages)

    def stage(self, stage: StageConfig | None) -> StagePlan:
        return next(s for s in self.stages if s.stage is stage)

    def message(self, cfg: RunConfig) -> str:
        """The nothing-to-do line: where each stage ended, and what to raise to train further."""
        ends = ", ".join(f"{s.label} at step {s.done_step}" if s.name else f"step {s.done_step}" for s in self.stages)
        last = self.stages[-1]
        key = f"stages[{len(self.stages) - 1}].max_steps" if last.name else "training.max_steps"
        return (f"nothing to do: {cfg.run_dir} already finished ({ends}; max_steps {last.max_steps}). To train "
                f"further, raise max_steps: --resume --set {key}=N with N above {last.done_step}")


def plan_resume(cfg: RunConfig) -> ResumePlan:
    """The plan for `--resume` of `cfg`, or ConfigError (exit 2) saying what to do instead. Reads only."""
    run_dir = cfg.run_dir
    recorded = recorded_config(run_dir)
    plan = ResumePlan()
    if recorded is None:
        plan.warning = (f"{run_dir / layout.CONFIG} is missing or unreadable: cannot check that this config is the "
                        "run's own; resuming with it as given")
    else:
        changes = identity_changes(recorded, config_mapping(cfg))
        if changes:
            shown = "\n  ".join(changes[:12]) + (f"\n  ... and {len(changes) - 12} more" if len(changes) > 12 else "")
            raise ConfigError(
                f"--resume: this config describes a different run from the one in {run_dir} "
                f"({len(changes)} setting(s) differ from its {layout.CONFIG}):\n  {shown}\n"
                "A resume continues the same run; only max_steps, the logging/saving/evaluation cadence, `health:`, "
                "`eval:` and machine settings (bf16, use_cpu, gradient checkpointing) may change. To train with these "
                "settings, start a new run: set another `name:` (or --set name=NEW) and drop --resume. To continue "
                f"this run, resume it with its own settings: grpokit train {run_dir / layout.CONFIG} --resume")
    for stage in cfg.stages or [None]:
        plan.stages.append(_stage_plan(cfg, stage))
    _check_extensions(plan)
    return plan


def _stage_plan(cfg: RunConfig, stage: StageConfig | None) -> StagePlan:
    name = stage.name if stage is not None and cfg.stages else None
    max_steps = profiles.resolve_training(cfg, stage).get("max_steps")
    max_steps = int(max_steps) if isinstance(max_steps, int) else None
    marker = progress.done_marker(cfg.run_dir, name)
    checkpoint = ckpts.latest_complete(profiles.checkpoint_root(cfg, stage))
    plan = StagePlan(stage, name, "resume", max_steps, checkpoint=checkpoint,
                     done_step=marker.get("step") if marker and isinstance(marker.get("step"), int) else None)
    if marker is not None:
        plan.action = "done" if progress.marker_finishes(marker, max_steps) else "extend"
        if plan.action == "extend" and checkpoint is None:
            raise ConfigError(
                f"--resume: {plan.label} finished at step {plan.done_step}, and max_steps {max_steps} asks for more, but "
                f"no complete checkpoint is left in {profiles.checkpoint_root(cfg, stage)} to continue from (final/ "
                "holds weights only, not the optimizer state). Start a new run (another `name:`) that loads "
                f"{progress.final_dir(cfg.run_dir, name)} as its model")
        return plan
    if checkpoint is not None and max_steps and max_steps > 0 and ckpts.step_of(checkpoint) > max_steps:
        key = f"stages[{cfg.stages.index(stage)}].max_steps" if name else "training.max_steps"
        raise ConfigError(
            f"--resume: {plan.label} is already at {checkpoint.name}, past max_steps {max_steps}: set max_steps to "
            f"{ckpts.step_of(checkpoint)} or more (--set {key}=N)")
    return plan


def _check_extensions(plan: ResumePlan) -> None:
    """A stage may grow only while no later stage has been trained on its final weights."""
    for i, stage in enumerate(plan.stages):
        if stage.action != "extend":
            continue
        later = [s for s in plan.stages[i + 1:] if s.done_step is not None or s.checkpoint is not None]
        if later:
            raise ConfigError(
                f"--resume: max_steps of {stage.label} went up from {stage.done_step} to {stage.max_steps}, but "
                f"{later[0].label} was already trained from its final weights; extending it would leave "
                f"{later[0].label} trained on other weights. Keep {stage.label}'s max_steps, or start a new run "
                "(another `name:`)")
