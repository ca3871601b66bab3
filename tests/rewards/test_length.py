"""Length rewards: tables of lengths -> scores, in words, characters and tokens."""
import math

import pytest

from grpokit.rewards import RewardConfigError, describe, get


def words(n):
    return " ".join(["w"] * n)


def score(func, text, **columns):
    """Score as a string and as a message list; both must agree."""
    plain = func([text], **columns)
    chat = func([[{"role": "assistant", "content": text}]], **columns)
    assert plain == chat
    return plain[0]


IDEAL = [
    (100, 1.0),  # right: on target
    (108, 1.0),  # within the default 10% tolerance
    (90, 1.0),  # tolerance is symmetric
    (160, 0.5),  # 50 words beyond the band = default scale (50% of target) -> half
    (40, 0.5),  # too short costs the same as too long
    (130, 0.5 ** ((20 / 50) ** 2)),  # near miss: smooth, not a cliff
    (0, 0.5 ** ((90 / 50) ** 2)),  # empty completion: far off
]


@pytest.mark.parametrize("n, expected", IDEAL)
def test_ideal_length_words(n, expected):
    assert score(get("ideal_length", target=100), words(n)) == pytest.approx(expected)


def test_ideal_length_is_monotone_outside_the_band():
    func = get("ideal_length", target=50, tolerance=0, scale=10)
    values = func([words(n) for n in range(50, 120, 5)])
    assert values == sorted(values, reverse=True) and values[0] == 1.0 and values[-1] < 1e-6


def test_whitespace_only_is_zero_words():
    # multi-space, tabs and newlines are separators, not words
    assert score(get("min_length", min_len=4), " \n\t  ") == 0.0
    assert score(get("min_length", min_len=4), "a\n\nb\tc   d") == 1.0


MIN = [(0, 0.0), (5, 0.5), (10, 1.0), (500, 1.0)]  # linear credit up to min_len, then flat


@pytest.mark.parametrize("n, expected", MIN)
def test_min_length(n, expected):
    assert score(get("min_length", min_len=10), words(n)) == expected


MAX = [(0, 0.0), (10, 0.0), (15, -0.5), (20, -1.0), (1000, -1.0)]  # 0 inside, linear to -1 at 2x, capped


@pytest.mark.parametrize("n, expected", MAX)
def test_max_length_penalty(n, expected):
    assert score(get("max_length_penalty", max_len=10), words(n)) == expected


# DAPO Eq. 13 with L = 100, C = 20: free up to 80, then a ramp to -1 at 100, -1 beyond
OVERLONG = [(0, 0.0), (80, 0.0), (90, -0.5), (100, -1.0), (101, -1.0)]


@pytest.mark.parametrize("n, expected", OVERLONG)
def test_soft_overlong_punishment_uses_completion_ids(n, expected):
    func = get("soft_overlong_punishment", max_len=100, cache=20)
    # TRL passes the generated token ids; the text is irrelevant then
    assert func(["whatever"], completion_ids=[[7] * n]) == [expected]


def test_soft_overlong_matches_trl():
    from trl.rewards import get_soft_overlong_punishment

    theirs = get_soft_overlong_punishment(max_completion_len=100, soft_punish_cache=20)
    ours = get("soft_overlong_punishment", max_len=100, cache=20)
    ids = [[1] * n for n in (0, 50, 80, 81, 95, 100, 101, 300)]
    assert ours(["x"] * len(ids), completion_ids=ids) == pytest.approx(theirs(ids))


@pytest.mark.parametrize(
    "params, text, expected",
    [
        ({"max_len": 10, "cache": 5, "unit": "words"}, words(8), -0.6),  # words instead of tokens
        ({"max_len": 10, "cache": 5, "unit": "chars"}, "x" * 10, -1.0),  # characters
        ({"max_len": 10, "cache": 5, "tokenizer": list}, "abcdefgh", -0.6),  # a callable tokenizer (chars as tokens)
        ({"max_len": 10, "cache": 5, "tokenizer": lambda t: len(t)}, "abcdefgh", -0.6),  # ... or one returning a count
        ({"max_len": 10, "cache": 5}, "no ids, no tokenizer", None),  # tokens cannot be counted: not scoreable
    ],
)
def test_soft_overlong_units(params, text, expected):
    assert score(get("soft_overlong_punishment", **params), text) == (pytest.approx(expected) if expected is not None else None)


