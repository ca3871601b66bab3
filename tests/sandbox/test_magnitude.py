"""The size screen: any spelling of a huge number is refused before sympy, cheaply; ordinary answers pass."""
from __future__ import annotations

import random
import time

import pytest

from grpokit.sandbox.magnitude import too_big

# Every way an answer can bracket a sub-expression.
BRACKETS = [("{", "}"), ("(", ")"), ("\\left(", "\\right)"), ("{(", ")}"), ("\\left[", "\\right]"), ("", "")]


def _wrap(rng: random.Random, inner: str) -> str:
    opening, closing = rng.choice(BRACKETS)
    return f"{opening}{inner}{closing}"


def _huge(rng: random.Random) -> str:
    """One expression whose value has more than 20,000 digits (or a factorial past 2000), spelled at random."""
    power = rng.choice(["^", "**"])
    big = rng.choice(["10^{7}", "10**7", "1000000", "1{,}000{,}000", "2^{30}", "9^{9}", "5000"])
    gamma = rng.choice(["\\Gamma", "factorial", "gamma", "Γ"])
    binom = rng.choice(["\\binom", "\\dbinom", "\\tbinom"])
    nine = "9" + power + _wrap(rng, "9")
    huge_top = rng.choice(["10^{7}", "10**8", "1{,}000{,}000", "2^{30}"])
    ten = "10" + power + _wrap(rng, "10")
    kinds = [
        lambda: "9" + power + _wrap(rng, nine),  # a tower
        lambda: rng.choice(["10", "2", "7"]) + power + _wrap(rng, ten),
        lambda: _wrap(rng, big) + "!",  # a factorial of a big literal or power
        lambda: gamma + _wrap(rng, big),
        lambda: binom + "{" + huge_top + "}{" + rng.choice(["500000", "10^{6}", "2^{20}"]) + "}",
        lambda: "binomial(" + huge_top + ", 300000)",
        lambda: "e^{" + _wrap(rng, "10^{9}") + "}",
        lambda: "\\exp" + _wrap(rng, "10^{6}"),
        lambda: _wrap(rng, _wrap(rng, "2^{3}")) + "^{" + str(rng.randint(10**6, 10**9)) + "}",  # a bracketed base
        lambda: _wrap(rng, "100!") + "!",  # a factorial of a factorial
    ]
    core = rng.choice(kinds)()
    # Around it, what an answer may also hold: signs, sums, products, fractions.
    return rng.choice([core, f"-{core}", f"1+{core}", f"2\\cdot {core}", f"\\frac{{{core}}}{{3}}", f"x = {core}"])


ORDINARY = [
    "42", "-3.5", "\\frac{1}{2}", "x^2+2x+1", "(x+1)^2", "e^{i\\pi}+1", "e^{-\\frac{x^2}{2\\sigma^2}}",
    "2^{10}", "10^{100}", "\\sqrt{2}", "100!", "2000!", "\\binom{10}{3}", "\\binom{10^{7}}{2}", "5!!",
    "(2^{3})!", "(n^2)!", "\\{1, 2\\}", "(0, \\frac{1}{2}]", "1{,}000{,}000", "2^{2^{2^{2^{2}}}}",
    "3\\times 10^{8}", "\\Gamma(5)", "\\log(10^{9})", "\\text{(B)}", "The answer is 42 dollars.",
]


def test_every_generated_huge_number_is_screened_quickly():
    rng = random.Random(34)
    for _ in range(500):
        answer = _huge(rng)
        start = time.perf_counter()
        why = too_big(answer)
        assert time.perf_counter() - start < 0.05, answer  # under load; typically 0.05 ms
        assert why is not None, answer


@pytest.mark.parametrize("answer", ORDINARY)
def test_ordinary_answers_pass(answer):
    assert too_big(answer) is None


@pytest.mark.parametrize("text", [
    "(" * 5000 + "1" + ")" * 5000,        # brackets nested past any answer
    "-" * 20000 + "1",                    # a run of signs
    "9^" * 5000 + "9",                    # a tower of 5000 levels
    "{" * 10000,                          # unclosed
    "x " * 10000,                         # prose-sized juxtaposition
    "\\frac" * 5000,                      # commands with no arguments
])
def test_any_text_is_read_in_linear_time_without_raising(text):
    start = time.perf_counter()
    too_big(text)
    assert time.perf_counter() - start < 0.1


@pytest.mark.parametrize("layout", ["$\\boxed{%s}$", "So the answer is $%s$." + " And that is all there is to say." * 30])
def test_math_equivalence_scores_huge_answers_without_sympy(layout):
    # The issue's batch: eight huge numbers written past the old screen took 17 s (each hit the
    # 3 s limit). Screened, they never reach a worker: well under 0.1 s each, no worker started.
    from grpokit.rewards import get
    from grpokit.sandbox.mathcheck import MathChecker

    reward = get("math_equivalence")
    checker = MathChecker(workers=1)
    reward.settings["checker"]._value = checker  # this test's own pool: it must stay unused
    rng = random.Random(8)
    issue = ["9^{\\left(9^{9}\\right)}", "{1000000}!", "\\Gamma(10^{7})"]
    answers = issue + [_huge(rng) for _ in range(5)]
    start = time.perf_counter()
    scores = reward([layout % a for a in answers], answer=["5"] * len(answers))
    elapsed = time.perf_counter() - start
    assert elapsed < 0.1 * len(answers), elapsed
    assert checker.stats()["screened"] == len(answers) and checker.stats()["workers_started"] == 0
    assert len(scores) == len(answers)
    checker.close()
