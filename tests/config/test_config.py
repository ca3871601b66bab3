"""The run config: YAML -> dataclasses, --set overrides, and validation before any model loads."""
from __future__ import annotations


import pytest
import yaml

from grpokit.config.run_config import (
    LoraConfig,
    RunConfig,
    apply_overrides,
    check_batch,
    dump_yaml,
    load_config,
)
from grpokit.errors import ConfigError
from grpokit.config.profiles import trl_defaults
from grpokit.rewards import names, register


@pytest.fixture(autouse=True, scope="module")
def _reward():
    # A reward defined here, so validation has a known name without the reward library.
    if "cfg_test_reward" not in names():
        @register("cfg_test_reward")
        def cfg_test_reward(completions, **kwargs):
            return [0.0 for _ in completions]


GOOD = {
    "name": "t",
    "rewards": [{"name": "cfg_test_reward"}],
    "training": {"num_generations": 4, "per_device_train_batch_size": 4},
}


def write(tmp_path, data, name="cfg.yaml"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


def with_(**changes):
    out = yaml.safe_load(yaml.safe_dump(GOOD))
    for key, value in changes.items():
        node = out
        parts = key.split("__")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return out


def test_defaults_fill_every_field(tmp_path):
    cfg = load_config(write(tmp_path, GOOD))
    assert cfg.model.name == "bundled:smollm2-135m-instruct"
    assert cfg.model.lora == LoraConfig(r=16, alpha=32, dropout=0.0, target_modules="all-linear")
    assert cfg.data.source == "synthetic:arithmetic"
    assert str(cfg.run_dir) == "runs/t"
    assert cfg.rewards[0].weight == 1.0 and cfg.rewards[0].params == {}


def test_lora_alpha_follows_rank(tmp_path):
    # alpha defaults to 2r, the usual scaling, when only r is given.
    cfg = load_config(write(tmp_path, with_(model={"lora": {"r": 8}})))
    assert cfg.model.lora.alpha == 16


def test_lora_null_disables_it(tmp_path):
    cfg = load_config(write(tmp_path, with_(model={"lora": None})))
    assert cfg.model.lora is None


def test_resolved_yaml_round_trips(tmp_path):
    # config.yaml in the run dir must load back to the same config.
    cfg = load_config(write(tmp_path, GOOD))
    again = load_config(write(tmp_path, dump_yaml(cfg), "resolved.yaml"))
    assert again == RunConfig(**{**again.__dict__, "output_dir": again.output_dir}) and dump_yaml(again) == dump_yaml(cfg)
    resolved = yaml.safe_load(dump_yaml(cfg))
    assert resolved["model"]["lora"]["alpha"] == 32 and resolved["output_dir"] == "runs/t"


@pytest.mark.parametrize(
    "overrides, check",
    [
        (["training.max_steps=5"], lambda c: c.training["max_steps"] == 5),  # int parsed as YAML
        (["training.learning_rate=1e-5"], lambda c: c.training["learning_rate"] == 1e-5),  # YAML 1.1 reads 1e-5 as text
        (["model.lora=null"], lambda c: c.model.lora is None),  # null disables LoRA
        (["rewards.0.weight=2.5"], lambda c: c.rewards[0].weight == 2.5),  # list items by index
        (["name=other"], lambda c: str(c.run_dir) == "runs/other"),  # output dir follows the name
        (["data.columns={expression: expr}"], lambda c: c.data.columns == {"expression": "expr"}),  # flow mappings
    ],
)
def test_overrides(tmp_path, overrides, check):
    assert check(load_config(write(tmp_path, GOOD), overrides))


def test_scientific_notation_in_yaml_file_is_a_float(tmp_path):
    cfg = load_config(write(tmp_path, "name: t\nrewards: [{name: cfg_test_reward}]\n"
                                      "training: {learning_rate: 5e-6, num_generations: 4, per_device_train_batch_size: 4}\n"))
    assert cfg.training["learning_rate"] == 5e-6


@pytest.mark.parametrize(
    "data, match",
    [
        # A typo at the top level names the nearest key.
        (with_(rewrads=[]), r"unknown key 'rewrads'.*did you mean 'rewards'"),
        # Nested dataclasses are checked too.
        (with_(model={"lora": {"rank": 8}}), r"unknown key 'rank' in model.lora"),
        # training: keys are GRPOConfig fields; the nearest one is named.
        (with_(training={"num_generation": 4}), r"unknown key 'num_generation'.*did you mean 'num_generations'"),
        # A field removed from TRL long ago (old templates) is rejected, not silently ignored.
        (with_(training={"max_prompt_lenght": 4}), r"unknown key 'max_prompt_lenght'"),
        # 6 completions do not split into groups of 4; the valid values are listed.
        (with_(training={"num_generations": 4, "per_device_train_batch_size": 6}),
         r"not divisible by num_generations \(4\).*one of \[2, 3, 6\].*per_device_train_batch_size to one of \[4, 8"),
        # generation_batch_size, when given, is what must divide.
        (with_(training={"num_generations": 4, "per_device_train_batch_size": 2, "generation_batch_size": 10}),
         r"generation_batch_size \(10\) is not divisible"),
        # GRPO needs at least two completions per prompt.
        (with_(training={"num_generations": 1, "per_device_train_batch_size": 4}), r"at least 2"),
        # Unknown reward names get the registry's hint.
        (with_(rewards=[{"name": "cfg_test_rewrd"}]), r"unknown reward 'cfg_test_rewrd'.*cfg_test_reward"),
        # An empty reward list cannot train.
        (with_(rewards=[]), r"rewards: is empty"),
        # Profiles are a closed set.
        (with_(profile="gpu"), r"profile is 'gpu'.*cpu"),
        # A local model path that does not exist fails before any download attempt.
        (with_(model={"name": "./no/such/model"}), r"does not exist"),
        # Types are checked: a string where a number belongs.
        (with_(model={"lora": {"r": "sixteen"}}), r"model.lora.r must be int"),
        # The same stage name twice would share checkpoints.
        (with_(stages=[{"name": "a"}, {"name": "a"}]), r"used twice"),
        # Stage training keys are GRPOConfig fields too.
        (with_(stages=[{"name": "a", "training": {"betaa": 0.1}}]), r"did you mean 'beta'"),
        # Checkpoints live under the run dir; a training.output_dir would split them.
        (with_(training={"output_dir": "x", "num_generations": 4, "per_device_train_batch_size": 4}),
         r"top-level `output_dir:`"),
    ],
)
def test_validation_errors(tmp_path, data, match):
    with pytest.raises(ConfigError, match=match):
        load_config(write(tmp_path, data))


def test_missing_file():
    with pytest.raises(ConfigError, match="not found"):
        load_config("/no/such/config.yaml")


def test_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "name: [unclosed\n"))


