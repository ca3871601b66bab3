"""`grpokit train --dry-run` prints what TRL's trainer is handed, for every stage: the GRPOConfig keywords
(built once, nothing set on them afterwards, under the names GRPOConfig takes) and the reward functions
(under the names TRL logs them). Training builds one RewardSet per stage and shares it."""
from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import pytest
import yaml
from typer.testing import CliRunner

from grpokit.models.tiny import make_tiny_model
from grpokit.cli import app


def _printed(output: str) -> list[dict]:
    # Each stage: a "# GRPOConfig ..." line, the keywords as one JSON object, ..., "# reward_funcs ...: [..]".
    blocks, lines = [], output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# GRPOConfig"):
            end = lines.index("}", i + 1)
            blocks.append({"args": json.loads("\n".join(lines[i + 1:end + 1]))})
        elif line.startswith("# reward_funcs"):
            blocks[-1]["reward_funcs"] = json.loads(line.split(": ", 1)[1])
    return blocks


class Recording:
    """Stands in for GrpokitTrainer: keeps what it is handed, trains nothing, saves the model it got
    (the next stage starts from it)."""

    handed: list[dict] = []

    def __init__(self, *, model, reward_funcs, args, callbacks, **kwargs):
        Recording.handed.append({"args": args.to_dict(), "reward_funcs": [f.__name__ for f in reward_funcs],
                                 "callbacks": callbacks})
        self.model = model
        self.state = SimpleNamespace(global_step=args.max_steps)

    def train(self, resume_from_checkpoint=None):
        pass

    def save_model(self, path):
        self.model.save_pretrained(path)


@pytest.mark.parametrize("stages", [False, True])
def test_dry_run_prints_what_the_trainer_receives_for_every_stage(tmp_path, monkeypatch, stages):
    from trl import GRPOConfig

    from grpokit.config.run_config import load_config
    from grpokit.evaluate.during import HeldOutEvalCallback
    from grpokit.training import grpo_trainer
    from grpokit.training.callbacks import RewardStatsCallback
    from grpokit.training.trainer import train

    model = make_tiny_model(tmp_path / "model", chat_format="roles", vocab_size=0, hidden_size=32)
    raw = {
        "name": "dry", "output_dir": str(tmp_path / "run"), "profile": "cpu",
        "model": {"name": str(model), "lora": {"r": 4}},
        "data": {"source": "synthetic:arithmetic", "max_samples": 16, "eval_size": 4},
        "eval": {"every": 1, "prompts": 2},
        # Two weights: before, reward_weights was set on the GRPOConfig after it was built and printed.
        "rewards": [{"name": "numeric_match", "weight": 2.0}, {"name": "incremental_format", "weight": 0.5}],
        "training": {"max_steps": 1, "num_generations": 4, "per_device_train_batch_size": 4,
                     "max_completion_length": 8},
    }
    if stages:
        # Three stages, each its own: rewards (one repeated, which TRL logs as numeric_match_2), sampling, steps.
        raw["stages"] = [
            {"name": "warm", "max_steps": 1, "rewards": [{"name": "incremental_format", "weight": 3.0}]},
            {"name": "twice", "max_steps": 2, "rewards": [{"name": "numeric_match", "weight": 1.0},
                                                          {"name": "numeric_match", "weight": 0.25,
                                                           "params": {"take": "first"}}]},
            {"name": "full", "max_steps": 1, "training": {"temperature": 0.7}},
        ]
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(raw))
    result = CliRunner().invoke(app, ["train", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    printed = _printed(result.output)

    Recording.handed = []
    monkeypatch.setattr(grpo_trainer, "GrpokitTrainer", Recording)
    train(load_config(path))
    received = Recording.handed
    assert len(printed) == len(received) == (3 if stages else 1)

    for shown, got in zip(printed, received):
        assert GRPOConfig(**shown["args"]).to_dict() == got["args"]
        assert shown["reward_funcs"] == got["reward_funcs"]
        # The names GRPOConfig takes: transformers 5's activation_checkpointing, not the old alias.
        if "activation_checkpointing" in {f.name for f in dataclasses.fields(GRPOConfig)}:
            assert "activation_checkpointing" in shown["args"] and "gradient_checkpointing" not in shown["args"]
        # One RewardSet per stage: the held-out evaluation scores with the very functions TRL's wrapper calls.
        calls = next(cb.calls for cb in got["callbacks"] if isinstance(cb, RewardStatsCallback))
        held_out = next(cb for cb in got["callbacks"] if isinstance(cb, HeldOutEvalCallback))
        assert held_out.reward_funcs == calls.rewards.funcs and held_out.weights == calls.weights
        assert calls.cut_gap.stop_ids  # TRL's stop ids, given when the wrapper was built
    expected = [
        {"reward_funcs": ["incremental_format"], "weights": [3.0], "max_steps": 1, "temperature": 1.0},
        {"reward_funcs": ["numeric_match", "numeric_match_2"], "weights": [1.0, 0.25], "max_steps": 2,
         "temperature": 1.0},
        {"reward_funcs": ["numeric_match", "incremental_format"], "weights": [2.0, 0.5], "max_steps": 1,
         "temperature": 0.7},
    ] if stages else [{"reward_funcs": ["numeric_match", "incremental_format"], "weights": [2.0, 0.5],
                       "max_steps": 1, "temperature": 1.0}]
    assert [{"reward_funcs": r["reward_funcs"], "weights": r["args"]["reward_weights"],
             "max_steps": r["args"]["max_steps"], "temperature": r["args"]["temperature"]} for r in received] == expected
