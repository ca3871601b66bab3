"""combine(): modes, None policies, weight schedules, gating and per-component logging."""
from types import SimpleNamespace

import pytest

from grpokit.rewards import RewardConfigError, combine, get
from grpokit.rewards.combine import components


def const(name, values):
    """A reward returning fixed scores (None allowed), with a stable name."""

    def reward(completions, **kwargs):
        return list(values)

    reward.__name__ = name
    return reward


A = const("a", [1.0, 0.5, None, None])
B = const("b", [2.0, None, 1.0, None])
DUMMY = ["c1", "c2", "c3", "c4"]


@pytest.mark.parametrize(
    "mode, missing, weights, expected",
    [
        ("sum", "skip", None, [3.0, 0.5, 1.0, None]),  # skip Nones like TRL's NaN-aware sum; all None -> None
        ("sum", "skip", [2.0, 0.5], [3.0, 1.0, 0.5, None]),  # weights scale each part
        ("sum", "renormalize", [2.0, 0.5], [3.0, 1.25, 2.5, None]),  # missing parts' weight spread over the rest
        ("sum", "propagate", None, [3.0, None, None, None]),  # any None -> None
        ("product", "skip", None, [2.0, 0.5, 1.0, None]),  # product of present scores
        ("product", "skip", [2.0, 1.0], [2.0, 0.25, 1.0, None]),  # weights are exponents
        ("product", "propagate", None, [2.0, None, None, None]),
    ],
)
def test_modes_and_missing(mode, missing, weights, expected):
    func = combine([A, B], weights=weights, mode=mode, missing=missing)
    # Four rows (four prompts): a part missing from a row is missing, not unscorable (test_unscorable.py).
    assert func(DUMMY, prompts=["p1", "p2", "p3", "p4"]) == expected


def test_product_keeps_zero():
    func = combine([const("p", [0.5, 0.0]), const("q", [2.0, 5.0])], mode="product")
    assert func(["x", "y"], prompts=["p1", "p2"]) == [1.0, 0.0]  # zero short-circuits


GOOD = "<reasoning>r</reasoning><answer>5</answer>"
HALF = "<reasoning>r</reasoning> <answer>5"


@pytest.mark.parametrize(
    "completions, gate_values, expected",
    [
        ([GOOD], [1.0], [1.0]),  # gate passes: the sum counts
        ([HALF], [1.0], [0.75]),  # partial format passes through when the gate passes
        ([GOOD], [0.0], [-1.0]),  # gate fails: gate_fail, whatever the parts say
        ([GOOD], [None], [None]),  # gate cannot judge: the sample cannot be scored
    ],
)
def test_gated(completions, gate_values, expected):
    func = combine(["incremental_format"], gate=const("correct", gate_values), mode="gated", gate_fail=-1.0)
    assert func(completions) == expected


def test_gate_with_registered_names_and_threshold():
    func = combine(["incremental_format"], gate="incremental_format", gate_threshold=0.7)
    # the gate is incremental_format itself here: 1.0 and 0.75 pass 0.7, 0.25 does not
    assert func([GOOD, HALF, "<reasoning>"]) == [1.0, 0.75, 0.0]
    assert func.__name__ == "incremental_format|incremental_format"


@pytest.mark.parametrize(
    "weights, step, expected",
    [
        ([(0, [1.0, 0.0]), (100, [0.0, 1.0])], 0, [1.0, 0.0]),  # start of the schedule
        ([(0, [1.0, 0.0]), (100, [0.0, 1.0])], 25, [0.75, 0.25]),  # linear interpolation
        ([(0, [1.0, 0.0]), (100, [0.0, 1.0])], 500, [0.0, 1.0]),  # held after the last breakpoint
        ([(50, [1.0, 1.0]), (10, [0.0, 0.0])], 30, [0.5, 0.5]),  # breakpoints need not be sorted
        (lambda step: [1.0, step / 10], 20, [1.0, 2.0]),  # a callable schedule
        ([3.0, 4.0], 999, [3.0, 4.0]),  # fixed weights ignore the step
    ],
)
def test_weight_schedules(weights, step, expected):
    func = combine([const("a", [1.0]), const("b", [1.0])], weights=weights)
    # TRL passes its TrainerState as trainer_state; global_step drives the schedule
    out = func(["x"], trainer_state=SimpleNamespace(global_step=step))
    assert list(func.last_weights.values()) == pytest.approx(expected)
    assert out == [pytest.approx(sum(expected))]


