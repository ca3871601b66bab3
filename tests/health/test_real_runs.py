"""The health rules replayed over real runs: the health zoo's short runs of the bundled model
(benchmarks/health_zoo.py), kept as small fixtures in tests/health/fixtures/<case>/.

Each fixture is a real metrics.jsonl (numbers rounded), the run's config.yaml, and its
run_status.json. The table says what the diagnosis of each must be; a healthy run must raise no
warning or critical finding at all.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from grpokit.health.diagnose import diagnose
from grpokit.health.symptoms import RULES

FIXTURES = Path(__file__).parent / "fixtures"

# case: (the rule the diagnosis must name first, or None for a healthy run), why
EXPECT = {
    "healthy-demo-seed0": (None, "the demo recipe: reward rises, then plateaus on 2-prompt noise"),
    # seed 0 resumed from its step-20 checkpoint to 30 steps: the old reward_stuck said "reward fell
    # over the last 20 logged steps" at step 30 here, as it did on all three 30-step seeds of learning.json.
    "healthy-demo-seed0-30steps": (None, "the plateau of a 30-step healthy run"),
    "healthy-demo-seed1": (None, "another seed; groups become all-right as it learns one-number answers"),
    "healthy-demo-seed2": (None, "the seed where, on the old rules, collapse fired on correct answers"),
    # 20 steps, 50-88% of completions cut for the first 10 (the answer, then talk: the cut ones score as
    # well as the finished ones), kl spiking to 1.27 at single steps; held-out accuracy 0.28 -> 0.45.
    "healthy-demo-kl": (None, "beta 0.04: the cut leaves the answer, kl spikes but does not stay up"),
    # The words demo (benchmarks.learning, seed 2, 40 steps): every completion cut at 14 tokens from step
    # 10 on, as the model writes "47 + 38 = 85" and talks on; held-out accuracy 0.16 -> 0.67. It raised
    # truncation at step 28 before completions/cut_answer_score: with nothing finished there is no gap.
    # The run predates that metric; at its all-cut steps it equals the logged answer rewards' weighted
    # mean (numeric_match + 0.5 x numeric_closeness), which is what the fixture adds.
    "words-seed2-all-cut": (None, "every completion cut after its answer line: the cut ones keep earning the answer"),
    "collapse-fixed-answer": ("collapse", "one answer paid whatever the question"),
    "no-signal-constant": ("no_learning_signal", "a constant reward: every group scores alike"),
    "truncated-2-tokens": ("truncation", "a 2-token limit for 3-4-token answers"),
    "hack-length": ("length_drift", "a length-only reward: the cut completions, the longest, out-score the "
                                    "finished ones (32-token limit); raising the limit would feed it"),
    "diverge-lr": ("diverged", "learning rate 1.0, no clipping: noise after one step, entropy 2.5x, not NaN"),
    # The same case retrained: reward 0 and every completion cut from step 2, but entropy no guide.
    "diverge-lr-flat-entropy": ("diverged", "learning rate 1.0: one word repeated, step-2 entropy 1.45 vs 1.53"),
    "diverge-lr-low-entropy": ("diverged", "learning rate 1.0: step-2 entropy 0.85 vs 1.53, then 3.84"),
    "stuck-low-lr": ("reward_stuck", "learning rate 1e-7: nothing moves, held-out accuracy 0.28 at steps 0-24"),
    "kl-blowup": ("kl_blowup", "beta 0.04 with 10x the demo's learning rate"),
    "reward-half-none": ("reward_unscorable", "a plugin reward returning None on every other row"),
    "reward-half-raises": ("reward_unscorable", "a plugin reward raising on the batch: every row unscored"),
    "tool-never-called": ("tool_never_called", "the tool recipe without its few-shot calls"),
    "judge-killed": ("judge_failing", "the local judge SIGKILLed after step 2: every later completion unscored"),
    "oom-full-finetune": ("out_of_memory", "the demo under a 4 GiB ulimit -v: an allocation fails, run_status.json says so"),
}

# Cases whose diagnosis is known to be wrong and left for a decision (xfail, strict): none at present.
KNOWN: dict[str, str] = {}


def _cases():
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN[name])) if name in KNOWN else name
            for name in EXPECT if (FIXTURES / name / "metrics.jsonl").is_file()]


def test_fixtures_are_there():
    # The zoo writes them (--fixtures tests/health/fixtures); a missing one is a case the zoo did not finish.
    assert len(_cases()) >= 14, sorted(p.name for p in FIXTURES.iterdir()) if FIXTURES.is_dir() else "no fixtures"


@pytest.mark.parametrize("case", _cases())
def test_real_run_is_diagnosed(case):
    expected, why = EXPECT[case]
    # Health rules only: how a run ended (run_killed: the zoo's time limit stopped the tool run) is a record.
    problems = [f for f in diagnose(FIXTURES / case) if f.severity in ("warning", "critical") and f.rule in RULES]
    if expected is None:
        assert problems == [], f"{case} ({why}): " + "; ".join(f"{f.rule}: {f.evidence}" for f in problems)
    else:
        assert problems and problems[0].rule == expected, (
            f"{case} ({why}): " + "; ".join(f"{f.rule}: {f.evidence}" for f in problems))


def test_a_live_judge_does_not_fail_and_a_killed_one_fails_at_once():
    # judge-killed: the real local judge graded steps 1-2 and was SIGKILLed once step 2 was logged.
    judge = next(f for f in diagnose(FIXTURES / "judge-killed") if f.rule == "judge_failing")
    assert judge.severity == "critical" and judge.first_step == 3
    assert [tuple(r) for r in judge.ranges] == [(3, 8)]


def test_every_completion_cut_before_the_answer_still_warns_with_the_cut_score():
    """The 2-token run with completions/cut_answer_score added (all cut, so it is the answer rewards'
    weighted mean: 0.0): what the cut completions earn says the limit hides the answer."""
    import json

    from grpokit.health.rules import replay

    records = []
    for line in (FIXTURES / "truncated-2-tokens" / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "rewards/numeric_match/mean" in record:
            record["completions/cut_answer_score"] = (record["rewards/numeric_match/mean"]
                                                      + 0.5 * record["rewards/numeric_closeness/mean"])
        records.append(record)
    assert any("completions/cut_answer_score" in r for r in records)
    assert [a.rule for a in replay(records)][:1] == ["truncation"]
