"""Alerts that tell the truth about the run they watch (issue 35, items 7 and 10).

- A run where every reward is 0 with no spread raises no_learning_signal, whatever is cut at the
  length limit (it was hidden by truncation, which sent the user to raise max_completion_length).
- A fix never advises adding a reward the run has: the class is every symptom fix that names a reward
  to add, against every registered reward it would name; the generator below builds them all.
"""
from __future__ import annotations

import re

import pytest

from grpokit.health.fixes import ADVICE, fix_for, registry_name
from grpokit.health.rules import HealthConfig, replay
from grpokit.health.symptoms import SYMPTOMS
from grpokit.rewards import registry


def _step(i: int, clipped: float, reward: float = 0.0, std: float = 0.0, **rewards) -> dict:
    record = {"step": i, "loss": 0.0, "grad_norm": 0.0, "reward": reward, "reward_std": std,
              "frac_reward_zero_std": 1.0 if std == 0 else 0.5, "completions/clipped_ratio": clipped,
              "completions/mean_length": 64.0 if clipped >= 0.95 else 40.0, "entropy": 1.0,
              "completions/distinct_frac": 1.0}
    for name, (mean, spread) in rewards.items():
        record[f"rewards/{name}/mean"] = mean
        record[f"rewards/{name}/std"] = spread
    return record


def _run(clipped: float, steps: int = 6, **kwargs) -> list[dict]:
    rewards = kwargs.pop("rewards", {"numeric_match": (0.0, 0.0), "incremental_format": (0.0, 0.0)})
    return [_step(i, clipped, **kwargs, **rewards) for i in range(1, steps + 1)]


@pytest.mark.parametrize("clipped, steps", [
    (1.0, 6),    # the two-stage run: every completion cut, every reward 0; only truncation fired
    (0.97, 20),  # most cut, a longer run
    (0.6, 3),    # half cut on a 3-step run: truncation and no_learning_signal both fired at step 2
    (0.0, 8),    # nothing cut: no_learning_signal alone, as before
])
def test_nothing_scores_raises_no_learning_signal_and_only_it(clipped, steps):
    config = HealthConfig(max_completion_length=64, expected_logged_steps=steps)
    alerts = replay(_run(clipped, steps), config)
    assert {a.rule for a in alerts} == {"no_learning_signal"}, [a.message for a in alerts]
    alert = alerts[0]
    if clipped >= 0.5:  # the cut is named, in the message and in the fix, not lost
        assert "hit the length limit" in alert.message and "max_completion_length" in alert.fix
    # The config has incremental_format and it scores 0: the fix says so instead of advising to add one.
    assert "add a format reward" not in alert.fix
    assert "incremental_format is in the rewards already and scores 0 on every completion" in alert.fix


def test_truncation_still_names_a_cut_that_leaves_rewards_to_earn():
    # truncated-2-tokens' shape: every completion cut, a format reward paying 1 on each, answers 0.
    # Not "nothing scores": truncation is the cause and keeps its alert.
    rewards = {"numeric_match": (0.0, 0.0), "regex_format": (1.0, 0.0)}
    alerts = replay(_run(1.0, 6, reward=0.25, rewards=rewards), HealthConfig(max_completion_length=64))
    assert [a.rule for a in alerts] == ["truncation"], [a.message for a in alerts]


def _attacks():
    """(rule, advice phrase, registered reward that phrase would advise adding) for every pair there is."""
    for symptom in SYMPTOMS:
        for advice in ADVICE:
            if advice.phrase in symptom.fix:
                for name in registry.names():
                    if advice.present(name):
                        yield symptom.rule, advice.phrase, name


ATTACKS = list(_attacks())


def test_every_advice_to_add_a_reward_is_a_row_of_the_table():
    # A fix that names a registered reward after "add" (or "add a ... reward") must be covered by ADVICE,
    # or it could advise adding a reward the run already has.
    covered = {advice.phrase for advice in ADVICE}
    for symptom in SYMPTOMS:
        for match in re.finditer(r"\badd (?:a |an )?[\w ]*?reward\b|\badd (\w+)", symptom.fix):
            named = match.group(1)
            if named is None or named in registry.names():
                assert any(match.group(0) in phrase for phrase in covered), (symptom.rule, match.group(0))
    assert len(ATTACKS) >= 15  # every format and length reward, tool_call_success, across four rules


@pytest.mark.parametrize("rule, phrase, name", ATTACKS)
@pytest.mark.parametrize("scores, says", [
    ((0.0, 0.0), "scores 0 on every completion"),
    ((1.0, 0.0), "the same score"),
    ((0.4, 0.2), "raise its weight"),
])
def test_a_fix_never_advises_adding_a_reward_the_run_has(rule, phrase, name, scores, says):
    for logged in (name, f"{name}_2"):  # TRL logs a repeated reward as name_2
        assert registry_name(logged) == name
        fix = fix_for(rule, {logged: scores, "numeric_match": (0.0, 0.0)})
        assert phrase not in fix and logged in fix and says in fix, fix


def test_a_fix_keeps_its_advice_where_the_run_lacks_the_reward():
    assert "add a format reward such as incremental_format" in fix_for("no_learning_signal",
                                                                       {"numeric_match": (0.0, 0.0)})