def test_schedule_without_trainer_state_uses_step_zero():
    func = combine([const("a", [1.0]), const("b", [1.0])], weights=[(0, [1.0, 0.0]), (10, [0.0, 1.0])])
    assert func(["x"]) == [1.0]


def test_per_component_logging():
    seen = []
    func = combine(
        ["incremental_format", "strict_xml_format", const("a", [0.1, 0.2])],
        weights=[1.0, 1.0, 0.0],  # weight 0: logged as a diagnostic, adds nothing
        log_fn=lambda comps, weights, step: seen.append((comps, weights, step)),
    )
    out = func([GOOD, HALF], trainer_state=SimpleNamespace(global_step=7))
    assert out == [2.0, 0.75]
    assert func.last_components == {"incremental_format": [1.0, 0.75], "strict_xml_format": [1.0, 0.0], "a": [0.1, 0.2]}
    assert seen == [(func.last_components, [1.0, 1.0, 0.0], 7)]
    parts = components(func)
    assert list(parts) == ["incremental_format", "strict_xml_format", "a"]
    # each part is a standalone reward to hand to TRL with weight 0
    assert parts["strict_xml_format"]([GOOD]) == [1.0]


def test_duplicate_component_names_are_suffixed():
    func = combine([get("incremental_format"), get("incremental_format", tags=["answer"])])
    assert func.__name__ == "incremental_format+incremental_format_2"
    assert func(["<answer>5</answer>"]) == [0.5 + 1.0]


def test_yaml_style_component_dicts_and_custom_name():
    func = combine([{"name": "strict_xml_format", "params": {"tags": ["answer"]}}], name="fmt")
    assert func.__name__ == "fmt" and func(["<answer>1</answer>"]) == [1.0]


def test_conversational_completions_pass_through():
    func = combine(["strict_xml_format", "incremental_format"])
    assert func([[{"role": "assistant", "content": GOOD}]]) == [2.0]


def test_non_finite_component_scores_become_none():
    func = combine([const("nan", [float("nan")]), const("one", [1.0])])
    assert func(["x"]) == [1.0]  # a NaN part is skipped like None, never poisons the sum


def test_a_component_returning_the_wrong_length_is_loud():
    func = combine([const("short", [1.0])])
    with pytest.raises(ValueError, match="short"):
        func(["x", "y"])


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"funcs": []}, "at least one"),
        ({"funcs": ["no_such_reward"]}, "unknown reward"),
        ({"funcs": [42]}, "reward name"),
        ({"funcs": [A, B], "weights": [1.0]}, "2 weights"),  # one weight per reward
        ({"funcs": [A], "weights": [float("nan")]}, "finite"),
        ({"funcs": [A], "weights": [(0, [1.0]), (0, [2.0])]}, "repeat"),
        ({"funcs": [A], "weights": lambda step: [1.0, 2.0]}, "1 weights"),  # a bad schedule fails now, not at step 0
        ({"funcs": [A], "mode": "max"}, "mode"),
        ({"funcs": [A], "mode": "gated"}, "gate"),  # gated without a gate
        ({"funcs": [A], "missing": "zero"}, "missing"),
        ({"funcs": [A], "log_fn": "print"}, "log_fn"),
    ],
)
def test_bad_arguments(kwargs, fragment):
    with pytest.raises(RewardConfigError, match=fragment):
        combine(**kwargs)


def test_trl_grpo_trainer_accepts_a_combined_reward():
    # the combined function has TRL's signature and a stable __name__, which is all TRL needs
    import inspect

    func = combine(["incremental_format", "strict_xml_format"], weights=[0.5, 1.0])
    params = inspect.signature(func).parameters
    assert list(params)[0] == "completions" and any(p.kind is p.VAR_KEYWORD for p in params.values())
    assert func.__name__ == "incremental_format+strict_xml_format"


def test_logs_parts_through_trl_hooks():
    # TRL passes log_metric(name, value) and log_extra(column, values) to reward functions
    metrics, extras = [], []
    func = combine([const("a", [1.0, None]), const("b", [0.0, 0.5])], name="mix")
    func(["x", "y"], log_metric=lambda n, v: metrics.append((n, v)), log_extra=lambda c, v: extras.append((c, v)))
    assert metrics == [("rewards/mix/a/mean", 1.0), ("rewards/mix/b/mean", 0.25)]  # means over present scores
    assert extras == [("mix/a", [1.0, None]), ("mix/b", [0.0, 0.5])]
    quiet = combine([const("a", [1.0])], trl_logging=False)
    quiet(["x"], log_metric=lambda n, v: metrics.append(n))
    assert len(metrics) == 2  # switched off: nothing more logged
