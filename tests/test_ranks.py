"""Rank detection, and the train command's console speaking from rank 0 only (errors from every rank)."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from grpokit.cli import app
from grpokit.run_directory.ranks import is_main_process, rank

# A config that loads (rewards from the built-in registry, no model is loaded by --dry-run).
CONFIG = "name: r\nrewards: [{name: numeric_match}]\ntraining: {num_generations: 4, per_device_train_batch_size: 4}\n"


@pytest.mark.parametrize(
    "env, expected",
    [
        (None, 0),   # a plain `python` run is the main process
        ("0", 0),    # torchrun / accelerate launch: rank 0
        ("1", 1),    # the second process of a launch
        ("", 0),     # an empty variable is no launch
        ("x", 0),    # junk is no launch either, rather than a crash before training
    ],
)
def test_rank_from_the_launcher_environment(monkeypatch, env, expected):
    if env is None:
        monkeypatch.delenv("RANK", raising=False)
    else:
        monkeypatch.setenv("RANK", env)
    assert rank() == expected
    assert is_main_process() == (expected == 0)


@pytest.mark.parametrize(
    "env, narrates",
    [
        ("0", True),   # rank 0 tells the story of the run
        ("1", False),  # other ranks stay quiet: the same lines would print once per process
    ],
)
def test_train_console_speaks_from_rank_zero(monkeypatch, tmp_path, env, narrates):
    monkeypatch.setenv("RANK", env)
    path = tmp_path / "run.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(path), "--dry-run", "--set", "profile=cpu"])
    assert result.exit_code == 0, result.output
    assert ("# resolved config" in result.output) == narrates, result.output


@pytest.mark.parametrize(
    "env, prefix",
    [
        ("0", "config error:"),         # rank 0 reports as always
        ("1", "rank 1: config error:"),  # a failure on another rank is still printed, and says whose it is
    ],
)
def test_errors_print_on_every_rank(monkeypatch, tmp_path, env, prefix):
    monkeypatch.setenv("RANK", env)
    path = tmp_path / "run.yaml"
    path.write_text(CONFIG.replace("num_generations", "num_generatoins"), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(prefix), result.output