def test_top_level_must_be_mapping(tmp_path):
    with pytest.raises(ConfigError, match="mapping at the top level"):
        load_config(write(tmp_path, "- a\n- b\n"))


def test_missing_data_file(tmp_path):
    with pytest.raises(ConfigError):
        load_config(write(tmp_path, with_(data={"source": str(tmp_path / "missing.csv")})))


def test_missing_data_column(tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("question,solution\nWhat is 1+1?,2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="answer"):
        load_config(write(tmp_path, with_(data={"source": str(csv)})))


@pytest.mark.parametrize(
    "override, match",
    [
        ("training.max_steps", "key=value"),  # no '=' at all
        ("rewards.7.weight=1", "not an index"),  # index out of range
        ("name.x=1", "is a value, not a mapping"),  # descending into a scalar
    ],
)
def test_bad_overrides(override, match):
    with pytest.raises(ConfigError, match=match):
        apply_overrides({"name": "t", "rewards": [{"name": "a"}]}, [override])


@pytest.mark.parametrize(
    "training, ok",
    [
        ({}, True),  # TRL defaults: 8 x 1 with 8 generations
        ({"num_generations": 4, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2}, True),  # accumulation counts
        ({"num_generations": 4, "per_device_train_batch_size": 2, "steps_per_generation": 2}, True),  # so does steps_per_generation
        ({"num_generations": 3, "per_device_train_batch_size": 4}, False),  # 4 is not a multiple of 3
        ({"num_generations": 8, "generation_batch_size": 16}, True),  # explicit generation batch
    ],
)
def test_check_batch_table(training, ok):
    training = {**trl_defaults(), **training}  # check_batch reads resolved settings
    if ok:
        check_batch(training)
    else:
        with pytest.raises(ConfigError):
            check_batch(training)


def test_world_size_counts(monkeypatch):
    # Two processes double the generation batch: 2 x 2 = 4 splits into groups of 4.
    monkeypatch.setenv("WORLD_SIZE", "2")
    check_batch({**trl_defaults(), "num_generations": 4, "per_device_train_batch_size": 2})


def test_cli_dry_run_prints_config_and_grpo_config(tmp_path):
    from typer.testing import CliRunner

    from grpokit.cli import app

    result = CliRunner().invoke(app, ["train", str(write(tmp_path, GOOD)), "--dry-run", "--set", "profile=cpu"])
    assert result.exit_code == 0, result.output
    assert "# resolved config" in result.output and '"num_generations": 4' in result.output
    # the cpu profile was applied, under the name GRPOConfig takes (transformers 5 renamed gradient_checkpointing)
    assert '"activation_checkpointing": false' in result.output


def _csv_without_answer(tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("question,solution\nWhat is 1+1?,2\n", encoding="utf-8")
    return str(csv)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda p: "/no/such.yaml", "not found"),  # bad file
        (lambda p: write(p, with_(trainig={})), "did you mean 'training'"),  # bad key
        (lambda p: write(p, with_(training={"num_generations": 4, "per_device_train_batch_size": 6})),
         "not divisible"),  # bad batch size
        (lambda p: write(p, with_(data={"source": _csv_without_answer(p)})), "answer"),  # missing column
    ],
)
def test_cli_config_errors_exit_2(tmp_path, make, match):
    from typer.testing import CliRunner

    from grpokit.cli import app

    result = CliRunner().invoke(app, ["train", str(make(tmp_path))])
    assert result.exit_code == 2, result.output
    assert "config error" in result.output and match in result.output.replace("\n", " ")


