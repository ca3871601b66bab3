"""A reward's score is never raised by making it unscorable (issue 34, "None escapes").

TRL adds a reward's None as 0. A completion a reward cannot score -- an answer its math check
screens out, text its tokenizer chokes on -- must therefore never be worth more than a wrong
one: it earns the reward's floor (the lowest score it pays), and None is left only where no
completion of the row can be scored at all (no gold answer). The class is checked three ways:
every registered reward against a batch of unscorable forms; combine() over generated parts and
holes; and the probe, which must fail a planted reward of each kind.
"""
import json
import random
import re

import pytest

from grpokit.completions import texts
from grpokit.rewards import RewardConfigError, combine, get, names
from grpokit.answer_format import DEFAULT as FORMAT
from grpokit.probe import probe_rewards
from grpokit.rewards.reward_set import RewardSet

W = FORMAT.wrap
UNREADABLE = ["unknown", "", "N/A", "9" * 400, "3001!", "\\boxed{" + "9" * 1200 + "}", "\x00\ufffd"]
WRONG, HONEST = W("43", "Let me think."), W("42", "Let me think.")
UNSCORABLE = [W(v, "Let me think.") for v in UNREADABLE] + ["", "unknown", "\x00\ufffd"]


def _fussy_tokenizer(text):
    # A tokenizer that fails on some text: the completion's length cannot be measured.
    if "\x00" in text or "\ufffd" in text:
        raise ValueError("cannot encode")
    return text.split()


SCHEMA = json.dumps({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}})
COLUMNS = {"answer": "42", "schema": SCHEMA, "sources": ["The answer is 42.", "Cats sleep a lot."],
           "reference": "The answer is 42.", "expression": "40 + 2", "prompts": "What is 40 + 2?"}

# Rewards that need a server or a model to build: llm_judge (a judge server: its unscorable is its
# None, with floor 0, so TRL's 0 is no raise), reward_model (a model; its NaN scores are settled as
# in test_reward_model_unscorable_is_settled below), code_execution (the sandbox: floor 0).
NEEDS_A_SERVICE = {"llm_judge", "reward_model", "code_execution"}
# Ways to build a reward that make more of it unscorable: length counted by a tokenizer that fails.
VARIANTS = {
    "cosine_scaled": [{}, {"tokenizer": _fussy_tokenizer}, {"correctness": "numeric_match"}],
    "max_length_penalty": [{"max_len": 3, "unit": "tokens", "tokenizer": _fussy_tokenizer}],
    "soft_overlong_punishment": [{"max_len": 8, "cache": 4, "tokenizer": _fussy_tokenizer}],
    "min_length": [{"min_len": 5, "unit": "tokens", "tokenizer": _fussy_tokenizer}],
    "ideal_length": [{"target": 5, "unit": "tokens", "tokenizer": _fussy_tokenizer}],
}


def _builds():
    from grpokit.rewards.registry import _REGISTRY

    for name in _shipped():
        if name in NEEDS_A_SERVICE:
            continue
        for params in VARIANTS.get(name, [dict(_REGISTRY[name].examples)]):
            yield pytest.param(name, params, id=f"{name}{'-' + '-'.join(params) if params else ''}")


def _shipped():
    # Other tests register rewards of their own into the same registry; the shipped ones live in grpokit.
    from grpokit.rewards.registry import _REGISTRY

    return [n for n in names() if getattr(_REGISTRY[n].factory, "__module__", "").startswith("grpokit.")]


def test_every_registered_reward_declares_its_floor():
    from grpokit.rewards.unscorable import FLOORS

    missing = set(_shipped()) - set(FLOORS)
    assert not missing, f"declare the lowest score of {sorted(missing)} in grpokit.rewards.unscorable.FLOORS"


@pytest.mark.parametrize("name, params", list(_builds()))
def test_unscorable_never_scores_above_the_floor(name, params):
    from grpokit.rewards.unscorable import floor_of

    reward = get(name, **params)
    batch = [WRONG, HONEST, *UNSCORABLE]
    columns = {k: [v] * len(batch) for k, v in COLUMNS.items()}
    scores = reward(batch, **columns)
    floor = floor_of(reward)
    assert floor is not None, f"{name} declares no floor"
    scored = [s for s in scores if s is not None]
    assert all(s >= floor - 1e-9 for s in scored), f"{name} scored {min(scored)} below its floor {floor}"
    if scored and None in scores:
        # TRL adds None as 0: only a reward that pays nothing below 0 may leave a row-mate unscored.
        assert floor >= 0, f"{name} pays down to {floor} but left {scores.count(None)} completion(s) None (worth 0)"
    # Correctness rewards: no unreadable form beats the wrong answer. (cosine_scaled pays a long wrong
    # answer above a short one by design, so a long readable form may; its unscorable get the floor.)
    if reward.__name__ in ("numeric_match", "math_equivalence", "exact_match", "fuzzy_match",
                           "numeric_closeness", "contains_answer", "multiple_choice"):
        worth = [0.0 if s is None else s for s in scores]
        assert max(worth[2:]) <= worth[0] + 1e-9, f"{name}: an unscorable answer beat a wrong one: {scores}"


