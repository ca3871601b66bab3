"""The installed TRL still has the private GRPOTrainer hooks grpokit overrides (grpokit.training.trl_hooks)."""
from __future__ import annotations

import ast
import inspect

import pytest

pytest.importorskip("trl")

from grpokit.data import zero_variance  # noqa: E402
from grpokit.training import trl_hooks  # noqa: E402


def test_the_installed_trl_has_every_hook_grpokit_relies_on():
    problems = trl_hooks.missing()
    assert not problems, ("grpokit relies on private GRPOTrainer parts this TRL lacks; install the TRL pinned in "
                          "pyproject.toml, or adapt training/grpo_trainer.py and training/trl_hooks.py:\n  "
                          + "\n  ".join(problems))


def test_every_override_of_a_trl_method_is_named_with_its_parameters():
    from trl import GRPOTrainer

    from grpokit.training.grpo_trainer import GrpokitTrainer

    overrides = {name: tuple(inspect.signature(f).parameters)[1:] for name, f in vars(GrpokitTrainer).items()
                 if name.startswith("_") and not name.startswith("__") and hasattr(GRPOTrainer, name)}
    assert overrides == {name: hook.parameters for name, hook in trl_hooks.HOOKS.items()}


def test_the_sampler_reads_only_the_named_attributes_and_fields():
    # What filtered_sampler reads off the trainer (trainer.X) and off its GRPOConfig (args.X).
    tree = ast.parse(inspect.getsource(zero_variance.filtered_sampler))
    read = {(node.value.id, node.attr) for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
    assert {a for owner, a in read if owner == "trainer"} - {"accelerator", "args"} == set(trl_hooks.ATTRIBUTES)
    assert {a for owner, a in read if owner == "args"} == set(trl_hooks.CONFIG_FIELDS)


def test_a_trl_without_a_hook_or_with_other_parameters_is_named(monkeypatch):
    from trl import GRPOTrainer

    monkeypatch.delattr(GRPOTrainer, "_generate")
    monkeypatch.setattr(GRPOTrainer, "_calculate_rewards", lambda self, inputs, prompts: None)
    problems = trl_hooks.missing()
    assert len(problems) == 2
    assert "GRPOTrainer has no _generate" in problems[0]
    assert "_calculate_rewards takes (inputs, prompts)" in problems[1]
    assert "(inputs, prompts, completions, completion_ids_list)" in problems[1]
