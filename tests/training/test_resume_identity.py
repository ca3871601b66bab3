"""What --resume may change in a run's config: every key of a real config.yaml, changed one at a time.

The class of failure: a resume that continues a checkpoint with settings of another run (other data,
model, rewards, optimiser), which then names data it never trained on. The allow-list is the rule (length,
cadence of what is recorded, health thresholds, machine settings); every other key of every shipped recipe
must be refused, and every allowed one accepted.
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from grpokit.config.run_config import load_config
from grpokit.training.resume import TRAINING_MAY_CHANGE, config_mapping, flatten, identity_changes, may_change

ROOT = Path(__file__).resolve().parents[2]
RECIPES = sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))


def _mapping(name):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a profile's note that this machine has no GPU
        return config_mapping(load_config(ROOT / "configs" / name, check_data=False))


def _set(mapping, key, value):
    """A copy of `mapping` with the dotted key (indexes as [i]) set to value."""
    import re

    out = copy.deepcopy(mapping)
    parts = [p for p in re.split(r"\.|(\[\d+\])", key) if p]
    node = out
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    last = parts[-1]
    if last.startswith("["):
        node[int(last[1:-1])] = value
    else:
        node[last] = value
    return out


def _other(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "-other"
    if value is None:
        return "something"
    if isinstance(value, list):
        return value + ["x"]
    if isinstance(value, dict):
        return {**value, "x": 1}
    return "other"


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_key_of_a_recipe_is_identity_unless_allowed(recipe):
    recorded = _mapping(recipe)
    for key, value in flatten(recorded).items():
        changed = identity_changes(recorded, _set(recorded, key, _other(value)))
        if may_change(key):
            assert changed == [], (recipe, key)
        else:
            assert changed and changed[0].startswith(key), (recipe, key, changed)


def test_the_issues_resume_with_another_data_file_is_refused_with_each_difference():
    recorded = _mapping("qa-csv.yaml")
    now = copy.deepcopy(recorded)
    now["data"].update(source="other.jsonl", prompt_column="q", answer_column="a")
    now["rewards"].append({"name": "regex_format", "weight": 0.5, "params": {}, "timeout": None})
    changes = identity_changes(recorded, now)
    assert [c.split(":")[0] for c in changes] == ["data.source", "data.prompt_column", "data.answer_column",
                                                   f"rewards[{len(recorded['rewards'])}].name",
                                                   f"rewards[{len(recorded['rewards'])}].weight"], changes


@pytest.mark.parametrize("key, value", [
    ("training.max_steps", 4000), ("training.save_steps", 7), ("training.logging_steps", 3),
    ("health.kl_max", 2.0), ("eval.every", 5), ("description", "longer"), ("training.bf16", False),
])
def test_length_cadence_thresholds_and_machine_may_change(key, value):
    recorded = _mapping("math-multistage.yaml")
    assert identity_changes(recorded, _set(recorded, key, value)) == []


def test_a_stage_may_grow_but_not_change_its_rewards_or_name():
    recorded = _mapping("math-multistage.yaml")
    assert identity_changes(recorded, _set(recorded, "stages[1].max_steps", 999)) == []
    assert identity_changes(recorded, _set(recorded, "stages[1].name", "renamed"))
    fewer = copy.deepcopy(recorded)
    fewer["stages"].pop()
    assert identity_changes(recorded, fewer)


def test_a_key_an_older_grpokit_did_not_write_reads_as_its_default():
    recorded = _mapping("qa-csv.yaml")
    older = copy.deepcopy(recorded)
    del older["data"]["drop_zero_variance_after"]  # added in a later version; default None
    assert identity_changes(older, recorded) == []
    newer_value = _set(recorded, "data.drop_zero_variance_after", 3)
    assert identity_changes(older, newer_value)  # not the default: the run would change


def test_the_allow_list_names_real_trl_fields():
    from trl import GRPOConfig

    fields = set(GRPOConfig.__dataclass_fields__)
    assert TRAINING_MAY_CHANGE <= fields, TRAINING_MAY_CHANGE - fields
