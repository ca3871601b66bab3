"""Which prompt lets the bundled model write init math's answer format? Base model only, no training.

    PYTHONPATH=src python -m benchmarks.init_math_formats [--prompts 20] [--samples 2]

Samples the base model on the first held-out prompts of the config `grpokit init math` writes,
under candidate prompt shapes and completion lengths, and counts per candidate: the format rate
(reasoning block, then answer block, or the answer block alone where the candidate drops the
reasoning tag), accuracy as `grpokit eval` reads it, and how many prompts got at least one right
sample and how many got both right and wrong ones (what GRPO learns from). Writes
benchmarks/results/init_math_formats.json.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.init_math_learning import EVAL_SEED, RESULTS, held_out_rows, init_config

_SHOT_Q = ("Tom has 3 apples. Tom gets 6 more. How many apples does Tom have now?",
           "Ana has 12 pens and gives 5 of them to a friend. How many pens does Ana have now?")
_CHAT_SHOT = "Tom has 3 apples. Tom gets 2 more. How many apples does Tom have now?"


def _prompt(text: str) -> str:
    return "data.system_prompt=" + json.dumps(text)  # a YAML double-quoted string


CANDIDATES = {
    "chat, default prompt, 128 tokens (init math before)": [],
    "chat, answer tag only, one-shot example, 16 tokens": [
        "data.answer_format.reasoning_tag=null",
        _prompt(f"Reply with the final number only, inside <answer> and </answer>. Example: {_CHAT_SHOT} "
                "Reply: <answer>5</answer>"),
        "training.max_completion_length=16"],
    "chat, short reasoning, one-shot example, 40 tokens": [
        _prompt("Write the calculation inside <reasoning> and </reasoning>, then the final number inside <answer> "
                f"and </answer>. Example: {_CHAT_SHOT} Reply: <reasoning>3 + 2 = 5</reasoning> <answer>5</answer>"),
        "training.max_completion_length=40"],
    "plain text, two worked examples, reasoning + answer, 32 tokens (init math now)": [
        "data.conversational=false", "training.max_completion_length=32"],
    "plain text, two worked examples, answer tag only, 12 tokens": [
        "data.conversational=false", "data.answer_format.reasoning_tag=null",
        _prompt("Solve each problem. Write the final number inside <answer> and </answer>.\n\n"
                f"{_SHOT_Q[0]}\n<answer>9</answer>\n\n{_SHOT_Q[1]}\n<answer>7</answer>"),
        "training.max_completion_length=12"],
}


def _text(completion) -> str:
    return completion if isinstance(completion, str) else completion[0]["content"]


def main() -> None:
    from grpokit.evaluate.checkpoint import _load
    from grpokit.evaluate.generation import generate_samples
    from grpokit.evaluate.metrics import default_accuracy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--output", default=str(RESULTS / "init_math_formats.json"))
    opts = parser.parse_args()
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="grpokit-init-math-formats-"))
    model = tok = None
    out = {"command": f"python -m benchmarks.init_math_formats --prompts {opts.prompts} --samples {opts.samples}",
           "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "temperature": 1.0,
           "sampling_seed": EVAL_SEED, "candidates": []}
    for name, overrides in CANDIDATES.items():
        # "init math now" takes the prompt init writes (plain text already); the others override it.
        cfg, _ = init_config(work, overrides)
        rows, _ = held_out_rows(cfg, opts.prompts)
        if model is None:
            model, tok = _load(cfg, None)
        length = int(next((o.split("=", 1)[1] for o in overrides if o.startswith("training.max_completion_length=")),
                          128))
        started = time.time()
        samples = generate_samples(model, tok, rows, k=opts.samples, max_new_tokens=length, temperature=1.0,
                                   top_p=1.0, batch_size=20, seed=EVAL_SEED)
        fmt = cfg.data.answer_format
        judge = default_accuracy([r["answer"] for r in rows], fmt)
        right = formatted = total = mixed = any_right = 0
        lengths = []
        for s in samples:
            texts = [_text(c) for c in s["completions"]]
            scores = judge(completions=s["completions"], answer=[s["row"]["answer"]] * len(texts))
            ok = [x is not None and x >= 1.0 for x in scores]
            right += sum(ok)
            total += len(ok)
            formatted += sum(fmt.has_format(t) for t in texts)
            lengths += s["lengths"]
            mixed += 0 < sum(ok) < len(ok)
            any_right += any(ok)
        row = {"candidate": name, "overrides": overrides, "max_completion_length": length, "samples": total,
               "correct": right, "accuracy": right / total, "format_rate": formatted / total,
               "mean_length": sum(lengths) / len(lengths), "prompts": len(samples),
               "prompts_any_correct": any_right, "prompts_mixed": mixed, "seconds": round(time.time() - started, 1),
               "example": _text(samples[0]["completions"][0])[:300]}
        out["candidates"].append(row)
        print(json.dumps(row), flush=True)
        Path(opts.output).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
