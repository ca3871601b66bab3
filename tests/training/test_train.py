"""Real GRPO training on a tiny random Llama: a short run, SIGKILL + resume, multi-stage, exit codes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from grpokit.training import checkpoints as ckpts
from grpokit.config.run_config import from_dict, load_config
from grpokit.config.profiles import resolve_training
from grpokit.rewards import names, register


pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent


def tiny_len(completions, **kwargs):
    from grpokit.completions import texts

    # Dense and varied on random text, so advantages are non-zero and weights move.
    return [min(len(t), 24) / 24 for t in texts(completions)]


if "tiny_len" not in names():
    register("tiny_len")(tiny_len)


@pytest.fixture(scope="module")
def tiny(tiny_roles_model_dir):
    return tiny_roles_model_dir  # saved once per test run (conftest.py)


def run_config(tiny, out, **training):
    base = {"max_steps": 2, "num_generations": 4, "per_device_train_batch_size": 4, "max_completion_length": 12,
            "save_steps": 1, "learning_rate": 0.01}
    base.update(training)
    return {
        "name": "tiny",
        "output_dir": str(out),
        "model": {"name": str(tiny), "lora": {"r": 4}},
        "data": {"source": "synthetic:arithmetic", "max_samples": 32, "eval_size": 0},
        "rewards": [{"name": "tiny_len"}],
        "profile": "cpu",
        "training": base,
    }


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_two_step_run_writes_the_run_directory(tiny, tmp_path):
    from grpokit.training.trainer import train

    run_dir = train(from_dict(run_config(tiny, tmp_path / "run")))
    metrics = read_jsonl(run_dir / "metrics.jsonl")
    # One record per step, under TRL's own metric names.
    assert [m["step"] for m in metrics] == [1, 2]
    for key in ("reward", "reward_std", "rewards/tiny_len/mean", "loss", "completions/mean_length", "step_time",
                "memory/rss_gb", "memory/peak_rss_gb"):
        assert key in metrics[0], key
    samples = read_jsonl(run_dir / "completions.jsonl")
    # Per-reward scores for a sample of each batch, with the prompt and gold answer.
    assert samples and set(samples[0]["scores"]) == {"tiny_len"} and samples[0]["answer"] is not None
    assert {s["step"] for s in samples} == {1, 2}
    # The resolved config loads back and names the run dir.
    resolved = load_config(run_dir / "config.yaml")
    assert resolved.training["max_steps"] == 2 and resolved.model.lora.alpha == 8
    # Every setting the run used is written out (profile and TRL defaults too), and resolves to itself.
    assert {"num_generations", "temperature", "seed", "logging_steps"} <= set(resolved.training)
    assert resolve_training(resolved) == resolved.training
    for ckpt in ckpts.list_checkpoints(run_dir / "checkpoints"):
        assert ckpts.checkpoint_problem(ckpt) is None
    assert (run_dir / "checkpoints" / "final" / "adapter_model.safetensors").is_file()


def test_training_prints_no_checkpointing_future_warning(tiny, tmp_path):
    # transformers 5 renamed gradient checkpointing; TRL 1.16 and peft still use the old names and
    # would print a FutureWarning on every run. Checkpointing on, so TRL's disable/enable path runs too.
    import warnings

    from grpokit.training.trainer import train

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_dir = train(from_dict(run_config(tiny, tmp_path / "run", max_steps=1, gradient_checkpointing=True)))
    renamed = [f"{w.filename}:{w.lineno}: {w.message}" for w in caught
               if issubclass(w.category, FutureWarning) and "checkpointing" in str(w.message)]
    assert renamed == []
    assert [m["step"] for m in read_jsonl(run_dir / "metrics.jsonl")] == [1]  # it did train
    assert load_config(run_dir / "config.yaml").training["gradient_checkpointing"] is True


DRIVER = textwrap.dedent(
    """
    import os, sys, time
    from grpokit.rewards import register

    @register("tiny_slow_len")
    def tiny_slow_len(completions, **kwargs):
        time.sleep(float(os.environ.get("SLOW", "0")))  # keeps the run alive long enough to be killed
        return [min(len(str(c)), 24) / 24 for c in completions]

    @register("tiny_badlen")
    def tiny_badlen(completions, **kwargs):
        return []  # one score per completion is the contract; TRL cannot use this

    from grpokit.cli import main
    sys.argv = ["grpokit", *sys.argv[1:]]
    main()
    """
)


def _driver(tmp_path, config: dict) -> tuple[Path, Path]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return driver, cfg_path


def test_sigkill_then_resume_continues_from_last_complete_checkpoint(tiny, tmp_path):
    config = run_config(tiny, tmp_path / "run", max_steps=6, save_steps=2)
    config["rewards"] = [{"name": "tiny_slow_len"}]
    driver, cfg_path = _driver(tmp_path, config)
    env = {**os.environ, "SLOW": "1.0"}
    proc = subprocess.Popen([sys.executable, str(driver), "train", str(cfg_path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = tmp_path / "run" / "checkpoints" / "checkpoint-2" / ckpts.MARKER
    deadline = time.time() + 240
    while not first.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.1)
    assert first.exists(), proc.communicate()[0] if proc.poll() is not None else "no checkpoint in time"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    root = tmp_path / "run" / "checkpoints"
    assert not (root / "final").exists()
    # A save cut short: checkpoint-5 with a truncated weight file and no marker; resume must skip and remove it.
    broken = root / "checkpoint-5"
    broken.mkdir(exist_ok=True)
    (broken / "trainer_state.json").write_text('{"global_step": 5}')
    (broken / "adapter_model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":")
    killed_at = max(ckpts.step_of(c) for c in ckpts.list_checkpoints(root) if c != broken
                    and ckpts.checkpoint_problem(c) is None)

    result = subprocess.run([sys.executable, str(driver), "train", str(cfg_path), "--resume"],
                            env={**os.environ, "SLOW": "0"}, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout.replace("\n", "")
    assert f"resuming run from {root / f'checkpoint-{killed_at}'}" in out and "removing broken checkpoint" in out
    assert not broken.exists()
    # The step counter continued: every step logged exactly once, in order, ending at max_steps.
    steps = [m["step"] for m in read_jsonl(tmp_path / "run" / "metrics.jsonl")]
    assert steps == list(range(1, 7)), steps
    state = json.loads((root / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["global_step"] == 6
    for ckpt in ckpts.list_checkpoints(root):
        assert ckpts.checkpoint_problem(ckpt) is None, ckpt


def test_multi_stage_starts_from_previous_stage_weights(tiny, tmp_path):
    from safetensors.torch import load_file
    from transformers import TrainerCallback

    from grpokit.training.trainer import train

    class Snapshot(TrainerCallback):
        def __init__(self):
            self.at_begin = []

        def on_train_begin(self, args, state, control, model=None, **kwargs):
            self.at_begin.append({n.replace(".default", ""): p.detach().clone()
                                  for n, p in model.named_parameters() if "lora_" in n})

    config = run_config(tiny, tmp_path / "run", save_steps=100)
    config["stages"] = [
        {"name": "format", "max_steps": 2},
        {"name": "correct", "max_steps": 1, "training": {"learning_rate": 0.001}},
    ]
    snap = Snapshot()
    run_dir = train(from_dict(config), callbacks=[snap])
    assert len(snap.at_begin) == 2
    stage1 = load_file(run_dir / "checkpoints" / "format" / "final" / "adapter_model.safetensors")
    begin2 = snap.at_begin[1]
    # Stage 2 began with exactly the adapter stage 1 ended with ...
    assert set(stage1) == set(begin2)
    for name, tensor in stage1.items():
        assert (tensor.float() == begin2[name].float()).all(), name
    # ... which stage 1 actually trained (a fresh LoRA starts with lora_B = 0).
    assert all((t == 0).all() for n, t in snap.at_begin[0].items() if "lora_B" in n)
    assert any((t != 0).any() for n, t in stage1.items() if "lora_B" in n)
    stages = [(m["stage"], m["step"]) for m in read_jsonl(run_dir / "metrics.jsonl")]
    assert stages == [("format", 1), ("format", 2), ("correct", 1)]
    assert (run_dir / "checkpoints" / "correct" / "final" / "adapter_model.safetensors").is_file()


@pytest.mark.parametrize(
    "reward, extra, code, message",
    [
        # A run that breaks fails loudly: exit 1 with the cause (here a reward breaking its contract).
        ("tiny_badlen", [], 1, "run failed"),
        # --resume with nothing to resume is a usage error: exit 2.
        ("tiny_slow_len", ["--resume"], 2, "no run to resume"),
    ],
)
def test_cli_exit_codes(tiny, tmp_path, reward, extra, code, message):
    config = run_config(tiny, tmp_path / "run", max_steps=1)
    config["rewards"] = [{"name": reward}]
    driver, cfg_path = _driver(tmp_path, config)
    result = subprocess.run([sys.executable, str(driver), "train", str(cfg_path), *extra],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == code, result.stdout + result.stderr
    assert message in result.stdout.replace("\n", " ")


def test_existing_run_dir_needs_resume(tiny, tmp_path):
    from grpokit.errors import ConfigError
    from grpokit.training.trainer import prepare_run_dir

    cfg = from_dict(run_config(tiny, tmp_path / "run"))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.jsonl").write_text("")
    with pytest.raises(ConfigError, match="--resume"):
        prepare_run_dir(cfg, resume=False)


def test_memory_metrics_read_this_process():
    from grpokit.training.callbacks import memory_metrics

    found = memory_metrics()
    assert 0.01 < found["memory/rss_gb"] <= found["memory/peak_rss_gb"] < 1000


def test_held_out_accuracy_during_training(tiny, tmp_path):
    """eval.every writes held-out records (step 0 = before any update) into metrics.jsonl, on both stages."""
    from grpokit.training.trainer import train

    config = run_config(tiny, tmp_path / "run", save_steps=100)
    config["data"]["eval_size"] = 6
    config["rewards"] = [{"name": "tiny_len"}, {"name": "numeric_match", "weight": 0.0}]
    config["eval"] = {"every": 2, "prompts": 3, "samples": 2}
    config["stages"] = [{"name": "one", "max_steps": 2}, {"name": "two", "max_steps": 2}]
    run_dir = train(from_dict(config))
    records = read_jsonl(run_dir / "metrics.jsonl")
    held = [(r["stage"], r["step"]) for r in records if "eval/accuracy" in r]
    # The baseline once (the second stage starts where the first ended), then every 2 steps of each stage.
    assert held == [("one", 0), ("one", 2), ("two", 2)]
    first = next(r for r in records if "eval/accuracy" in r)
    assert first["eval/prompts"] == 3 and first["eval/samples_per_prompt"] == 2
    assert 0.0 <= first["eval/accuracy"] <= 1.0 and "eval/rewards/tiny_len" in first
    # Training records stay as they were: one per step, held-out keys only in their own records.
    steps = [(r["stage"], r["step"]) for r in records if "reward" in r]
    assert steps == [("one", 1), ("one", 2), ("two", 1), ("two", 2)]
    assert not any("reward" in r for r in records if "eval/accuracy" in r)


def test_held_out_evaluation_leaves_training_randomness_alone(tiny, tmp_path):
    """Evaluation samples from its own seeded stream: the training completions do not change with eval on or off."""
    from grpokit.training.trainer import train

    texts_of = []
    for every in (0, 1):
        config = run_config(tiny, tmp_path / f"run{every}", save_steps=100, max_steps=2)
        config["data"]["eval_size"] = 4
        config["eval"] = {"every": every, "prompts": 2, "samples": 1}
        run_dir = train(from_dict(config))
        texts_of.append([r["completion"] for r in read_jsonl(run_dir / "completions.jsonl")])
    assert texts_of[0] == texts_of[1]
