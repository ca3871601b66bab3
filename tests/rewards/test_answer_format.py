"""The answer format has one owner: training rewards, evaluation and the system prompt read it alike.

Every case is one line with the reason it is there. "Training" means the
rewards as a run config builds them (RewardSet.from_specs with the run's answer
format); "evaluation" means what `grpokit eval` and the held-out callback use
(default_accuracy, the format rate of score_samples).
"""
from __future__ import annotations

import pickle

import pytest

from grpokit.errors import ConfigError
from grpokit.evaluate import default_accuracy, has_format, score_samples
from grpokit.rewards import RewardConfigError, get
from grpokit.answer_format import DEFAULT, AnswerFormat
from grpokit.rewards.reward_set import RewardSet

THINK_FINAL = AnswerFormat(reasoning_tag="think", answer_tag="final")
ANSWER_ONLY = AnswerFormat(reasoning_tag=None)


# ------------------------------------------------------------ the object itself

@pytest.mark.parametrize(
    "fmt, text, committed",
    [
        (DEFAULT, "<reasoning>r</reasoning><answer> 42 </answer>", "42"),  # the tag, stripped
        (DEFAULT, "<answer>1</answer> then <answer>2</answer>", "2"),  # the last block is the commitment
        (DEFAULT, "<answer>x</answer>\\boxed{7}", "x"),  # the tag wins over a later box
        (DEFAULT, "<answer>so \\boxed{\\text{Paris}}</answer>", "Paris"),  # a box inside the tag is unwrapped
        (DEFAULT, "so the answer is \\boxed{9}", "9"),  # no tag: the last box
        (DEFAULT, "just 12", "just 12"),  # neither: the whole text (the rewards' fallback)
        (DEFAULT, "<final>3</final>", "<final>3</final>"),  # another format's tag is only text
        (THINK_FINAL, "<think>t</think><final>3</final>", "3"),  # custom tags are read
        (THINK_FINAL, "<answer>5</answer><final>3</final>", "3"),  # ... and <answer> is not
        (THINK_FINAL, "<answer>5</answer>", "<answer>5</answer>"),  # no <final>: the fallback, not <answer>
        (ANSWER_ONLY, "<answer>4</answer>", "4"),  # no reasoning tag: the answer block alone
    ],
)
def test_committed_answer(fmt, text, committed):
    assert fmt.committed(text) == committed


@pytest.mark.parametrize(
    "fmt, text, expected",
    [
        (DEFAULT, "<reasoning>a</reasoning><answer>1</answer>", True),  # the shape
        (DEFAULT, "Sure. <reasoning>a</reasoning> and <answer>1</answer> done", True),  # text around is fine
        (DEFAULT, "<answer>1</answer><reasoning>a</reasoning>", False),  # wrong order
        (DEFAULT, "<reasoning>a<answer>1</answer>", False),  # reasoning never closed
        (THINK_FINAL, "<think>a</think><final>1</final>", True),  # the custom shape
        (THINK_FINAL, "<reasoning>a</reasoning><answer>1</answer>", False),  # the default shape is not it
        (ANSWER_ONLY, "<answer>1</answer>", True),  # only the answer block is asked for
    ],
)
def test_has_format(fmt, text, expected):
    assert fmt.has_format(text) is expected
    assert has_format(text, fmt) is expected  # evaluation's helper asks the same object


@pytest.mark.parametrize(
    "fmt, prompt_has, prompt_lacks",
    [
        (DEFAULT, "<reasoning>\n...\n</reasoning>\n<answer>\n...\n</answer>", "<think>"),  # the prompt as it always was
        (THINK_FINAL, "<think>\n...\n</think>\n<final>\n...\n</final>", "<answer>"),  # the custom tags, nothing else
        (ANSWER_ONLY, "format:\n<answer>\n...\n</answer>", "<reasoning>"),  # no reasoning block asked for
    ],
)
def test_system_prompt_tells_the_format(fmt, prompt_has, prompt_lacks):
    assert prompt_has in fmt.system_prompt() and prompt_lacks not in fmt.system_prompt()
    assert fmt.has_format(fmt.wrap("1", "because")) and fmt.committed(fmt.wrap("1")) == "1"  # wrap writes the shape


