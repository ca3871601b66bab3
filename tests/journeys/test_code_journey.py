"""Journey: code generation on the user's own MBPP-style tasks (skill/journey-code.md), end to end."""
import json
from pathlib import Path

import pytest
import yaml

from harness import check_resumed_run, grpokit, page_blocks, run_journey

# MBPP-style assert lists that compare values: `assert is_even(4)` would pass any truthy object,
# which the doctor's probe rightly reports as gameable.
TASKS = [("add(a, b)", "the sum of a and b", ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]),
         ("double(x)", "twice x", ["assert double(2) == 4", "assert double(0) == 0"]),
         ("parity(n)", "'even' or 'odd'", ["assert parity(4) == 'even'", "assert parity(3) == 'odd'"]),
         ("last(xs)", "the last item of the list xs", ["assert last([1, 2]) == 2", "assert last([7]) == 7"]),
         ("shout(s)", "s in upper case", ["assert shout('a') == 'A'", "assert shout('ok') == 'OK'"]),
         ("count_a(s)", "how many times 'a' occurs in s", ["assert count_a('banana') == 3", "assert count_a('') == 0"]),
         ("square(x)", "x squared", ["assert square(3) == 9", "assert square(-2) == 4"]),
         ("first(xs)", "the first item of the list xs", ["assert first([5, 6]) == 5", "assert first([1]) == 1"]),
         ("total(xs)", "the sum of the list xs", ["assert total([1, 2, 3]) == 6", "assert total([]) == 0"]),
         ("longest(words)", "the longest word", ["assert longest(['a', 'abc', 'ab']) == 'abc'",
                                                  "assert longest(['xy']) == 'xy'"])]


def write_tasks(path: Path) -> None:
    rows = [{"text": f"Write a function {sig} that returns {what}. (task {i})", "test_list": tests}
            for i, (sig, what, tests) in enumerate(TASKS * 2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_code_journey(journey_dir):
    write_tasks(journey_dir / "tasks.jsonl")
    (journey_dir / "samples.jsonl").write_text(page_blocks("journey-code.md", "json")[0], encoding="utf-8")
    seen = run_journey("journey-code.md", "code-generation", "code-generation.yaml")
    config = yaml.safe_load(Path("code-generation.yaml").read_text(encoding="utf-8"))
    assert config["data"]["columns"] == {"test_list": "tests"} and config["data"]["prompt_column"] == "text"
    assert "rewards, built: code_execution" in " ".join(seen["train"].split()) or "resumed" in seen
    check_resumed_run(journey_dir / "runs" / "code-generation", seen, max_steps=4)

    # The mapping removed: the dry run refuses, naming the reward and the column (it used to pass).
    del config["data"]["columns"]
    Path("unmapped.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    refused = grpokit(["train", "unmapped.yaml", "--dry-run"])
    assert refused.exit_code == 2 and "code_execution reads the `tests` column" in " ".join(refused.output.split())
