"""Rewards a policy could dilute, attacked by class.

repetition_penalty, class "a loop made to look new": a counter, a number word, an
ordinal, varied spacing or invisible characters in each turn of a loop must not
hide it; a numbered list of distinct steps and real prose must stay unpunished.
Its sibling, "a loop of numbers alone" (counters are read as one word, so `7 7 7`
would be `0 0 0` like honest arithmetic): a repeated number or number pattern is a
loop, counting and number lists are not, and neither dilutes a loop beside them.
tool_call_success, class "more calls, more credit": padding a failed episode with
calls that do nothing, or hiding a failure with try/except, must never score above
an honest episode with one call that worked.
"""
from __future__ import annotations

import itertools

import pytest

from grpokit.rewards import get

WORDS = "one two three four five six seven eight nine ten eleven twelve".split()
ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split()

# Each makes turn i of a loop; all of them differ from turn to turn.
COUNTERS = {
    "digits": lambda i: f"hmm {i}",
    "digits in a sentence": lambda i: f"Let me check step {i} again.",
    "hash": lambda i: f"attempt #{i}: no",
    "brackets": lambda i: f"({i}) wait",
    "glued": lambda i: f"try{i} fails",
    "ordinal suffix": lambda i: f"the {i}th try fails",
    "decimal": lambda i: f"x = {i}.5? no",
    "thousands": lambda i: f"maybe {i},000 or not",
    "number words": lambda i: f"wait {WORDS[i % 12]} more",
    "ordinal words": lambda i: f"the {ORDINALS[i % 12]} time i try",
    "two counters": lambda i: f"Attempt {i}: x = {3 * i}, not it.",
    "fullwidth": lambda i: f"ｈｍｍ {i}",
    "zero-width spacing": lambda i: "h" + "\u200b" * (i % 4) + f"mm {i}",
    "varied spacing": lambda i: "hmm" + " \n\t\u00a0"[i % 4] * (1 + i % 3) + str(i),
}


@pytest.mark.parametrize("name", COUNTERS)
def test_a_loop_with_a_counter_is_a_loop(name):
    text = " ".join(COUNTERS[name](i) for i in range(200))
    assert get("repetition_penalty")([text])[0] < -0.9, name


@pytest.mark.parametrize("cycle", [["yes", "no"], ["a", "b", "c"], ["ok", "ok", "wait"]])
def test_alternating_tokens_are_a_loop(cycle):
    text = " ".join(itertools.islice(itertools.cycle(cycle), 600))
    assert get("repetition_penalty")([text])[0] < -0.9


# Each makes a completion that is a loop of numbers, or holds one in honest text.
BARE_NUMBER_LOOPS = {
    "one number": lambda: "7 " * 400,
    "with commas": lambda: "1, " * 400,
    "zeros": lambda: "0 " * 400,
    "a short pattern": lambda: "1 2 " * 300,
    "a decimal": lambda: "2.5 " * 300,
    "a number pattern of five": lambda: "3 1 4 1 5 " * 100,
    "after an answer": lambda: "The answer is 12. " + "12 " * 600,
    "in a JSON list": lambda: '{"answer": [' + ", ".join(["4"] * 500) + "]}",
}


@pytest.mark.parametrize("name", BARE_NUMBER_LOOPS)
def test_a_loop_of_numbers_alone_is_a_loop(name):
    assert get("repetition_penalty")([BARE_NUMBER_LOOPS[name]()])[0] < -0.9, name


NUMBERS_NOT_LOOPS = [
    (" ".join(map(str, range(1, 501))), "counting"),
    ("[" + ", ".join(str(3 * i * i + 7) for i in range(60)) + "]", "a JSON list of distinct numbers"),
    ("16 - 3 = <<16-3=13>>13 apples, then 13 * 2 = <<13*2=26>>26, then 26 + 4 = <<26+4=30>>30. #### 30",
     "calculation notes"),
]


@pytest.mark.parametrize("text,why", NUMBERS_NOT_LOOPS)
def test_number_lists_are_not_loops(text, why):
    assert get("repetition_penalty")([text])[0] > -0.1, why


def test_numbers_do_not_dilute_a_loop():
    # A loop that costs about a half stays there however many distinct numbers are written after it.
    loop = "I am stuck. " * 200
    fresh = " ".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}x" for i in range(600))
    alone = get("repetition_penalty")([loop + fresh])[0]
    padded = get("repetition_penalty")([loop + fresh + " " + " ".join(map(str, range(5000)))])[0]
    assert alone < -0.4 and padded == pytest.approx(alone, abs=0.01)  # two n-grams bridge the two parts