def test_default_system_prompt_is_unchanged():
    from grpokit.data import DEFAULT_SYSTEM_PROMPT

    # Existing runs keep the exact prompt they were trained with.
    assert DEFAULT_SYSTEM_PROMPT == (
        "Think about the problem step by step, then give your final answer. Respond in exactly this format:\n"
        "<reasoning>\n...\n</reasoning>\n<answer>\n...\n</answer>"
    )


@pytest.mark.parametrize(
    "value, message",
    [
        ({"answer_tag": "<final>"}, "not a tag name"),  # brackets are not part of the name
        ({"answer_tag": ""}, "not a tag name"),  # an empty name
        ({"reasoning_tag": "x", "answer_tag": "x"}, "both 'x'"),  # one tag cannot be both
        ({"answer": "final"}, "did you mean 'answer_tag'"),  # a misspelt key names the right one
        ("final", "must be a mapping"),  # a bare string is not a format
    ],
)
def test_bad_formats_are_refused(value, message):
    with pytest.raises(RewardConfigError, match=message):
        AnswerFormat.of(value)
    with pytest.raises(RewardConfigError, match="exact_match: answer_format: .*" + message):
        get("exact_match", answer_format=value)  # a reward's error names the reward


def test_the_format_pickles_and_is_a_value():
    assert pickle.loads(pickle.dumps(THINK_FINAL)) == THINK_FINAL  # rewards that carry it travel to workers
    assert AnswerFormat.of({"reasoning_tag": "think", "answer_tag": "final"}) == THINK_FINAL
    assert AnswerFormat.of(None) is DEFAULT


# ------------------------------------------- training and evaluation read alike

_THINK_REASONING = "<think>2 + 2 is 4, not 5</think>"
_SAME_ANSWER = [
    # (answer format, completion, gold) -> training's correctness reward == evaluation's accuracy
    (DEFAULT, "<reasoning>r</reasoning><answer>4</answer>", "4"),  # the usual shape, right
    (DEFAULT, "<reasoning>I guess 4</reasoning><answer>5</answer>", "4"),  # the gold in the reasoning does not count
    (DEFAULT, "<answer>a</answer> then <answer>4</answer>", "4"),  # both read the last block
    (DEFAULT, "<answer><answer>4</answer>", "4"),  # nested opens: both pair the last close with the nearest open
    (DEFAULT, "the answer is \\boxed{4}", "4"),  # no tag: both read the box
    (THINK_FINAL, _THINK_REASONING + "<final>4</final>", "4"),  # custom tags: both read <final>
    (THINK_FINAL, "<final>4</final><answer>5</answer>", "4"),  # <answer> is plain text in this format
    (THINK_FINAL, _THINK_REASONING + "<final>Paris</final>", "Paris"),  # text golds (exact_match) too
    (THINK_FINAL, '<final>{"a": 1}</final> {"a": 2}', '{"a": 1}'),  # JSON golds (json_object_match) too
    (THINK_FINAL, '{"a": 2} <final>{"a": 1}</final>', '{"a": 2}'),  # ... wrong when the tag holds another object
]

_ACCURACY_REWARD = {"4": "numeric_match", "Paris": "exact_match", '{"a": 1}': "json_object_match",
                    '{"a": 2}': "json_object_match"}


@pytest.mark.parametrize("fmt, completion, gold", _SAME_ANSWER)
def test_training_and_evaluation_read_the_same_answer(fmt, completion, gold):
    name = _ACCURACY_REWARD[gold]
    training = RewardSet.from_specs([{"name": name}, {"name": "soft_xml_format"}], answer_format=fmt)
    scored = training.score([completion], answer=[gold])
    evaluation = default_accuracy([gold], fmt)
    assert evaluation.__name__ == name  # evaluation picks the same reward ...
    assert evaluation([completion], answer=[gold]) == scored.scores[name]  # ... and it reads the same answer
    result = score_samples([{"row": {"prompt": "q", "answer": gold}, "completions": [completion], "lengths": [1],
                             "truncated": [False]}], training.funcs, training.weights, accuracy=evaluation, k=1,
                           answer_format=fmt)
    assert result["format_rate"] == scored.scores["soft_xml_format"][0]  # the format rate is the format reward's shape
    assert result["accuracy"] == scored.scores[name][0]


