"""The built-in tools, the per-episode environment, and the rewards that read a trajectory."""
from __future__ import annotations

import json

import pytest

from grpokit.rewards import get
from grpokit.tools import ToolError, ToolSpec, trainer_kwargs
from grpokit.tools.calculator import calculator
from grpokit.tools.config import EnvironmentConfig


@pytest.mark.parametrize("expression,expected", [
    ("(12 + 7) * 3", "57"),
    ("0.1 + 0.2", "3/10 (about 0.3)"),  # exact: no binary-float 0.30000000000000004
    ("7 / 3", "7/3 (about 2.333333333)"),
    ("2 ** 100", str(2**100)),  # big integers stay exact
    ("-(3 - 10) // 2", "3"),
    ("abs(-4.5) % 2", "1/2 (about 0.5)"),
    ("2 ** -2", "1/4 (about 0.25)"),
])
def test_calculator_is_exact(expression, expected):
    assert calculator(expression) == expected


@pytest.mark.parametrize("expression,message", [
    ("__import__('os').system('id')", "unsupported"),  # calls are not evaluated: nothing runs
    ("open('/etc/passwd').read()", "unsupported"),
    ("(1).__class__", "unsupported"),  # attribute access
    ("9 ** 9 ** 9", "too large"),  # a power tower is refused, not computed
    ("2 ** 0.5", "whole-number exponents"),  # roots are not exact
    ("1 / 0", "division by zero"),
    ("2 ^ 3", "write 2 ** 10"),  # XOR where a power was meant
    ("1 +", "not an arithmetic expression"),
    ("", "give an arithmetic expression"),
    ("(" * 220 + "1" + ")" * 220, "not an arithmetic expression"),  # past the parser's nesting limit
    ("1+" * 300 + "1", "longer than 500 characters"),  # long input is refused before parsing
])
def test_calculator_refuses_what_is_not_plain_arithmetic(expression, message):
    with pytest.raises(ToolError, match=None) as info:
        calculator(expression)
    assert message in str(info.value)


def environment(*names, **settings):
    specs = [ToolSpec(n) if isinstance(n, str) else ToolSpec(*n) for n in names]
    return trainer_kwargs(specs, EnvironmentConfig(**settings))["environment_factory"]


def test_python_state_lasts_one_episode_and_never_leaks(sandbox_pool):
    factory = environment(("python", {"timeout": 2}))
    first, second = factory(), factory()
    first.reset()
    second.reset()
    assert first.python(code="x = 6 * 7\nprint('set')") == "set"
    assert first.python(code="x + 1") == "43"  # an earlier call's variable, and the bare expression printed
    with pytest.raises(ToolError, match="NameError"):
        second.python(code="print(x)")  # another rollout's environment never sees it
    first.reset()  # the next episode
    with pytest.raises(ToolError, match="NameError: name 'x' is not defined"):
        first.python(code="print(x)")


def test_python_errors_come_back_as_a_short_traceback(sandbox_pool):
    env = environment("python")()
    env.reset()
    with pytest.raises(ToolError) as info:
        env.python(code="def f(n):\n    return 10 / n\nprint('before')\nf(0)")
    text = str(info.value)
    # What the model printed, then the traceback through its own cell only (no sandbox internals).
    assert text.startswith("before") and "ZeroDivisionError: division by zero" in text
    assert 'File "<cell 1>", line 2, in f' in text and "grpokit" not in text
    assert env.python(code="print('ok')") == "ok"  # a failed cell is not replayed into the next


def test_long_output_is_cut_with_a_note(sandbox_pool):
    env = environment("python", max_output_chars=100)()
    env.reset()
    out = env.python(code="print('a' * 500)")
    assert out == "a" * 100 + "\n[output truncated: 400 more characters]"


def test_output_past_what_the_sandbox_keeps_says_so(sandbox_pool):
    env = environment("python", max_output_chars=10_000)()
    env.reset()
    out = env.python(code="for i in range(2000):\n    print(i)")
    # The sandbox keeps the tail of each stream: the last lines are there, and a note says the rest is not.
    assert out.startswith("[earlier output cut: only the last") and out.endswith("1998\n1999")


