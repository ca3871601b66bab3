"""synthetic:addition — bare sums written as a text continuation, for models too small to reason in words.

Each prompt is plain text (not chat messages) that ends where the answer goes:

    Question: What is 47 + 38?
    Answer: 47 + 38 =

A 135M model continues such a line with a number; measured on the bundled
SmolLM2-135M-Instruct (temperature 1, 16 prompts x 8 samples,
benchmarks/results/base_rates.json) 23% of its sums are right, and 9 of 16
prompts get both right and wrong samples: the spread GRPO learns from. Asked the
same sum as a chat question, it is right 3% of the time (an answer tag
prefilled: 2%).

`wording=varied` asks the same sums in other words (word problems, "add",
"plus", "the sum of"), to test whether what training taught carries over to
phrasings it never saw; `digits` sets the operand range (1-4 digits).

`shape` sets where the prompt stops, since a model that only learned to finish
"47 + 38 =" has learned a template, not addition:

- `restated` (default): the question, then `Answer: 47 + 38 =`;
- `open`: the question, then `Answer:`; the model must find the numbers itself;
- `bare`: the line `47 + 38 =` alone, no question;
- `mixed`: each row one of the three, drawn at random.

Every row keeps `expression` ("47 + 38"), so held-out sets can drop sums seen in training
whatever their shape.
"""
from __future__ import annotations

import random

PLAIN = ("What is {a} + {b}?",)
VARIED = (
    "Add {a} and {b}.",
    "What do you get when you add {b} to {a}?",
    "Compute the sum of {a} and {b}.",
    "What is {a} plus {b}?",
    "{name} has {a} {item} and finds {b} more. How many {item} does {name} have now?",
    "A box holds {a} {item}. Another holds {b}. How many {item} are there in all?",
)
WORDINGS = {"plain": PLAIN, "varied": VARIED}
SHAPES = ("restated", "open", "bare", "mixed")


def _prompt(question: str, a: int, b: int, shape: str) -> str:
    if shape == "open":
        return f"Question: {question}\nAnswer:"
    if shape == "bare":
        return f"{a} + {b} ="
    return f"Question: {question}\nAnswer: {a} + {b} ="


def operand_range(digits: int) -> tuple[int, int]:
    """Operands with exactly `digits` digits (1 digit: 1-9, so no trivial `0 +`)."""
    return (1 if digits == 1 else 10 ** (digits - 1)), 10**digits - 1


def generate(rng: random.Random, n: int, digits: int, wording: str, names: list[str], items: list[str],
             shape: str = "restated") -> list[dict]:
    low, high = operand_range(digits)
    templates = WORDINGS[wording]
    rows = []
    for _ in range(n):
        a, b = rng.randint(low, high), rng.randint(low, high)
        question = rng.choice(templates).format(a=a, b=b, name=rng.choice(names), item=rng.choice(items))
        row_shape = rng.choice(SHAPES[:3]) if shape == "mixed" else shape
        rows.append({"question": _prompt(question, a, b, row_shape), "answer": str(a + b),
                     "expression": f"{a} + {b}"})
    return rows
