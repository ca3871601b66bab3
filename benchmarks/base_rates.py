"""Why the demo asks for sums as a text continuation: the bundled model's base rates, three ways of asking.

    python -m benchmarks.base_rates [--prompts 16] [--samples 8]

GRPO learns only from groups whose samples score differently, so a task is
learnable where the model is right sometimes (10-40% of samples), not never.
The same two-digit sums are asked three ways and calibrated with grpokit's own
`calibrate` (pass rate per prompt, chance that a group of 8 has zero variance):

- `chat_question`: "What is 47 + 38?" as a chat message, 48 tokens to answer;
- `chat_answer_tag`: the same, told to answer inside <answer></answer>, with
  `<answer>` prefilled, 16 tokens;
- `text_continuation`: the demo's plain-text prompt ending "Answer: 47 + 38 =",
  6 tokens, the first number read.

Writes benchmarks/results/base_rates.json.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
TAG_SYSTEM = "Reply with the result inside <answer></answer> tags, e.g. <answer>12</answer>."


def variants(pairs: list[tuple[int, int]]) -> dict[str, dict]:
    def chat(system: str | None, a: int, b: int) -> list[dict]:
        return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": f"What is {a} + {b}?"}]

    return {
        "chat_question": {"rows": [{"prompt": chat(None, a, b), "answer": str(a + b)} for a, b in pairs],
                          "prefix": None, "take": "final", "tokens": 48},
        "chat_answer_tag": {"rows": [{"prompt": chat(TAG_SYSTEM, a, b), "answer": str(a + b)} for a, b in pairs],
                            "prefix": "<answer>", "take": "final", "tokens": 16},
        "text_continuation": {"rows": [{"prompt": f"Question: What is {a} + {b}?\nAnswer: {a} + {b} =", "answer": str(a + b)}
                                       for a, b in pairs], "prefix": None, "take": "first", "tokens": 6},
        # The shapes that do not restate the sum (issue: the demo must learn addition, not a template).
        "text_open": {"rows": [{"prompt": f"Question: What is {a} + {b}?\nAnswer:", "answer": str(a + b)} for a, b in pairs],
                      "prefix": None, "take": "line", "tokens": 12},
        "bare_line": {"rows": [{"prompt": f"{a} + {b} =", "answer": str(a + b)} for a, b in pairs],
                      "prefix": None, "take": "first", "tokens": 6},
        "chat_question_line": {"rows": [{"prompt": chat(None, a, b), "answer": str(a + b)} for a, b in pairs],
                               "prefix": None, "take": "line", "tokens": 24},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--only", default="", help="comma-separated variant names (default: all)")
    parser.add_argument("--output", default=str(RESULTS / "base_rates.json"))
    opts = parser.parse_args()
    from grpokit.config.run_config import ModelConfig
    from grpokit.evaluate.calibrate import calibrate
    from grpokit.models.loading import add_response_prefix, load_model
    from grpokit.rewards import get

    rng = random.Random(0)
    pairs = [(rng.randint(10, 99), rng.randint(10, 99)) for _ in range(opts.prompts)]
    out = {"command": f"python -m benchmarks.base_rates --prompts {opts.prompts} --samples {opts.samples}",
           "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "model": "bundled:smollm2-135m-instruct", "temperature": 1.0, "num_generations": 8, "variants": {}}
    chosen = [n for n in opts.only.split(",") if n]
    for name, spec in variants(pairs).items():
        if chosen and name not in chosen:
            continue
        model, tok = load_model(ModelConfig(lora=None), dtype="float32", trainable=False)
        if spec["prefix"]:
            add_response_prefix(tok, spec["prefix"])
        reward = get("numeric_match", take=spec["take"])
        started = time.time()
        result = calibrate(model, tok, spec["rows"], [reward], [1.0], samples=opts.samples, num_generations=8,
                           accuracy=reward, max_new_tokens=spec["tokens"], temperature=1.0, batch_size=8, seed=0)
        out["variants"][name] = {
            "accuracy": result["mean_pass_rate"],
            "prompts_in_range": result["in_range"] / result["prompts"],
            "predicted_zero_variance_share": result["predicted_zero_variance_share"],
            "max_new_tokens": spec["tokens"], "seconds": round(time.time() - started, 1),
        }
        print(name, {k: round(v, 3) if isinstance(v, float) else v for k, v in out["variants"][name].items()}, flush=True)
    Path(opts.output).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.output).write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
