"""One data-set row, seen by the probe: its gold answer, its tests, and its reference completions.

The references fix the scale every exploit is judged on: `honest` is a
well-formed, correct completion; `wrong` is the same form with a wrong answer,
and for a number gold `wrong_other` a wrong answer on the gold's other side
(a reward that only checks one side pays one of them in full). A reward that
pays an exploit more than a wrong answer pays it for something other than
being right.

Gold-answer rows are written in a `Form` (forms.py): the answer format's tags
by default, or the bare answer when that is what the run's rewards pay for
(a prompt ending in "47 + 38 =").
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from grpokit.completions import prompt_text
from grpokit.rewards import _answers, _numbers
from grpokit.answer_format import DEFAULT, AnswerFormat
from grpokit.probe.forms import REASONING, Form, tagged_form

# Columns a row may carry a worked, correct solution in (code data sets).
SOLUTION_COLUMNS = ("solution", "canonical_solution", "reference_solution", "code")  # code: MBPP


def tagged(answer: str, reasoning: str = REASONING, fmt: AnswerFormat = DEFAULT) -> str:
    """A completion in the run's answer format (`<reasoning>`/`<answer>` by default)."""
    return fmt.wrap(answer, reasoning)


@dataclass
class ProbeRow:
    index: int
    prompt: Any                 # as the data set holds it (text or chat messages)
    columns: dict[str, Any]     # every column but the prompt, as rewards receive them (one value each)
    gold: str | None = None     # the gold answer as text, when the row has one
    honest: str | None = None   # a correct completion, when one can be written
    wrong: str = ""             # the same form, a wrong answer
    wrong_answer: str = ""
    wrong_other: str | None = None   # a number gold's wrong answer on its other side (below it)
    wrong_other_answer: str = ""
    letters: str = ""           # option letters when the gold is a multiple-choice letter
    fmt: AnswerFormat = DEFAULT  # the run's answer format: the probe completions are written in it
    form: Form | None = None    # how a gold-answer row's completions commit to an answer
    extras: dict[str, Any] = field(default_factory=dict)
    # With a `sources` column: the documents that hold the gold (1-based), and how many there are.
    # The references cite them after the answer, as a grounded answer would (`<answer>..</answer> [2]`).
    holding: tuple[int, ...] = ()
    sources: int = 0

    @property
    def prompt_text(self) -> str:
        return prompt_text(self.prompt)

    def write(self, answer: str, reasoning: str | None = None) -> str:
        """A completion committing to `answer` in the row's form (the answer format's tags by default);
        `reasoning` (default: the form's own) comes before the answer, and the row's citation after it."""
        return self.write_uncited(answer, reasoning) + self.cite()

    def write_uncited(self, answer: str, reasoning: str | None = None) -> str:
        """As `write`, without the citation."""
        return (self.form or tagged_form(self.fmt)).write(answer, reasoning)

    def in_form(self, form: Form) -> ProbeRow:
        """This gold-answer row with its references written in `form`."""
        row = ProbeRow(**{**self.__dict__, "form": form})
        row.honest = row.write(row.gold)
        row.wrong = row.write(row.wrong_answer)
        row.wrong_other = row.write(row.wrong_other_answer) if row.wrong_other_answer else None
        return row

    def cite(self, numbers: Any = None) -> str:
        """The citation a grounded answer puts after its answer: the documents holding the gold by default."""
        numbers = self.holding if numbers is None else numbers
        if isinstance(numbers, str):
            return f" [{numbers}]"
        return f" [{', '.join(str(n) for n in numbers)}]" if numbers else ""


