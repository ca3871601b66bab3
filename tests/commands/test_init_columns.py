"""`grpokit init` on a user's own file: Excel's BOM, a prompt column it cannot guess, each preset's own prompt."""
import json

import pytest
import yaml
from typer.testing import CliRunner

from grpokit.cli import app


def init(tmp_path, *args):
    out = tmp_path / "out.yaml"
    result = CliRunner().invoke(app, ["init", *map(str, args), "--output", str(out)])
    return result, (yaml.safe_load(out.read_text()) if out.exists() else None)


def test_bom_csv_maps_its_first_column_and_says_bom(tmp_path):
    # Excel's "CSV UTF-8": init failed with "'\ufeffquestion'" and never said BOM.
    data = tmp_path / "excel.csv"
    data.write_bytes(("\ufeffquestion,answer\n" + "What is 2+2?,4\n" * 12).encode("utf-8"))
    result, cfg = init(tmp_path, "qa", "--data", data)
    assert result.exit_code == 0, result.output
    assert cfg["data"]["prompt_column"] == "question" and cfg["data"]["answer_column"] == "answer"
    assert "byte-order mark (BOM" in result.output


def test_init_reads_every_row_and_names_an_empty_one(tmp_path):
    # An empty CSV row passed init; doctor then said "row 8: the prompt column is empty" with no file or line.
    data = tmp_path / "gaps.csv"
    data.write_text("question,answer\n" + "q,a\n" * 8 + "\n,b\n" + "q,a\n" * 4, encoding="utf-8")
    result, cfg = init(tmp_path, "qa", "--data", data)
    assert result.exit_code == 2 and cfg is None
    assert f"{data}:11 (row 8): the prompt column is empty" in " ".join(result.output.split())


def test_prompt_and_answer_columns_by_option(tmp_path):
    # A `request` column was a dead end: no option named it.
    data = tmp_path / "req.csv"
    data.write_text("request,reply\n" + "hi,hello\n" * 12, encoding="utf-8")
    result, _ = init(tmp_path, "qa", "--data", data)
    assert result.exit_code == 2 and "--prompt-column" in result.output
    result, cfg = init(tmp_path, "qa", "--data", data, "--prompt-column", "request", "--answer-column", "reply")
    assert result.exit_code == 0, result.output
    assert (cfg["data"]["prompt_column"], cfg["data"]["answer_column"]) == ("request", "reply")
    result, _ = init(tmp_path, "qa", "--data", data, "--prompt-column", "ask")
    assert result.exit_code == 2 and "--prompt-column 'ask'" in result.output and "request" in result.output


def test_json_init_gets_its_own_prompt_and_the_answer_column(tmp_path):
    # init json kept the <reasoning>/<answer> system prompt and left answer_column: null.
    data = tmp_path / "orders.jsonl"
    row = {"question": "Order: 2 apples", "answer": {"item": "apple", "qty": 2},
           "schema": {"type": "object", "required": ["item", "qty"]}}
    data.write_text((json.dumps(row) + "\n") * 12, encoding="utf-8")
    result, cfg = init(tmp_path, "json", "--data", data)
    assert result.exit_code == 0, result.output
    assert cfg["data"]["answer_column"] == "answer"
    assert "JSON object" in cfg["data"]["system_prompt"] and "<reasoning>" not in cfg["data"]["system_prompt"]


@pytest.mark.parametrize("column", ["sources", "context"])
def test_kb_qa_init_maps_the_documents(tmp_path, column):
    # `sources` was dropped unless mapped by hand in data.columns.
    data = tmp_path / "kb.csv"
    data.write_text(f"question,answer,{column}\n" + "How much?,60 euros,A ticket costs 60 euros. | Open at 9.\n" * 12,
                    encoding="utf-8")
    result, cfg = init(tmp_path, "kb_qa", "--data", data)
    assert result.exit_code == 0, result.output
    assert cfg["data"]["columns"] == {column: "sources"} and cfg["data"]["context_column"] == column
    assert "after </answer>" in cfg["data"]["system_prompt"]


# The rewards that pay the <reasoning>/<answer> layout the default (math) system prompt asks for.
TAG_READERS = {"incremental_format", "think_format", "strict_xml_format", "soft_xml_format", "tag_count"}


def _presets():
    from grpokit.rewards.presets import get_preset, presets

    return [get_preset(name) for name in presets()]


@pytest.mark.parametrize("preset", _presets(), ids=lambda p: p.name)
def test_a_preset_asks_for_tags_only_when_a_reward_reads_them(tmp_path, preset):
    # Issue 35.10: `init qa_judge` wrote the math system prompt (<reasoning>/<answer>) for helpdesk QA.
    # The class: any preset whose rewards pay no tag layout, given the tag-asking default.
    from grpokit.data import DEFAULT_SYSTEM_PROMPT

    data = tmp_path / "rows.jsonl"
    row = {"question": "How do I reset my password?", "answer": "Use the link on the sign-in page.",
           "reference": "r", "schema": {"type": "object"}, "tests": "assert True", "documents": ["Reset: use the link."]}
    data.write_text((json.dumps(row) + "\n") * 12, encoding="utf-8")
    result, cfg = init(tmp_path, preset.name, "--data", data)
    if result.exit_code != 0:
        pytest.skip(f"{preset.name} needs columns this row lacks: {result.output[:200]}")
    prompt = cfg["data"].get("system_prompt", DEFAULT_SYSTEM_PROMPT) or ""
    reads_tags = any(r["name"] in TAG_READERS for r in preset.rewards)
    assert reads_tags or "<reasoning>" not in prompt, (preset.name, prompt)
