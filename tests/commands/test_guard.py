"""commands/guard.py is the one place a command's error is printed: the words, the exit code, whose rank."""
import pytest
from typer.testing import CliRunner

from grpokit.cli import app


@pytest.mark.parametrize("rank, prefix", [("0", "error: "), ("1", "rank 1: error: ")])
def test_a_config_error_is_one_line_exit_2_naming_the_rank(tmp_path, monkeypatch, rank, prefix):
    # A launch's other ranks fail alone at times (their own OOM, a lost peer): the line says which one.
    monkeypatch.setenv("RANK", rank)
    result = CliRunner().invoke(app, ["report", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert result.output.strip().startswith(prefix + f"{tmp_path / 'missing'} is not a directory")


def test_a_bad_reward_name_from_a_command_is_exit_2(tmp_path):
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"completion": "<answer>1</answer>", "answer": "1"}\n')
    result = CliRunner().invoke(app, ["rewards", "test", str(samples), "--reward", "numeric_matc"])
    assert result.exit_code == 2 and result.output.startswith("error: ") and "numeric_match" in result.output
