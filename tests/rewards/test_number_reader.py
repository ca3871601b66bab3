"""The one number reader (rewards/_numbers.py + _unicode.py) and exact_match's tokens, attacked by class.

Class 1, Unicode spellings: a number written with another dash or minus, another
space kind, zero-width characters inside, or fullwidth digits reads as its ASCII
form or not at all, never as another number.
Class 2, symbol suffixes: an answer is not the prefix of a gold before its symbols
(C is not C++, A not A+, 210 not 2^10, 15 not 1,5).
Class 3, hostile text: 100k characters of one repeated piece cost under 0.1 s.
"""
from __future__ import annotations

import sys
import time
import unicodedata

import pytest

from grpokit.rewards import _numbers, get
from grpokit.rewards._unicode import canonical

# Every dash and minus, every space kind, a sample of the invisible format characters.
DASHES = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Pd"] + list("−˗➖﹣－⁻₋")
SPACES = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u202e", "\U000e0041"]
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")

NUMBERS = ["85", "-85", "1 085", "1,085", "12 345 678", "-1 000", "3.5", "-0.25", "1/2", "2^10", "50%", "1e3",
           "12 3", "1,5", "7", "-3 100.5", "100 200 300"]
CONTEXTS = ["{}", "The answer is {}", "<answer>{}</answer>", "\\boxed{{{}}}", "x = {}.", "#### {}", "so {} apples"]


def _variants(ascii_form: str):
    for dash in DASHES:
        yield ascii_form.replace("-", dash)
    for space in SPACES:
        yield ascii_form.replace(" ", space)
    for mark in INVISIBLE:
        for i in range(1, len(ascii_form)):
            yield ascii_form[:i] + mark + ascii_form[i:]
    yield ascii_form.translate(FULLWIDTH)
    yield ascii_form.translate(FULLWIDTH).replace("-", "－").replace(" ", "\u3000")


def _values(text: str) -> list[float]:
    return [n.value for n in _numbers.numbers_in(_numbers.normalise(text))]


def _answer(text: str) -> float | None:
    found = _numbers.answer_values(text)
    return None if found is None else found.value


@pytest.mark.parametrize("number", NUMBERS)
def test_unicode_spellings_read_as_the_ascii_form_or_not_at_all(number):
    for context in CONTEXTS:
        ascii_text = context.format(number)
        expected_all, expected = _values(ascii_text), _answer(ascii_text)
        for variant in _variants(number):
            text = context.format(variant)
            assert _values(text) in (expected_all, []), (text, expected_all)
            assert _answer(text) in (expected, None), (text, expected)


def test_the_issue_cases_read_the_number_a_person_sees():
    numeric = get("numeric_match")
    # Fullwidth minus: -85, not 85.
    assert numeric(["－85", "<answer>－85</answer>"], answer=["85", "85"]) == [0.0, 0.0]
    assert numeric(["－85"], answer=["-85"]) == [1.0]
    # No-break / thin / narrow no-break space inside a number: one number, 1085.
    for space in ("\u00a0", "\u2009", "\u202f", "\u2007"):
        assert numeric([f"1{space}085", f"<answer>1{space}085</answer>"], answer=["85", "1085"]) == [0.0, 1.0]
    # A zero-width space inside 85 is 85, not 8.
    assert numeric(["8\u200b5", "8\u200b5"], answer=["8", "85"]) == [0.0, 1.0]


def test_math_equivalence_reads_the_same_number():
    math = get("math_equivalence")
    texts = ["1\u00a0085", "1\u2009085", "8\u200b5", "－85", "<answer>1\u202f085</answer>"]
    assert math(texts, answer=["85", "85", "8", "85", "85"]) == [0.0] * 5
    assert math(texts, answer=["1085", "1085", "85", "-85", "1085"]) == [1.0] * 5


@pytest.mark.parametrize("text,values,why", [
    ("2^10", [1024.0], "a power is its value, not 2 and 10"),
    ("2^{10} = 1024", [1024.0, 1024.0], "LaTeX braces"),
    ("10²", [100.0], "a superscript is a power"),
    ("x^2 = 49", [49.0], "an exponent alone is not a number"),
    ("x₂ = 3", [3.0], "nor is an index"),
    ("2^x", [], "a base with a symbolic exponent is refused"),
    ("9^99", [], "over 60 digits: refused, never cut"),
    ("**85**", [85.0], "bold, not a power"),
    ("3½", [3.5], "a mixed number"),
    ("1,5", [1.0, 5.0], "a comma not before three digits separates"),
    ("1 085", [1085.0], "one space before three digits groups, as a comma does"),
    ("12 3", [12.0, 3.0], "any other space separates"),
    ("1\\,085", [1085.0], "LaTeX thin space: the same rule"),
])
def test_reading_rules(text, values, why):
    assert _values(text) == values, why


def test_canonical_keeps_ascii_and_maps_every_variant():
    assert canonical("plain ascii 1 - 2") == "plain ascii 1 - 2"
    assert {canonical(d) for d in DASHES} == {"-"}
    assert {canonical(s) for s in SPACES} == {" "}
    assert {canonical(m) for m in INVISIBLE} == {""}


# ---------------------------------------------------------------- exact_match