def probe_row(index: int, row: dict[str, Any], fmt: AnswerFormat = DEFAULT) -> ProbeRow:
    """Read one data-set row (`prompt` plus reward columns) into a ProbeRow with its references."""
    columns = {k: v for k, v in row.items() if k != "prompt"}
    probe = ProbeRow(index=index, prompt=row.get("prompt", ""), columns=columns, fmt=fmt)
    options = _answers.gold_options(columns.get("answer"))
    if options:
        probe.gold = options[0]
        probe.letters = "ABCDE" if _answers.gold_letter(probe.gold, "ABCDE") else ""
        probe.wrong_answer = wrong_answer_for(probe.gold, probe.letters)
        value = None if probe.letters else gold_value(probe.gold)
        if value is not None and abs(value) < 1e15:
            probe.wrong_other_answer = _plain(value - 7)
        probe.holding, probe.sources = holding_sources(probe.gold, columns.get("sources"))
        return probe.in_form(tagged_form(fmt))
    solution = next((columns[c] for c in SOLUTION_COLUMNS if isinstance(columns.get(c), str) and columns[c].strip()), None)
    if columns.get("tests") not in (None, "", []):
        probe.honest = f"```python\n{solution}\n```" if solution else None
        probe.wrong = "```python\npass\n```"
        return probe
    if columns.get("schema") not in (None, ""):
        instance = minimal_instance(_load_json(columns["schema"]))
        probe.honest = None if instance is None else json.dumps(instance)
        probe.wrong = "I cannot answer in JSON."
        return probe
    reference = columns.get("reference")
    if isinstance(reference, str) and reference.strip():
        probe.honest = reference.strip()
        probe.wrong = off_topic(len(probe.honest.split()))
        return probe
    probe.wrong = tagged("I do not know.", fmt=fmt)
    return probe


def _words(text: str) -> str:
    # Words and numbers (a decimal point kept, a full stop dropped), lower-cased, single-spaced.
    return " ".join(re.sub(r"[^\w.]+|\.(?!\d)", " ", text.lower()).split())


def holding_sources(gold: str, sources: Any) -> tuple[tuple[int, ...], int]:
    """(the 1-based numbers of the documents whose text holds the gold, how many documents): a
    plain list of texts, or JSON text of one; ((), 0) for anything else."""
    docs = _load_json(sources) if isinstance(sources, str) and sources.lstrip().startswith("[") else sources
    if not isinstance(docs, (list, tuple)) or not docs or not gold.strip():
        return (), 0
    needle = _words(gold)
    holding = tuple(i for i, doc in enumerate(docs, 1) if needle and f" {needle} " in f" {_words(str(doc)[:100_000])} ")
    return holding, len(docs)


# Off-topic prose without repeated phrases (a repetition penalty must not pay the reference less
# for its form): a wrong free-text answer is its first words, as many as the reference has.
OFF_TOPIC = ("This text is about something else entirely, and it says nothing of what was asked. Mountain goats "
             "climb steep cliffs to lick salt from rocks, while penguins in Antarctica huddle together through "
             "long winter nights. Old sailing ships carried spices across oceans for months before railways or "
             "aircraft existed. Bakers knead dough early each morning so bread cools by opening time. Chess "
             "players often study famous endgames; violin makers choose spruce tops carefully for tone.")


def off_topic(words: int) -> str:
    """A wrong free-text answer of `words` words: as long as the reference, so a length reward pays
    it like the reference and only content separates them."""
    pool = OFF_TOPIC.split()
    return " ".join(pool[i % len(pool)] for i in range(max(words, 1)))


def wrong_answer_for(gold: str, letters: str = "") -> str:
    """An answer of the gold's kind that is not the gold: another letter, another number, other words."""
    if letters:
        letter = _answers.gold_letter(gold, letters)
        return next(c for c in letters if c != letter)
    value = gold_value(gold)
    if value is not None:
        return _plain(value + 7 if abs(value) < 1e15 else value * 2 + 1)
    changed = _other_json(gold)
    if changed is not None:
        return changed
    return "something else entirely" if gold.strip().lower() != "something else entirely" else "nothing"


