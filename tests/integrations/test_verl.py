"""grpokit rewards exported as verl's compute_score, called the way verl calls it."""
from __future__ import annotations

import math

import pytest

import grpokit.rewards as rewards_pkg
from grpokit.completions import extract_tag, texts
from grpokit.integrations.verl import make_compute_score, resolve_rewards
from grpokit.rewards import RewardConfigError, register, registry


def exact(completions, answer=None, **kwargs):
    """Test reward: 1 when the <answer> tag equals the gold answer; None without gold."""
    out = []
    for text, gold in zip(texts(completions), answer or [None] * len(completions)):
        out.append(None if gold is None else float(extract_tag(text, "answer") == str(gold)))
    return out


def has_tag(completions, **kwargs):
    """Test reward: 1 when an <answer> tag is present."""
    return [float(extract_tag(t, "answer") is not None) for t in texts(completions)]


def scaled(factor: float = 1.0):
    """Test factory: `factor` for every completion."""
    def scaled_reward(completions, **kwargs):
        return [factor] * len(completions)
    return scaled_reward


def uses_tests(completions, tests=None, **kwargs):
    """Test reward: 1 when the `tests` column text occurs in the completion."""
    return [float(bool(t) and t in c) for c, t in zip(texts(completions), tests or [None] * len(completions))]


@pytest.fixture(autouse=True, scope="module")
def registered():
    # Registered for this module only: a reward library test that walks every
    # registered name must not meet these test helpers.
    registry.names()  # load the built-ins first, so the snapshot has them
    saved = dict(registry._REGISTRY), dict(registry._ALIASES)
    for name, func in [("_verl_test_exact", exact), ("_verl_test_has_tag", has_tag), ("_verl_test_scaled", scaled), ("_verl_test_uses_tests", uses_tests)]:
        register(name)(func)
    yield
    for table, before in zip((registry._REGISTRY, registry._ALIASES), saved):
        table.clear()
        table.update(before)


def verl_call(compute_score, solution, gold, extra_info=None):
    # Exactly how verl's NaiveRewardManager calls a custom reward: keywords only.
    return compute_score(data_source="openai/gsm8k", solution_str=solution, ground_truth=gold, extra_info=extra_info)


@pytest.mark.parametrize(
    "rewards, weights, solution, gold, expected",
    [
        (exact, None, "<answer>72</answer>", "72", 1.0),  # a bare reward function
        ("_verl_test_exact", None, "<answer>71</answer>", "72", 0.0),  # a registered name
        (["_verl_test_exact", "_verl_test_has_tag"], [2.0, 0.5], "<answer>72</answer>", "72", 2.5),  # a list with weights
        ([{"name": "_verl_test_exact", "weight": 3}, {"name": "_verl_test_scaled", "params": {"factor": 0.25}}], None, "<answer>72</answer>", "72", 3.25),  # config entries carry their own weights and params
        (["_verl_test_exact", "_verl_test_has_tag"], None, "<answer>72</answer>", None, 1.0),  # no gold: exact is None and adds nothing
        ("_verl_test_has_tag", None, "no tag \x00 \ud800", "1", 0.0),  # hostile text still scores
    ],
)
def test_compute_score_called_like_verl(rewards, weights, solution, gold, expected):
    score = verl_call(make_compute_score(rewards, weights), solution, gold, extra_info={"split": "test", "index": 3})
    assert isinstance(score, float) and score == pytest.approx(expected)


def test_details_dict_is_what_verl_logs():
    compute_score = make_compute_score(["_verl_test_exact", "_verl_test_has_tag"], [2.0, 1.0], details=True)
    # verl's manager: reward = result["score"]; every key is appended to reward_extra_info.
    # Metric names are the functions' __name__, as TRL logs them.
    results = [verl_call(compute_score, s, g) for s, g in [("<answer>72</answer>", "72"), ("x", None)]]
    assert results[0] == {"score": 3.0, "exact": 1.0, "has_tag": 1.0}
    assert results[1]["score"] == 0.0 and math.isnan(results[1]["exact"])
    assert all(r.keys() == results[0].keys() for r in results)  # verl needs the same keys for every sample