BASES = ["C", "A", "F", "x", "Go", "2", "10", "1", "B"]
SUFFIXES = ["++", "#", "+", "^2", "^10", "*", "-", "/2", ",5", ".5", "'", "#2", "=1", "&B", "@"]
DRESS = ["{}", "**{}**", "({})", "{}.", "The answer: {}", "\\boxed{{{}}}", "<answer>{}</answer>"]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_exact_match_never_pays_a_prefix_before_a_symbol(suffix):
    exact = get("exact_match")
    for base in BASES:
        gold = base + suffix
        for dress in DRESS[:1] + DRESS[2:4] + DRESS[5:]:
            assert exact([dress.format(base)], answer=[gold]) == [0.0], (base, gold, dress)
            assert exact([dress.format(gold)], answer=[base]) == [0.0], (gold, base, dress)
            assert exact([dress.format(gold)], answer=[gold]) == [1.0], (gold, dress)
        if "*" not in suffix:  # **A*** cannot say where its emphasis ends
            assert exact(["**" + gold + "**"], answer=[gold]) == [1.0]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_contains_answer_finds_whole_tokens_only(suffix):
    contains = get("contains_answer")
    for base in BASES:
        gold = base + suffix
        assert contains([f"I would say {gold} here"], answer=[base]) == [0.0], (gold, base)
        assert contains([f"I would say {base} here"], answer=[gold]) == [0.0], (base, gold)
        assert contains([f"I would say ({gold}) here."], answer=[gold]) == [1.0], gold


@pytest.mark.parametrize("answer,gold,params,expected,why", [
    ("C", "C++", {}, 0.0, "issue case"), ("C", "C#", {}, 0.0, "issue case"), ("A", "A+", {}, 0.0, "issue case"),
    ("210", "2^10", {}, 0.0, "issue case"), ("15", "1,5", {}, 0.0, "issue case"),
    ("Paris.", "Paris", {}, 1.0, "sentence punctuation is dropped"),
    ("“Paris”", "paris", {}, 1.0, "quotes and case"),
    ("U.S.", "US", {}, 1.0, "dots between letters are spelling"),
    ("1,000", "1000", {}, 1.0, "thousands separators"),
    ("$18", "18", {}, 1.0, "currency sign"),
    ("Paris", "paris", {"case_sensitive": True}, 0.0, "case_sensitive compares case"),
    ("Paris.", "Paris", {"ignore_punctuation": False}, 0.0, "ignore_punctuation false keeps the dot"),
    ("1 000", "1000", {}, 0.0, "whitespace kept by default"),
    ("1 000", "1000", {"ignore_whitespace": True}, 1.0, "ignore_whitespace joins tokens"),
    ("1\u00a0000", "1 000", {}, 1.0, "every space kind is a space"),
    ("－5", "-5", {}, 1.0, "every minus is a minus"),
    ("Par\u200bis", "Paris", {}, 1.0, "zero-width characters are nothing"),
    ("−5", "5", {}, 0.0, "a minus is not dropped"),
])
def test_exact_match_options(answer, gold, params, expected, why):
    assert get("exact_match", **params)([answer], answer=[gold]) == [expected], why


# ------------------------------------------------------------- hostile input

PIECES = ["\n", " ", "1", "-", ".", ",", "1 ", "1,", "1.", "-1", "\n1", " \n", "A:\n", "^", "1^", "**", "\\frac{1",
          "1 000 ", "\u00a0", "\u200b", "－", "(", "answer is ", "\\boxed{", "<answer>", "1\u2009"]
PREFIXES = ["", "The answer is ", "<answer>"]


def _readers():
    yield from ((name, get(name, **params), gold) for name, params, gold in [
        ("numeric_match", {}, "85"), ("numeric_match", {"take": "first"}, "85"), ("numeric_match", {"take": "line"}, "85"),
        ("numeric_closeness", {}, "85"), ("exact_match", {}, "85"), ("contains_answer", {}, "85"),
        ("multiple_choice", {}, "C"), ("repetition_penalty", {}, None),
    ])
    yield "plain_text", lambda texts, **_: [_numbers.plain_text(t) for t in texts], None


@pytest.mark.parametrize("piece", PIECES)
def test_hostile_text_reads_in_under_a_tenth_of_a_second(piece):
    for name, reward, gold in _readers():
        for prefix in PREFIXES:
            text = (prefix + piece * (100_000 // len(piece)))[:100_000] + "</answer>"
            columns = {} if gold is None else {"answer": [gold]}
            best = min(_timed(reward, text, columns) for _ in range(3))
            assert best < 0.1, (name, piece, prefix, best)


def _timed(reward, text, columns) -> float:
    # CPU time of this process, best of 3: the work done, not how busy a shared machine is.
    start = time.process_time()
    reward([text], **columns)
    return time.process_time() - start


def test_restated_expression_reads_the_canonical_line():
    # Fullwidth digits, a minus sign and an invisible mark spell the same expression.
    reward = get("restated_expression")
    texts = ["４７ + ３８ = 85", "47 − 3 = 44", "4\u200b7 + 38 = 85", "47 + 380 = 427"]
    assert reward(texts, expression=["47 + 38", "47 - 3", "47 + 38", "47 + 38"]) == [1.0, 1.0, 1.0, 0.0]
