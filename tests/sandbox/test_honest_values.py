"""False negatives and bad test columns: correct programs score 1.0, broken gold data raises.

Correct programs return standard-library value types, lean on their own imports
the way MBPP's tests do, or come with APPS call-based rows: each must score
1.0 (and a wrong variant 0.0, so the test can tell). Test columns that cannot
be graded raise a ValueError that names the row, never a silent 0.
"""
import textwrap

import pytest

from grpokit.rewards import get
from grpokit.rewards.code import build_job
from grpokit.sandbox import Limits

VALUE_TYPES = [
    # (solution body, test, why)
    ("from collections import Counter\ndef f(s):\n    return Counter(s)",
     "from collections import Counter\nassert f('abca') == Counter({'a': 2, 'b': 1, 'c': 1})\nassert f('aab').most_common(1) == [('a', 2)]",
     "Counter, with its methods"),
    ("from collections import defaultdict\ndef f(pairs):\n    d = defaultdict(list)\n    for k, v in pairs:\n        d[k].append(v)\n    return d",
     "assert f([(1, 'a'), (1, 'b')]) == {1: ['a', 'b']}", "defaultdict compares as a dict"),
    ("from collections import OrderedDict\ndef f():\n    return OrderedDict([('b', 1), ('a', 2)])",
     "from collections import OrderedDict\nassert f() == OrderedDict([('b', 1), ('a', 2)])\nassert list(f()) == ['b', 'a']",
     "OrderedDict keeps its order"),
    ("from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n    return P(1, 2)",
     "assert f() == (1, 2) and f().x == 1 and f().y == 2", "namedtuple fields by name"),
    ("from fractions import Fraction\ndef f(a, b):\n    return Fraction(a, b)",
     "from fractions import Fraction\nassert f(2, 4) == Fraction(1, 2)", "Fraction"),
    ("from decimal import Decimal\ndef f():\n    return Decimal('0.1') + Decimal('0.2')",
     "from decimal import Decimal\nassert f() == Decimal('0.3')", "Decimal"),
    ("def f(s):\n    return bytearray(s, 'ascii')", "assert f('hi') == bytearray(b'hi') == b'hi'", "bytearray"),
    ("import enum\nclass Color(enum.IntEnum):\n    RED = 1\ndef f():\n    return Color.RED",
     "assert f() == 1", "IntEnum members compare as their value"),
    ("import math\ndef area(r):\n    return math.pi * r * r",
     "assert math.isclose(area(2), 4 * math.pi)", "MBPP: the test uses the solution's import math"),
    ("import re as regex\ndef words(s):\n    return regex.findall(r'\\w+', s)",
     "assert words('a b') == regex.findall(r'\\w+', 'a b')", "a module imported under another name"),
]


@pytest.fixture(scope="module")
def scorer(sandbox_pool):
    return get("code_execution", timeout=3.0)


@pytest.mark.parametrize("program,test,why", VALUE_TYPES, ids=[v[2] for v in VALUE_TYPES])
def test_correct_programs_returning_stdlib_values_score_one(program, test, why, scorer):
    assert scorer([program], tests=[[test]]) == [1.0]


def test_a_wrong_stdlib_value_still_fails(scorer):
    wrong = "from collections import Counter\ndef f(s):\n    return Counter(s + 'x')"
    assert scorer([wrong], tests=[[VALUE_TYPES[0][1]]]) == [0.0]


APPS_ROW = {"fn_name": "add", "inputs": [[1, 2], [-1, 1], [[1], [2]]], "outputs": [3, [0], [1, 2]]}

APPS = [
    ("def add(a, b):\n    return a + b", 1.0, "a function: one-element list outputs match the bare value"),
    ("class Solution:\n    def add(self, a, b):\n        return a + b", 1.0, "LeetCode-style Solution method"),
    ("def add(a, b):\n    return tuple(a + b) if isinstance(a, list) else a + b", 1.0, "tuple results compare as lists"),
    ("def add(a, b):\n    return a - b", 0.0, "a wrong function"),
    ("import sys\nprint(3)", 0.0, "a stdin/stdout program is not graded as one here"),
]


@pytest.mark.parametrize("program,expected,why", APPS, ids=[a[2] for a in APPS])
def test_apps_call_based_rows_are_graded_as_calls(program, expected, why, scorer):
    assert scorer([program], tests=[APPS_ROW]) == [expected]


def test_apps_row_as_json_string(scorer):
    import json

    assert scorer(["def add(a, b):\n    return a + b"], tests=[json.dumps(APPS_ROW)]) == [1.0]


BAD_COLUMNS = [
    # (tests column, entry_point column, message, why)
    (5, None, "`tests` column must hold one entry per completion", "a bare number"),
    ([["assert f() == 1"]], None, "1 entries for 2 completions", "a short column is not padded"),
    (["def check(c):\n    assert c() == 1"] * 2, ["f", "not a name"], "row 1: entry_point", "bad entry point names its row"),
    ([{"fn_name": "f", "inputs": [[1]], "outputs": []}] * 2, None, "row 0: APPS row has 1 inputs", "APPS shape"),
]


@pytest.mark.parametrize("tests,entry_point,message,why", BAD_COLUMNS, ids=[b[3] for b in BAD_COLUMNS])
def test_bad_test_columns_raise_naming_the_row(tests, entry_point, message, why):
    reward = get("code_execution", timeout=1.0)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("`", ".")):
        reward(["def f():\n    return 1"] * 2, tests=tests, entry_point=entry_point)


BROKEN_GOLD = [
    ([["assert f() == 1"], ["assert f() ==="]], [1.0, None], "row 1: test 0 is not valid Python", "syntax error"),
    ([["assert f() == 1"], ["assert f() == '\x00'"]], [1.0, None], "row 1", "NUL byte"),
    ([["assert f() == '\ud800'"], ["assert f() == 1"]], [None, 1.0], "row 0", "lone surrogate"),
]


@pytest.mark.parametrize("tests,expected,message,why", BROKEN_GOLD, ids=[b[3] for b in BROKEN_GOLD])
def test_gold_tests_that_do_not_compile_score_none_naming_the_row(tests, expected, message, why):
    # Not a silent 0 for every program: the row is unjudged (None, which TRL skips) and the warning says which.
    with pytest.warns(RuntimeWarning, match=message):
        assert get("code_execution", timeout=2.0)(["def f():\n    return 1"] * 2, tests=tests) == expected


def test_entry_point_that_shadows_a_builtin_is_still_bound():
    # HumanEval-style rows name their function explicitly; that name reaches the tests even if it is a builtin's.
    job = build_job("def sum(xs):\n    return -1", "def check(candidate):\n    assert candidate([1]) == -1\n",
                    "sum", Limits())
    assert job.entry_point == "sum"
    assert get("code_execution", timeout=2.0)([job.program], tests=[{"test": job.tests[0], "entry_point": "sum"}]) \
        == [1.0]


def test_builtin_named_helpers_are_not_reachable_without_an_entry_point(scorer):
    program = textwrap.dedent("""
        def max(*args):
            return 0
        def f():
            return 5
        """)
    assert scorer([program], tests=[["assert max(f(), 1) == 5"]]) == [1.0]
