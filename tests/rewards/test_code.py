"""Code rewards: HumanEval end to end, every `tests` shape, syntax checking, never raising."""
import ast
import gzip
import json
import time
import warnings

import pytest

from grpokit.rewards import RewardConfigError, get, names
from grpokit.rewards.code import MAX_PROGRAM_CHARS, build_job, program_of
from grpokit.sandbox import Limits


@pytest.fixture(scope="module")
def code_execution():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial isolation warns; the scores are what we check here
        yield get("code_execution", timeout=10.0)


@pytest.fixture
def humaneval(shared_data):
    with gzip.open(shared_data / "humaneval.jsonl.gz", "rt") as fh:
        return [json.loads(line) for line in fh]


class _DropReturns(ast.NodeTransformer):
    def visit_Return(self, node):
        return ast.Pass()


def _without_returns(row) -> str:
    # Only the solution's function loses its returns; helpers the prompt defines keep theirs.
    tree = ast.parse(row["prompt"] + row["canonical_solution"])
    tree.body = [_DropReturns().visit(n) if isinstance(n, ast.FunctionDef) and n.name == row["entry_point"] else n
                 for n in tree.body]
    return ast.unparse(ast.fix_missing_locations(tree))


def test_humaneval_canonical_solutions_all_score_one(code_execution, humaneval):
    completions = [f"```python\n{r['prompt']}{r['canonical_solution']}```" for r in humaneval]
    scores = code_execution(completions, prompts=[r["prompt"] for r in humaneval], tests=[r["test"] for r in humaneval],
                            entry_point=[r["entry_point"] for r in humaneval])
    failed = [r["task_id"] for r, s in zip(humaneval, scores) if s != 1.0]
    assert len(scores) == 164 and failed == []


def test_humaneval_solutions_without_returns_all_score_zero(code_execution, humaneval):
    completions = [_without_returns(r) for r in humaneval]
    # HumanEval rows also work as one dict per row.
    tests = [{"test": r["test"], "entry_point": r["entry_point"]} for r in humaneval]
    scores = code_execution(completions, prompts=[r["prompt"] for r in humaneval], tests=tests)
    passed = [r["task_id"] for r, s in zip(humaneval, scores) if s != 0.0]
    assert passed == []


# HumanEval rows whose tests call a helper the prompt defines; a completion that redefines
# the helper (identity, or a polynomial that is 0 everywhere) must not pass with a wrong answer.
FORGED_HELPERS = [
    ("HumanEval/32", "def poly(xs, x):\n    return 0\n\ndef find_zero(xs):\n    return 0.0\n"),
    ("HumanEval/32", "poly = lambda xs, x: 0.0\n\ndef find_zero(xs):\n    return 1.0\n"),
    ("HumanEval/38", "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n"),
    ("HumanEval/50", "def encode_shift(s):\n    return s\n\ndef decode_shift(s):\n    return s\n"),
]


@pytest.mark.parametrize("task_id,completion", FORGED_HELPERS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(FORGED_HELPERS)])
def test_helpers_the_prompt_defines_are_bound_from_the_prompt(task_id, completion, code_execution, humaneval):
    row = next(r for r in humaneval if r["task_id"] == task_id)
    honest = row["prompt"] + row["canonical_solution"]
    chat = [{"role": "user", "content": f"Complete this:\n```python\n{row['prompt']}```"}]
    for prompt in (row["prompt"], chat):
        scores = code_execution([completion, honest], prompts=[prompt] * 2, tests=[row["test"]] * 2,
                                entry_point=[row["entry_point"]] * 2)
        assert scores == [0.0, 1.0], "text prompt" if isinstance(prompt, str) else "chat prompt"


def test_prompt_stubs_are_not_bound_over_the_program():
    # The prompt's stub of the function to write (only a docstring) never replaces the program's.
    job = build_job("def f(x):\n    return x + 1\n", "assert f(1) == 2", None, Limits(),
                    prompt='def f(x):\n    """Add one."""\n')
    assert job.helpers is None
    job = build_job("def g(x):\n    return 0\n", "assert h(g(1)) == 2", None, Limits(),
                    prompt="def h(y):\n    return y + 2\n\ndef g(x):\n    '''Return 0.'''\n")
    assert "def h(" in job.helpers and "def g(" not in job.helpers


SHAPES = [
    # (completion, tests entry, entry_point, kwargs, expected, why)
    ("def f(x):\n    return x + 1", "assert f(1) == 2\nassert f(2) == 3", None, {}, 1.0, "test code string"),
    ("def f(x):\n    return x + 1", ["assert f(1) == 2", "assert f(2) == 4"], None, {}, 0.5, "assert list: share"),
    ("def f(x):\n    return x + 1", ["assert f(1) == 2", "assert f(2) == 4"], None, {"all_or_nothing": True}, 0.0,
     "assert list: all or nothing"),
    ("print(sum(map(int, input().split())))", [{"input": "1 2", "output": "3"}, {"input": "2 2", "output": "5"}],
     None, {}, 0.5, "stdin/stdout cases"),
    ("print(sum(map(int, input().split())))", json.dumps([{"input": "1 2", "output": "3"}]), None, {}, 1.0,
     "cases as a JSON string"),
    ("print(sum(map(int, input().split())))", {"input": ["1 2", "3 4"], "output": ["3", "8"]}, None, {}, 0.5,
     "columnar cases (code_contests style)"),
    ("print(sum(map(int, input().split())))", json.dumps({"inputs": ["1 2"], "outputs": ["3"]}), None, {}, 1.0,
     "APPS-style JSON with plural keys"),
    ("def g(x):\n    return -x", "def check(candidate):\n    assert candidate(2) == -2\n", "g", {}, 1.0,
     "HumanEval check() called on entry_point"),
    ("def g(x):\n    return x", "def check(candidate):\n    assert candidate(2) == -2\n", "g", {}, 0.0,
     "HumanEval check() failing"),
    ("def g(x):\n    return -x", {"test": "def check(c):\n    assert c(1) == -1\n", "entry_point": "g"}, None, {}, 1.0,
     "HumanEval dict entry"),
    ("Sure!\n```python\ndef f():\n    return 1\n```\nand ```python\ndef f():\n    return 2\n```", ["assert f() == 2"],
     None, {}, 1.0, "the last fenced block is the program"),
    ("def f(:", ["assert f() == 1"], None, {}, 0.0, "syntax error scores 0"),
    ("def f():\n    return 1", None, None, {}, None, "no tests: cannot score"),
    ("def f():\n    return 1", [], None, {}, None, "empty test list: cannot score"),
]