@pytest.mark.parametrize(
    "name, completion, gold, expected",
    [
        ("exact_match", "<final>Paris</final>", "Paris", 1.0),  # text answer in the custom tag
        ("fuzzy_match", "<final>Pariss</final> Paris", "Paris", pytest.approx(10 / 11)),  # graded on the tag only
        ("numeric_match", "<answer>4</answer><final>5</final>", "5", 1.0),  # the number in <final>, not <answer>
        ("numeric_closeness", "<final>5</final>", "5", 1.0),  # the same reading, partial-credit reward
        ("multiple_choice", "Option (A) is tempting. <final>C</final>", "C", 1.0),  # the letter in the tag
        ("json_object_match", '<final>{"a": 1}</final>', '{"a": 1}', 1.0),  # the object in the tag
        ("strict_xml_format", "<think>r</think><final>1</final>", None, 1.0),  # the format rewards check the tags
        ("soft_xml_format", "<reasoning>r</reasoning><answer>1</answer>", None, 0.0),  # ... and not the default's
        ("incremental_format", "<think>r</think><final>1</final>", None, 1.0),
        ("tag_count", "<think>r</think><final>1</final>", None, 1.0),
    ],
)
def test_every_answer_reader_takes_the_format(name, completion, gold, expected):
    reward = get(name, answer_format={"reasoning_tag": "think", "answer_tag": "final"})
    copy = pickle.loads(pickle.dumps(reward))  # still the same reader after a trip to a worker
    columns = {} if gold is None else {"answer": [gold]}
    assert reward([completion], **columns) == copy([completion], **columns) == [expected]


def test_math_equivalence_reads_the_custom_tag():
    reward = get("math_equivalence", answer_format=THINK_FINAL)
    # The <answer> block holds a wrong value; <final> holds 1/2, which is the gold 0.5.
    assert reward(["<answer>7</answer><final>\\frac{1}{2}</final>"], answer=["0.5"]) == [1.0]


def test_format_rewards_take_tags_or_a_format_not_both():
    with pytest.raises(RewardConfigError, match="not both"):
        get("strict_xml_format", tags=["think", "final"], answer_format=THINK_FINAL)
    # Their own tags still work as before.
    assert get("strict_xml_format", tags=["think", "final"])(["<think>r</think><final>1</final>"]) == [1.0]


# ------------------------------------------------------------ the run config

_CUSTOM = {
    "name": "t",
    "data": {"source": "synthetic:arithmetic?n=20", "answer_format": {"reasoning_tag": "think", "answer_tag": "final"}},
    "rewards": [{"name": "strict_xml_format"}, {"name": "numeric_match"}],
    "training": {"num_generations": 4, "per_device_train_batch_size": 4},
}


def _config(**changes):
    from grpokit.config.run_config import from_dict

    raw = {**_CUSTOM, **changes}
    return from_dict(raw, check_data=False)


def test_custom_tags_flow_from_the_config_everywhere():
    from grpokit.config.run_config import build_reward_set, to_dict
    from grpokit.evaluate.during import accuracy_reward

    cfg = _config()
    completion = "<think>2 + 2</think>\n<final>4</final>"
    rewards = build_reward_set(cfg)
    scored = rewards.score([completion], answer=["4"])
    assert scored.scores == {"strict_xml_format": [1.0], "numeric_match": [1.0]}  # both rewards read <think>/<final>
    assert accuracy_reward(cfg.rewards, cfg.data.answer_format)([completion], answer=["4"]) == [1.0]  # held-out accuracy
    assert default_accuracy(["4"], cfg.data.answer_format)([completion], answer=["4"]) == [1.0]  # `grpokit eval` "auto"
    assert has_format(completion, cfg.data.answer_format)  # evaluation's format rate
    assert "<think>\n...\n</think>\n<final>\n...\n</final>" in cfg.data.system_prompt  # the default system prompt
    assert to_dict(cfg)["data"]["answer_format"] == {"reasoning_tag": "think", "answer_tag": "final"}  # resolved config


def test_custom_tags_reach_the_prompts_of_the_data():
    from grpokit.data import load_data

    train, _ = load_data(_config().data)
    system = train[0]["prompt"][0]
    assert system["role"] == "system" and "<final>" in system["content"] and "<answer>" not in system["content"]


