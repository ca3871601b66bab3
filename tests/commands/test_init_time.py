"""`grpokit init`'s CPU defaults are a run that ends within the hour, and the written config says so."""
import yaml
from typer.testing import CliRunner

from grpokit.cli import app
from grpokit.config.starter import CPU_RUN, CPU_STEP_S, step_seconds


def test_init_math_writes_a_run_under_an_hour_and_says_what_it_costs(tmp_path):
    # It wrote 8 x 256 tokens and 200 steps: 139-316 s a step on 2 cores, 8-10 hours, and said nothing.
    out = tmp_path / "math.yaml"
    result = CliRunner().invoke(app, ["init", "math", "--output", str(out), "--no-time"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    cfg = yaml.safe_load(text)
    # Math's word problems are answered in 32 tokens (starter_math), every other CPU default is shared.
    assert {k: cfg["training"][k] for k in CPU_RUN} == {**CPU_RUN, "max_completion_length": 32}
    assert CPU_RUN["max_steps"] * CPU_STEP_S < 3600
    assert text.startswith("# CPU defaults: 8 completions x 32 tokens per step, 20 steps: up to ~40 s a step")
    assert "grpokit doctor` times a step on this machine" in text
    assert "asked in chat, the bundled model never closed an <answer>" in text
    assert "8 completions x 32 tokens per step, 20 steps: up to ~40 s a step" in result.output


def test_init_math_asks_in_plain_text_after_worked_examples(tmp_path):
    # In chat the bundled model never closed an <answer> within 128 tokens, so correctness never paid.
    out = tmp_path / "math.yaml"
    assert CliRunner().invoke(app, ["init", "math", "--output", str(out), "--no-time"]).exit_code == 0
    from grpokit.config.run_config import load_config
    from grpokit.data import load_data

    cfg = load_config(out)
    prompt = load_data(cfg.data)[0][0]["prompt"]
    assert isinstance(prompt, str) and prompt.count("\n<answer>") == 2 and prompt.rstrip().endswith("now?")
    assert cfg.training["learning_rate"] == 3.0e-4


def test_a_shorter_completion_is_quoted_a_shorter_step():
    assert step_seconds(CPU_RUN["max_completion_length"]) == CPU_STEP_S
    assert step_seconds(32) == 40


def test_init_json_keeps_the_shared_cpu_defaults(tmp_path):
    out = tmp_path / "json.yaml"
    assert CliRunner().invoke(app, ["init", "json", "--output", str(out), "--no-time"]).exit_code == 0
    text = out.read_text()
    assert {k: yaml.safe_load(text)["training"][k] for k in CPU_RUN} == CPU_RUN
    assert text.startswith("# CPU defaults: 8 completions x 128 tokens per step") and "<answer>" not in text


def test_init_times_a_step_when_asked(tmp_path, monkeypatch):
    import grpokit.commands.recipes as recipes

    monkeypatch.setattr(recipes, "_timed_step", lambda cfg: f"time: about 42 s per step here; {cfg.training['max_steps']} steps")
    result = CliRunner().invoke(app, ["init", "math", "--output", str(tmp_path / "m.yaml"), "--time"])
    assert result.exit_code == 0 and "time: about 42 s per step here; 20 steps" in result.output, result.output
