"""The hard-timeout math checker: verdicts, screening, limits, recovery, threads."""
from __future__ import annotations

import gc
import os
import threading
import time

import pytest

from grpokit.sandbox import mathcheck
from grpokit.sandbox.mathcheck import MathChecker, fast_verdict, gold_text, pathological

# A power with a parenthesised base: makes sympy compute 8^100000000 exactly, which takes
# far longer than any limit. The screen refuses it (grpokit.sandbox.magnitude), so the tests
# that need a pair to hang inside a worker turn the screen off (`unscreened`).
HANGS = "$\\left(2^{3}\\right)^{100000000}$"


@pytest.fixture
def unscreened(monkeypatch):
    from grpokit.sandbox import magnitude

    monkeypatch.setattr(magnitude, "MAX_DIGITS", 1e15)


@pytest.fixture(scope="module")
def checker():
    checker = MathChecker(workers=2, timeout=5.0)  # generous for verdicts on a loaded machine
    assert checker.warm(wait=True)  # every worker has imported sympy: timings below measure checks only
    yield checker
    checker.close()


VERDICTS = [
    # (gold, prediction, expected)
    ("\\frac{1}{2}", "so $\\boxed{0.5}$", True),  # fractions vs decimals
    ("1/2", "The answer is $0.5$", True),  # no box: math-verify finds the last expression
    ("\\{1,2\\}", "$\\boxed{\\{2,1\\}}$", True),  # set order
    ("(0,1]", "$\\boxed{(0, 1]}$", True),  # interval
    ("(0,1]", "$\\boxed{[0, 1]}$", False),  # closed is not half-open
    ("x^2+2x+1", "$\\boxed{(x+1)^2}$", True),  # symbolic equality
    ("3", "$\\boxed{4}$", False),  # wrong
    ("\\text{(B)}", "$\\boxed{\\text{(B)}}$", True),  # identical text answers
    ("#### 72", "$\\boxed{72}$", True),  # GSM8K gold
]


@pytest.mark.parametrize("gold,pred,expected", VERDICTS)
def test_verdicts(checker, gold, pred, expected):
    assert checker.check(gold, pred) is expected


SCREEN = [
    # (answer, pathological?)
    ("9^{9^{9^{9}}}", True),  # power tower in braces
    ("9^9^9", True),  # bare power tower
    ("9**9**9", True),  # Python-style tower
    ("10^{100000}", True),  # a 100,001-digit result
    ("100000!", True),  # huge factorial
    ("(10!)!", True),  # factorial of a factorial: 3,628,800! is out of reach
    ("(2^{20})!", True),  # factorial of a power likewise
    ("(2^{3})!", False),  # 8! is small
    ("(n^2)!", False),  # symbolic: left to sympy
    ("5!!", False),  # a small double factorial is fine (15)
    ("9" * 500, True),  # giant literal
    ("x" * 2000, True),  # wall of text
    ("2^{10}", False),  # an ordinary power
    ("2^{2^{2^{2^{2}}}}", False),  # a small tower: 2^65536 has 19,729 digits, sympy copes
    ("2^{2^{2^{2^{2^{2}}}}}", True),  # one level more does not
    ("e^{x^2}", False),  # a symbolic tower (a Gaussian) is harmless
    ("(x^2)^3", False),  # so is a power of a power of a variable
    ("x^2 + y^2 + z^2", False),  # many powers, no tower
    ("10!", False),  # a small factorial
    ("\\frac{1}{2}", False),  # everyday LaTeX
    ("\\left(2^{3}\\right)^{100000000}", True),  # a bracketed base: 90 million digits
    ("9^{\\left(9^{9}\\right)}", True),  # a tower with \\left( \\right) in the exponent
    ("{1000000}!", True),  # a braced factorial
    ("\\Gamma(10^{7})", True),  # Gamma of a power
]


@pytest.mark.parametrize("answer,expected", SCREEN)
def test_screen(answer, expected):
    assert (pathological(answer) is not None) is expected


FAST = [
    # (gold, answer, verdict)
    ("42", "42", True),  # identical
    ("1,000", "1000", True),  # separators
    ("0.5", ".5", True),  # same decimal written differently
    ("3", "4", False),  # two different integers: certain without sympy
    ("0.333333", "0.3333333", None),  # decimals go to math-verify, which rounds
    ("\\frac12", "0.5", None),  # needs math-verify
    ("", "5", None),  # nothing to compare
]


@pytest.mark.parametrize("gold,answer,verdict", FAST)
def test_fast_path(gold, answer, verdict):
    assert fast_verdict(gold, answer) is verdict


GOLDS = [
    # (gold cell, what math-verify is given)
    ("\\frac{1}{2}", "$\\frac{1}{2}$"),  # bare LaTeX gets delimiters
    ("\\$6", "$\\$6$"),  # an escaped dollar is not a delimiter
    ("$5$", "$5$"),  # already delimited
    ("Natalia sold 48/2 = 24 clips\n#### 72", "$72$"),  # GSM8K
]