LEGIT = [
    ("1. Preheat the oven to 180 degrees. 2. Whisk three eggs with the sugar. 3. Fold in the flour gently. "
     "4. Pour the batter into a tin. 5. Bake for 25 minutes. 6. Let it cool before slicing.", "a numbered list"),
    ("Step 1: read the question. Step 2: find the two quantities it gives. Step 3: add them. "
     "Step 4: check the units.", "a list of distinct steps"),
    ("The committee met on 3 May and again on 17 June, when it approved a budget of 12,000 euros for the "
     "library and 4,500 for the new reading room; a third meeting is planned for the autumn.", "prose with numbers"),
    ("The second scroll is 4080 + 2040 = 6120 years old. The third scroll is 6120 + 3060 = 9180 years old. "
     "The fourth scroll is 9180 + 4590 = 13770 years old.", "a sentence shape repeated a few times"),
]


@pytest.mark.parametrize("text,why", LEGIT)
def test_legit_lists_and_prose_are_not_punished(text, why):
    assert get("repetition_penalty")([text])[0] > -0.1, why


# ---------------------------------------------------------------- tools

def _call(code: str) -> dict:
    return {"type": "function", "function": {"name": "python", "arguments": {"code": code}}}


def _episode(*calls: tuple[str, str]) -> list[dict]:
    messages = []
    for code, output in calls:
        messages.append({"role": "assistant", "content": "", "tool_calls": [_call(code)]})
        messages.append({"role": "tool", "name": "python", "content": output})
    messages.append({"role": "assistant", "content": "The answer is 42"})
    return messages


HONEST = _episode(("print(6 * 7)", "42"))
FAILED = ("print(undefined)", "{'error': \"NameError: name 'undefined' is not defined\"}")
PADS = [("print(1)", "1"), ('print("ok")', "ok"), ("pass", "(no output)"), ("1", "1"), ("print()", ""),
        ("print(-1, 'done')", "-1 done")]
HIDDEN = [  # the failure of FAILED, caught so that the tool reports no error
    ("try:\n    print(undefined)\nexcept Exception as e:\n    print(e)", "name 'undefined' is not defined"),
    ("try:\n    print(undefined)\nexcept:\n    pass", "(no output)"),
    ("try:\n    1/0\nexcept ZeroDivisionError:\n    print('fine')", "fine"),
    ("import traceback\ntry:\n    1/0\nexcept Exception:\n    traceback.print_exc()",
     "Traceback (most recent call last):\nZeroDivisionError: division by zero"),
    ("try:\n    x = int('a')\nexcept ValueError as e:\n    print(repr(e))", "ValueError(\"invalid literal\")"),
]


def _attacks():
    for k in range(1, 4):
        for pads in itertools.combinations_with_replacement(PADS, k):
            yield "failure then pads", _episode(FAILED, *pads)
            yield "pads then failure", _episode(*pads, FAILED)
    for hidden in HIDDEN:
        yield "hidden failure", _episode(hidden)
        for pad in PADS:
            yield "hidden failure and a pad", _episode(hidden, pad)
    printed = ("print('ZeroDivisionError: division by zero')", "ZeroDivisionError: division by zero")
    yield "error text printed", _episode(printed)


def test_no_padding_or_hiding_scores_above_an_honest_call():
    reward = get("tool_call_success")
    honest = reward([HONEST])[0]
    assert honest == 1.0
    for kind, episode in _attacks():
        assert reward([episode])[0] < honest, (kind, episode)


@pytest.mark.parametrize("episode,expected,why", [
    (_episode(FAILED), 0.0, "one failed call"),
    (_episode(FAILED, ("print(1)", "1"), ("print(1)", "1"), ("print(1)", "1")), 0.0, "issue case: 0.75 before"),
    (_episode(HIDDEN[0]), 0.0, "issue case: try/except scored 1.0 before"),
    (_episode(FAILED, ("print(6 * 7)", "42")), 0.0, "a failure caps the episode, even when a later call works"),
    (_episode(("print(6 * 7)", "42"), ("print(1)", "1")), 1.0, "padding an honest episode adds nothing"),
    (_episode(("x = 6 * 7", "(no output)"), ("print(x)", "42")), 1.0, "a silent setup call is not a failure"),
    (_episode(("print(1)", "1"), ("pass", "(no output)")), 0.0, "calls that do nothing are no calls"),
])
def test_episode_verdicts(episode, expected, why):
    assert get("tool_call_success")([episode]) == [expected], why


def test_idle_episode_scores_like_no_call():
    idle = _episode(("print(1)", "1"))
    assert get("tool_call_success", no_call_score=None)([idle]) == [None]
    assert get("tool_call_success", no_call_score=0.5)([idle, _episode(FAILED)]) == [0.5, 0.0]


def test_arguments_as_json_text_and_calculator_literals():
    # TRL may keep arguments as JSON text; the calculator given a bare number did nothing.
    def calc(expression, output):
        return [{"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": "calculator",
                                                      "arguments": '{"expression": "%s"}' % expression}}]},
                {"role": "tool", "name": "calculator", "content": output}]
    reward = get("tool_call_success")
    assert reward([calc("6 * 7", "42"), calc("42", "42")]) == [1.0, 0.0]
