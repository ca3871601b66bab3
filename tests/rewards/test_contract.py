"""The reward contract, checked for every registered built-in reward.

Each reward accepts both completion formats, survives pickle and cloudpickle
(TRL's async workers, spawned loaders and Ray ship rewards between
processes), gives None for a row it cannot score, never raises on hostile
text, documents every parameter, and either works without parameters or
says which one to pass. A built-in reward without a case in reward_cases.py fails
`test_every_builtin_reward_has_a_case`, so no reward can skip the contract.
"""
from __future__ import annotations

import inspect
import math
import pickle
import re

import pytest
from reward_cases import BUILTINS, CASES, HOSTILE, SAMPLES, as_messages, build, columns_for

from grpokit.rewards import RewardConfigError, describe, get
from grpokit.rewards import registry

cloudpickle = pytest.importorskip("cloudpickle")


def _score(reward, completions, columns) -> list:
    scores = reward(completions, **columns)
    assert len(scores) == len(completions)
    for value in scores:
        assert value is None or (isinstance(value, float) and math.isfinite(value)), value
    return scores


def test_every_builtin_reward_has_a_case():
    # A new built-in reward must say here how it is scored and what it cannot score.
    assert sorted(CASES) == sorted(BUILTINS)


@pytest.mark.parametrize("name", BUILTINS)
def test_both_completion_formats_score_the_same(name):
    reward = build(name)
    columns = columns_for(CASES[name], len(SAMPLES))
    plain = _score(reward, SAMPLES, columns)
    assert _score(reward, as_messages(SAMPLES), columns) == plain
    assert any(s is not None for s in plain), "the case's columns should make the samples scorable"


@pytest.mark.parametrize("with_params", [False, True], ids=["defaults", "params"])
@pytest.mark.parametrize("name", BUILTINS)
@pytest.mark.parametrize("dumps, loads", [(pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)],
                         ids=["pickle", "cloudpickle"])
def test_pickles_keeps_its_name_and_scores(name, with_params, dumps, loads):
    # "defaults": only what the reward cannot do without (its registered example values).
    reward = build(name) if with_params else get(name, **registry._REGISTRY[name].examples)
    columns = columns_for(CASES[name], len(SAMPLES))
    copy = loads(dumps(reward))
    assert copy.__name__ == reward.__name__ == name  # TRL logs the metric under this name
    assert _score(copy, SAMPLES, columns) == _score(reward, SAMPLES, columns)


@pytest.mark.parametrize("name", BUILTINS)
def test_unscorable_rows_give_none(name):
    case = CASES[name]
    reward = build(name)
    if case.unscorable is None:
        # The claim that every row can be scored, checked: no columns at all, and an empty completion.
        assert None not in _score(reward, [*SAMPLES, ""], {}), case.why
        return
    # The unscorable row sits alone in its batch (a group of one, for group-wise rewards).
    assert _score(reward, SAMPLES[:1], columns_for(case, 1, case.unscorable)) == [None], case.why


@pytest.mark.parametrize("name", BUILTINS)
def test_hostile_text_never_raises(name):
    reward = build(name)
    _score(reward, HOSTILE, columns_for(CASES[name], len(HOSTILE)))
    _score(reward, as_messages(HOSTILE), columns_for(CASES[name], len(HOSTILE)))


@pytest.mark.parametrize("name", BUILTINS)
def test_describe_documents_every_parameter(name):
    entry = registry._REGISTRY[name]
    params = list(inspect.signature(entry.factory).parameters) if entry.is_factory else []
    doc = describe(name)
    undocumented = [p for p in params if not re.search(rf"(?<![\w]){re.escape(p)}(?![\w])", doc)]
    assert undocumented == [], f"{name}'s docstring does not mention {undocumented}"


@pytest.mark.parametrize("name", BUILTINS)
def test_defaults_or_a_named_parameter(name):
    # Either the reward works with no parameters, or the error names the one to pass and shows a value.
    try:
        reward = get(name)
    except RewardConfigError as exc:
        message = str(exc)
        required = [p.name for p in inspect.signature(registry._REGISTRY[name].factory).parameters.values()
                    if p.default is p.empty]
        assert len(required) == 1 and f"needs {required[0]}=" in message and "e.g." in message, message
        assert "..." not in message, f"register {name} with examples={{{required[0]!r}: ...}}"
        return
    assert reward.__name__ == name
