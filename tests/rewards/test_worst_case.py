"""Hostile text costs the rewards with user patterns, the math screen and the letter reader at most
0.1 s per completion (the reduced battery of tests/helpers/hostile_completions.py;
benchmarks/reward_worst_case.py runs it in full).

Timed as CPU seconds of the calling thread: the machine running the tests is shared, and
wall time there measures the neighbours. The math checks' own processes are covered by
what reaches them: a huge number never does, and the rest is cut to MAX_SENT_CHARS.
"""
from __future__ import annotations

import time

import pytest

from tests.helpers.hostile_completions import PARAMS, battery, columns_for
from grpokit.rewards import get
from grpokit.sandbox import mathcheck

BOUND_S = 0.1
OWNED = ["regex_format", "json_schema", "multiple_choice", "math_equivalence"]
BATTERY = battery(quick=True)


@pytest.mark.parametrize("name", OWNED)
def test_hostile_text_costs_at_most_a_tenth_of_a_second(name):
    func = get(name, **PARAMS.get(name, {}))
    columns = columns_for(1, name)
    func(["warm up: 42"], **columns)
    slow = {}
    for label, text in BATTERY.items():
        start = time.thread_time()
        func([text], **columns)
        took = time.thread_time() - start
        if took > BOUND_S:
            slow[label] = round(took, 3)
    assert not slow, slow


def test_math_workers_never_see_a_huge_number_or_a_long_text():
    checker = mathcheck.MathChecker(workers=1)
    sent = []
    checker._run = lambda jobs, results, limit, local: sent.extend(job[2] for job in jobs)  # record, do not check
    huge = [text for label, text in BATTERY.items() if label.startswith("huge_")]
    checker.check_many([("42", text) for text in huge])
    assert sent == []
    checker.check_many([("42", text) for label, text in BATTERY.items() if not label.startswith("huge_")])
    assert sent and all(len(text) <= mathcheck.MAX_SENT_CHARS for text in sent)


def test_a_schema_pattern_that_backtracks_does_not_pay_and_does_not_stall():
    # The e-mail regex of the battery's schema takes Python's `re` seconds on this string.
    func = get("json_schema", **PARAMS["json_schema"])
    start = time.thread_time()
    assert func(['{"email": "' + "a" * 26 + '!"}'])[0] < 1.0
    assert func(['{"email": "bob@example.com", "answer": 42}']) == [1.0]
    assert time.thread_time() - start < BOUND_S
