"""Agreement of a reward with labels: the measure, the weak verdict, the message, and how debug_reward reports it."""
from __future__ import annotations

import itertools
import json
import random

import pytest

from grpokit.rewards import agreement as la
from grpokit.rewards.debug import debug_reward
from grpokit.rewards import get, registry

T, F = True, False


@pytest.fixture
def scripted(monkeypatch):
    """Two rewards that return the `given` column: one registered as a correctness reward, one as style."""
    registry.names()  # load the built-ins first, so the copy below has them and the original keeps them
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))

    def _scripted_correct(completions, given, **kwargs):
        return [float(g) for g in given]

    def _scripted_style(completions, given, **kwargs):
        return [float(g) for g in given]

    registry.register("_scripted_correct", family="correctness")(_scripted_correct)
    registry.register("_scripted_style", family="style")(_scripted_style)
    return lambda name: get(name)


def brute_auc(pos, neg):
    return sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)) / (len(pos) * len(neg))


def test_auc_matches_pairwise_count():
    # The rank formula must equal the definition (every correct/wrong pair, ties half), ties included.
    rng = random.Random(0)
    for _ in range(50):
        pos = [rng.choice([0, 0.5, 1, 2]) for _ in range(rng.randint(1, 9))]
        neg = [rng.choice([0, 0.5, 1, 2]) for _ in range(rng.randint(1, 9))]
        assert la.auc(pos, neg) == pytest.approx(brute_auc(pos, neg))


def test_numeric_labels():
    assert la.numeric_labels([True, "no", "Correct", "0.5", 3, float("nan"), "maybe", None]) == [1.0, 0.0, 1.0, 0.5, 3.0, None, None, None]


WEAK = [
    # (scores, labels, weak (None: not judged), why)
    ([1, 1, 1, 0, 0, 0], [T, T, T, F, F, F], False, "separates perfectly"),
    ([1, 1, 1, 1, 1, 0, 0, 0, 0, 0], [T, T, T, T, T, T, F, F, F, F], False, "one miss in ten: AUC 0.92, still strong"),
    ([0, 0, 0, 1, 1, 1], [T, T, T, F, F, F], True, "inverted"),
    ([1, 0, 1, 1, 0, 0], [T, T, T, F, F, F], True, "as good as a coin: AUC 0.67"),
    ([0, 0, 0, 0, 0, 0], [T, T, T, F, F, F], True, "constant: the labels make no difference (AUC 0.5)"),
    ([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0], False, "graded scores, true/false labels given as numbers"),
    ([0.1, 0.2, 0.3, 0.4, 0.5], [1, 2, 3, 4, 5], False, "graded labels followed"),
    ([0.5, 0.1, 0.9, 0.2, 0.4], [1, 2, 3, 4, 5], True, "graded labels ignored: r about 0"),
    ([0.3, 0.3, 0.3, 0.3, 0.3], [1, 2, 3, 4, 5], True, "graded labels, constant score: r undefined"),
    ([0, 1, 0], [T, F, T], None, "three rows say nothing"),
    ([0, 0, 0, 0], [T, T, T, T], None, "one label value: agreement undefined"),
    ([1, None, None, None, 1, 0], [T, F, F, F, T, F], None, "rows scored None are left out: three remain"),
]


@pytest.mark.parametrize("scores,labels,weak,why", WEAK)
def test_weak_verdict(scores, labels, weak, why):
    agreement = la.measure([None if s is None else float(s) for s in scores], la.numeric_labels(labels))
    assert (None if agreement is None else agreement.weak) == weak, why


EXPLAIN = [
    # (scores, labels, words in the message, rows named, why)
    ([0, 0, 0, 1, 1, 1], [T, T, T, F, F, F], ["sign flipped"], [0, 1, 2, 3, 4, 5], "inverted: every row is on the wrong side"),
    ([0, 0, 0, 0, 0, 0], [T, T, T, F, F, F], ["gives 0 to every labelled sample", "finds no answer"], [], "extractor finds nothing"),
    ([1, 1, 1, 1, 1, 0], [T, T, F, F, F, F], ["3 of 4 labelled-wrong samples score high", "too lenient"], [2, 3, 4], "lenient"),
    ([1, 0, 0, 0, 0, 0], [T, T, T, F, F, F], ["2 of 3 labelled-correct samples score low", "too strict"], [1, 2], "strict"),
]