@pytest.mark.parametrize("gold,expected", GOLDS)
def test_gold_text(gold, expected):
    assert gold_text(gold) == expected


def test_hanging_pair_returns_within_limit_and_others_are_scored(checker, load_slack, unscreened):
    assert checker.warm(wait=True)
    before = checker.stats()["timeouts"]
    slack = load_slack(lambda: checker.check_many([("2", "$\\boxed{1+1}$"), ("3", "$\\boxed{2+1}$")], timeout=1.0))
    start = time.monotonic()
    out = checker.check_many([("5", HANGS), ("2", "$\\boxed{1+1}$"), ("3", "$\\boxed{2+1}$")], timeout=1.0)
    elapsed = time.monotonic() - start
    assert out == [None, True, True]
    assert elapsed < 1.0 + slack, (elapsed, slack)  # the 1 s limit, plus what this machine's load costs now
    assert checker.stats()["timeouts"] == before + 1
    assert checker.check("2", "$\\boxed{2}$") is True  # the pool recovered


def test_hanging_pair_from_a_thread(checker, load_slack, unscreened):
    # The hard limit does not rely on signals, so it holds off the main thread too.
    assert checker.warm(wait=True)
    slack = load_slack(lambda: checker.check_many([("2", "$1+1$")], timeout=1.0))
    out = []
    start = time.monotonic()
    thread = threading.Thread(target=lambda: out.append(checker.check_many([("5", HANGS), ("2", "$1+1$")], timeout=1.0)))
    thread.start()
    thread.join(30)
    assert out == [[None, True]]
    assert time.monotonic() - start < 1.0 + slack


def test_screened_input_skips_the_workers(checker):
    before = checker.stats()
    assert checker.check("5", "$\\boxed{9^{9^{9^{9}}}}$") is None
    assert checker.check("5", "$\\boxed{100000!}$") is None  # huge factorial
    after = checker.stats()
    assert after["screened"] == before["screened"] + 2
    assert after["checked"] == before["checked"]
    # An identical pathological answer is settled by the fast path before the screen.
    assert checker.check("9^{9^{9}}", "$\\boxed{9^{9^{9}}}$") is True


def test_killed_worker_is_replaced(checker):
    # A worker that dies (OOM killer, segfault in a C extension) costs a retry, not the batch.
    assert checker.warm(wait=True)  # the replacement from the timeout test may still be starting
    before = checker.stats()["workers_started"]
    checker._workers[0].proc.kill()
    assert checker.check_many([("1", "$\\boxed{1}$"), ("\\frac14", "$0.25$"), ("2", "$1+1$")]) == [True, True, True]
    assert checker.stats()["workers_started"] == before + 1


def test_called_from_threads(checker):
    # math-verify's signal.alarm raises outside the main thread; the pool does not care.
    results = {}

    def run(n):
        results[n] = checker.check_many([(str(n), f"$\\boxed{{{n}}}$"), (str(n), "$\\boxed{-1}$")])

    threads = [threading.Thread(target=run, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {n: [True, False] for n in range(3)}


def test_several_readings_of_one_answer(checker):
    # A caller unsure how to read an answer may send readings; any equivalent one counts.
    assert checker.check("18", ["$18 dollars$", "18 dollars"]) is True
    assert checker.check("18", ["$17$", "17"]) is False


def test_workers_that_cannot_start_give_none_quickly(monkeypatch, cpu_clock):
    # A broken worker interpreter must not hang the trainer or spawn forever.
    monkeypatch.setattr(mathcheck, "PYTHON", "/bin/false")
    broken = MathChecker(workers=2)
    with cpu_clock() as clock:  # CPU, spawns included: a spawn loop burns it, a loaded machine does not
        assert broken.check_many([("1", "$1$"), ("2", "$3$")]) == [None, None]
        assert broken.check("1", "$\\boxed{1}$") is True  # the fast path still answers
    assert clock.seconds < 10, clock.seconds
    stats = broken.stats()
    assert stats["errors"] == 2
    assert 4 <= stats["start_failures"] <= stats["workers_started"] <= 6  # bounded, not a spawn loop
    broken.close()


def test_bad_timeout_rejected():
    with pytest.raises(ValueError):
        MathChecker(timeout=0)


def test_module_helpers():
    assert mathcheck.check("\\frac{1}{2}", "$0.5$") is True
    assert mathcheck.check_many([("2", "$\\boxed{3}$")]) == [False]
    assert mathcheck.stats()["pairs"] >= 2


def test_forked_child_gets_its_own_workers(checker):
    # A forked child (DataLoader worker) must not talk to the parent's workers
    # through inherited pipes; it starts its own, and the parent's pool is intact.
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        ok = checker.check("2", "$\\boxed{1+1}$") is True
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert checker.check("3", "$\\boxed{1+2}$") is True


def test_collected_checker_stops_its_workers():
    checker = MathChecker(workers=1)
    checker.warm()
    proc = checker._workers[0].proc
    del checker
    gc.collect()
    assert proc.wait(timeout=10) is not None