@pytest.mark.parametrize(
    "changes, kept",
    [
        ({"data": {"source": "synthetic:arithmetic"}}, "<answer>"),  # no key: the default format, as before
        ({"data": {**_CUSTOM["data"], "system_prompt": "Answer in <final> tags."}}, "Answer in <final> tags."),  # own prompt kept
    ],
)
def test_system_prompt_follows_only_when_left_default(changes, kept):
    assert kept in _config(**changes).data.system_prompt


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"data": {"answer_format": {"answer_tag": "<final>"}}}, "data.answer_format: answer_tag: '<final>' is not a tag name"),  # brackets
        ({"data": {"answer_format": {"final": "x"}}}, "unknown key 'final' in data.answer_format"),  # misspelt key
        ({"data": {"answer_format": "think"}}, "data.answer_format must be a mapping"),  # not a mapping
        ({"data": {"answer_format": {"reasoning_tag": "a", "answer_tag": "a"}}}, "both 'a'"),  # one tag for both
        ({"data": {"source": "synthetic:arithmetic"},  # a format reward's own tags that the correctness reward would not read
          "rewards": [{"name": "strict_xml_format", "params": {"tags": ["think", "final"]}}, {"name": "numeric_match"}]},
         "set data.answer_format: {reasoning_tag: think, answer_tag: final}"),
    ],
)
def test_bad_answer_format_config_is_a_config_error(changes, message):
    with pytest.raises(ConfigError) as exc:
        _config(**changes)
    assert message.lower() in str(exc.value).lower()


def test_bad_answer_format_exits_2(tmp_path):
    import yaml
    from typer.testing import CliRunner

    from grpokit.cli import app

    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({**_CUSTOM, "data": {"answer_format": {"answer_tag": "<final>"}}}), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(path)])
    assert result.exit_code == 2 and "data.answer_format" in result.output, result.output


def test_format_reward_tags_matching_the_format_are_fine():
    # Tags that agree with the run's answer tag (here the default <answer>) are no conflict.
    cfg = _config(data={"source": "synthetic:arithmetic"},
                  rewards=[{"name": "tag_count", "params": {"tags": ["think", "answer"]}}, {"name": "numeric_match"}])
    assert [s.name for s in cfg.rewards] == ["tag_count", "numeric_match"]


# ------------------------------------------------------------ hostile input

@pytest.mark.parametrize(
    "fmt, text",
    [
        (DEFAULT, "<answer>" * 100_000),  # unclosed opens: a lazy regex goes quadratic
        (DEFAULT, "</answer>" * 100_000),  # closes with no open
        (DEFAULT, "<answer>" * 50_000 + "</answer>" * 50_000),  # the nearest open to the last close is far back
        (DEFAULT, "<reasoning>" * 100_000),  # the format check on opens that never close
        (THINK_FINAL, "<final>" * 100_000 + "\\boxed{" * 20_000),  # custom tags, then unbalanced boxes
        (THINK_FINAL, "<think></think>" * 50_000 + "<final>" * 50_000),  # many closed reasoning blocks
    ],
)
def test_hostile_text_stays_linear(fmt, text, cpu_clock):
    with cpu_clock() as clock:
        fmt.tagged(text), fmt.marked(text), fmt.committed(text), fmt.has_format(text)
        for name in ("numeric_match", "exact_match", "multiple_choice", "strict_xml_format", "incremental_format"):
            get(name, answer_format=fmt)([text], answer=["4"])
    # CPU seconds, which load does not inflate; quadratic behaviour on 1 MB takes minutes
    assert clock.seconds < 5.0, clock.seconds


def test_the_probe_writes_its_completions_in_the_runs_format():
    from grpokit.probe.config import probe_config
    from grpokit.probe.rows import probe_row

    row = probe_row(0, {"prompt": "What is 2 + 2?", "answer": "4"}, THINK_FINAL)
    assert "<final>\n4\n</final>" in row.honest and "<answer>" not in row.honest  # the honest reference reads as right
    (label, report), = probe_config(_config(), [{"prompt": "What is 2 + 2?", "answer": "4"}])
    # Built with the run's format, the correctness reward pays the honest <final> answer over the wrong one.
    assert report.errors == {} and "numeric_match" not in report.no_signal, report.to_dict()
    assert report.ok, [str(e) for e in report.worst()]