def test_extra_info_reaches_rewards_as_columns():
    compute_score = make_compute_score("_verl_test_uses_tests")
    assert verl_call(compute_score, "def f(): pass  # assert f()", "", {"tests": "assert f()"}) == 1.0
    # verl (new versions) adds num_turns to extra_info and may pass reward_kwargs: both ignored.
    assert compute_score(data_source="x", solution_str="y", ground_truth="", extra_info={"num_turns": None}, some_kwarg=1) == 0.0
    # extra_info may be None (old verl) or missing altogether.
    assert compute_score(data_source="x", solution_str="<answer>1</answer>", ground_truth="1") == 0.0


def test_same_function_twice_gets_distinct_metric_names():
    compute_score = make_compute_score([has_tag, has_tag], details=True)
    assert set(verl_call(compute_score, "<answer>1</answer>", "1")) == {"score", "has_tag", "has_tag_2"}


def test_preset_name_expands():
    # A preset name gives the library preset's rewards and weights, as verl's compute_score.
    expected_funcs, expected_weights = rewards_pkg.preset("math_reasoning")
    funcs, weights = resolve_rewards("math_reasoning")
    assert [f.__name__ for f in funcs] == [f.__name__ for f in expected_funcs] and weights == list(expected_weights)
    score = verl_call(make_compute_score("math_reasoning"), "<reasoning>2+3</reasoning>\n<answer>5</answer>", "5")
    assert score == pytest.approx(sum(w * f(["<reasoning>2+3</reasoning>\n<answer>5</answer>"], answer=["5"])[0]
                                      for f, w in zip(expected_funcs, expected_weights)))


@pytest.mark.parametrize(
    "rewards, weights, needle",
    [
        ("_verl_test_exactt", None, "Did you mean '_verl_test_exact'"),  # a typo gets the registry's hint
        (["_verl_test_exact"], [1.0, 2.0], "2 weights for 1 rewards"),  # one weight per reward
        ([exact], [float("inf")], "finite"),  # weights must be finite
        ([], None, "no rewards given"),  # nothing to score with
        ({"name": "_verl_test_exact", "wieght": 2}, None, "unknown keys \\['wieght'\\]"),  # a misspelt config key
        ([42], None, "cannot make a reward from 42"),  # not a reward at all
    ],
)
def test_bad_reward_specs_fail_at_construction(rewards, weights, needle):
    with pytest.raises(RewardConfigError, match=needle):
        make_compute_score(rewards, weights)


def batch_size_seen(completions, **kwargs):
    # A group reward: it needs the whole batch (like diversity within a group).
    return [float(len(completions))] * len(completions)


def test_batch_compute_score_called_like_verls_batch_manager():
    from grpokit.integrations.verl import make_batch_compute_score

    compute_score = make_batch_compute_score(["_verl_test_exact", batch_size_seen, "_verl_test_uses_tests"], [2.0, 0.1, 1.0])
    scores = compute_score(
        data_sources=["gsm8k", "gsm8k", "code"],
        solution_strs=["<answer>7</answer>", "<answer>8</answer>", "assert f()"],
        ground_truths=["7", "7", None],
        extra_infos=[{"index": 0}, None, {"tests": "assert f()"}],  # rows may lack keys or the whole dict
    )
    assert scores == pytest.approx([2.0 + 0.3, 0.0 + 0.3, 0.3 + 1.0])
    detailed = make_batch_compute_score([has_tag], details=True)(data_sources=["a"], solution_strs=["x"], ground_truths=["1"], extra_infos=[{}])
    assert detailed == [{"score": 0.0, "has_tag": 0.0}]