def test_bad_arguments_are_a_tool_error_not_a_crash():
    env = environment("calculator")()
    env.reset()
    with pytest.raises(ToolError, match="bad arguments for calculator"):
        env.calculator(expr="1+1")  # TRL passes the model's argument names through as keywords


def test_search_finds_the_document(tmp_path):
    pytest.importorskip("bm25s", reason="the search tool needs the optional extra grpokit[tools] (bm25s)")
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d) for d in [
        {"title": "France", "text": "Paris is the capital of France."},
        {"title": "Peru", "text": "Lima is the capital of Peru."},
        {"title": "Rivers", "text": "The Nile is a long river in Africa."},
    ]))
    env = environment(("search", {"path": str(docs), "top_k": 2}))()
    env.reset()
    assert env.search(query="capital of Peru").startswith("[1] Peru: Lima is the capital of Peru.")
    assert env.search(query="zebra") == "no documents match"


def test_search_refuses_a_folder_without_documents(tmp_path):
    pytest.importorskip("bm25s", reason="the search tool needs the optional extra grpokit[tools] (bm25s)")
    from grpokit.errors import ConfigError
    from grpokit.tools.config import build_tool
    from grpokit.tools.registry import get_tool

    with pytest.raises(ConfigError, match="holds no documents"):
        build_tool(get_tool("search"), {"path": str(tmp_path)}, "tools[0]")


CALL = {"type": "function", "function": {"name": "python", "arguments": {"code": "print(6*7)"}}}
TRAJECTORIES = [
    # (messages, calls, failed, malformed, ended on a call, final text)
    ([{"role": "assistant", "content": "", "tool_calls": [CALL]}, {"role": "tool", "name": "python", "content": "42"},
      {"role": "assistant", "content": "The answer is 42"}], 1, 0, False, False, "The answer is 42"),
    ([{"role": "assistant", "content": "", "tool_calls": [CALL]},
      {"role": "tool", "name": "python", "content": "{'error': 'NameError'}"},
      {"role": "assistant", "content": "", "tool_calls": [CALL]}], 2, 1, False, True, ""),  # turn limit hit
    ([{"role": "assistant", "content": '<tool_call>\n{"name": python}\n</tool_call> 7'}], 0, 0, True, False,
     '<tool_call>\n{"name": python}\n</tool_call> 7'),  # broken JSON: TRL leaves it as text
    ([{"role": "assistant", "content": "41 + 1 = 42"}], 0, 0, False, False, "41 + 1 = 42"),  # no tool used
]


def test_trajectory_rewards():
    completions = [t[0] for t in TRAJECTORIES]
    assert get("tool_calls")(completions) == [1.0, 2.0, 0.0, 0.0]
    assert get("tool_call_success")(completions) == [1.0, 0.0, 0.0, 0.0]
    assert get("tool_call_success", no_call_score=None)(completions) == [1.0, 0.0, None, None]
    assert get("malformed_tool_call")(completions) == [0.0, 0.0, -1.0, 0.0]
    assert get("tool_turn_limit")(completions) == [0.0, 1.0, 0.0, 0.0]


def test_correctness_sees_only_the_final_answer():
    from grpokit.rewards.tool_use import final_answer_only

    numeric = final_answer_only(get("numeric_match"))
    copied = [{"role": "assistant", "content": "42", "tool_calls": [CALL]},
              {"role": "tool", "name": "python", "content": "42"}, {"role": "assistant", "content": "I do not know"}]
    right = TRAJECTORIES[0][0]
    # The 42 written before the tool ran, or shown by the tool, does not count; the final answer does.
    assert numeric([copied, right], answer=["42", "42"]) == [0.0, 1.0]
    assert numeric.__name__ == "numeric_match"  # logged under the reward's own name
    assert final_answer_only(get("tool_calls")) is get("tool_calls")  # trajectory rewards see everything
