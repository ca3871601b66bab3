"""Synthetic tasks: generated prompts with gold answers, no download needed.

Written as `synthetic:<task>?param=value&...` in `data.source`. The same
parameters and seed always give the same rows, so runs and tests repeat.

synthetic:arithmetic  word problems over whole numbers. Columns: question,
    answer (the integer as text), expression (the sum it encodes).
    n=1000       rows to generate
    digits=2     largest operand has this many digits (1-6)
    steps=1      operations chained in one problem (1-4)
    ops=add,sub  any of add, sub, mul, div (results stay whole and >= 0)
    seed=        overrides data.seed for the generator

synthetic:addition  bare sums as a text continuation ("Question: What is 47 + 38?\n
    Answer: 47 + 38 ="), for models too small to reason in words (see
    data/synthetic_sums.py). Plain-text prompts: set data.conversational: false.
    Columns: question, answer, expression.
    n=1000, digits=2 (operand digits, 1-4), wording=plain (or varied: other
    phrasings and word problems, for held-out tests; practice: six more
    phrasings sharing no key word with varied), shape=restated (or open:
    the prompt stops at "Answer:"; bare: "47 + 38 =" alone; mixed: each row
    one of the three; a comma list such as restated,open), seed=

synthetic:json  extract facts from a sentence into a JSON object. Columns:
    question, answer (the gold object as JSON text), schema (a JSON Schema as
    JSON text, passed to rewards as `schema`).
    n=1000, fields=3 (2-5 keys per object), seed=
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Callable

from grpokit.data import synthetic_sums
from grpokit.errors import ConfigError

_NAMES = ["Ana", "Ben", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivan", "Jia", "Kofi", "Lena", "Mika", "Nia", "Omar", "Pia", "Ravi", "Sara", "Tom", "Uma", "Vik", "Wen", "Yara", "Zoe"]
_ITEMS = ["apples", "marbles", "stickers", "books", "coins", "pencils", "stamps", "cards", "shells", "cookies", "beads", "tickets"]


@dataclass(frozen=True)
class Task:
    columns: tuple[str, ...]  # every column the generator writes
    passthrough: tuple[str, ...]  # columns handed to rewards under their own names
    params: dict[str, int | str]  # parameter -> default
    generate: Callable[[random.Random, dict], list[dict]]


def _int_param(params: dict, name: str, low: int, high: int, task: str) -> int:
    raw = params[name]
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"synthetic:{task} parameter {name}={raw!r} must be a whole number between {low} and {high}") from None
    if not low <= value <= high:
        raise ConfigError(f"synthetic:{task} parameter {name}={value} is out of range: use {low} to {high}")
    return value


# --- arithmetic -------------------------------------------------------------

_OPS = ("add", "sub", "mul", "div")
_FIRST = {
    "add": "{name} has {a} {item}. {name} gets {b} more.",
    "sub": "{name} has {a} {item} and gives {b} of them to a friend.",
    "mul": "{name} has {a} bags with {b} {item} in each bag.",
    "div": "{name} packs {a} {item} into {b} boxes with the same number in each box, keeps one box and gives the others away.",
}
_NEXT = {
    "add": "Then {name} finds {b} more.",
    "sub": "Then {name} loses {b} of them.",
    "mul": "Then {name} collects more until there are {b} times as many.",
    "div": "Then {name} splits them into {b} equal piles and keeps only one pile.",
}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


def _arithmetic_options(params: dict) -> tuple[int, int, list[str]]:
    digits = _int_param(params, "digits", 1, 6, "arithmetic")
    steps = _int_param(params, "steps", 1, 4, "arithmetic")
    ops = [o.strip() for o in str(params["ops"]).split(",") if o.strip()]
    unknown = [o for o in ops if o not in _OPS]
    if not ops or unknown:
        raise ConfigError(f"synthetic:arithmetic ops={params['ops']!r}: use a comma list of {', '.join(_OPS)} (e.g. ops=add,sub,mul)")
    return digits, steps, ops


def _first(rng: random.Random, op: str, top: int) -> tuple[int, int, int]:
    """(a, b, a op b) for the opening sentence; results stay whole and >= 0."""
    if op == "add":
        a, b = rng.randint(1, top), rng.randint(1, top)
        return a, b, a + b
    if op == "sub":
        a = rng.randint(1, top)
        b = rng.randint(1, a)
        return a, b, a - b
    if op == "mul":
        a, b = rng.randint(1, top), rng.randint(2, max(2, top))
        return a, b, a * b
    # div: pick divisor and quotient, so the division is exact by construction.
    b = rng.randint(2, max(2, min(top, 12)))
    quotient = rng.randint(1, top)
    return b * quotient, b, quotient


def _next(rng: random.Random, op: str, value: int, top: int) -> tuple[int, int] | None:
    """(b, value op b) for a follow-up sentence, or None when `op` cannot apply."""
    if op == "add":
        b = rng.randint(1, top)
        return b, value + b
    if op == "sub":
        if value < 1:
            return None
        b = rng.randint(1, min(value, top))
        return b, value - b
    if op == "mul":
        # A small factor keeps chained numbers readable.
        b = rng.randint(2, max(2, min(top, 9)))
        return b, value * b
    divisors = [d for d in range(2, min(value, top, 12) + 1) if value % d == 0]
    if not divisors:
        return None
    b = rng.choice(divisors)
    return b, value // b


def _arithmetic(rng: random.Random, params: dict) -> list[dict]:
    digits, steps, ops = _arithmetic_options(params)
    n = _int_param(params, "n", 1, 1_000_000, "arithmetic")
    top = 10**digits - 1
    rows = []
    for _ in range(n):
        name, item = rng.choice(_NAMES), rng.choice(_ITEMS)
        op = rng.choice(ops)
        a, b, value = _first(rng, op, top)
        sentences = [_FIRST[op].format(name=name, item=item, a=a, b=b)]
        expression = f"{a} {_SYMBOL[op]} {b}"
        for _ in range(steps - 1):
            # The first operation (in random order) that applies to the running
            # value; add always applies, so a step is never dropped.
            for op in rng.sample(ops, len(ops)) + ["add"]:
                step = _next(rng, op, value, top)
                if step is not None:
                    break
            b, value = step
            sentences.append(_NEXT[op].format(name=name, b=b))
            expression = f"({expression}) {_SYMBOL[op]} {b}"
        sentences.append(f"How many {item} does {name} have now?")
        rows.append({"question": " ".join(sentences), "answer": str(value), "expression": expression})
    return rows


# --- addition -----------------------------------------------------------------

def _addition(rng: random.Random, params: dict) -> list[dict]:
    n = _int_param(params, "n", 1, 1_000_000, "addition")
    digits = _int_param(params, "digits", 1, 4, "addition")
    wording = str(params["wording"])
    if wording not in synthetic_sums.WORDINGS:
        raise ConfigError(f"synthetic:addition wording={wording!r}: use one of {', '.join(synthetic_sums.WORDINGS)}")
    shape = str(params["shape"])
    if synthetic_sums.parse_shapes(shape) is None:
        raise ConfigError(f"synthetic:addition shape={shape!r}: use one of {', '.join(synthetic_sums.SHAPES)}, "
                          "or a comma list of restated, open, bare (e.g. shape=restated,open)")
    return synthetic_sums.generate(rng, n, digits, wording, _NAMES, _ITEMS, shape)


# --- json extraction ----------------------------------------------------------

_CITIES = ["Lisbon", "Nairobi", "Osaka", "Lima", "Oslo", "Quito", "Hanoi", "Dakar", "Perth", "Tunis", "Cork", "Bergen"]
_SURNAMES = ["Lopez", "Okafor", "Tanaka", "Silva", "Novak", "Haddad", "Kim", "Moreau", "Singh", "Berg"]
_FIELDS = {
    "name": ("string", "{name}"),
    "age": ("integer", "is {age} years old"),
    "city": ("string", "lives in {city}"),
    "email": ("string", "can be reached at {email}"),
    "is_member": ("boolean", "{member} a member of the club"),
}
_OPTIONAL_FIELDS = ("age", "city", "email", "is_member")


def _json_task(rng: random.Random, params: dict) -> list[dict]:
    n = _int_param(params, "n", 1, 1_000_000, "json")
    fields = _int_param(params, "fields", 2, 5, "json")
    rows = []
    for _ in range(n):
        first, last = rng.choice(_NAMES), rng.choice(_SURNAMES)
        record = {
            "name": f"{first} {last}",
            "age": rng.randint(18, 90),
            "city": rng.choice(_CITIES),
            "email": f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@example.org",
            "is_member": rng.random() < 0.5,
        }
        keys = ["name"] + rng.sample(_OPTIONAL_FIELDS, fields - 1)
        gold = {k: record[k] for k in keys}
        values = {**record, "member": "is" if record["is_member"] else "is not"}
        clauses = [_FIELDS[k][1].format(**values) for k in keys[1:]]
        sentence = record["name"] + " " + (", ".join(clauses[:-1]) + " and " + clauses[-1] if len(clauses) > 1 else clauses[0]) + "."
        described = ", ".join(f'"{k}" ({_FIELDS[k][0]})' for k in keys)
        schema = {
            "type": "object",
            "properties": {k: {"type": _FIELDS[k][0]} for k in keys},
            "required": keys,
            "additionalProperties": False,
        }
        rows.append({
            "question": f"Extract these details as a JSON object with exactly the keys {described}.\n\nText: {sentence}",
            "answer": json.dumps(gold),
            "schema": json.dumps(schema),
        })
    return rows


TASKS: dict[str, Task] = {
    "arithmetic": Task(("question", "answer", "expression"), (), {"n": 1000, "digits": 2, "steps": 1, "ops": "add,sub"}, _arithmetic),
    "addition": Task(("question", "answer", "expression"), ("expression",), {"n": 1000, "digits": 2, "wording": "plain", "shape": "restated"}, _addition),
    "json": Task(("question", "answer", "schema"), ("schema",), {"n": 1000, "fields": 3}, _json_task),
}


def task(name: str) -> Task:
    if name not in TASKS:
        raise ConfigError(f"unknown synthetic task `{name}`: choose one of {', '.join(f'synthetic:{t}' for t in TASKS)}")
    return TASKS[name]


def resolve_params(name: str, given: tuple[tuple[str, str], ...], seed: int) -> dict:
    """The task's defaults overlaid with the source's parameters, validated."""
    spec = task(name)
    params: dict = dict(spec.params)
    params["seed"] = seed
    for key, value in given:
        if key not in params:
            valid = ", ".join(sorted([*spec.params, "seed"]))
            raise ConfigError(f"synthetic:{name} has no parameter `{key}`: valid ones are {valid}")
        params[key] = value
    params["seed"] = _int_param(params, "seed", -(2**63), 2**63 - 1, name)
    _int_param(params, "n", 1, 1_000_000, name)
    # One generated row checks every other parameter, cheaply (validate_data
    # runs this before any model loads).
    spec.generate(random.Random(0), {**params, "n": 1})
    return params


def generate(name: str, given: tuple[tuple[str, str], ...], seed: int) -> list[dict]:
    params = resolve_params(name, given, seed)
    # str seeds hash through SHA-512 in `random`, so this is stable across runs.
    return TASKS[name].generate(random.Random(f"grpokit:{name}:{params['seed']}"), params)
