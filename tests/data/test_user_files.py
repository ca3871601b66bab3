"""A user's own data files: Excel's BOM, blank lines, list cells, and errors that name file and line."""
import json
import re

import pytest

from grpokit.data import DataConfig, load_data
from grpokit.errors import ConfigError
from grpokit.rewards import get

BOM = "\ufeff"
DOCS = ["The museum opens at 9 am.", "A ticket costs 60 euros."]


def _csv(tmp_path, text, name="kb.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _load(path, **data):
    return load_data(DataConfig(source=str(path), eval_size=0, **data))[0]


def test_bom_csv_reads_its_first_column(tmp_path):
    # Excel's "CSV UTF-8" starts with a BOM: the first column was '\ufeffquestion' and data.prompt_column failed.
    path = _csv(tmp_path, BOM + "question,answer\nWhat is 2+2?,4\n")
    rows = _load(path)
    assert rows["answer"] == ["4"] and "2+2" in rows["prompt"][0][-1]["content"]


def test_empty_row_is_named_by_file_and_line(tmp_path):
    # Eight good rows, a blank line, then a record whose question is empty: the data library calls it row 8,
    # the editor shows it on line 11 (header, 8 rows, blank line, this one).
    lines = ["question,answer", *[f"q{i},{i}" for i in range(8)], "", ",9"]
    path = _csv(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}:11 (row 8): the prompt column is empty")):
        _load(path)


def test_empty_jsonl_prompt_names_its_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"question": "a", "answer": "1"}\n\n{"question": "", "answer": "2"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(f"{path}:3 (row 1)")):
        _load(path)


def _sources_files(tmp_path):
    """The same two rows as a CSV with a JSON-list cell, a CSV with `|` cells, JSON Lines and Parquet."""
    rows = [{"question": "When does it open?", "answer": "9 am", "sources": DOCS},
            {"question": "How much is a ticket?", "answer": "60 euros", "sources": DOCS}]
    as_json = _csv(tmp_path, "question,answer,sources\n" + "".join(
        f'{r["question"]},{r["answer"]},"{json.dumps(r["sources"]).replace(chr(34), chr(34) * 2)}"\n' for r in rows),
        name="json_cells.csv")
    as_bars = _csv(tmp_path, BOM + "question,answer,sources\n" + "".join(
        f'{r["question"]},{r["answer"]},{" | ".join(r["sources"])}\n' for r in rows), name="bar_cells.csv")
    jsonl = tmp_path / "kb.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "kb.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    return [as_json, as_bars, jsonl, parquet]


def test_sources_load_as_a_list_from_every_format(tmp_path):
    # A CSV `sources` cell was one string, so `[2]` never resolved and citation scored 0.0.
    for path in _sources_files(tmp_path):
        rows = _load(path, columns={"sources": "sources"})
        assert rows["sources"] == [DOCS, DOCS], path.name


def test_citation_resolves_against_csv_sources(tmp_path):
    # The real run's case: a completion citing [2] scored 0.0 against the CSV cell; as a list it is 1.0.
    path = _sources_files(tmp_path)[0]
    rows = _load(path, columns={"sources": "sources"})
    citation = get("citation")
    assert citation(["<answer>60 euros</answer> [2]"], sources=rows["sources"][1:]) == [1.0]


def test_context_column_puts_numbered_documents_in_the_prompt(tmp_path):
    path = _sources_files(tmp_path)[1]
    rows = _load(path, columns={"sources": "sources"}, context_column="sources")
    user = rows["prompt"][1][-1]["content"]
    assert user.startswith("Documents:\n[1] The museum opens at 9 am.\n[2] A ticket costs 60 euros.\n")
    assert user.endswith("Question: How much is a ticket?")


@pytest.mark.parametrize("cell, said", [
    ('"[""a"", ""b"""', "starts like a JSON list but is not one"),  # an unclosed list would become one odd item
    ('"[1, {""a"": 1}]"', "not a list of texts"),  # a list of records does not fit a CSV cell
])
def test_bad_list_cell_names_file_line_and_fix(tmp_path, cell, said):
    path = _csv(tmp_path, f"question,answer,sources\nq,a,x\nq2,b,{cell}\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}:3 (row 1): column `sources` is a list column") + ".*" + said):
        _load(path, columns={"sources": "sources"})


def test_list_column_must_exist(tmp_path):
    path = _csv(tmp_path, "question,answer\nq,a\n")
    with pytest.raises(ConfigError, match="data.list_columns names `docs`"):
        _load(path, list_columns=["docs"])


def test_citation_reads_a_json_list_kept_as_text():
    # `rewards test samples.jsonl --reward citation` with a sources cell copied from a CSV: [2] scored 0.0
    # because the text was one source; "no problems found" hid it.
    assert get("citation")(["<answer>60 euros</answer> [2]"], sources=[json.dumps(DOCS)]) == [1.0]
