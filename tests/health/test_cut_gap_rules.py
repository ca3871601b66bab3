"""truncation and length_drift read completions/cut_answer_gap (grpokit.rewards.cut_gap): whether the
completions cut at the length limit lose the answer, keep it, or earn more than the finished ones.

The shapes are the health zoo's real runs (numbers per logged step, rounded): the demo with beta 0.04
(held-out accuracy 0.28 -> 0.53 -> 0.45 while half or more of its completions were cut for 10 steps),
the length hack, and the 2-token limit.
"""
from __future__ import annotations

from grpokit.health.rules import HealthConfig, replay

GAP = "completions/cut_answer_gap"

# healthy-demo-kl, 20 steps: (clipped_ratio, cut_answer_gap, reward_std, kl)
DEMO_KL = [(0.75, -0.14, 0.67, 0.0), (0.5, -0.06, 0.65, 0.16), (0.75, 0.11, 0.78, 0.16), (0.62, 0.47, 0.64, 0.4),
           (0.56, 0.01, 0.14, 0.39), (0.81, 0.48, 0.75, 0.08), (0.88, -0.52, 0.64, 0.33), (0.62, 0.12, 0.35, 0.05),
           (0.81, -0.11, 0.42, 0.03), (0.88, -0.01, 0.7, 0.04), (0.38, 0.0, 0.6, 0.91), (0.44, -0.02, 0.52, 0.1),
           (0.31, 0.02, 0.67, 0.31), (0.12, -0.63, 0.38, 0.16), (0.31, -0.02, 0.65, 0.24), (0.12, -0.55, 0.61, 0.35),
           (0.25, 0.0, 0.71, 0.64), (0.38, -0.27, 0.57, 1.27), (0.25, 0.52, 0.71, 0.2), (0.25, -0.1, 0.72, 0.4)]
# hack-length (zoo_length_hack pays characters, 32-token limit): (clipped_ratio, gap, reward_std, mean_length)
HACK = [(0.25, 0.35, 0.19, 14.9), (0.88, 0.34, 0.14, 29.6), (0.88, 0.37, 0.2, 29.9), (0.94, 0.21, 0.13, 31.4),
        (1.0, None, 0.17, 32.0), (0.94, 0.21, 0.16, 30.9)]


def _log(step, clipped, gap, std, **extra):
    record = {"step": step, "loss": 0.0, "grad_norm": 1.0, "reward": 0.8, "reward_std": std,
              "frac_reward_zero_std": 0.0, "entropy": 1.0, "completions/clipped_ratio": clipped,
              "completions/mean_length": 5.8, **extra}
    if gap is not None:
        record[GAP] = gap
    return record


def _demo_kl(gap=lambda g, std: g):
    return [_log(i, clip, gap(g, std), std, kl=kl) for i, (clip, g, std, kl) in enumerate(DEMO_KL, start=1)]


def _hack():
    return [_log(i, clip, gap, std, **{"completions/mean_length": length})
            for i, (clip, gap, std, length) in enumerate(HACK, start=1)]


def _alerts(records, **config):
    config.setdefault("expected_logged_steps", len(records))
    config.setdefault("disable", ["reward_stuck"])  # the reward is held flat here: not what is tested
    return [(a.rule, a.step) for a in replay(records, HealthConfig.from_dict(config))]


def _without_gap(records):
    return [{k: v for k, v in r.items() if k != GAP} for r in records]


def test_the_demo_talking_on_after_its_answer_is_no_truncation():
    # 50-88% cut for 10 steps, but cut completions score as well as the finished ones of their prompt
    # (mean +0.04 against a reward_std of 0.57): the first number is the answer, the rest is talk.
    assert _alerts(_demo_kl(), max_completion_length=6) == []


def test_a_run_without_the_gap_is_judged_by_the_share_cut_as_before():
    # Runs from before the metric (and runs where every completion is cut) keep the clipped_ratio levels.
    assert ("truncation", 5) in _alerts(_without_gap(_demo_kl()), max_completion_length=6)


def test_a_cut_that_costs_the_answer_is_truncation():
    # The same shares cut, but the cut completions score a reward_std below the finished ones: the answer
    # did not fit (a limit too short for the reasoning, a closing tag cut off).
    records = _demo_kl(gap=lambda g, std: -std)
    alerts = replay(records, HealthConfig(expected_logged_steps=20, max_completion_length=6, disable=["reward_stuck"]))
    assert [(a.rule, a.step) for a in alerts] == [("truncation", 5)]
    assert "cut completions score -0.58 on the answer rewards" in alerts[0].message


def test_the_margin_is_in_units_of_reward_std():
    # Half a reward_std below the finished ones (the default cut_gap) counts; a quarter does not.
    assert ("truncation", 5) in _alerts(_demo_kl(gap=lambda g, std: -0.5 * std), max_completion_length=6)
    assert _alerts(_demo_kl(gap=lambda g, std: -0.25 * std), max_completion_length=6) == []
    assert _alerts(_demo_kl(gap=lambda g, std: -0.25 * std), max_completion_length=6,
                   rules={"truncation": {"cut_gap": 0.2}}) \
        == [("truncation", 5)]


def test_steps_with_few_completions_cut_do_not_set_the_gap():
    # seed0 of the demo: a step with 2 of 16 cut gave -0.98 (two rambling wrong answers). Only the steps
    # with half or more cut speak for the limit.
    records = [_log(i, 0.12, -0.98, 0.6) for i in range(1, 6)] + [_log(i, 0.75, 0.0, 0.6) for i in range(6, 21)]
    assert _alerts(records, max_completion_length=6) == []


def test_cut_completions_out_earning_finished_ones_is_length_drift_not_truncation():
    # The reward pays for length: naming truncation would say "raise max_completion_length" and feed it.
    # Named once the gap rests on length_gap_steps (3) steps with half or more cut: two were not enough on
    # the untrained demo model (stuck-low-lr: +0.23, +0.45 at steps 1-2, about 0 over its 24 steps).
    assert _alerts(_hack(), max_completion_length=32) == [("length_drift", 4)]


def test_the_length_hack_without_the_gap_is_judged_as_before():
    assert _alerts(_without_gap(_hack()), max_completion_length=32) == [("truncation", 3)]


def test_every_completion_cut_leaves_no_gap_and_the_levels_decide():
    # truncated-2-tokens: a sum needs 3-4 tokens, every completion is cut, there is nothing to compare.
    records = [_log(i, 1.0, None, 0.0) for i in range(1, 5)]
    assert ("truncation", 2) in _alerts(records, max_completion_length=2)


def test_single_step_kl_spikes_are_not_a_blow_up():
    # The healthy demo with beta 0.04: kl 0.91 at step 11, 0.64 and 1.27 at steps 17-18, under 0.5 around them.
    assert "kl_blowup" not in [rule for rule, _ in _alerts(_demo_kl(), max_completion_length=6)]
    # kl-blowup (10x the learning rate): above 0.6 at every step from step 2.
    kl = [0.0, 1.47, 3.56, 1.65, 0.85, 0.65, 1.24, 0.96]
    records = [_log(i, 0.5, None, 0.1, kl=v) for i, v in enumerate(kl, start=1)]
    assert ("kl_blowup", 3) in _alerts(records)
