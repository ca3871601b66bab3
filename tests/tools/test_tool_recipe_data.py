"""configs/tool-math-cpu.yaml's prompts: what benchmarks/make_tool_fewshot_data.py writes, with well-formed demo calls."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "configs" / "data" / "tool_math_fewshot.jsonl"


def test_the_data_file_is_what_the_script_writes(tmp_path):
    from benchmarks.make_tool_fewshot_data import main

    main(["--out", str(tmp_path / "out.jsonl")])
    assert (tmp_path / "out.jsonl").read_text() == DATA.read_text()  # regenerate it after changing the demos


def test_every_demo_call_is_a_call_the_tool_loop_would_parse():
    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    assert len(rows) == 200 and all(r["answer"].isdigit() for r in rows)
    prompt = rows[0]["prompt"]
    assert [m["role"] for m in prompt] == ["user", "assistant", "tool", "assistant"] * 3 + ["user"]
    for call, output in zip(prompt[1::4], prompt[2::4]):
        body = call["content"].removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
        parsed = json.loads(body)  # the JSON the ChatML template writes between the tags
        assert parsed["name"] == "python" and set(parsed["arguments"]) == {"code"}
        # The demo's output is what the code really prints.
        assert str(eval(parsed["arguments"]["code"].removeprefix("print(").removesuffix(")"))) == output["content"]