class FakeHFTokenizer:
    """Duck-typed like a Hugging Face tokenizer: encode(text, add_special_tokens=...)."""

    def encode(self, text, add_special_tokens=True):
        return text.split() + (["<s>"] if add_special_tokens else [])


def test_hf_style_tokenizer_without_special_tokens():
    func = get("ideal_length", target=3, tolerance=0, tokenizer=FakeHFTokenizer())
    assert func(["a b c"]) == [1.0]  # special tokens are not part of the completion's length


# Cosine schedule, max_len 10 words: correct 1.0 -> 0.5, wrong -1.0 -> -0.5
def _cos(n, a, b, L=10):
    return b + 0.5 * (a - b) * (1 + math.cos(math.pi * min(n, L) / L))


COSINE = [
    ("5", 1, _cos(1, 1.0, 0.5)),  # correct and short: near the top (1.0 at zero length)
    ("x" * 4 + "5", 5, 0.75),  # correct, half way: the midpoint of 1.0 and 0.5
    ("x" * 9 + "5", 10, 0.5),  # correct and long: still positive
    ("x" * 39 + "5", 40, 0.5),  # beyond max_len: clipped to the end value
    ("6", 1, _cos(1, -1.0, -0.5)),  # wrong and short: near the bottom (guessing)
    ("x" * 9 + "6", 10, -0.5),  # wrong and long: thinking more is punished less
]


@pytest.mark.parametrize("text, n, expected", COSINE)
def test_cosine_scaled_schedule(text, n, expected):
    assert len(text) == n
    func = get("cosine_scaled", correct=lambda text, answer=None, **row: text.endswith(answer), max_len=10, unit="chars")
    assert score(func, text, answer=["5"]) == pytest.approx(expected)


def test_cosine_scaled_orderings():
    func = get("cosine_scaled", correct=lambda text, answer=None, **row: answer in text, max_len=100, unit="words")
    short_right, long_right = "5", words(80) + " 5"
    short_wrong, long_wrong = "6", words(80) + " 6"
    s = dict(zip("abcd", func([short_right, long_right, short_wrong, long_wrong], answer=["5"] * 4)))
    assert s["a"] > s["b"] > s["d"] > s["c"]  # right short > right long > wrong long > wrong short


def test_cosine_scaled_with_a_correctness_reward_and_none():
    def exact(completions, answer=None, **kwargs):
        # a correctness reward that cannot score rows without a gold answer
        return [None if a is None else float(c.strip() == a) for c, a in zip(completions, answer)]

    func = get("cosine_scaled", correctness=exact, max_len=10, unit="chars", exceed_penalty=-2.0)
    out = func(["5", "6", "5", "5" * 11], answer=["5", "5", None, "5" * 11])
    assert out[0] > 0 > out[1] and out[2] is None and out[3] == -2.0  # exceed_penalty past max_len


def test_cosine_scaled_reads_completion_ids():
    func = get("cosine_scaled", correct=lambda text, **row: True, max_len=10)
    assert func(["x", "y"], completion_ids=[[1] * 0, [1] * 10]) == [1.0, 0.5]  # tokens by default


@pytest.mark.parametrize(
    "name, params, fragment",
    [
        ("ideal_length", {"target": 0}, "target"),  # a zero target makes no sense
        ("ideal_length", {"target": 10, "unit": "lines"}, "unit"),
        ("ideal_length", {"target": 10, "unit": "words", "tokenizer": list}, "tokenizer"),  # contradictory
        ("min_length", {"min_len": -1}, "min_len"),
        ("max_length_penalty", {"max_len": float("inf")}, "max_len"),
        ("soft_overlong_punishment", {"max_len": 10, "cache": 20}, "cache"),
        ("soft_overlong_punishment", {"tokenizer": 42}, "tokenizer"),
        ("cosine_scaled", {"correctness": "numeric_match", "correct": len}, "not both"),  # two judges of correctness
        ("ideal_length", {}, r"needs target=.*target=200"),  # no default suits every task: say what to pass
        ("min_length", {}, r"needs min_len=.*min_len: 50"),
        ("max_length_penalty", {}, r"--reward max_length_penalty:max_len=300"),
        ("cosine_scaled", {"correctness": "no_such_reward"}, "unknown reward"),
        ("cosine_scaled", {"correct": len, "max_value_wrong": 0.9}, "max_value_wrong"),  # wrong could beat right
    ],
)
def test_bad_params(name, params, fragment):
    with pytest.raises(RewardConfigError, match=fragment):
        get(name, **params)