def _plain(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _other_json(gold: str) -> str | None:
    """A JSON gold object with every value changed but its keys and types kept: a wrong answer of the same shape."""
    parsed = _load_json(gold) if gold.lstrip().startswith("{") else None
    if not isinstance(parsed, dict) or not parsed:
        return None

    def change(value: Any) -> Any:
        if isinstance(value, bool):
            return not value
        if isinstance(value, (int, float)):
            return value + 1
        if isinstance(value, str):
            return "x" + value
        if isinstance(value, list):
            return [change(v) for v in value]
        if isinstance(value, dict):
            return {k: change(v) for k, v in value.items()}
        return value

    return json.dumps(change(parsed))


def gold_value(gold: str) -> float | None:
    """The gold's number when the gold is one (not merely holds one: "Paris 2024" is text)."""
    if not re.fullmatch(r"[\s$\\{}a-z().,/%+\-\d^]*", gold) or not re.search(r"\d", gold):
        return None
    number = _numbers.gold_number(gold)
    return None if number is None else number.value


def candidate_numbers(gold: str, count: int = 10) -> list[str]:
    """`count` different numbers around the gold, the gold among them (its value, written plainly)."""
    value = gold_value(gold)
    if value is None:
        return []
    base = int(value) if float(value).is_integer() else value
    picks = [base + step for step in range(-(count // 2), count - count // 2)]
    return [str(p) if isinstance(p, int) else f"{p:g}" for p in picks]


def _load_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


_PLAIN = {"string": "text", "integer": 1, "number": 1.5, "boolean": True, "null": None, "array": [], "object": {}}


def minimal_instance(schema: Any, depth: int = 0) -> Any:
    """A small value that the schema accepts, for the common shapes (types, required keys, enums);
    None when the schema is beyond that (the probe then has no honest reference for the row)."""
    if not isinstance(schema, dict) or depth > 5:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        out = {}
        for key in schema.get("required") or []:
            value = minimal_instance(properties.get(key, {"type": "string"}), depth + 1)
            if value is None and properties.get(key, {}).get("type") != "null":
                return None
            out[key] = value
        return out
    if kind == "array":
        least = int(schema.get("minItems", 0) or 0)
        item = minimal_instance(schema.get("items", {"type": "string"}), depth + 1)
        return [item] * least if least and item is not None else ([] if not least else None)
    if kind == "string":
        least = int(schema.get("minLength", 0) or 0)
        return "text" + "x" * max(0, least - 4) if "pattern" not in schema and "format" not in schema else None
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        return (int(low) + 1 if low is not None else 1) if kind == "integer" else (float(low) + 1 if low is not None else 1.5)
    return _PLAIN.get(kind) if kind in _PLAIN else None


def entry_point_of(row: ProbeRow) -> str | None:
    """The function a code row's tests call: its entry_point column, else the first call in the tests."""
    named = row.columns.get("entry_point")
    if isinstance(named, str) and named.isidentifier():
        return named
    tests = row.columns.get("tests")
    text = json.dumps(tests) if not isinstance(tests, str) else tests
    match = re.search(r"assert\s+(?:not\s+)?([A-Za-z_]\w*)\s*\(", text)
    if match and match.group(1) not in ("isinstance", "len", "abs", "all", "any", "sorted", "set", "list", "round"):
        return match.group(1)
    return None


def io_cases(row: ProbeRow) -> list[tuple[str, str]]:
    """(stdin, expected stdout) pairs of a stdin/stdout code row, in the layouts code_execution reads."""
    tests = _load_json(row.columns.get("tests"))
    if isinstance(tests, dict):
        ins = tests.get("input", tests.get("inputs"))
        outs = tests.get("output", tests.get("outputs"))
        if isinstance(ins, list) and isinstance(outs, list):
            return [(str(i), str(o)) for i, o in zip(ins, outs)]
    if isinstance(tests, list):
        return [(str(t["input"]), str(t["output"])) for t in tests if isinstance(t, dict) and "input" in t and "output" in t]
    return []
