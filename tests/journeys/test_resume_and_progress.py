"""The step-0 held-out evaluation says what it is doing, and a resumed run does not measure it again."""
import io
import shutil

import pytest
from rich.console import Console

from grpokit.models.tiny import make_tiny_model
from grpokit.config.run_config import from_dict
from grpokit.training import checkpoints as ckpts
from harness import read_jsonl


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model", vocab_size=0, hidden_size=64,
                           num_attention_heads=4)


def _config(tiny, out):
    return {"name": "progress", "output_dir": str(out), "model": {"name": str(tiny), "lora": {"r": 4}},
            "data": {"source": "synthetic:arithmetic", "max_samples": 32, "eval_size": 6},
            "rewards": [{"name": "numeric_match"}], "profile": "cpu",
            "eval": {"every": 2, "prompts": 3, "samples": 2},
            "training": {"max_steps": 2, "num_generations": 4, "per_device_train_batch_size": 4,
                         "max_completion_length": 8, "save_steps": 1, "learning_rate": 0.01}}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_held_out_evaluation_reports_progress_and_is_not_repeated_on_resume(tiny, tmp_path):
    from grpokit.training.trainer import train

    out = io.StringIO()
    console = Console(file=out, width=200, soft_wrap=True)
    run_dir = train(from_dict(_config(tiny, tmp_path / "run")), console=console)
    text = out.getvalue()
    # Minutes of silence at load 2-5: nothing was printed until the step-0 evaluation had finished.
    announced = text.index("held-out evaluation at step 0: 3 prompts x 2 samples")
    assert announced < text.index("held-out at step 0: 3/3 prompts") < text.index("step 1/2")

    # A crash after checkpoint-1: resuming from it must not measure (and log) step 0 again.
    root = run_dir / "checkpoints"
    shutil.rmtree(root / "final")
    shutil.rmtree(root / "checkpoint-2")
    assert ckpts.latest_complete(root).name == "checkpoint-1"
    out = io.StringIO()
    train(from_dict(_config(tiny, tmp_path / "run")), resume=True, console=Console(file=out, width=200))
    assert "held-out evaluation at step 0" not in out.getvalue()
    held = [r["step"] for r in read_jsonl(run_dir / "metrics.jsonl") if "eval/accuracy" in r]
    assert held == [0, 2], held  # was [0, 0, 2]: the baseline measured again on resume


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_resume_without_a_checkpoint_says_it_starts_over(tiny, tmp_path):
    from grpokit.training.trainer import train

    config = _config(tiny, tmp_path / "run")
    config["eval"] = {"every": 0}
    config["training"].update(max_steps=1, save_steps=100)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # A run stopped before its first checkpoint: it logged, and saved nothing to resume from.
    (run_dir / "metrics.jsonl").write_text('{"step": 0, "stage": null, "eval/accuracy": 0.0}\n', encoding="utf-8")
    (run_dir / "completions.jsonl").write_text('{"step": 1, "stage": null, "completion": "x"}\n', encoding="utf-8")
    out = io.StringIO()
    train(from_dict(config), resume=True, console=Console(file=out, width=300))
    said = " ".join(out.getvalue().split())
    # --resume with no checkpoint started fresh without a word.
    assert f"--resume: no complete checkpoint in {run_dir / 'checkpoints'}; starting the run again from step 0" in said
    assert not any("eval/accuracy" in r for r in read_jsonl(run_dir / "metrics.jsonl"))  # the stale line is gone
    assert "x" not in [r.get("completion") for r in read_jsonl(run_dir / "completions.jsonl")]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ctrl_c_names_the_checkpoint_and_resume_logs_each_step_once(tiny, tmp_path, monkeypatch):
    import yaml

    from harness import grpokit, interrupted

    monkeypatch.chdir(tmp_path)
    config = _config(tiny, tmp_path / "run")
    config["eval"] = {"every": 0}
    config["training"].update(max_steps=5, save_steps=2, max_completion_length=24)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    stopped = interrupted(["train", "c.yaml"], tmp_path / "run" / "checkpoints")
    said = " ".join(stopped.output.split())
    # Ctrl-C printed nothing and exited 130.
    assert stopped.exit_code == 130, stopped.output
    assert "interrupted; the last complete checkpoint is" in said and "grpokit train c.yaml --resume" in said, said
    resumed = grpokit(["train", "c.yaml", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    steps = [r["step"] for r in read_jsonl(tmp_path / "run" / "completions.jsonl")]
    assert steps == sorted(steps) and set(steps) == {1, 2, 3, 4, 5}, steps  # was 1,2,3,4,3,4,5
    # The live monitor went on from checkpoint-2's state: its alerts are the replay's of the same metrics
    # (each raised once; before, a resume raised truncation again with a fresh monitor).
    from grpokit.health.diagnose import health_config_for, load_run
    from grpokit.health.rules import replay

    run = load_run(tmp_path / "run")
    hc = health_config_for(run.config, run.train_metrics)
    hc.enabled = True
    live = [(a["step"], a["rule"]) for a in read_jsonl(tmp_path / "run" / "alerts.jsonl")]
    assert live == [(a.step, a.rule) for a in replay(run.curve_metrics, hc)], live
    assert live, "the tiny model's cut completions raise truncation: the check above compared something"