def test_cosine_scaled_pays_a_screened_out_answer_no_more_than_a_wrong_one():
    # The numbers: with incremental_format x0.5, wrong -0.5, unscreenable +0.5.
    rs = RewardSet([get("cosine_scaled"), get("incremental_format")], [1.0, 0.5])
    batch = [WRONG, HONEST] + [W(v, "Let me think.") for v in ("9" * 400, "3001!", "\\boxed{" + "1+" * 600 + "1}")]
    scored = rs.score(batch, answer=["42"] * len(batch), prompts=["What is 40 + 2?"] * len(batch))
    assert scored.scores["cosine_scaled"][2:] == [-1.0, -1.0, -1.0]
    assert max(scored.totals[2:]) <= scored.totals[0]


def test_a_row_without_gold_stays_none():
    # No reading exists for the row: every completion is None, and TRL leaves the reward out for the group.
    reward = get("cosine_scaled", correctness="numeric_match")
    assert reward([WRONG, HONEST], answer=["no number here", "no number here"]) == [None, None]


def test_reward_model_unscorable_is_settled():
    from grpokit.rewards.unscorable import settled

    # A logit has no floor: a NaN among scored row-mates earns the row's lowest, not None's 0.
    assert settled([-3.0, None, 2.0], {"prompts": ["p"] * 3}, None) == [-3.0, -3.0, 2.0]
    assert settled([None, 0.5], {"prompts": ["p", "q"]}, None) == [None, 0.5]  # alone in its row: None


# --- combine ---------------------------------------------------------------------------------------

def const(name, values):
    def reward(completions, **kwargs):
        return list(values)

    reward.__name__ = name
    return reward


@pytest.mark.parametrize("seed", range(40))
def test_a_part_made_unscorable_never_lifts_the_combined_score(seed):
    # Generated parts (scores from -1 to 1), weights and None policies; completion 0 loses one part.
    # Whatever the part would have paid it -- any score it gave the row -- the hole pays no more.
    rng = random.Random(seed)
    n, k = rng.randint(2, 5), rng.randint(1, 3)
    values = [[rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0]) for _ in range(n)] for _ in range(k)]
    weights = [rng.choice([0.5, 1.0, 2.0]) for _ in range(k)]
    missing = rng.choice(["skip", "renormalize", "propagate"])
    part = rng.randrange(k)

    def score(hole):
        parts = [const(f"p{j}", [hole if (j == part and i == 0) else v for i, v in enumerate(col)])
                 for j, col in enumerate(values)]
        out = combine(parts, weights=weights, missing=missing)(["c"] * n, prompts=["p"] * n)[0]
        return 0.0 if out is None else out  # what TRL adds

    unscorable = score(None)
    for v in values[part][1:]:
        assert unscorable <= score(v) + 1e-9, (values, weights, missing, part)


def test_renormalize_does_not_pay_an_unscreenable_answer_like_the_right_one():
    # The issue: combine(missing="renormalize") paid a 400-digit answer 2.5, the same as the right one.
    reward = combine(["math_equivalence", "incremental_format"], weights=[2.0, 0.5], missing="renormalize")
    batch = [HONEST, WRONG, W("9" * 400, "Let me think."), W("3001!", "Let me think.")]
    scores = reward(batch, answer=["42"] * 4, prompts=["q"] * 4)
    assert scores[0] == 2.5 and max(scores[2:]) <= scores[1]


def test_renormalize_still_rescales_a_part_the_whole_row_lacks():
    reward = combine([const("a", [None, None]), const("b", [1.0, 0.5])], weights=[1.0, 1.0], missing="renormalize")
    assert reward(["x", "y"], prompts=["p", "p"]) == [2.0, 1.0]


def test_product_refuses_a_part_that_pays_below_zero():
    with pytest.raises(RewardConfigError, match="mode='sum'"):
        combine(["numeric_match", "cosine_scaled"], mode="product")


def test_product_of_two_negative_scores_is_an_error_not_a_positive():
    reward = combine([const("a", [-0.5]), const("b", [-0.5])], mode="product")
    with pytest.raises(ValueError, match="mode='sum'"):
        reward(["x"])


def test_product_of_scores_at_or_above_zero_is_unchanged():
    assert combine([const("a", [0.5, 2.0]), const("b", [0.5, 0.0])], mode="product")(["x", "y"]) == [0.25, 0.0]


def test_combined_floor():
    from grpokit.rewards.unscorable import floor_of

    assert floor_of(combine(["numeric_match", "cosine_scaled"], weights=[2.0, 1.0])) == -1.0
    assert floor_of(combine(["numeric_match", const("custom", [])])) is None  # a part without a floor


