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
phrasings it never saw. `wording=practice` is a third family that shares no
template or key word with `varied` ("total", "together", "increase"), so a
recipe can train on many wordings and still be measured on unseen ones.
`digits` sets the operand range (1-4 digits).

`shape` sets where the prompt stops, since a model that only learned to finish
"47 + 38 =" has learned a template, not addition:

- `restated` (default): the question, then `Answer: 47 + 38 =`;
- `open`: the question, then `Answer:`; the model must find the numbers itself;
- `bare`: the line `47 + 38 =` alone, no question;
- `mixed`: each row one of the three, drawn at random;
- a comma list (`restated,open`): each row one of those, drawn at random.

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
# No template or key word in common with VARIED (no "add", "plus", "sum", "has ... finds", "in all"):
# a model trained on these and measured on VARIED is measured on wordings it never saw.
PRACTICE = (
    "What is {a} + {b}?",
    "Find the total of {a} and {b}.",
    "{a} and {b} together make how many?",
    "Increase {a} by {b}. What number do you get?",
    "Combine {a} with {b}: what is the result?",
    "{name} buys {a} {item}, then {b} more. How many {item} did {name} buy?",
)
WORDINGS = {"plain": PLAIN, "varied": VARIED, "practice": PRACTICE}
SHAPES = ("restated", "open", "bare", "mixed")


def parse_shapes(shape: str) -> tuple[str, ...] | None:
    """'mixed' or a comma list -> the shapes rows are drawn from; None when a name is unknown."""
    names = SHAPES[:3] if shape == "mixed" else tuple(part.strip() for part in shape.split(",") if part.strip())
    return names if names and all(name in SHAPES[:3] for name in names) else None


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
    shapes = parse_shapes(shape)
    if shapes is None:
        raise ValueError(f"unknown shape {shape!r}")
    rows = []
    for _ in range(n):
        a, b = rng.randint(low, high), rng.randint(low, high)
        question = rng.choice(templates).format(a=a, b=b, name=rng.choice(names), item=rng.choice(items))
        # One shape draws nothing, so a single-shape source gives the same rows it always did.
        row_shape = rng.choice(shapes) if len(shapes) > 1 else shapes[0]
        rows.append({"question": _prompt(question, a, b, row_shape), "answer": str(a + b),
                     "expression": f"{a} + {b}"})
    return rows
