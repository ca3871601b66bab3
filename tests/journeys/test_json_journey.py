"""Journey: strict JSON output with a schema per row (skill/journey-json.md), end to end."""
import json
from pathlib import Path

import pytest
import yaml

from harness import check_resumed_run, page_blocks, run_journey

JSON_ANYWHERE: tuple[str, ...] = ()  # json_object_match reads the committed (last) object
ITEMS = [("red mug", 3, "Anna"), ("blue pen", 10, "Ben"), ("notebook", 2, "Chen"), ("lamp", 1, "Dara")]


def write_orders(path: Path) -> None:
    rows = []
    for i in range(16):
        item, quantity, customer = ITEMS[i % len(ITEMS)]
        schema = {"type": "object", "required": ["item", "quantity", "customer"],
                  "properties": {"item": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1},
                                 "customer": {"type": "string"}}, "additionalProperties": False}
        if i % 2:
            schema["required"].append("gift")  # rows differ in their schema
            schema["properties"]["gift"] = {"type": "boolean"}
        rows.append({"question": f"Order {i}: {quantity} x {item} for {customer}.", "schema": schema,
                     "answer": {"item": item, "quantity": quantity, "customer": customer}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_json_journey(journey_dir):
    write_orders(journey_dir / "orders.jsonl")
    (journey_dir / "samples.jsonl").write_text(page_blocks("journey-json.md", "json")[0], encoding="utf-8")
    # Known, reported, not this journey's to fix: json_format and json_schema pay a JSON object found anywhere
    # in the text, so with gold answers mapped the probes that misplace the gold object score full marks.
    seen = run_journey("journey-json.md", "json-output", "json-output.yaml", known_findings=JSON_ANYWHERE)
    config = yaml.safe_load(Path("json-output.yaml").read_text(encoding="utf-8"))
    # init json kept the <reasoning>/<answer> prompt and left answer_column null.
    assert config["data"]["answer_column"] == "answer" and config["data"]["columns"] == {"schema": "schema"}
    assert "JSON object" in config["data"]["system_prompt"] and "<answer>" not in config["data"]["system_prompt"]
    check_resumed_run(journey_dir / "runs" / "json-output", seen, max_steps=4)