@pytest.mark.parametrize(
    "name, params",
    [
        ("ideal_length", {"target": 10}),
        ("min_length", {"min_len": 10}),
        ("max_length_penalty", {"max_len": 10}),
        ("soft_overlong_punishment", {}),
        ("cosine_scaled", {"correct": lambda text, **row: True}),
    ],
)
def test_stable_names_and_docs(name, params):
    assert get(name, **params).__name__ == name
    assert describe(name).splitlines()[0].endswith(".")


def test_cosine_scaled_judges_math_answers_by_default():
    # With no correctness given it checks the `answer` column with math_equivalence, as TRL's and open-r1's do.
    func = get("cosine_scaled", max_len=100)
    scores = func(["\\boxed{\\frac{1}{2}}", "\\boxed{3}", "\\boxed{1}"], answer=["0.5", "0.5", "Answer is forty two."],
                  completion_ids=[[1] * 10, [1] * 10, [1] * 10])
    assert scores[0] > 0.9 and scores[1] < -0.9  # right and short; wrong and short
    assert scores[2] is None  # a gold math-verify cannot read: unscored, not "wrong"


def test_cosine_scaled_matches_trl_with_the_same_correctness():
    # TRL's reference implementation, fed the same correctness reward and token ids
    from trl.rewards import accuracy_reward, get_cosine_scaled_reward

    completions = [[{"role": "assistant", "content": c}] for c in ["\\boxed{\\frac{1}{3}}", "\\boxed{\\frac{1}{2}}", "\\boxed{2}", "\\boxed{7}"]]
    solution = ["\\frac{1}{3}", "\\frac{1}{3}", "2", "3"]
    ids = [[1] * 50, [1] * 50, [1] * 10, [1] * 250]
    theirs = get_cosine_scaled_reward(max_len=100)(completions, solution=solution, completion_ids=ids)
    ours = get("cosine_scaled", correctness=accuracy_reward, max_len=100)(completions, solution=solution, completion_ids=ids)
    assert ours == pytest.approx(theirs)


def test_cosine_scaled_on_labelled_gsm8k_solutions(shared_data):
    # 5276 GPT-3 solutions with human-checked labels: every right one must outscore every wrong
    # one, and among right ones the shorter must never score lower
    import json

    texts, labels = [], []
    for line in (shared_data / "gsm8k_model_solutions.jsonl").open():
        row = json.loads(line)
        for key, value in row.items():
            if isinstance(value, dict) and "solution" in value:
                texts.append(value["solution"])
                labels.append(value["is_correct"])
    func = get("cosine_scaled", correct=lambda text, is_correct=None, **row: is_correct, max_len=150, unit="words")
    scores = func(texts, is_correct=labels)
    right = sorted((len(t.split()), s) for t, s, ok in zip(texts, scores, labels) if ok)
    wrong = [s for s, ok in zip(scores, labels) if not ok]
    assert right and wrong and min(s for _, s in right) > max(wrong)
    assert all(a[1] >= b[1] for a, b in zip(right, right[1:]))


def test_cosine_scaled_resolves_a_correctness_reward_by_name():
    # any registered reward can judge correctness; here json_format (1.0 = "correct")
    func = get("cosine_scaled", correctness="json_format", max_len=10, unit="chars")
    # 8 characters each: progress 0.8 along the schedule
    assert func(['{"a": 1}', "no json!"]) == pytest.approx([0.5 + 0.25 * (1 + math.cos(math.pi * 0.8)), -0.5 - 0.25 * (1 + math.cos(math.pi * 0.8))])
