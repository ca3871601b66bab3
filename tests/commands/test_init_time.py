"""`grpokit init`'s CPU defaults are a run that ends within the hour, and the written config says so."""
import yaml
from typer.testing import CliRunner

from grpokit.cli import app
from grpokit.config.starter import CPU_RUN, CPU_STEP_S


def test_init_math_writes_a_run_under_an_hour_and_says_what_it_costs(tmp_path):
    # It wrote 8 x 256 tokens and 200 steps: 139-316 s a step on 2 cores, 8-10 hours, and said nothing.
    out = tmp_path / "math.yaml"
    result = CliRunner().invoke(app, ["init", "math", "--output", str(out), "--no-time"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    cfg = yaml.safe_load(text)
    assert {k: cfg["training"][k] for k in CPU_RUN} == CPU_RUN
    assert CPU_RUN["max_steps"] * CPU_STEP_S < 3600
    assert text.startswith("# CPU defaults: 8 completions x 128 tokens per step, 20 steps")
    assert "grpokit doctor` times a step on this machine" in text
    assert "8 completions x 128 tokens per step, 20 steps: up to ~158 s a step" in result.output


def test_init_times_a_step_when_asked(tmp_path, monkeypatch):
    import grpokit.commands.recipes as recipes

    monkeypatch.setattr(recipes, "_timed_step", lambda cfg: f"time: about 42 s per step here; {cfg.training['max_steps']} steps")
    result = CliRunner().invoke(app, ["init", "math", "--output", str(tmp_path / "m.yaml"), "--time"])
    assert result.exit_code == 0 and "time: about 42 s per step here; 20 steps" in result.output, result.output
