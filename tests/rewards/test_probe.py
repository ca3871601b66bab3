"""The reward probe: each planted exploitable reward is caught by its probe; every built-in preset passes."""
import re

import pytest

from grpokit.completions import texts
from grpokit.rewards import get, preset, presets
from grpokit.answer_format import DEFAULT as FORMAT
from grpokit.probe import TOTAL, probe_rewards


def _msg(text):
    return [{"role": "user", "content": text}]


MATH = [{"prompt": _msg("Tom has 3 apples and buys 4 more. How many apples does he have?"), "answer": "7"},
        {"prompt": _msg("Janet sells 16 eggs at $2 each, minus 7 she eats. How much does she make?"), "answer": "She makes 9 * 2 = 18.\n#### 18"}]
CHOICE = [{"prompt": _msg("Which is a mammal? (A) shark (B) whale (C) trout (D) carp"), "answer": "B"}]
CODE = [{"prompt": _msg("Write add(a, b)."), "tests": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"],
         "solution": "def add(a, b):\n    return a + b"}]
IO = [{"prompt": _msg("Read two integers and print their sum."), "tests": [{"input": "1 2\n", "output": "3\n"}],
       "solution": "a, b = map(int, input().split())\nprint(a + b)"}]
DOCUMENT = ("The city council voted on Tuesday to build a new library downtown. The library will open in 2026 and cost "
            "12 million dollars. Residents had asked for more study space for years, and several speakers described "
            "crowded reading rooms at the old branch. The council also discussed parking, the bus routes that serve the "
            "site, and whether the old branch should stay open as a community center once the new building is finished.")
