"""`train --dry-run` checks what training would: every reward built with its parameters, every column a
reward reads present; a refused `train` leaves nothing in runs/."""
import json

import pytest
import yaml
from typer.testing import CliRunner

from grpokit.cli import app
from grpokit.config.run_config import load_config
from grpokit.errors import ConfigError


def _config(tmp_path, rewards, data=None):
    rows = tmp_path / "tasks.jsonl"
    rows.write_text("".join(json.dumps({"question": f"Write f{i}", "answer": "x", "test_list": ["assert True"]}) + "\n"
                            for i in range(4)), encoding="utf-8")
    cfg = {"name": "checks", "data": {"source": str(rows), "eval_size": 0, **(data or {})}, "rewards": rewards,
           "training": {"max_steps": 2, "num_generations": 2, "per_device_train_batch_size": 2}}
    path = tmp_path / "checks.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


CASES = [
    # Factory-only parameter checks: --dry-run exited 0 and only train refused.
    ([{"name": "fuzzy_match", "params": {"threshold": 5}}], None, r"rewards\[0\]: fuzzy_match: threshold"),
    ([{"name": "json_schema", "params": {"partial_max": 1.0,
                                         "schema": {"type": "object"}}}], None, r"rewards\[0\]: .*partial_max"),
    # The code recipe without its `columns:` mapping: code_execution returned None on every row.
    ([{"name": "code_execution"}], None, r"rewards\[0\] code_execution reads the `tests` column.*data.columns"),
    # No answer column, yet a correctness reward.
    ([{"name": "exact_match"}], {"answer_column": None}, r"exact_match reads the `answer` column"),
]


@pytest.mark.parametrize("rewards, data, message", CASES)
def test_dry_run_refuses_with_exit_2_and_writes_nothing(tmp_path, monkeypatch, rewards, data, message):
    import re

    monkeypatch.chdir(tmp_path)
    path = _config(tmp_path, rewards, data)
    for extra in (["--dry-run"], []):  # the dry run, and the real run refused before a model loads
        result = CliRunner().invoke(app, ["train", str(path), *extra])
        assert result.exit_code == 2, result.output
        assert re.search(message, " ".join(result.output.split())), result.output
    assert not (tmp_path / "runs").exists()  # a refused train left runs/NAME/config.yaml behind


def test_mapped_tests_column_passes(tmp_path):
    path = _config(tmp_path, [{"name": "code_execution"}], {"columns": {"test_list": "tests"}})
    load_config(path)  # no error


def test_column_check_reaches_every_command_that_loads_the_config(tmp_path):
    # doctor --no-probe and rewards probe load the config through load_config: they refuse it too.
    with pytest.raises(ConfigError, match="code_execution reads the `tests` column"):
        load_config(_config(tmp_path, [{"name": "code_execution"}]))


def test_citation_with_an_unmapped_sources_column_is_refused(tmp_path):
    # `sources` was dropped unless mapped in data.columns: citation then checked nothing, silently.
    data = tmp_path / "kb.csv"
    data.write_text("question,answer,sources\n" + "How much?,60 euros,A ticket costs 60 euros.\n" * 4, encoding="utf-8")
    cfg = {"name": "kb", "data": {"source": str(data), "eval_size": 0}, "rewards": [{"name": "citation"}]}
    path = tmp_path / "kb.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"citation checks citations against the `sources` column.*"
                                          r"data.columns: \{sources: sources\}"):
        load_config(path)
    cfg["data"]["columns"] = {"sources": "sources"}
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    load_config(path)


@pytest.mark.parametrize("content", [
    "question,answer\n",                       # issue 35.10: header only; init, doctor and train refused it
    "question,answer\nWhat is 2+2?,4,extra\n",  # a row with more fields than the header
])
def test_dry_run_refuses_the_data_file_train_refuses_with_the_same_words(tmp_path, monkeypatch, content):
    from grpokit.data import load_data

    monkeypatch.chdir(tmp_path)
    data = tmp_path / "rows.csv"
    data.write_text(content, encoding="utf-8")
    cfg = {"name": "csv", "data": {"source": str(data)}, "rewards": [{"name": "numeric_match"}]}
    path = tmp_path / "csv.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:  # what train's loading says
        load_data(load_config(str(path)).data)
    result = CliRunner().invoke(app, ["train", str(path), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert " ".join(str(refused.value).split()) in " ".join(result.output.split())
    assert not (tmp_path / "runs").exists()
