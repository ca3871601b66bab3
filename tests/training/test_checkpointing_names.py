"""The gradient -> activation checkpointing rename: same meaning, no FutureWarning from our side."""
from __future__ import annotations

import dataclasses
import warnings

import pytest

from grpokit.config import profiles
from grpokit.models.checkpointing_names import new_names, quiet_model_alias
from grpokit.config.run_config import ModelConfig, RewardSpec, RunConfig


@dataclasses.dataclass
class Renamed:  # the shape of TrainingArguments from transformers 5 on, with TRL's default of True
    gradient_checkpointing: bool = True
    gradient_checkpointing_kwargs: dict | None = None
    activation_checkpointing: bool | None = None
    activation_checkpointing_kwargs: dict | None = None


@dataclasses.dataclass
class BeforeRename:  # transformers 4.x: only the old names exist
    gradient_checkpointing: bool = False
    gradient_checkpointing_kwargs: dict | None = None


KW = {"use_reentrant": False}


@pytest.mark.parametrize(
    "kwargs, cls, expected",
    [
        # nothing said: TRL's default (True) is passed under the new name, so nothing is left to warn about
        ({}, Renamed, {"activation_checkpointing": True}),
        # a profile's or user's old-name setting moves to the new name, kwargs too
        ({"gradient_checkpointing": False}, Renamed, {"activation_checkpointing": False}),
        ({"gradient_checkpointing": True, "gradient_checkpointing_kwargs": KW}, Renamed,
         {"activation_checkpointing": True, "activation_checkpointing_kwargs": KW}),
        # the new name, given explicitly, wins over a profile's old-name default (as inside transformers)
        ({"gradient_checkpointing": False, "activation_checkpointing": True}, Renamed,
         {"activation_checkpointing": True}),
        # before the rename nothing changes: the old name is the only one
        ({"gradient_checkpointing": True}, BeforeRename, {"gradient_checkpointing": True}),
        ({}, BeforeRename, {}),
    ],
)
def test_new_names(kwargs, cls, expected):
    assert new_names({"output_dir": "x", **kwargs}, cls) == {"output_dir": "x", **expected}


def _checkpointing_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, FutureWarning) and "checkpointing" in str(w.message)]


@pytest.mark.parametrize(
    "profile, training, enabled",
    [
        ("cpu", {}, False),                                  # the cpu profile turns checkpointing off
        ("memory", {}, True),                                # memory turns it on, with kwargs
        ("none", {}, True),                                  # TRL's own default, True
        ("cpu", {"gradient_checkpointing": True}, True),     # a user's old-name key still works
        ("cpu", {"activation_checkpointing": True}, True),   # and so does the new name
    ],
)
def test_grpo_config_build_is_quiet_and_keeps_the_setting(profile, training, enabled):
    cfg = RunConfig(name="p", model=ModelConfig(), profile=profile, rewards=[RewardSpec("x")],
                    training={"num_generations": 4, "per_device_train_batch_size": 4, **training})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        args = profiles.build_grpo_config(cfg, check_hardware=False)
    assert _checkpointing_warnings(caught) == []
    assert args.gradient_checkpointing is enabled  # what grpokit.training.trainer and TRL read


def test_quiet_model_alias_filters_only_its_messages():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet_model_alias():
            warnings.warn("`is_gradient_checkpointing` is deprecated and will be removed in v6.", FutureWarning)
            warnings.warn("`gradient_checkpointing_enable` is deprecated and will be removed in v6.", FutureWarning)
            warnings.warn("`use_cache` is deprecated", FutureWarning)  # another deprecation still shows
            warnings.warn("`is_gradient_checkpointing` is deprecated", UserWarning)  # another category too
        warnings.warn("`is_gradient_checkpointing` is deprecated", FutureWarning)  # outside the block: shown
    assert [(w.category, str(w.message)) for w in caught] == [
        (FutureWarning, "`use_cache` is deprecated"),
        (UserWarning, "`is_gradient_checkpointing` is deprecated"),
        (FutureWarning, "`is_gradient_checkpointing` is deprecated"),
    ]