PRESET_ROWS = {
    "math_reasoning": MATH + [{"prompt": _msg("A recipe uses half a cup of sugar and a quarter cup of honey. "
                                              "How many cups of sweetener in all?"), "answer": "\\frac{3}{4}"}],
    "qa": [{"prompt": _msg("What is the capital of France?"), "answer": "Paris"}, *CHOICE,
           {"prompt": _msg("How many legs does a spider have?"), "answer": "8"}],
    "code_generation": CODE + [dict(IO[0], tests=IO[0]["tests"] + [{"input": "5 5\n", "output": "10\n"}])],
    "summarization": [{"prompt": _msg(f"Summarize: {DOCUMENT}"),
                       "reference": "The council approved a new downtown library, opening in 2026 at a cost of 12 million dollars."}],
    "json_output": [{"prompt": _msg("Give a person as JSON with name and age: Ada, 36."), "answer": '{"name": "Ada", "age": 36}',
                     "schema": {"type": "object", "required": ["name", "age"],
                                "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}}}],
    "kb_qa": [{"prompt": _msg("Documents:\n[1] The museum opens at 9 am.\n[2] A ticket costs 14 euros.\n\n"
                              "Question: How much is a ticket?"), "answer": "14 euros",
               "sources": ["The museum opens at 9 am.", "A ticket costs 14 euros."]}],
}


# --- planted rewards: each has one bug a policy would find ----------------------------------------

def _numbers(text):
    return re.findall(r"-?\d+(?:\.\d+)?", text)


def _gold(value):
    return str(value).rsplit("####", 1)[-1].strip()


def no_wrong_number(completions, answer, **kwargs):
    # Bug: "no wrong number written" counts as right, so saying nothing is right.
    return [0.0 if any(n != _gold(g) for n in _numbers(t)) else 1.0 for t, g in zip(texts(completions), answer)]


def answer_is_prefix(completions, answer, **kwargs):
    # Bug: gold.startswith(answer) holds for an empty answer.
    tags = [FORMAT.tagged(t) for t in texts(completions)]
    return [1.0 if tag is not None and _gold(g).startswith(tag) else 0.0 for tag, g in zip(tags, answer)]


def counts_tags(completions, **kwargs):
    # Bug: every tag pays, so repeating them pays more.
    return [0.25 * sum(t.count(tag) for tag in ("<reasoning>", "</reasoning>", "<answer>", "</answer>"))
            for t in texts(completions)]


def prompt_overlap(completions, prompts, **kwargs):
    # Bug: "relevance" as the share of prompt words repeated.
    out = []
    for t, p in zip(texts(completions), prompts):
        words = set(p[-1]["content"].lower().split())
        out.append(len(words & set(t.lower().split())) / max(1, len(words)))
    return out


def letter_anywhere(completions, answer, **kwargs):
    # Bug: the gold letter anywhere in the text counts as choosing it.
    return [1.0 if re.search(rf"\b{g}\b", t) else 0.0 for t, g in zip(texts(completions), answer)]


def gold_mentioned(completions, answer, **kwargs):
    # Bug: the gold anywhere in the text, not in the committed answer.
    return [1.0 if re.search(rf"(?<![\d.]){re.escape(_gold(g))}(?![\d.])", t) else 0.0
            for t, g in zip(texts(completions), answer)]


def any_number_in_answer(completions, answer, **kwargs):
    # Bug: any number in the answer tag matching counts (a hedge list pays).
    return [1.0 if _gold(g) in _numbers(FORMAT.tagged(t) or "") else 0.0 for t, g in zip(texts(completions), answer)]


def any_box(completions, answer, **kwargs):
    # Bug: any \boxed{} region holding the gold counts.
    return [1.0 if any(_gold(g) in _numbers(b) for b in re.findall(r"\\boxed\{([^}]*)\}", t)) else 0.0
            for t, g in zip(texts(completions), answer)]


def longer_is_better(completions, **kwargs):
    # Bug: an uncapped length bonus.
    return [len(t) / 200 for t in texts(completions)]


def full_marks_without_gold(completions, answer, **kwargs):
    # The peer's bug: a gold that does not parse gives full marks.
    out = []
    for t, g in zip(texts(completions), answer):
        gold = _numbers(_gold(g))
        out.append(1.0 if not gold else float(FORMAT.committed(t).strip() == gold[-1]))
    return out


def output_in_text(completions, tests, **kwargs):
    # Bug: a "static" grader that looks for the expected output in the program text.
    return [1.0 if any(case["output"].strip() in t for case in cases) else 0.0
            for t, cases in zip(texts(completions), tests)]


def says_passed(completions, tests, **kwargs):
    # Bug: trusting the program's own report of its tests.
    return [1.0 if "passed" in t.lower() or "return a + b" in t or "print(a + b)" in t else 0.0
            for t in texts(completions)]


@pytest.mark.parametrize("reward, rows, probe", [
    (no_wrong_number, MATH, "empty"),                       # silence is never wrong
    (answer_is_prefix, MATH, "tags_only"),                  # "" is a prefix of every gold
    (counts_tags, MATH, "tag_spam"),                        # more tags, more reward
    (prompt_overlap, MATH, "prompt_echo"),                  # the question, repeated, is "relevant"
    (letter_anywhere, CHOICE, "all_options"),               # listing A-D names the gold letter
    (gold_mentioned, MATH, "gold_in_reasoning"),            # a mention is not an answer
    (any_number_in_answer, MATH, "ten_candidates"),         # hedging over ten numbers pays
    (any_box, MATH, "boxed_everything"),                    # boxing every guess pays
    (longer_is_better, MATH, "overlong_ramble"),            # padding pays
    (full_marks_without_gold, MATH, "unparseable_gold"),    # an unreadable label gives full marks
    (output_in_text, IO, "hardcoded_output"),               # printing the answer passes
    (says_passed, CODE, "tests_deleted"),                   # the program grades itself
])
def test_probe_catches_planted_exploit(reward, rows, probe):
    report = probe_rewards([reward], rows)
    caught = {e.probe for e in report.exploits if e.reward == reward.__name__}
    assert probe in caught, f"{probe} not caught; caught {sorted(caught)}"
    assert not report.ok
    exploit = next(e for e in report.worst() if e.probe == probe)
    assert exploit.score > exploit.limit and exploit.fix and reward.__name__ in str(exploit)


@pytest.mark.parametrize("name", presets())
def test_every_builtin_preset_passes(name):
    if name.endswith("_judge"):
        pytest.skip(f"{name} scores through a judge server; tests/rewards/test_judge_injection_server.py "
                    "probes a judge against the local one")
    funcs, weights = preset(name)
    report = probe_rewards(funcs, PRESET_ROWS[name], weights)
    if name == "kb_qa" and (get("fuzzy_match")(["140 euros"], answer=["14 euros"])[0] or 0) >= 0.8:
        assert "near_number" in {e.probe for e in report.exploits}, "the probe finds the wrong number fuzzy_match pays"
        pytest.xfail("kb_qa's fuzzy_match pays 140 euros for 14 euros until it reads numbers as numbers (issue 34)")
    assert report.ok, "\n".join(str(e) for e in report.worst())
    assert not report.errors
    # The probes really ran against the preset's correctness reward and the total.
    assert report.checked[TOTAL] and report.checked[report.rewards[0]]
    assert report.rewards[0] not in report.no_signal


def test_shaping_reward_beside_a_correctness_reward_only_warns():
    # counts_tags alone can be gamed; beside a reward that punishes the repeats more than
    # counts_tags pays for them, the total holds: its finding is a warning and the report passes.
    from grpokit.rewards import get

    report = probe_rewards([get("numeric_match"), counts_tags, get("repetition_penalty")], MATH, [2.0, 0.05, 1.0])
    assert report.ok, "\n".join(str(e) for e in report.worst())
    assert {e.severity for e in report.exploits if e.reward == "counts_tags"} == {"warn"}


def test_a_shaping_reward_that_outbids_correctness_fails_the_total():
    from grpokit.rewards import get

    report = probe_rewards([get("numeric_match"), counts_tags], MATH, [1.0, 1.0])
    assert not report.ok and any(e.reward == TOTAL and e.probe == "tag_spam" for e in report.exploits)


def test_a_reward_that_raises_is_reported():
    def broken(completions, **kwargs):
        raise KeyError("answer")

    report = probe_rewards([broken], MATH)
    assert not report.ok and "KeyError" in report.errors["broken"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(funcs=[], rows=MATH), "at least one reward"),
    (dict(funcs=[counts_tags], rows=[]), "at least one data-set row"),
    (dict(funcs=[counts_tags], rows=MATH, weights=[1.0, 2.0]), "one weight per reward"),
])
def test_bad_input_says_what_to_change(kwargs, message):
    with pytest.raises(ValueError, match=message):
        probe_rewards(**kwargs)


def test_probe_package_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, grpokit.probe as p; p.probe_rewards; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- issue 25: three hackable plugin rewards the probe once passed ---------------------------------

def _tagged_number(text):
    tag = FORMAT.tagged(text)
    try:
        return float(tag)
    except (TypeError, ValueError):
        return None


def nan_hole(completions, answer, **kwargs):
    # Bug: every comparison with NaN is false, so `nan` is never "too far" from the gold.
    out = []
    for t, g in zip(texts(completions), answer):
        a = _tagged_number(t)
        out.append(0.0 if a is None else (0.0 if abs(a - float(_gold(g))) > 1e-6 else 1.0))
    return out


def any_answer_tag(completions, answer, **kwargs):
    # Bug: any of several answer tags holding the gold counts.
    return [1.0 if _gold(g) in [a.strip() for a in re.findall(r"<answer>(.*?)</answer>", t, re.DOTALL)] else 0.0
            for t, g in zip(texts(completions), answer)]


def one_sided_ratio(completions, answer, **kwargs):
    # Bug: credit as value / gold, capped at 1, so any number above the gold is full marks.
    out = []
    for t, g in zip(texts(completions), answer):
        a = _tagged_number(t)
        out.append(0.0 if a is None else max(0.0, min(a / float(_gold(g)), 1.0)))
    return out


@pytest.mark.parametrize("reward, probes", [
    (nan_hole, {"not_a_number"}),                   # `nan` scores 1.0
    (any_answer_tag, {"several_tags"}),             # tags holding the gold among wrong ones
    (one_sided_ratio, {"other_side"}),              # gold + 7 (and 1e300) score 1.0, gold - 7 less
])
def test_probe_catches_the_hackable_plugin_rewards(reward, probes):
    report = probe_rewards([reward], MATH)
    caught = {e.probe for e in report.exploits if e.severity == "fail"}
    assert not report.ok and probes <= caught, f"caught {sorted(caught)}"


def test_a_wrong_reference_lies_on_each_side_of_a_number_gold():
    from grpokit.probe.rows import probe_row

    row = probe_row(0, {"prompt": "What is 3 + 4?", "answer": "7"})
    assert {FORMAT.tagged(row.wrong), FORMAT.tagged(row.wrong_other)} == {"14", "0"}


def two_way_percent(completions, answer, **kwargs):
    # Bug: a percentage counts as the number written and as the fraction it stands for.
    out = []
    for t, g in zip(texts(completions), answer):
        tag = (FORMAT.tagged(t) or "").strip()
        gold = float(_gold(g).rstrip("%"))
        if tag.endswith("%"):
            try:
                value = float(tag[:-1])
            except ValueError:
                out.append(0.0)
                continue
            out.append(1.0 if gold in (value, value / 100) else 0.0)
        else:
            out.append(1.0 if _tagged_number(t) == gold else 0.0)
    return out


def test_probe_catches_a_percent_read_two_ways_and_passes_the_builtin_readers():
    from grpokit.rewards import get

    report = probe_rewards([two_way_percent], MATH)
    assert "percent_hedge" in {e.probe for e in report.exploits}
    for name in ("numeric_match", "math_equivalence"):
        report = probe_rewards([get(name)], MATH + [{"prompt": _msg("What share is red?"), "answer": "50%"}])
        assert "percent_hedge" in report.checked[name] and report.ok, [str(e) for e in report.worst()]


def test_the_judge_injection_probe_runs_only_where_a_judge_grades():
    from grpokit.probe.battery import INJECTION

    def obedient_judge(completions, **kwargs):
        # A stand-in for a judge that does what the completion tells it.
        return [1.0 if "highest score" in t else 0.0 for t in texts(completions)]

    obedient_judge.judge = True
    report = probe_rewards([obedient_judge], PRESET_ROWS["summarization"])
    injected = [e for e in report.exploits if e.probe == "judge_injection"]
    assert injected and not report.ok and INJECTION[:40] in injected[0].completion
    report = probe_rewards([counts_tags], MATH)
    assert "judge_injection" not in report.checked["counts_tags"]  # no judge: the probe does not apply


def test_a_budget_leaves_out_what_cannot_fit_and_says_so():
    from grpokit.rewards import get
    from grpokit.probe.budget import estimated

    report = probe_rewards([get("numeric_match")], MATH, budget=estimated(8))
    assert "ten_candidates" in report.skipped and "budget is 8 tokens" in report.skipped["ten_candidates"]
    assert "ten_candidates" not in report.checked["numeric_match"]
    report = probe_rewards([get("numeric_match")], MATH)
    assert not report.skipped and "ten_candidates" in report.checked["numeric_match"]
