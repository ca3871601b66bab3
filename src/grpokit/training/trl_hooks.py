"""The private parts of TRL's GRPOTrainer that grpokit relies on, named in one place.

TRL promises nothing about them: a release may rename one, change its arguments, or stop
calling it, and an override of a hook nobody calls fails silently (the zero-variance filter
would just not filter). pyproject.toml pins TRL to the release they were read from (1.16);
`missing()` says what an installed TRL lacks, and tests/training/test_trl_hooks.py fails on it.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
from typing import NamedTuple


class Hook(NamedTuple):
    parameters: tuple[str, ...]  # after self, in order
    why: str


# Methods grpokit.training.grpo_trainer.GrpokitTrainer overrides and calls through super().
HOOKS = {
    "_get_train_sampler": Hook(("dataset",), "the online zero-variance filter's sampler (grpokit.data.zero_variance)"),
    "_generate": Hook(("prompts",), "the step's progress line: generating"),
    "_calculate_rewards": Hook(("inputs", "prompts", "completions", "completion_ids_list"),
                               "the step's progress line: scoring"),
    "_generate_and_score_completions": Hook(("inputs",), "the step's progress line: training"),
}

# Attributes GRPOTrainer.__init__ sets and grpokit.data.zero_variance.filtered_sampler reads, to build
# its sampler with the arguments TRL's RepeatSampler gets.
ATTRIBUTES = ("num_generations", "num_iterations", "shuffle_dataset")
# GRPOConfig fields the same sampler reads.
CONFIG_FIELDS = ("generation_batch_size", "steps_per_generation", "seed")
# What grpokit works out the way GRPOTrainer.__init__ does, before the trainer exists: the ids that end a
# completion (grpokit.rewards.cut_gap.stop_ids; tests/rewards/test_cut_gap.py holds the two equal).
MIRRORED = ("eos_token_ids",)


def missing() -> list[str]:
    """One line per hook, attribute or field the installed TRL lacks or has changed; [] when all hold."""
    import trl
    from trl import GRPOConfig, GRPOTrainer

    where = f"TRL {trl.__version__}"
    problems = []
    code = inspect.getsource(GRPOTrainer)
    for name, hook in HOOKS.items():
        method = getattr(GRPOTrainer, name, None)
        if method is None:
            problems.append(f"{where}: GRPOTrainer has no {name} (grpokit overrides it for {hook.why})")
            continue
        got = tuple(inspect.signature(method).parameters)[1:]
        if got != hook.parameters:
            problems.append(f"{where}: GRPOTrainer.{name} takes ({', '.join(got)}), grpokit's override takes "
                            f"({', '.join(hook.parameters)}) (for {hook.why})")
        # Called, or handed on (get_train_dataloader passes sampler_fn=self._get_train_sampler).
        if not re.search(rf"self\.{name}\b", code):
            problems.append(f"{where}: GRPOTrainer's code no longer uses self.{name}, so grpokit's override "
                            f"would never run ({hook.why})")
    init = inspect.getsource(GRPOTrainer.__init__)
    problems += [f"{where}: GRPOTrainer.__init__ no longer sets self.{name} (the zero-variance sampler reads it)"
                 for name in ATTRIBUTES if f"self.{name} =" not in init]
    problems += [f"{where}: GRPOTrainer.__init__ no longer sets self.{name} (grpokit.rewards.cut_gap.stop_ids "
                 "works it out the same way)" for name in MIRRORED if f"self.{name} =" not in init]
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    problems += [f"{where}: GRPOConfig has no field {name} (the zero-variance sampler reads it)"
                 for name in CONFIG_FIELDS if name not in fields]
    return problems