@pytest.mark.parametrize("completion,tests,entry_point,kwargs,expected,why", SHAPES, ids=[s[-1] for s in SHAPES])
def test_tests_column_shapes(completion, tests, entry_point, kwargs, expected, why):
    reward = get("code_execution", timeout=3.0, **kwargs)
    assert reward([completion], tests=[tests], entry_point=[entry_point]) == [expected]


def test_conversational_completions_are_scored():
    reward = get("code_execution", timeout=3.0)
    completion = [{"role": "assistant", "content": "```python\ndef f():\n    return 5\n```"}]
    assert reward([completion], tests=[["assert f() == 5"]]) == [1.0]


NASTY = [
    ("\x00" * 1000, 0.0, "NUL bytes"),
    ("?" * 1_000_000, 0.0, "a 1 MB completion"),
    ("\ud800\udfff broken surrogates", 0.0, "lone surrogates"),
    ("```python\n", 1.0, "an empty unterminated fence: an empty program compiles"),
    ("(" * 10_000, 0.0, "deep nesting the parser refuses"),
]


@pytest.mark.parametrize("completion,syntax,why", NASTY, ids=[n[-1] for n in NASTY])
def test_rewards_never_raise_on_model_output(completion, syntax, why):
    assert get("code_syntax_valid")([completion]) == [syntax]
    # None of them defines f, so the tests fail; nothing raises.
    assert get("code_execution", timeout=2.0)([completion], tests=[["assert f() == 1"]]) == [0.0]


SYNTAX = [
    ("def f():\n    return 1", 1.0, "valid program"),
    ("```python\nprint('hi')\n```", 1.0, "fenced program"),
    ("def f(:\n", 0.0, "syntax error"),
    ("return 5", 0.0, "compile-time error: return outside a function"),
    ("import os\nos._exit(1)", 1.0, "never executed, so exiting cannot matter"),
]


@pytest.mark.parametrize("completion,expected,why", SYNTAX, ids=[s[-1] for s in SYNTAX])
def test_code_syntax_valid(completion, expected, why):
    assert get("code_syntax_valid")([completion]) == [expected]


def test_a_program_past_the_length_cap_scores_the_floor_uncompiled():
    # 200 kB of `[1, 2, 3] ` is one valid expression: compiling it alone took 0.1 s a completion.
    chain = "x = [1, 2, 3]" + " [0]" * 20_000
    assert len(chain) > MAX_PROGRAM_CHARS
    syntax = get("code_syntax_valid")
    syntax(["warm up = 1"])
    start = time.thread_time()
    assert syntax([chain]) == [0.0]
    assert time.thread_time() - start < 0.02
    solution = "\ndef f():\n    return 1\n"
    under, over = ("# " + "pad " * size + solution for size in (15_000, 17_000))  # 60 kB and 68 kB
    fn = get("code_execution", timeout=2.0)
    assert fn([under, over], tests=[["assert f() == 1"]] * 2) == [1.0, 0.0]
    assert fn([chain], tests=[None]) == [None]  # no tests: nothing to judge, long or not


def test_malformed_tests_entry_names_the_row():
    with pytest.raises(ValueError, match="row 3"):
        build_job("x = 1", 42, None, Limits(), row_index=3)


BAD_PARAMS = [
    ({"timeout": -1}, "wall_s"),
    ({"memory_mb": 1}, "memory_mb"),
    ({"all_or_nothing": "yes"}, "all_or_nothing"),
    ({"budget_s": 0}, "budget_s"),
    ({"workers": 0}, "workers"),
    ({"timout": 1}, "did you mean 'timeout'"),
]


@pytest.mark.parametrize("params,message", BAD_PARAMS, ids=[m for _, m in BAD_PARAMS])
def test_bad_parameters_fail_at_construction(params, message):
    with pytest.raises(RewardConfigError, match=message):
        get("code_execution", **params)


def test_registered_with_stable_names_and_docs():
    assert {"code_execution", "code_syntax_valid"} <= set(names())
    assert get("code_execution").__name__ == "code_execution"
    assert program_of("no fence here") == "no fence here"


def test_step_budget_scores_unfinished_programs_none_and_says_so():
    reward = get("code_execution", timeout=30.0, budget_s=0.5)
    slow = "```python\nimport time\ntime.sleep(30)\n```"
    with pytest.warns(RuntimeWarning, match="could not be judged"):
        scores = reward([slow, slow], tests=[["assert True"], ["assert True"]])
    assert scores == [None, None]  # skipped by TRL, not a silent 0


def test_own_pool_when_workers_given():
    reward = get("code_execution", workers=1, timeout=3.0)
    assert reward(["def f():\n    return 3"], tests=[["assert f() == 3"]]) == [1.0]
