"""How often does the bundled 135M model call a tool, by system prompt? (no training, sampling only)

    python -m benchmarks.tool_prompt_probe [--problems 8] [--samples 4] [--max-new-tokens 96]

Renders synthetic:arithmetic problems exactly as a run with `tools:` does (the
ChatML tool template grpokit gives SmolLM2, the tool schemas from the
environment), samples at temperature 1.0 like training, and reads each reply
back with TRL's own parser. Per system-prompt variant it reports the share of
replies with a tool call TRL parses, the share with a `<tool_call>` block TRL
could not parse (what `malformed_tool_call` penalises), and the share of replies
whose calls all ran without an error when executed in the environment (the
sandbox). The same seed and problems for every variant.
Results: benchmarks/results/tool_prompt_probe.json.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

RECIPE = ("Solve the problem. To compute, call a tool: the python tool runs code and shows what it prints, "
          "the calculator evaluates an expression. Then give the final answer as a number.")
EXAMPLE_CALC = ("Solve the problem with the calculator tool. First reply with only a tool call, like this:\n"
                '<tool_call>\n{"name": "calculator", "arguments": {"expression": "12 * 3 + 5"}}\n</tool_call>\n'
                "Then read the result and give the final answer as a number.")
EXAMPLE_PY = ("Solve the problem with the python tool. First reply with only a tool call, like this:\n"
              '<tool_call>\n{"name": "python", "arguments": {"code": "print(12 * 3 + 5)"}}\n</tool_call>\n'
              "Then read the result and give the final answer as a number.")

CALL_OPENING = '<tool_call>\n{"name": "python", "arguments": {"code": "'

# One worked exchange before the real question, as chat turns: the call written the way the
# template renders a real one, the tool's answer as a tool message.
DEMO = [
    {"role": "user", "content": "Ana has 12 boxes with 3 pens in each box. How many pens does Ana have?"},
    {"role": "assistant", "content": '<tool_call>\n{"name": "python", "arguments": {"code": "print(12 * 3)"}}\n</tool_call>'},
    {"role": "tool", "content": "36"},
    {"role": "assistant", "content": "Ana has 36 pens."},
]
FEWSHOT = "fewshot_example_call_python"


def _exchange(question: str, code: str, output: str, answer: str) -> list[dict]:
    call = json.dumps({"name": "python", "arguments": {"code": code}})
    return [{"role": "user", "content": question},
            {"role": "assistant", "content": f"<tool_call>\n{call}\n</tool_call>"},
            {"role": "tool", "content": output},
            {"role": "assistant", "content": answer}]


# Three worked exchanges, every one opening with a call: what configs/data/tool_math_fewshot.jsonl holds.
DEMO3 = [*DEMO,
         *_exchange("Ben has 85 cards and gives 27 of them to a friend. How many cards does Ben have now?",
                    "print(85 - 27)", "58", "Ben has 58 cards."),
         *_exchange("Chen has 46 shells. Chen gets 38 more. How many shells does Chen have now?",
                    "print(46 + 38)", "84", "Chen has 84 shells.")]
FEWSHOT3 = "fewshot3_example_call_python"

# name -> (system prompt or None, tools offered)
VARIANTS = {
    FEWSHOT: (EXAMPLE_PY, ["python"]),
    FEWSHOT3: (EXAMPLE_PY, ["python"]),
    "recipe_before": (RECIPE, ["python", "calculator"]),
    "no_system_prompt": (None, ["python", "calculator"]),
    "example_call_calculator": (EXAMPLE_CALC, ["python", "calculator"]),
    "example_call_python": (EXAMPLE_PY, ["python", "calculator"]),
    "example_call_python_only": (EXAMPLE_PY, ["python"]),
}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=8)
    parser.add_argument("--samples", type=int, default=4, help="0: only the exact call-opening probability")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "tool_prompt_probe.json"))
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM
    from trl.chat_template_utils import parse_response

    from grpokit.data.synthetic import generate
    from grpokit.models.loading import load_tokenizer, resolve_source
    from grpokit.tools import ToolSpec, trainer_kwargs
    from grpokit.tools.chat_template import prepare_tokenizer
    from grpokit.tools.config import EnvironmentConfig

    torch.manual_seed(0)
    source, extra = resolve_source("bundled:smollm2-135m-instruct")
    tokenizer = prepare_tokenizer(load_tokenizer(source, extra), "auto")
    model = AutoModelForCausalLM.from_pretrained(source, **extra).eval()
    rows = generate("arithmetic", (("n", str(args.problems)),), 0)
    results = {}
    for name in args.variants.split(","):
        system, tools = VARIANTS[name]
        factory = trainer_kwargs([ToolSpec(t, {"timeout": 2} if t == "python" else {}) for t in tools],
                                 EnvironmentConfig())["environment_factory"]
        env = factory()
        methods = [getattr(env, t) for t in tools]
        prompts = []
        for row in rows:
            messages = ([{"role": "system", "content": system}] if system else []) + (
                {FEWSHOT: DEMO, FEWSHOT3: DEMO3}.get(name, [])) + [{"role": "user", "content": row["question"]}]
            prompts.append(tokenizer.apply_chat_template(messages, tools=methods, add_generation_prompt=True,
                                                         tokenize=False))
        # Probability that the reply opens with a python call: exact, one forward pass per prompt,
        # so it tells variants apart where a few samples all show 0 calls.
        p_open = []
        for prompt in prompts:
            ids = tokenizer(prompt + CALL_OPENING, add_special_tokens=False, return_tensors="pt")["input_ids"]
            n_prompt = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
            assert ids[0, :n_prompt].tolist() == tokenizer(prompt, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logits = model(ids).logits[0, n_prompt - 1:-1].float()
            logp = torch.log_softmax(logits, -1).gather(1, ids[0, n_prompt:, None]).sum().item()
            p_open.append(math.exp(logp))
        prompt_tokens = len(tokenizer(prompts[0], add_special_tokens=False)["input_ids"])
        print(f"{name}: P(reply opens with a python call) mean {sum(p_open) / len(p_open):.3g} "
              f"({prompt_tokens} prompt tokens)", flush=True)
        results[name] = {"system_prompt": system, "tools": tools, "prompt_tokens": prompt_tokens,
                         "p_call_opening_mean": sum(p_open) / len(p_open),
                         "p_call_opening_by_problem": [float(f"{p:.3g}") for p in p_open]}
        if args.samples == 0:
            continue
        batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        start = time.perf_counter()
        torch.manual_seed(0)
        with torch.no_grad():
            out = model.generate(**batch, do_sample=True, temperature=1.0, top_p=1.0, top_k=0,
                                 max_new_tokens=args.max_new_tokens, num_return_sequences=args.samples,
                                 pad_token_id=tokenizer.pad_token_id)
        seconds = time.perf_counter() - start
        width = batch["input_ids"].shape[1]
        parsed_calls = malformed = ran_clean = 0
        examples = []
        for seq in out:
            ids = [i for i in seq[width:].tolist() if i != tokenizer.pad_token_id]
            reply = parse_response(tokenizer, ids)
            calls = reply.get("tool_calls") or []
            if calls:
                parsed_calls += 1
                env.reset()
                ok = True
                for call in calls:
                    function = call.get("function", {})
                    try:
                        getattr(env, function["name"])(**function.get("arguments", {}))
                    except Exception:  # noqa: BLE001 - what TRL would show the model as an error
                        ok = False
                ran_clean += ok
            elif "<tool_call>" in str(reply.get("content", "")):
                malformed += 1
            if len(examples) < 3:
                examples.append(tokenizer.decode(ids, skip_special_tokens=False)[:300])
        n = len(out)
        results[name].update({
            "replies": n,
            "parsed_call_share": round(parsed_calls / n, 3),
            "malformed_call_share": round(malformed / n, 3),
            "calls_ran_clean_share": round(ran_clean / n, 3),
            "generate_seconds": round(seconds, 1),
            "examples": examples,
        })
        print(f"{name}: parsed calls {parsed_calls}/{n}, malformed {malformed}/{n}, ran clean {ran_clean}/{n} "
              f"({seconds:.0f} s)", flush=True)
    result = {
        "benchmark": "tool_prompt_probe",
        "command": "python -m benchmarks.tool_prompt_probe " + " ".join(argv if argv is not None else sys.argv[1:]),
        "model": "bundled:smollm2-135m-instruct", "data": "synthetic:arithmetic", "problems": args.problems,
        "samples_per_problem": args.samples, "max_new_tokens": args.max_new_tokens, "temperature": 1.0,
        "variants": results, "cpus": os.cpu_count(), "python": platform.python_version(),
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