@pytest.mark.parametrize("scores,labels,words,rows,why", EXPLAIN)
def test_message_says_what_it_means(scores, labels, words, rows, why):
    scores, labels = [float(s) for s in scores], la.numeric_labels(labels)
    agreement = la.measure(scores, labels)
    message, named = la.explain(agreement, scores, labels, strict=True)
    for word in [*words, "AUC", "answer column", "extractor", "lenient", "strict"]:
        assert word in message, (why, word, message)
    assert named == rows, why
    if "too lenient" in words:
        assert "too strict, or" not in message, why  # only the side that is wrong is blamed


def test_correctness_reward_that_agrees_is_not_flagged(scripted):
    result = debug_reward(scripted("_scripted_correct"), list("abcdef"), given=[1, 1, 1, 0, 0, 1], label=[T, T, T, F, F, T], show=False)
    assert result.ok and not result.findings() and result.stats["_scripted_correct"].label_auc == 1.0


@pytest.mark.parametrize("given", [[0, 1, 1, 0, 1, 0], [0, 0, 0, 1, 1, 1]], ids=["random", "inverted"])
def test_weak_correctness_reward_is_an_error(scripted, given):
    # A correctness reward the labels contradict fails the check (exit 1 in the command).
    result = debug_reward(scripted("_scripted_correct"), list("abcdef"), given=given, label=[T, T, T, F, F, F], show=False)
    (finding,) = result.findings("_scripted_correct", "label_disagreement")
    assert finding.severity == "error" and result.failed and not result.ok
    assert result.stats["_scripted_correct"].label_auc < la.WEAK_AUC


def test_weak_style_reward_is_only_a_warning(scripted):
    # A format/style reward judges something else than correctness labels: a warning, and it says so.
    result = debug_reward(scripted("_scripted_style"), list("abcdef"), given=[0, 1, 1, 0, 1, 0], label=[T, T, T, F, F, F], show=False)
    (finding,) = result.findings("_scripted_style", "label_disagreement")
    assert finding.severity == "warning" and result.ok and "not a correctness reward" in finding.message


def test_constant_correctness_reward_is_an_error_not_just_constant(scripted):
    # Before, a correctness reward that gave 0 everywhere (its extractor found nothing) was only "constant".
    result = debug_reward(scripted("_scripted_correct"), list("abcd"), given=[0, 0, 0, 0], label=[T, F, T, F], show=False)
    assert {f.kind: f.severity for f in result.findings()} == {"constant": "warning", "label_disagreement": "error"}


def test_real_model_solutions_wrong_columns(shared_data):
    # GSM8K solutions by four GPT-3 variants, each labelled is_correct. numeric_match with the
    # final answers agrees (AUC 1.0); with the answers of other rows, or exact_match (it reads
    # <answer> tags, which these solutions lack), it is flagged as an error.
    rows = [json.loads(line) for line in open(shared_data / "gsm8k_model_solutions.jsonl", encoding="utf-8")][:50]
    solvers = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]
    completions = [r[s]["solution"] for r in rows for s in solvers]
    labels = [r[s]["is_correct"] for r in rows for s in solvers]
    finals = [r["ground_truth"].rsplit("A:", 1)[-1].strip() for r in rows for _ in solvers]
    shifted = finals[len(solvers):] + finals[:len(solvers)]  # each row gets the next question's answer
    good = debug_reward(get("numeric_match"), completions, answer=finals, label=labels, show=False)
    assert good.ok and good.stats["numeric_match"].label_auc > 0.95 and not good.findings(kind="label_disagreement")
    for reward, answers in (("numeric_match", shifted), ("exact_match", finals)):
        bad = debug_reward(get(reward), completions, answer=answers, label=labels, show=False)
        (finding,) = bad.findings(reward, "label_disagreement")
        assert finding.severity == "error" and bad.stats[reward].label_auc < 0.6, reward
