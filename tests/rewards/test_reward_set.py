"""RewardSet: building from config specs, scoring the way TRL does, and checking specs without building."""
import math

import pytest

from grpokit.rewards import RewardConfigError, register
from grpokit.rewards.reward_set import RewardSet, check_specs, weighted_totals


def const(name, values):
    def reward(completions, **kwargs):
        return list(values)

    reward.__name__ = name
    return reward


def raises(completions, **kwargs):
    raise KeyError("answer")


def wrong_length(completions, **kwargs):
    return [1.0]


BUILT = []


@register("reward_set_counts_builds")
def _counts_builds(scale: float = 1.0):
    BUILT.append(scale)
    return const("reward_set_counts_builds", [scale])


def test_score_gives_per_reward_scores_totals_and_counts():
    rs = RewardSet([const("a", [1.0, None, 2.0]), const("b", [0.5, None, None])], [2.0, 4.0])
    out = rs.score(["x", "y", "z"], answer=["1", "2", "3"])
    assert out.scores == {"a": [1.0, None, 2.0], "b": [0.5, None, None]}
    # TRL's NaN-aware sum: a reward that returned None is left out; None only where nothing scored.
    assert out.totals == [4.0, None, 4.0]
    assert out.none == {"a": 1, "b": 2} and out.errors == {}


@pytest.mark.parametrize("func, message", [
    (raises, "KeyError"),  # a raise becomes an error and None scores, never a crash
    (wrong_length, "returned 1 scores for 2 completions"),  # a short list cannot be aligned with the batch
    (const("text", ["1.0", "2.0"]), "a string"),  # strings are not scores (TRL would fail on them)
])
def test_a_broken_reward_is_a_counted_error(func, message):
    out = RewardSet([func, const("ok", [1.0, 1.0])]).score(["x", "y"])
    name = list(out.scores)[0]
    assert message in out.errors[name]
    assert out.scores[name] == [None, None] and out.totals == [1.0, 1.0]


def test_duplicate_names_get_suffixes():
    rs = RewardSet([const("a", [1.0]), const("a", [2.0])])
    assert rs.names == ["a", "a_2"]
    assert rs.score(["x"]).scores == {"a": [1.0], "a_2": [2.0]}


def test_weighted_totals_skip_non_finite():
    # NaN is what TRL makes of None: it never reaches the total.
    assert weighted_totals({"a": [math.nan, 1.0]}, [1.0], 2) == [None, 1.0]


def test_from_specs_reads_config_entries_and_dicts():
    rs = RewardSet.from_specs([{"name": "reward_set_counts_builds", "weight": 0.5, "params": {"scale": 3.0}}])
    assert rs.names == ["reward_set_counts_builds"] and rs.weights == [0.5]
    assert rs.score(["x"]).totals == [1.5]


@pytest.mark.parametrize("specs, message", [
    ([{"name": "no_such_reward"}], r"rewards\[0\]: unknown reward"),  # the registry's hint, with the entry
    ([{"name": "reward_set_counts_builds", "params": {"scael": 2}}], r"did you mean 'scale'"),  # a typo'd parameter
    ([{"name": "reward_set_counts_builds", "weight": "high"}], r"rewards\[0\]\.weight must be a finite number"),
    ([{"weight": 1.0}], r"rewards\[0\] has no name"),
    ([{"name": "numeric_match"}, {"name": "ideal_length"}], r"rewards\[1\]: reward 'ideal_length' needs target="),  # a required parameter
])
def test_check_specs_rejects_bad_entries(specs, message):
    with pytest.raises(RewardConfigError, match=message):
        check_specs(specs)


def test_check_specs_builds_nothing():
    # Validation only reads the signature: a factory that starts workers is not called.
    BUILT.clear()
    check_specs([{"name": "reward_set_counts_builds", "params": {"scale": 2.0}}])
    assert BUILT == []
    RewardSet.from_specs([{"name": "reward_set_counts_builds", "params": {"scale": 2.0}}])
    assert BUILT == [2.0]


def test_mismatched_weights_are_an_error():
    with pytest.raises(RewardConfigError, match="1 weights for 2 reward functions"):
        RewardSet([const("a", []), const("b", [])], [1.0])
