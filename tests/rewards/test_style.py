"""Style rewards: behaviour tables, the reward contract on hostile input, real data."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpokit.rewards import RewardConfigError, describe, get, names
from grpokit.rewards import registry

STYLE = ["reasoning_quality", "citation", "repetition_penalty", "language_consistency", "group_diversity", "reference_overlap"]


def score(name, completions, **kwargs):
    return get(name)(completions, **kwargs)


def one(name, text, **columns):
    """Score a single completion; columns given as scalars for readability."""
    return get(name)([text], **{k: [v] for k, v in columns.items()})[0]


def chat(text):
    return [{"role": "assistant", "content": text}]


# ------------------------------------------------------------------ contract


@pytest.mark.parametrize("name", STYLE)
def test_registered_as_style_with_docs_and_stable_name(name):
    # The catalogue and `rewards list` read the family and the first doc line;
    # TRL logs each reward under __name__, so it must be the registered name.
    assert name in names()
    assert registry.family(name) == "style"
    doc = describe(name)
    assert doc.splitlines()[0].endswith(".") and "Columns read" in doc
    assert get(name).__name__ == name


HOSTILE = [
    "",  # empty: nothing to score must still give a number or None
    "   \n\t  ",  # whitespace only
    "a" * 1_000_000,  # 1 MB with no spaces: one giant token
    "word " * 200_000,  # 1 MB of one word: worst case for n-gram counting
    "\x00\x00 nul bytes [1] (Smith, 2020) \x00",  # NUL bytes next to citation patterns
    "lone surrogate \ud800 here",  # invalid UTF-16 half from a broken decoder
    "[" * 10_000 + "(" * 10_000,  # unbalanced brackets: regex backtracking bait
    "1. " * 50_000,  # empty numbered lines by the thousand
    # Regex traps found while building these rewards; each was quadratic once:
    "a." * 50_000,  # every dot starts a "name": narrative-citation search took 400 s
    "\\(" * 50_000,  # unclosed LaTeX \( : markup stripping took 260 s
    "\\[" * 50_000,  # unclosed LaTeX \[
    "A. (2020) " * 10_000,  # thousands of year anchors, each with a name window
    '"a b c d e f ' * 10_000,  # unbalanced quotes full of words
    "\u201c" * 100_000,  # curly openers only: the quote search took 3 s
    "$ " * 50_000 + "`" * 50_000,  # inline-math and inline-code openers with no closers
]

COLUMNS = {
    "prompts": lambda n: ["What is 2+2?"] * n,
    "reference": lambda n: ["the cat sat on the mat"] * n,
    "sources": lambda n: [["doc one", {"id": "smith", "author": "Smith", "year": 2020}]] * n,
}


@pytest.mark.parametrize("name", STYLE)
def test_hostile_completions_score_fast_and_finite(name, cpu_clock):
    # Never raise, one finite float or None per completion, and bounded time on
    # 1 MB inputs (a reward runs on every batch of every step).
    reward = get(name)
    cols = {k: f(len(HOSTILE)) for k, f in COLUMNS.items()}
    with cpu_clock() as clock:
        out = reward(HOSTILE, **cols)
    elapsed = clock.seconds  # CPU, not wall: other jobs on the machine do not count
    assert len(out) == len(HOSTILE)
    assert all(v is None or (isinstance(v, float) and math.isfinite(v)) for v in out), out
    assert elapsed < 5.0, f"{name} took {elapsed:.2f} CPU s on hostile input"


@pytest.mark.parametrize("name", STYLE)
def test_conversational_equals_plain(name):
    # Every reward accepts both TRL completion formats and scores them alike.
    plain = ["Step 1: x = 2 [1]\nTherefore x is 2 because so.", "Hello world hello world hello world"]
    cols = {k: f(2) for k, f in COLUMNS.items()}
    assert get(name)(plain, **cols) == get(name)([chat(t) for t in plain], **cols)


@pytest.mark.parametrize("name", STYLE)
def test_missing_columns_do_not_raise(name):
    # Extra kwargs are ignored and absent columns mean "cannot check", not a crash.
    out = get(name)(["some text [1]"], unrelated=[1], completion_ids=[[1, 2]])
    assert len(out) == 1


@pytest.mark.parametrize("name", ["citation", "language_consistency", "group_diversity", "reference_overlap"])
def test_misaligned_column_is_loud(name):
    # A column with the wrong number of rows is a pipeline bug: say so.
    column = {"citation": "sources", "language_consistency": "prompts", "group_diversity": "prompts",
              "reference_overlap": "reference"}[name]
    with pytest.raises(ValueError, match="align"):
        get(name)(["a", "b"], **{column: ["only one"]})


# Pieces of the patterns the rewards look for, shuffled: reaches the regex
# paths that plain random text almost never hits.
_PIECES = [*'aA. ()[]$`\\"\u201c\u201d-,;:12=\n\u4e2d\u0416', "Step ", "et al.", "2020", "according to ", "</think>"]
_PATTERNY = st.lists(st.sampled_from(_PIECES), max_size=120).map("".join)


@settings(max_examples=60, deadline=None)
@given(text=st.one_of(st.text(max_size=300), _PATTERNY), prompt=st.one_of(st.text(max_size=50), _PATTERNY))
def test_fuzz_any_text_is_scored(text, prompt):
    # Anything a model can write: finite or None, never an exception.
    for name in STYLE:
        out = get(name)([text, text + " x"], prompts=[prompt, prompt], reference=[prompt, prompt],
                        sources=[[prompt], [prompt]])
        assert all(v is None or math.isfinite(v) for v in out)


BAD_PARAMS = [
    ("reasoning_quality", {"target_steps": 0}),  # zero target would divide by zero
    ("reasoning_quality", {"step_weight": 1.5}),  # weights outside [0, 1] break the [0, 1] range
    ("citation", {"target": -1}),  # a negative count of citations means nothing
    ("citation", {"styles": ["footnote"]}),  # unknown style: name the valid ones
    ("citation", {"styles": []}),  # no styles would always score 0
    ("repetition_penalty", {"n": 0}),  # 0-grams do not exist
    ("repetition_penalty", {"max_penalty": 2.0}),  # score must stay in [-1, 0]
    ("repetition_penalty", {"max_penalty": 0}),  # a zero penalty is a disabled reward: use weight 0
    ("group_diversity", {"method": "cosine"}),  # only ngram and fuzz exist
    ("group_diversity", {"aggregate": "median"}),  # only mean and max exist
    ("reference_overlap", {"max_n": 9}),  # long n-grams reward copying, refuse
    ("reference_overlap", {"max_m": 2}),  # typo: the registry names the nearest parameter
]


@pytest.mark.parametrize("name,params", BAD_PARAMS)
def test_bad_parameters_fail_at_construction(name, params):
    with pytest.raises(RewardConfigError):
        get(name, **params)


# --------------------------------------------------------- reasoning_quality

REASONING = [
    # (text, expected score with defaults, why)
    ("", 0.0, "nothing written, nothing earned"),
    ("42", 0.0, "a bare answer shows no reasoning"),
    ("Step 1: add the apples\nStep 2: add the pears\nStep 3: total = 7", 0.5, "three steps, no connectives: full step half"),
    ("therefore because so", 0.5, "three connective kinds, no steps: full connective half"),
    ("1. 2 + 3 = 5\n2. 5 * 2 = 10\n3. 10 - 1 = 9\nTherefore, because of this, so 9.", 1.0, "steps and connectives"),
    ("- first we add\n- then we multiply", 0.5 * 2 / 3 + 0.5 * 2 / 3, "two bullet steps; 'first' and 'then' are two kinds"),
]


@pytest.mark.parametrize("text,expected,why", REASONING)
def test_reasoning_quality(text, expected, why):
    assert one("reasoning_quality", text) == pytest.approx(expected), why


def test_reasoning_quality_cannot_be_gamed_by_repetition():
    # Repeating one step line and one connective must earn what one copy earns.
    once = "Step 1: x = 2\ntherefore"
    spam = ("Step 1: x = 2\n" * 500) + "therefore " * 500
    assert one("reasoning_quality", spam) == pytest.approx(one("reasoning_quality", once))
    # Many distinct steps are capped at target_steps.
    many = "\n".join(f"{i}. value {i} = {i * 2}" for i in range(1, 200))
    assert one("reasoning_quality", many) == pytest.approx(0.5)


def test_reasoning_quality_params():
    # target_steps=1 makes one step enough; step_weight=1 ignores connectives.
    r = get("reasoning_quality", target_steps=1, step_weight=1.0)
    assert r(["Step 1: x = 2", "therefore because so"]) == [1.0, 0.0]


# ------------------------------------------------------------------ citation

CITATIONS = [
    # (text, sources, params, expected, why)
    ("no citations here", None, {}, 0.0, "nothing cited"),
    ("Water boils at 100C [1].", None, {}, 1.0, "bracket citation, no sources to check against"),
    ("As shown (Smith, 2020).", None, {}, 1.0, "author-year in parentheses"),
    ("Smith et al. (2019) showed it.", None, {}, 1.0, "narrative author-year"),
    ("Seen in (Lee et al. 2019; Kim & Park, 2021).", None, {"target": 2}, 1.0, "two author-years in one parenthesis"),
    ("According to the WHO, it spreads.", None, {}, 1.0, "attribution phrase"),
    ("It is hot [1].", None, {"target": 2}, 0.5, "graded: one of two wanted citations"),
    ("[1] [1] [1] [1]", None, {"target": 2}, 0.5, "repeating one citation counts once"),
    ("See [1-3].", None, {"target": 3}, 1.0, "a range cites each id in it"),
    ("In 2020 (see chapter 3) it rose.", None, {}, 0.0, "a parenthesis with a year is not an author-year"),
    ("Fact [1], fact [2].", ["doc a", "doc b"], {"target": 2}, 1.0, "both ids exist among 2 sources"),
    ("Fact [1], fact [7].", ["doc a", "doc b"], {"target": 2}, 0.5, "[7] is fabricated: half the citations resolve"),
    ("Fact [9].", ["doc a"], {}, 0.0, "only a fabricated citation"),
    ("Fact [9].", ["doc a"], {"check_sources": False}, 1.0, "checking switched off"),
    ("Fact [smith].", {"smith": "text"}, {}, 0.0, "bracket ids must be numbers in this pattern"),
    ("Fact [3].", {"3": "text", "7": "other"}, {}, 1.0, "dict sources are cited by their keys"),
    ("Fact [1].", {"3": "text", "7": "other"}, {}, 0.0, "with ids, position does not count"),
    ("As (Smith, 2020) found.", [{"author": "John Smith", "year": 2020, "text": "..."}], {}, 1.0, "author and year match a source"),
    ("As (Smith, 2021) found.", [{"author": "John Smith", "year": 2020}], {}, 0.0, "wrong year: not that source"),
    ("According to Reuters, it fell.", [{"title": "Markets", "source": "Reuters"}], {}, 1.0, "attribution names a source"),
    ("According to Bloomberg, it fell.", [{"title": "Markets", "source": "Reuters"}], {}, 0.0, "attribution to an absent source"),
    ('He said "the quick brown fox jumps" [1].', ["The quick  brown fox jumps over."], {"target": 2}, 1.0,
     "verbatim quote (case/space-insensitive) plus a valid id"),
    ('He said "the slow brown fox sleeps" [1].', ["The quick brown fox jumps over."], {"target": 2}, 0.5,
     "misquote: a quote not in any source counts against"),
    ('He said "the slow brown fox sleeps".', None, {}, 0.0, "without sources a quote is not a citation"),
]


@pytest.mark.parametrize("text,sources,params,expected,why", CITATIONS)
def test_citation(text, sources, params, expected, why):
    assert get("citation", **params)([text], sources=[sources])[0] == pytest.approx(expected), why


def test_citation_styles_param():
    # Only bracket style: an author-year citation earns nothing.
    r = get("citation", styles=["bracket"])
    assert r(["(Smith, 2020)", "[2]"]) == [0.0, 1.0]


# -------------------------------------------------------- repetition_penalty

REPETITION = [
    # (text, params, expected, why)
    ("", {}, 0.0, "no n-grams, no penalty"),
    ("too short", {}, 0.0, "fewer words than n"),
    ("the cat sat on the mat", {}, 0.0, "no repeated trigram"),
    ("a b c a b c", {}, -0.25, "trigrams abc,bca,cab,abc: 3 distinct of 4"),
    ("a b c a b c", {"max_penalty": 0.5}, -0.125, "max_penalty scales the penalty"),
    ("a b c a b c", {"max_penalty": -0.5}, -0.125, "open-r1 writes the penalty negative: same result"),
    ("go go go go go", {"n": 1}, -0.8, "unigrams: 1 distinct of 5"),
    ("The Cat the cat THE CAT", {"n": 2}, -0.6, "case-insensitive: 'the cat' x3, 'cat the' x2"),
]


@pytest.mark.parametrize("text,params,expected,why", REPETITION)
def test_repetition_penalty(text, params, expected, why):
    assert get("repetition_penalty", **params)([text])[0] == pytest.approx(expected), why


def test_repetition_penalty_loop_approaches_max_and_never_positive():
    # A completion stuck in a loop nears -1; no text can earn a positive score.
    out = score("repetition_penalty", ["I am stuck. " * 2000, "fresh words every time here"])
    assert -1.0 <= out[0] < -0.99 and out[1] == 0.0
    assert str(out[1]) == "0.0"  # not -0.0, which prints oddly in logs


# ------------------------------------------------------ language_consistency

LANGUAGE = [
    # (completion, prompt, params, expected, why)
    ("The answer is four.", "What is 2+2?", {}, 1.0, "English for English"),
    ("答案是四。", "2加2等于几？", {}, 1.0, "Chinese for Chinese"),
    ("The answer is four.", "2加2等于几？", {}, 0.0, "drifted to English"),
    ("答案是 four", "2加2等于几？", {}, 3 / 4, "mixed: 3 Han characters and 1 Latin word"),
    ("ответ is the answer", "Сколько?", {}, 1 / 4, "mixed: 1 Cyrillic word of 4 words"),
    ("東京です", "日本の首都は？", {}, 1.0, "Japanese kana and kanji are one family"),
    ("Ответ: четыре", "Сколько будет 2+2?", {}, 1.0, "Cyrillic for Cyrillic"),
    ("Answer: vier", "Сколько будет 2+2?", {}, 0.0, "Latin for a Cyrillic question"),
    ("Réponse : quatre", "Combien font 2+2 ?", {}, 1.0, "accented Latin is Latin"),
    ("答案：\n```python\nprint(2 + 2)\n```\n是四", "用Python计算2加2", {}, 1.0, "code blocks are ignored"),
    ("答案：\n```python\nprint(2 + 2)\n```\n是四", "用Python计算2加2", {"ignore_markup": False}, 4 / 6,
     "counting code: the words 'python' and 'print' against 4 Han characters"),
    ("答案是 $\\frac{x}{y}$ 四", "计算", {}, 1.0, "LaTeX math is ignored"),
    ("答 four five six", "2加2等于几？", {"binary": True}, 0.0, "binary: dominant script is Latin, not Han"),
    ("答案是四 ok", "2加2等于几？", {"binary": True}, 1.0, "binary: dominant script is Han"),
    ("42", "What is 2+2?", {}, None, "no letters in the answer: nothing to judge"),
    ("", "What is 2+2?", {}, None, "empty answer: nothing to judge"),
    ("four", "2+2=?", {}, None, "no letters in the prompt: no script to match"),
    ("four", None, {}, None, "no prompt"),
    ("четыре", [{"role": "system", "content": "You are a helpful assistant. Answer briefly."},
                {"role": "user", "content": "Сколько будет 2+2?"}], {}, 1.0,
     "chat prompt: the user's turn sets the script, not the English system prompt"),
    ("𝑥 is four", "What is x?", {}, 1.0, "mathematical letters are symbols, not a script"),
]


@pytest.mark.parametrize("completion,prompt,params,expected,why", LANGUAGE)
def test_language_consistency(completion, prompt, params, expected, why):
    out = get("language_consistency", **params)([completion], prompts=[prompt])[0]
    if expected is None:
        assert out is None, why
    else:
        assert out == pytest.approx(expected), why


def test_language_consistency_without_prompts_column():
    # Called outside TRL with no prompts at all: None per row, not a crash.
    assert score("language_consistency", ["a", "b"]) == [None, None]


# ----------------------------------------------------------- group_diversity

DIVERSITY = [
    # (completions, prompts, params, expected, why)
    (["same answer here", "same answer here", "same answer here"], ["p"] * 3, {}, [0.0, 0.0, 0.0],
     "identical group: nobody is different"),
    (["alpha beta gamma", "delta epsilon zeta"], ["p"] * 2, {}, [1.0, 1.0], "no shared bigrams: fully diverse"),
    (["a b c", "a b c", "x y z"], ["p"] * 3, {}, [0.5, 0.5, 1.0], "the odd one out scores highest"),
    (["a b c", "a b c", "a b c", "a b c"], ["p", "p", "q", "r"], {}, [0.0, 0.0, None, None],
     "groups by prompt: q and r have one completion each"),
    (["a b c", "a b c", "x y z"], None, {}, [0.5, 0.5, 1.0], "no prompts: the batch is one group"),
    (["a b c", "a b c", "x y z"], ["p"] * 3, {"aggregate": "max"}, [0.0, 0.0, 1.0],
     "max: a completion with one twin is a repeat"),
    (["yes", "yes", "no"], ["p"] * 3, {}, [0.5, 0.5, 1.0], "shorter than n: whole answer is one unit"),
    (["", "  ", "real answer"], ["p"] * 3, {}, [0.0, 0.0, 1.0], "empty answers earn no diversity"),
    (["abcd", "abcd", "wxyz"], ["p"] * 3, {"method": "fuzz"}, [0.5, 0.5, 1.0], "edit similarity"),
]


@pytest.mark.parametrize("completions,prompts,params,expected,why", DIVERSITY)
def test_group_diversity(completions, prompts, params, expected, why):
    kwargs = {} if prompts is None else {"prompts": prompts}
    out = get("group_diversity", **params)(completions, **kwargs)
    assert out == [pytest.approx(e) if e is not None else None for e in expected], why


def test_group_diversity_groups_chat_prompts_and_spreads_std():
    # TRL layout: num_generations completions per prompt side by side, chat
    # prompts as message lists. A group of near-copies gets spread scores, so
    # reward_std is no longer 0 for that prompt.
    p1 = [{"role": "user", "content": "Name a fruit."}]
    p2 = [{"role": "user", "content": "Name a colour."}]
    completions = [chat("An apple is a fruit."), chat("An apple is a fruit."), chat("A mango, sweet and ripe."),
                   chat("Red."), chat("Blue is calm.")]
    out = get("group_diversity")(completions, prompts=[p1, p1, p1, p2, p2])
    assert out[2] > out[0] == out[1]
    assert out[3] == out[4] == 1.0


# --------------------------------------------------------- reference_overlap

OVERLAP = [
    # (completion, reference, params, expected, why)
    ("the cat sat on the mat", "the cat sat on the mat", {}, 1.0, "identical"),
    ("dogs run far", "the cat sat on the mat", {}, 0.0, "nothing shared"),
    ("the cat", "the cat sat on the mat", {}, (0.5 + 2 * (1 / 1) * (1 / 5) / (1 + 1 / 5)) / 2,
     "unigram F1 0.5 (P=1, R=1/3), bigram F1 1/3 (P=1, R=1/5)"),
    ("mat the on sat cat the", "the cat sat on the mat", {"max_n": 1}, 1.0, "unigrams ignore order"),
    ("<think>scratch</think>the cat sat on the mat", "the cat sat on the mat", {}, 1.0, "reasoning is stripped"),
    ("<think>scratch</think>the cat sat on the mat", "the cat sat on the mat", {"strip_think": False}, None,
     "without stripping the scratch words lower the score (checked below)"),
    ("", "the cat sat", {}, 0.0, "empty summary"),
    ("anything", None, {}, None, "no reference: cannot score"),
    ("anything", "   ", {}, None, "blank reference: cannot score"),
    ("cat", "cat", {}, 1.0, "reference shorter than n: bigrams are skipped"),
]


@pytest.mark.parametrize("completion,reference,params,expected,why", OVERLAP)
def test_reference_overlap(completion, reference, params, expected, why):
    out = get("reference_overlap", **params)([completion], reference=[reference])[0]
    if expected is None and params.get("strip_think") is False:
        assert 0 < out < 1, why
    elif expected is None:
        assert out is None, why
    else:
        assert out == pytest.approx(expected), why


# ----------------------------------------------------------------- real data


def _jsonl(path, limit):
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            rows.append(json.loads(line))
            if len(rows) >= limit:
                break
    return rows


def test_real_gsm8k_solutions_show_reasoning_and_do_not_loop(shared_data):
    # GSM8K gold solutions are short worked solutions: nearly all show steps,
    # none loop; their bare final answers show no reasoning at all.
    rows = _jsonl(shared_data / "gsm8k_train.jsonl", 300)
    solutions = [r["answer"] for r in rows]
    finals = [s.rsplit("####", 1)[1].strip() for s in solutions]
    quality = score("reasoning_quality", solutions)
    assert sum(q > 0 for q in quality) / len(quality) > 0.9
    assert max(score("reasoning_quality", finals)) == 0.0
    # GSM8K's <<16-3=13>> calculator notes repeat numbers, so a little penalty
    # is normal (median -0.05, worst -0.33 on these rows); a loop is near -1.
    penalties = sorted(score("repetition_penalty", solutions))
    assert penalties[len(penalties) // 2] > -0.1 and penalties[0] > -0.5
    prompts = [r["question"] for r in rows]
    assert set(score("language_consistency", solutions, prompts=prompts)) == {1.0}


def test_real_repetition_separates_wrong_math_answers(shared_data):
    # On 800 labelled model answers to MATH problems, wrong answers loop more:
    # the median penalty is lower and heavy penalties (< -0.5) are far more
    # common among them (measured: 5.6% of wrong vs 0.1% of right answers).
    rows = _jsonl(shared_data / "math_cot100_labeled.jsonl", 100)
    texts_ = [c for r in rows for c in r["code"]]
    labels = [bool(x) for r in rows for x in r["score"]]
    penalty = score("repetition_penalty", texts_)
    right = sorted(p for p, ok in zip(penalty, labels) if ok)
    wrong = sorted(p for p, ok in zip(penalty, labels) if not ok)
    assert wrong[len(wrong) // 2] < right[len(right) // 2]
    assert sum(p < -0.5 for p in wrong) / len(wrong) > 5 * sum(p < -0.5 for p in right) / len(right)


def test_real_model_solutions_diversity(shared_data):
    # Four GPT-3 variants answered each GSM8K question: grouped by question,
    # diversity is defined for every row and lower for more similar solutions.
    rows = _jsonl(shared_data / "gsm8k_model_solutions.jsonl", 40)
    variants = [k for k in rows[0] if isinstance(rows[0][k], dict) and "solution" in rows[0][k]]
    completions = [r[v]["solution"] for r in rows for v in variants]
    prompts = [r["question"] for r in rows for _ in variants]
    out = score("group_diversity", completions, prompts=prompts)
    assert all(v is not None and 0.0 <= v <= 1.0 for v in out)
    # Identical solutions within a group score exactly 0 diversity against each other.
    dup = get("group_diversity", aggregate="max")([completions[0]] * 2 + [completions[1]], prompts=["q"] * 3)
    assert dup[0] == dup[1] == 0.0
