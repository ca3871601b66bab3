"""`grpokit calibrate CONFIG`: the whole command on the tiny random model, its JSON, --write and usage errors."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from grpokit.cli import app  # noqa: E402

runner = CliRunner()
QUESTIONS = ["Say something.", "Name a colour.", "Count to three.", "Greet me."]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from grpokit.models.tiny import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def _config(tmp_path, tiny_dir, data: str, reward: str):
    path = tmp_path / "c.yaml"
    path.write_text(
        "name: calibrate-cli-test\n"
        f"model: {{name: '{tiny_dir}'}}\n"
        f"data: {data}\n"
        f"rewards:\n  - {reward}\n"
        "profile: cpu\n"
        "training: {num_generations: 4, per_device_train_batch_size: 4, max_completion_length: 8}\n"
    )
    return path


def _invoke(*args):
    return runner.invoke(app, ["calibrate", *map(str, args)])


def test_a_random_model_never_solves_arithmetic(tmp_path, tiny_dir):
    # Gold numbers, numeric_match: the random model scores 0 everywhere -> every group is flat, every prompt too hard.
    config = _config(tmp_path, tiny_dir, "{source: 'synthetic:arithmetic', max_samples: 12, eval_size: 0}",
                     "{name: numeric_match}")
    out = tmp_path / "kept.jsonl"
    result = _invoke(config, "--samples", 4, "--prompts", 3, "--json", "--write", out)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["prompts"] == 3 and data["samples"] == 4 and data["num_generations"] == 4
    assert data["accuracy_reward"] == "numeric_match"
    assert data["predicted_zero_variance_share"] == 1.0 and data["too_hard"] == 3 and data["in_range"] == 0
    assert [p["pass_rate"] for p in data["per_prompt"]] == [0.0, 0.0, 0.0]
    assert out.read_text() == ""  # nothing in range: nothing written


def test_write_keeps_the_prompts_whose_groups_vary(tmp_path, tiny_dir):
    # No gold answers: prompts are judged by reward variance alone; a length reward varies with the sampled text.
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"question": q}) + "\n" for q in QUESTIONS))
    config = _config(tmp_path, tiny_dir, f"{{source: '{rows}', answer_column: null, eval_size: 0}}",
                     "{name: ideal_length, params: {target: 100, tolerance: 0, unit: chars}}")
    out = tmp_path / "kept.jsonl"
    result = _invoke(config, "--samples", 6, "--prompts", 4, "--write", out)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("prompt ")]
    assert len(lines) == 4 and all("pass rate   n/a" in line for line in lines)
    in_range = sum(line.endswith("in_range") for line in lines)
    assert in_range > 0
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == in_range and f"wrote {in_range} in-range rows" in result.output
    assert all(any(q in json.dumps(r["prompt"]) for q in QUESTIONS) for r in written)


@pytest.mark.parametrize("args, message", [
    (["--samples", "1"], "--samples"),                             # one sample says nothing about variance
    (["--set", "training.num_generations=1"], "num_generations"),  # a group of one has no variance
    (["--set", "training.no_such_key=1"], "no_such_key"),           # config errors are usage errors
])
def test_bad_usage_exits_2(tmp_path, tiny_dir, args, message):
    config = _config(tmp_path, tiny_dir, "{source: 'synthetic:arithmetic', max_samples: 8, eval_size: 0}",
                     "{name: numeric_match}")
    result = _invoke(config, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_missing_config_exits_2(tmp_path):
    result = _invoke(tmp_path / "nope.yaml")
    assert result.exit_code == 2 and "nope.yaml" in result.output