@pytest.mark.parametrize(
    "override, message",
    [
        ("eval.every=-1", "eval.every must be a whole number >= 0"),  # negative interval
        ("eval.prompts=0", "eval.prompts must be a whole number >= 1"),  # nothing to evaluate
        ("eval.samples=true", "eval.samples must be int"),  # a bool is not a count (the generic type check)
        ("eval.temperature=-0.5", "eval.temperature must be a number from 0"),  # below greedy
        ("eval.max_new_tokens=0", "eval.max_new_tokens must be a whole number >= 1"),
    ],
)
def test_bad_eval_section_fails_before_loading(override, message, tmp_path):
    from grpokit.config.run_config import load_config
    from grpokit.errors import ConfigError

    path = tmp_path / "c.yaml"
    path.write_text("name: t\ndata: {source: 'synthetic:addition', conversational: false, eval_size: 10}\n"
                    "rewards: [{name: numeric_match}]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(path, [override])


def test_eval_every_needs_a_held_out_split(tmp_path):
    from grpokit.config.run_config import load_config
    from grpokit.errors import ConfigError

    path = tmp_path / "c.yaml"
    path.write_text("name: t\ndata: {source: 'synthetic:addition', eval_size: 0}\nrewards: [{name: numeric_match}]\n"
                    "eval: {every: 5}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="data.eval_size is 0"):
        load_config(path)


@pytest.mark.parametrize("training, says, never", [
    # Issue 35.10: a good did-you-mean followed by ~200 TRL key names on one line.
    ({"max_step": 3}, "did you mean 'max_steps'?", "adam_beta1"),
    # Nothing close among ~200 keys: a few that start alike, not all of them.
    ({"xyzzy": 3}, "none of its", "adam_beta1"),
])
def test_unknown_training_key_names_the_nearest_without_listing_every_key(tmp_path, training, says, never):
    path = write(tmp_path, with_(training=training))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert says in str(info.value) and never not in str(info.value) and len(str(info.value)) < 400
