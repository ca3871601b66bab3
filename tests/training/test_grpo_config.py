"""`grpokit train --dry-run` prints the GRPOConfig the trainer gets: built once, nothing set on it afterwards."""
from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from grpokit.models.tiny import make_tiny_model
from grpokit.cli import app


class Received(Exception):
    """Stops the run once the trainer has been handed its arguments."""


def _printed_kwargs(output: str) -> list[dict]:
    # Each stage: a "# GRPOConfig ..." line, then the keywords as one JSON object.
    blocks, lines = [], output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# GRPOConfig"):
            end = lines.index("}", i + 1)
            blocks.append(json.loads("\n".join(lines[i + 1:end + 1])))
    return blocks


@pytest.mark.parametrize("stages", [False, True])
def test_dry_run_prints_the_grpo_config_the_trainer_receives(tmp_path, monkeypatch, stages):
    from trl import GRPOConfig

    from grpokit.models.checkpointing_names import new_names
    from grpokit.training import grpo_trainer

    model = make_tiny_model(tmp_path / "model", chat_format="roles", vocab_size=0, hidden_size=32)
    raw = {
        "name": "dry", "output_dir": str(tmp_path / "run"), "profile": "cpu",
        "model": {"name": str(model), "lora": {"r": 4}},
        "data": {"source": "synthetic:arithmetic", "max_samples": 16, "eval_size": 0},
        # Two weights: before, reward_weights was set on the GRPOConfig after it was built and printed.
        "rewards": [{"name": "numeric_match", "weight": 2.0}, {"name": "incremental_format", "weight": 0.5}],
        "training": {"max_steps": 1, "num_generations": 4, "per_device_train_batch_size": 4,
                     "max_completion_length": 8},
    }
    if stages:
        raw["stages"] = [{"name": "warm", "max_steps": 1, "rewards": [{"name": "incremental_format", "weight": 3.0}]},
                         {"name": "full", "max_steps": 1, "training": {"temperature": 0.7}}]
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(raw))
    result = CliRunner().invoke(app, ["train", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    printed = _printed_kwargs(result.output)
    assert len(printed) == (2 if stages else 1)

    received = []

    def capture(self, *args, **kwargs):
        received.append(kwargs["args"].to_dict())  # what the trainer is handed, before TRL reads it
        raise Received

    monkeypatch.setattr(grpo_trainer.GrpokitTrainer, "__init__", capture)
    from grpokit.config.run_config import load_config
    from grpokit.training.trainer import train

    with pytest.raises(Received):
        train(load_config(path))
    assert printed[0]["reward_weights"] == ([3.0] if stages else [2.0, 0.5])
    expected = GRPOConfig(**new_names(printed[0], GRPOConfig)).to_dict()
    assert received[0] == expected
