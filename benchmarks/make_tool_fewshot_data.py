"""Write configs/data/tool_math_fewshot.jsonl: synthetic:arithmetic problems, each after three worked tool calls.

    python -m benchmarks.make_tool_fewshot_data [--n 200]

Each row's `prompt` is chat messages: three demonstration exchanges (a question,
the assistant's python call written exactly as the ChatML tool template renders
one, the tool's output, a one-line answer) and then the row's own question; `answer`
is the gold number. The system prompt comes from the config. Why worked
exchanges: benchmarks/results/tool_prompt_probe.json (the bundled 135M model
almost never opens a call after instructions alone).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from benchmarks.tool_prompt_probe import DEMO3  # noqa: E402
from grpokit.data.synthetic import generate  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--out", default=str(ROOT / "configs" / "data" / "tool_math_fewshot.jsonl"))
    args = parser.parse_args(argv)
    rows = generate("arithmetic", (("n", str(args.n)),), 7)
    with open(args.out, "w", encoding="utf-8") as fh:
        for row in rows:
            prompt = [*DEMO3, {"role": "user", "content": row["question"]}]
            fh.write(json.dumps({"prompt": prompt, "answer": row["answer"]}) + "\n")
    print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