# --- the probe finds each kind ---------------------------------------------------------------------

def _msg(text):
    return [{"role": "user", "content": text}]


ROWS = [{"prompt": _msg("Tom has 80 apples and buys 7 more. How many?"), "answer": "87"},
        {"prompt": _msg("What is 12 times 15?"), "answer": "180"}]


def _committed(text):
    return FORMAT.committed(text).strip()


def plus_minus_none(completions, answer, **kwargs):
    # +1 right, -1 wrong, None where the answer is not a number: <answer>unknown</answer> escapes the -1.
    out = []
    for text, gold in zip(texts(completions), answer):
        a = _committed(text)
        out.append(None if not re.fullmatch(r"-?\d+", a) else (1.0 if a == gold else -1.0))
    return out


def answer_in_gold(completions, answer, **kwargs):
    # `answer in gold`: "8" is in 87 and in 180.
    return [1.0 if (a := _committed(t)) and a in gold else 0.0 for t, gold in zip(texts(completions), answer)]


def cosine_like(completions, answer, **kwargs):
    # -1 wrong, +1 right, None where the check screens the answer out (over 40 characters).
    out = []
    for text, gold in zip(texts(completions), answer):
        a = _committed(text)
        out.append(None if len(a) > 40 else (1.0 if a == gold else -1.0))
    return out


def _screened(completions, answer, **kwargs):
    return [None if len(a := _committed(t)) > 40 else float(a == g) for t, g in zip(texts(completions), answer)]


def old_renormalize(completions, answer, **kwargs):
    # combine(missing="renormalize") before: a part that cannot score has its weight spread over the rest.
    fmt = get("incremental_format")(completions)
    return [0.5 * f * 2.5 / 0.5 if c is None else 2.0 * c + 0.5 * f
            for c, f in zip(_screened(completions, answer), fmt)]


@pytest.mark.parametrize("reward, probe", [
    (plus_minus_none, "unscorable"),   # <answer>unknown</answer> gets None (0) instead of -1
    (answer_in_gold, "gold_fragment"),  # "8" is paid for golds 87 and 180
    (cosine_like, "unscorable"),       # 400 digits screened out: None (0) above a wrong -1
    (old_renormalize, "unscorable"),   # a 400-digit answer paid like the right one
])
def test_probe_fails_a_planted_reward_of_each_kind(reward, probe):
    report = probe_rewards([reward], ROWS)
    caught = {e.probe for e in report.exploits if e.severity == "fail"}
    assert probe in caught, f"{probe} not caught; caught {sorted(caught)}"


def test_probe_passes_the_shipped_forms_of_those_rewards():
    shipped = [get("cosine_scaled", correctness="numeric_match"), get("incremental_format"),
               combine([_screened, "incremental_format"], weights=[2.0, 0.5], missing="renormalize")]
    report = probe_rewards(shipped, ROWS, [1.0, 0.5, 1.0])
    caught = {(e.reward, e.probe) for e in report.exploits if e.severity == "fail"}
    assert not {p for _, p in caught} & {"unscorable", "gold_fragment", "huge_number"}, caught


def test_attack_generators():
    from grpokit.probe.battery import gold_fragments, near_numbers, placeholder
    from grpokit.probe.rows import holding_sources

    assert {"8", "18"} <= set(gold_fragments("180")) and "8" in gold_fragments("87")
    assert "180" not in gold_fragments("180") and gold_fragments("7") == []
    assert "P" in gold_fragments("Paris") and gold_fragments("Au") == []  # one letter of a 2-letter word is too close
    assert "140" in near_numbers("14") and "14" not in near_numbers("14")
    assert placeholder({"name": "Ravi", "is_member": True, "age": 62, "tags": ["a"]}) == \
        {"name": "", "is_member": False, "age": 0, "tags": []}
    assert holding_sources("14 euros", ["A ticket costs 114 euros.", "A ticket costs 14 euros."]) == ((2,), 2)
    assert holding_sources("14 euros", "not a list") == ((), 0)


def test_training_and_scoring_settle_any_reward_a_plugin_too():
    # A plugin reward that pays -1 for wrong and None for unreadable: TRL (through TrainerRewards) and
    # RewardSet.score get the row's lowest score for the None, and none_frac still counts it.
    from grpokit.rewards.trainer_rewards import TrainerRewards

    batch = [WRONG, HONEST, W("unknown", "Let me think.")]
    columns = {"answer": ["42"] * 3, "prompts": ["q"] * 3}
    calls = TrainerRewards(RewardSet([plus_minus_none]))
    assert calls.funcs[0](batch, **columns) == [-1.0, 1.0, -1.0]
    assert calls.window()["rewards/plus_minus_none/none_frac"] == pytest.approx(1 / 3)
    scored = RewardSet([plus_minus_none]).score(batch, **columns)
    assert scored.scores["plus_minus_none"] == [-1.0, 1.0, -1.0] and scored.none["plus_minus_none"] == 1
