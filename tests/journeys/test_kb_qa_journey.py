"""Journey: knowledge-base QA with citations on the user's own CSV (skill/journey-kb-qa.md), end to end."""
import csv
import io
import re
from pathlib import Path

import pytest

from harness import check_resumed_run, grpokit, page_blocks, read_jsonl, run_journey

FACTS = [("When does the museum open?", "9 am", "The museum opens at 9 am."),
         ("How much is an adult ticket?", "14 euros", "An adult ticket costs 14 euros."),
         ("How many parking spaces are there?", "120", "The car park has 120 spaces."),
         ("How long is a guided tour?", "45 minutes", "A guided tour lasts 45 minutes."),
         ("How much is a yearly membership?", "60 euros", "A yearly membership costs 60 euros."),
         ("Where are the lockers?", "on the ground floor", "The lockers are on the ground floor."),
         ("What is the meal allowance?", "45 euros", "The daily meal allowance is 45 euros."),
         ("How many leave days are there?", "27", "Employees get 27 days of paid leave."),
         ("What is the help desk extension?", "4400", "The help desk is on extension 4400."),
         ("How long is parental leave?", "16 weeks", "Parental leave is 16 weeks.")]
EMPTY_LINE = 9  # header, 6 rows, a blank line, then the row with no question


def write_kb(path: Path, with_empty_row: bool) -> None:
    """Excel's "CSV UTF-8" (a BOM), documents separated by |, a blank line; optionally a row with no question."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["question", "answer", "sources"])
    for i in range(20):
        question, answer, fact = FACTS[i % len(FACTS)]
        other = FACTS[(i + 3) % len(FACTS)][2]
        writer.writerow([f"{question} (v{i})", answer, " | ".join([other, fact] if i % 2 else [fact, other])])
        if i == 5:
            out.write("\n")
            if with_empty_row:
                writer.writerow(["", "unknown", FACTS[0][2]])
    path.write_bytes(("\ufeff" + out.getvalue()).encode("utf-8"))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_kb_qa_journey(journey_dir):
    data = journey_dir / "kb.csv"
    write_kb(data, with_empty_row=True)
    (journey_dir / "samples.jsonl").write_text(page_blocks("journey-kb-qa.md", "json")[0], encoding="utf-8")

    def first_init_names_the_empty_row():
        result = grpokit(["init", "kb_qa", "--data", "kb.csv"])
        assert result.exit_code == 2
        said = " ".join(result.output.split())
        assert f"kb.csv:{EMPTY_LINE} (row 6): the prompt column is empty" in said, said
        assert "byte-order mark" in said
        assert not Path("kb-qa.yaml").exists()
        write_kb(data, with_empty_row=False)  # the user deletes the row

    seen = run_journey("journey-kb-qa.md", "kb-qa", "kb-qa.yaml", before_init=first_init_names_the_empty_row)
    config = Path("kb-qa.yaml").read_text(encoding="utf-8")
    assert "context_column: sources" in config and "after_answer: true" in config
    run_dir = journey_dir / "runs" / "kb-qa"
    check_resumed_run(run_dir, seen, max_steps=4)
    # The documents reached the prompt numbered, and the citation reward scored against them.
    sample = read_jsonl(run_dir / "completions.jsonl")[0]
    assert "[1] " in sample["prompt"] and "[2] " in sample["prompt"] and "citation" in sample["scores"]
    # calibrate says how far it is and shows the questions and a sample, not only prompt indexes.
    assert "calibrate: sampled 4/4 prompts" in seen["calibrate"] and "asked: Documents: [1]" in seen["calibrate"]
    held_out = re.search(r"on (\d+) held-out prompts", " ".join(seen["eval"].split()))
    assert held_out and int(held_out.group(1)) == 2, seen["eval"]  # 10% of 20 rows
