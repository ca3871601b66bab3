"""`grpokit rewards list | describe | test`: output, flags and exit codes."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from grpokit.cli import app
from grpokit.commands.rewards import parse_reward_spec
from grpokit.errors import ConfigError
from grpokit.rewards import registry

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, ["rewards", *args])


def write_samples(tmp_path, rows, name="samples.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


SAMPLES = [
    {"completion": "Step 1: 2 + 2 = 4\nTherefore the answer is 4.", "prompt": "What is 2+2?",
     "reference": "the answer is 4", "label": True},
    {"completion": [{"role": "assistant", "content": "five five five five five five"}], "prompt": "What is 2+2?",
     "reference": "the answer is 4", "label": False},
    {"completion": "", "prompt": "What is 2+2?", "label": False},
    {"completion": "It is 4 [1].", "prompt": "What is 2+2?", "sources": ["arithmetic"], "label": True},
]


@pytest.fixture
def private_registry(monkeypatch):
    # Test-only rewards go into a copy of the registry, gone after the test.
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    return registry


# ---------------------------------------------------------------------- list


def test_list_table_shows_every_reward():
    result = invoke("list")
    assert result.exit_code == 0
    for name in registry.names():
        assert name in result.output


def test_list_json_has_name_family_aliases_summary():
    result = invoke("list", "--json")
    assert result.exit_code == 0
    entries = json.loads(result.output)
    assert [e["name"] for e in entries] == registry.names()
    by_name = {e["name"]: e for e in entries}
    assert by_name["group_diversity"] == {
        "name": "group_diversity", "family": "style", "aliases": ["diversity"],
        "summary": "Rewards a completion for differing from the other completions of its prompt.",
    }


def test_list_family_filter():
    result = invoke("list", "--json", "--family", "style")
    assert result.exit_code == 0
    assert {e["family"] for e in json.loads(result.output)} == {"style"}


def test_list_unknown_family_is_usage_error():
    # Exit 2 and the valid families, so the user can retype.
    result = invoke("list", "--family", "stlye")
    assert result.exit_code == 2
    assert "style" in result.output


def test_describe_prints_the_docstring():
    result = invoke("describe", "rouge_like")  # an alias resolves to its reward
    assert result.exit_code == 0
    assert result.output.startswith("reference_overlap (family style; aliases rouge_like)")
    assert "Columns read: reference" in result.output


def test_describe_unknown_suggests():
    result = invoke("describe", "reasoning_qualty")
    assert result.exit_code == 2 and "reasoning_quality" in result.output


# ---------------------------------------------------------- reward spec parse

SPECS = [
    # (text, expected, why)
    ("numeric_match", ("numeric_match", {}), "bare name"),
    ("numeric_match:rel_tol=0.01", ("numeric_match", {"rel_tol": 0.01}), "YAML number"),
    ("x:n=2,max_penalty=-1", ("x", {"n": 2, "max_penalty": -1}), "several params"),
    ("citation:styles=[bracket, quote],check_sources=false", ("citation", {"styles": ["bracket", "quote"], "check_sources": False}),
     "a list with commas stays one value; YAML booleans"),
    ("x:tag=answer", ("x", {"tag": "answer"}), "plain strings"),
    ("x:pattern='a,b'", ("x", {"pattern": "a,b"}), "quoted commas stay inside the value"),
    ("x:label=", ("x", {"label": ""}), "empty value is an empty string"),
    ("x:v=[unclosed", ("x", {"v": "[unclosed"}), "not YAML: kept as written"),
]


@pytest.mark.parametrize("text,expected,why", SPECS)
def test_parse_reward_spec(text, expected, why):
    assert parse_reward_spec(text) == expected, why


@pytest.mark.parametrize("text", [":n=2", "x:n", "x:=3"])
def test_parse_reward_spec_errors(text):
    # A missing name or value is a usage error that shows the right form.
    with pytest.raises(ConfigError, match="key=value|reward name"):
        parse_reward_spec(text)


# ---------------------------------------------------------------------- test


def test_test_scores_samples_and_exits_0(tmp_path):
    path = write_samples(tmp_path, SAMPLES)
    result = invoke("test", str(path), "-r", "repetition_penalty:n=2", "--reward", "reference_overlap",
                    "-r", "citation")
    assert result.exit_code == 0, result.output
    assert "repetition_penalty" in result.output and "reference_overlap" in result.output
    assert "five five" in result.output  # conversational completion previewed as text


def test_test_json_output(tmp_path):
    path = write_samples(tmp_path, SAMPLES)
    result = invoke("test", str(path), "-r", "repetition_penalty:n=1", "-r", "language_consistency", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["rows"] == 4 and data["ok"] is True
    assert data["rewards"]["repetition_penalty"]["scores"][1] == pytest.approx(-5 / 6)
    # `prompt` in the file arrives as TRL's `prompts` column.
    assert data["rewards"]["language_consistency"]["scores"][0] == 1.0
    assert data["labels"] == [True, False, False, True]


def test_test_limit(tmp_path):
    path = write_samples(tmp_path, SAMPLES)
    result = invoke("test", str(path), "-r", "citation", "--json", "--limit", "2")
    assert json.loads(result.output)["rows"] == 2


USAGE_ERRORS = [
    # (args after the samples path, expected text, why)
    ([], "--reward", "no rewards named"),
    (["-r", "repetion_penalty"], "repetition_penalty", "unknown reward: nearest valid name"),
    (["-r", "repetition_penalty:m=2"], "valid parameters", "unknown parameter"),
    (["-r", "repetition_penalty:n=0"], "positive integer", "bad parameter value"),
    (["-r", "repetition_penalty:n"], "key=value", "parameter without a value"),
    (["--preset", "maths"], "math_reasoning", "unknown preset: nearest valid name"),
]


@pytest.mark.parametrize("args,text,why", USAGE_ERRORS)
def test_test_usage_errors_exit_2(tmp_path, args, text, why):
    path = write_samples(tmp_path, SAMPLES)
    result = invoke("test", str(path), *args)
    assert result.exit_code == 2, (why, result.output)
    assert text in result.output, why


BAD_FILES = [
    # (file lines or None for a missing file, expected text, why)
    (None, "not found", "missing file"),
    ([], "no samples", "empty file"),
    (['{"completion": "ok"}', "{not json"], ":2:", "invalid JSON names the line"),
    (['{"answer": "4"}'], "completion", "a row without a completion"),
    (['["a list"]'], "completion", "a row that is not an object"),
]


@pytest.mark.parametrize("lines,text,why", BAD_FILES)
def test_test_bad_samples_file_exit_2(tmp_path, lines, text, why):
    path = tmp_path / "missing.jsonl" if lines is None else write_samples(tmp_path, lines)
    result = invoke("test", str(path), "-r", "citation")
    assert result.exit_code == 2, (why, result.output)
    assert text in result.output, why


def test_test_exit_1_when_a_reward_raises(tmp_path, private_registry):
    @private_registry.register("test_crashes_on_empty", family="test")
    def crashes(completions, **kwargs):
        return [1.0 / len(c) for c in completions]  # ZeroDivisionError on ""

    path = write_samples(tmp_path, [{"completion": "ok"}, {"completion": ""}])
    result = invoke("test", str(path), "-r", "test_crashes_on_empty")
    assert result.exit_code == 1
    assert "ZeroDivisionError" in result.output and "row 1" in result.output


def test_test_exit_1_on_non_finite(tmp_path, private_registry):
    @private_registry.register("test_nan", family="test")
    def test_nan(completions, **kwargs):  # a plain reward is logged under its own __name__
        return [float("nan")] * len(completions)

    path = write_samples(tmp_path, [{"completion": "ok"}])
    result = invoke("test", str(path), "-r", "test_nan", "--json")
    assert result.exit_code == 1
    assert json.loads(result.output)["rewards"]["test_nan"]["scores"] == ["nan"]


# Six answers to "what is 6*7" etc.; labelled correct where the completion's number is the gold one.
LABELLED = [
    {"completion": "6*7 = 42, so the answer is 42", "answer": "42", "label": True},
    {"completion": "6*7 = 41, so the answer is 41", "answer": "42", "label": False},
    {"completion": "9+10 is 19", "answer": "19", "label": True},
    {"completion": "9+10 is 21", "answer": "19", "label": False},
    {"completion": "half of 18 is 9", "answer": "9", "label": True},
    {"completion": "half of 18 is 8", "answer": "9", "label": False},
]


def test_test_correctness_reward_that_agrees_with_labels_exits_0(tmp_path):
    path = write_samples(tmp_path, LABELLED)
    result = invoke("test", str(path), "-r", "numeric_match", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ok"] is True and data["findings"] == []
    assert data["rewards"]["numeric_match"]["stats"]["label_auc"] == 1.0


def test_test_correctness_reward_that_disagrees_with_labels_exits_1(tmp_path):
    # Each row got the next question's answer (a join mistake): numeric_match now scores 0
    # everywhere, right or wrong. That is a failed check, said in words, like a crash.
    shifted = [dict(row, answer=LABELLED[(i + 2) % len(LABELLED)]["answer"]) for i, row in enumerate(LABELLED)]
    path = write_samples(tmp_path, shifted)
    result = invoke("test", str(path), "-r", "numeric_match")
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())  # rich wraps long messages
    assert "ERROR numeric_match: separates labelled-correct from labelled-wrong samples poorly" in text
    assert "finds no answer" in text and "answer column" in text and "extractor" in text and "too lenient" in text
    data = json.loads(invoke("test", str(path), "-r", "numeric_match", "--json").output)
    assert data["ok"] is False
    assert {f["kind"]: f["severity"] for f in data["findings"]} == {"constant": "warning", "label_disagreement": "error"}
    # Without labels there is nothing to disagree with: the same rewards pass.
    unlabelled = write_samples(tmp_path, [{k: v for k, v in row.items() if k != "label"} for row in shifted], "u.jsonl")
    assert invoke("test", str(unlabelled), "-r", "numeric_match").exit_code == 0


def test_test_preset(tmp_path):
    # Runs every reward of the preset; in a branch where one is not registered
    # yet it is a usage error that names the missing reward.
    path = write_samples(tmp_path, [{"completion": '{"a": 1}', "schema": {"type": "object"}, "answer": {"a": 1}},
                                    {"completion": "not json", "schema": {"type": "object"}, "answer": {"a": 1}}])
    result = invoke("test", str(path), "--preset", "json", "--json")
    missing = [n for n in ("json_format", "json_schema", "json_field_match") if n not in registry.names()]
    if missing:
        assert result.exit_code == 2 and missing[0] in result.output
    else:
        assert result.exit_code == 0, result.output
        assert set(json.loads(result.output)["rewards"]) == {"json_format", "json_schema", "json_field_match"}


def test_subprocess_entry_point(tmp_path):
    # The real command line, as a user runs it: exit codes survive the process boundary.
    path = write_samples(tmp_path, SAMPLES)
    ok = subprocess.run([sys.executable, "-m", "grpokit", "rewards", "test", str(path), "-r", "reasoning_quality"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "reasoning_quality" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "grpokit", "rewards", "test", str(path), "-r", "nope_reward"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown reward 'nope_reward'" in bad.stderr


def test_import_option_loads_a_custom_reward_file(tmp_path):
    # A user's own reward must be testable before training, loaded the way `imports:` loads it.
    import subprocess
    import sys

    (tmp_path / "mine.py").write_text(
        "from grpokit.rewards import register\n"
        "@register('cli_import_probe')\n"
        "def cli_import_probe(completions, **kwargs):\n"
        "    return [float(len(str(c)) % 2) for c in completions]\n"
    )
    (tmp_path / "s.jsonl").write_text('{"completion": "ab"}\n{"completion": "abc"}\n')
    proc = subprocess.run([sys.executable, "-m", "grpokit", "rewards", "test", "s.jsonl", "--import", "mine.py",
                           "--reward", "cli_import_probe"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "cli_import_probe" in proc.stdout
    missing = subprocess.run([sys.executable, "-m", "grpokit", "rewards", "test", "s.jsonl", "--import", "nope.py",
                              "--reward", "cli_import_probe"], cwd=tmp_path, capture_output=True, text=True)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_test_counts_rows_that_could_not_be_scored(tmp_path):
    # An unreadable gold ("forty two" in words) and a missing one are unscored, said in so many words, never a 0.
    rows = [{"completion": "\\boxed{42}", "answer": "42"}, {"completion": "\\boxed{42}", "answer": "Answer is forty two."},
            {"completion": "\\boxed{8}", "answer": "7"}, {"completion": "\\boxed{7}", "answer": None}]
    result = invoke("test", str(write_samples(tmp_path, rows)), "--reward", "math_equivalence")
    assert result.exit_code == 0, result.output
    assert "2 of 4 rows could not be scored" in " ".join(result.output.split())
    as_json = json.loads(invoke("test", str(write_samples(tmp_path, rows)), "--reward", "math_equivalence", "--json").output)
    assert as_json["rewards"]["math_equivalence"]["scores"] == [1.0, None, 0.0, None]
    assert [f["kind"] for f in as_json["findings"]] == ["unscored"]
