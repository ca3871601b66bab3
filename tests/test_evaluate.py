"""grpokit.evaluate: pass@k, the metrics of scored samples, and generation on a tiny model."""
from __future__ import annotations

import json
import math

import pytest

from grpokit.completions import extract_tag, texts
from grpokit.evaluate import compare, default_accuracy, evaluate, format_table, has_format, pass_at_k, score_samples, write_eval


def answer_match(completions, answer=None, **kwargs):
    """Test accuracy: the <answer> tag equals the gold text; None without gold."""
    golds = answer or [None] * len(completions)
    return [None if g is None else float(extract_tag(t, "answer") == g) for t, g in zip(texts(completions), golds)]


def has_answer_tag(completions, **kwargs):
    return [float(extract_tag(t, "answer") is not None) for t in texts(completions)]


def sees_prompts(completions, prompts=None, **kwargs):
    # Rewards get TRL's `prompts` keyword too.
    return [float(bool(p)) for p in prompts]


@pytest.mark.parametrize(
    "n, c, k, expected",
    [
        (4, 0, 1, 0.0),  # nothing correct
        (4, 4, 1, 1.0),  # everything correct
        (4, 1, 1, 0.25),  # pass@1 is the share correct
        (4, 1, 4, 1.0),  # one right among all k drawn
        (4, 0, 4, 0.0),  # none right among all k drawn
        (10, 3, 2, 1 - 21 / 45),  # 1 - C(7,2)/C(10,2): the unbiased estimator, not 1-(1-p)^k
        (200, 1, 100, 0.5),  # large n stays exact (product form)
    ],
)
def test_pass_at_k(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_needs_enough_samples():
    with pytest.raises(ValueError, match="at least 6 samples"):
        pass_at_k(5, 2, 6)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<reasoning>a</reasoning><answer>1</answer>", True),  # the exact shape
        ("Sure!\n<reasoning>\nx\n</reasoning>\n<answer>\n1\n</answer>\nDone", True),  # text around is allowed
        ("<answer>1</answer><reasoning>a</reasoning>", False),  # wrong order
        ("<reasoning>a</reasoning>", False),  # no answer
        ("<reasoning>a<answer>1</answer>", False),  # reasoning never closed
        ("", False),  # empty completion
    ],
)
def test_has_format(text, expected):
    assert has_format(text) is expected


def sample(completions, gold, lengths=None, truncated=None):
    return {
        "row": {"prompt": [{"role": "user", "content": "q"}], "answer": gold},
        "completions": completions,
        "lengths": lengths or [10] * len(completions),
        "truncated": truncated or [False] * len(completions),
    }


def test_score_samples_metrics():
    good, bad, untagged = "<reasoning>r</reasoning><answer>7</answer>", "<reasoning>r</reasoning><answer>8</answer>", "7"
    samples = [
        sample([good, good, bad, untagged], "7", lengths=[10, 20, 30, 40], truncated=[False, False, False, True]),  # 2 of 4 right
        sample([bad, bad, bad, bad], "7"),  # none right
        sample([good, untagged, untagged, untagged], None),  # no gold: left out of accuracy
    ]
    result = score_samples(samples, [has_answer_tag, answer_match, sees_prompts], [0.5, 2.0, 0.0], accuracy=answer_match, k=4)
    assert result["prompts"] == 3 and result["samples_per_prompt"] == 4
    assert result["accuracy"] == result["pass@1"] == pytest.approx((0.5 + 0.0) / 2)
    assert result["pass@4"] == pytest.approx((1.0 + 0.0) / 2)
    assert result["format_rate"] == pytest.approx(8 / 12)  # good and bad have the shape; untagged not
    assert result["mean_length"] == pytest.approx((100 + 40 + 40) / 12)
    assert result["truncated_rate"] == pytest.approx(1 / 12)
    assert result["rewards"]["has_answer_tag"] == pytest.approx(8 / 12)
    # answer_match: 2 right of the 8 scorable samples; the 4 without gold are unscored, not wrong.
    assert result["rewards"]["answer_match"] == pytest.approx(2 / 8)
    assert result["rewards_unscored"] == {"has_answer_tag": 0, "answer_match": 4, "sees_prompts": 0}
    assert result["rewards"]["sees_prompts"] == 1.0  # a weight of 0 still reports the reward
    assert result["reward"] == pytest.approx((0.5 * 8 + 2.0 * 2) / 12)
    assert result["examples"][0]["scores"] == {"has_answer_tag": 1.0, "answer_match": 1.0, "sees_prompts": 1.0}


def test_score_samples_accuracy_by_group():
    # One mean hides a shape the model never learned: the demo prints each prompt shape's accuracy.
    good, bad = "<reasoning>r</reasoning><answer>7</answer>", "<reasoning>r</reasoning><answer>8</answer>"
    samples = [sample([good, good], "7"), sample([bad, bad], "7"), sample([good, bad], "7")]
    for s_, shape in zip(samples, ["restated", "open", "open"]):
        s_["row"]["shape"] = shape
    result = score_samples(samples, [answer_match], accuracy=answer_match, k=2, group_of=lambda row: row["shape"])
    assert result["by_group"] == {"restated": {"prompts": 1, "accuracy": 1.0}, "open": {"prompts": 2, "accuracy": 0.25}}
    assert "by_group" not in score_samples(samples, [answer_match], accuracy=answer_match, k=2)


def test_score_samples_without_accuracy_or_gold():
    result = score_samples([sample(["x"], None)], [has_answer_tag], accuracy=answer_match, k=1)
    assert result["accuracy"] is None and result["pass@1"] is None  # nothing could be judged


def test_compare_write_and_table(tmp_path):
    before = score_samples([sample(["<answer>1</answer>", "x"], "7")], [has_answer_tag], accuracy=answer_match, k=2)
    after = score_samples([sample(["<reasoning>r</reasoning><answer>7</answer>"] * 2, "7")], [has_answer_tag], accuracy=answer_match, k=2)
    delta = compare(before, after)
    assert delta["accuracy"] == 1.0 and delta["format_rate"] == 1.0 and delta["rewards"]["has_answer_tag"] == 0.5
    path = write_eval(tmp_path / "run" / "eval.json", before, after, {"checkpoint": "ckpt"})
    saved = json.loads(path.read_text())
    assert saved["checkpoint"] == "ckpt" and saved["after"]["pass@2"] == 1.0 and saved["delta"]["accuracy"] == 1.0
    table = format_table(before, after)
    assert table.splitlines()[0].split() == ["metric", "before", "after", "change"]
    assert table.splitlines()[1].split() == ["accuracy", "0.000", "1.000", "1.000"]
    assert "reward has_answer_tag" in table


REST = ["format_rate", "reward", "mean_length", "truncated_rate"]
TABLE_METRICS = [
    # (samples per prompt before, after, the metric rows of the table in order, why)
    (1, 1, ["accuracy", "pass@1", *REST], "k=1 (the demo, greedy): pass@k is pass@1, shown once"),
    (4, 4, ["accuracy", "pass@1", "pass@4", *REST], "k=4: pass@1 and pass@4, each once"),
    (1, 4, ["accuracy", "pass@1", "pass@4", *REST], "greedy base vs sampled checkpoint: pass@4 has no before"),
]


@pytest.mark.parametrize("k_before,k_after,metrics,why", TABLE_METRICS)
def test_each_metric_once_in_table_and_delta(k_before, k_after, metrics, why):
    right = "<reasoning>r</reasoning><answer>7</answer>"
    before = score_samples([sample([right] * k_before, "7")], [has_answer_tag], accuracy=answer_match, k=k_before)
    after = score_samples([sample([right] * k_after, "7")], [has_answer_tag], accuracy=answer_match, k=k_after)
    rows = [line.split() for line in format_table(before, after).splitlines()[1:]]
    rows = [row for row in rows if len(row) == 4]  # the headline metrics; "reward NAME ..." rows have five cells
    assert [row[0] for row in rows] == metrics, why
    # eval.json's delta is keyed like before/after (pass@4, not a separate "pass@k"), so the report's table lines up.
    delta = compare(before, after)
    assert [key for key in delta if key != "rewards"] == metrics, why
    if k_before != k_after:
        assert rows[2] == ["pass@4", "-", "1.000", "-"] and delta["pass@4"] is None, why


def test_default_accuracy_needs_gold_answers():
    assert default_accuracy([None, None]) is None  # no gold answers: no accuracy


@pytest.mark.parametrize(
    "golds, wanted",
    [
        (["72", "1,000"], "numeric_match"),  # numbers
        (["\\frac{1}{2}"], "math_equivalence"),  # LaTeX
        (["Paris"], "exact_match"),  # plain text
    ],
)
def test_default_accuracy_picks_by_gold(monkeypatch, golds, wanted):
    import grpokit.rewards as rewards

    asked = []

    def fake_get(name, **params):
        asked.append(name)
        return answer_match

    monkeypatch.setattr(rewards, "get", fake_get)
    default_accuracy(golds)
    assert asked[0] == wanted


# --- with a real (tiny, random) model -----------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from grpokit.models.tiny import make_tiny_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = make_tiny_model(tmp_path_factory.mktemp("tiny"))
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


@pytest.fixture(scope="module")
def held_out():
    from grpokit.data import DataConfig, load_data

    return load_data(DataConfig(source="synthetic:arithmetic?n=30", eval_size=4))[1]


def test_evaluate_generates_k_per_prompt(tiny, held_out):
    model, tok = tiny
    result = evaluate(model, tok, held_out, [has_answer_tag, sees_prompts], k=3, max_new_tokens=8, accuracy=answer_match, seed=1)
    assert result["prompts"] == 4 and result["samples_per_prompt"] == 3
    assert 1 <= result["mean_length"] <= 8
    assert result["accuracy"] is not None and 0.0 <= result["pass@1"] <= result["pass@3"] <= 1.0
    assert result["rewards"]["sees_prompts"] == 1.0
    assert isinstance(result["examples"][0]["completion"], str)
    # Seeded: the same model and seed give the same numbers (so before/after differ only by the model).
    again = evaluate(model, tok, held_out, [has_answer_tag, sees_prompts], k=3, max_new_tokens=8, accuracy=answer_match, seed=1)
    assert {k: v for k, v in again.items() if k != "seconds"} == {k: v for k, v in result.items() if k != "seconds"}


def test_evaluate_greedy_and_plain_prompts(tiny):
    from grpokit.data import DataConfig, load_data

    model, tok = tiny
    held = load_data(DataConfig(source="synthetic:arithmetic?n=10", eval_size=2, conversational=False))[1]
    result = evaluate(model, tok, held, [has_answer_tag], k=4, temperature=0, max_new_tokens=5, accuracy=None, max_prompts=1)
    assert result["samples_per_prompt"] == 1 and result["prompts"] == 1  # greedy: one sample is enough
    assert result["truncated_rate"] in (0.0, 1.0)


class ScriptedModel:
    """Stands in for a model: always continues every prompt with `reply` then EOS."""

    def __init__(self, model, tokenizer, reply: str):
        self.inner, self.reply = model, tokenizer(reply, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        self.generation_config, self.training = model.generation_config, False

    def parameters(self):
        return self.inner.parameters()

    def eval(self):
        return self

    def train(self, mode=True):
        return self

    def generate(self, input_ids, attention_mask=None, num_return_sequences=1, **kwargs):
        import torch

        reply = torch.tensor([self.reply] * input_ids.shape[0])
        return torch.cat([input_ids, reply], dim=1).repeat_interleave(num_return_sequences, dim=0)


def test_evaluate_scores_what_the_model_wrote(tiny, held_out):
    # A model that always answers the first held-out gold: accuracy is exactly the share of rows with that gold.
    model, tok = tiny
    gold = held_out[0]["answer"]
    scripted = ScriptedModel(model, tok, f"<reasoning>\nsum\n</reasoning>\n<answer>{gold}</answer>")
    result = evaluate(scripted, tok, held_out, [answer_match], k=2, max_new_tokens=64, accuracy=answer_match)
    share = sum(r["answer"] == gold for r in held_out) / len(held_out)
    assert result["accuracy"] == pytest.approx(share) and result["format_rate"] == 1.0
    assert result["truncated_rate"] == 0.0 and result["mean_length"] == len(scripted.reply)
    assert result["examples"][0]["completion"].endswith(f"<answer>{gold}</answer>")
    assert not math.isnan(result["reward"])


# --- `grpokit eval CONFIG --checkpoint DIR` -------------------------------------------------



@pytest.fixture(scope="module")
def eval_run(tmp_path_factory):
    """A tiny base model, a run config for it, and two checkpoints: a LoRA adapter and full weights."""
    import torch
    from peft import LoraConfig, get_peft_model
    from grpokit.models.tiny import make_tiny_model
    from transformers import AutoModelForCausalLM

    from grpokit.rewards import register, registry

    def eval_cli_tag(completions, **kwargs):
        """Test reward: 1 when an <answer> tag is present."""
        return [float(extract_tag(t, "answer") is not None) for t in texts(completions)]

    # Registered only while this module's tests run (other tests walk every registered name).
    registry.names()
    saved = dict(registry._REGISTRY), dict(registry._ALIASES)
    register("_eval_cli_tag", family="test")(eval_cli_tag)

    root = tmp_path_factory.mktemp("evalrun")
    base = make_tiny_model(root / "base")
    run_dir = root / "run"
    lora_ckpt = run_dir / "checkpoints" / "checkpoint-2"
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(base), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)  # a trained adapter is not the identity
    model.save_pretrained(lora_ckpt)
    full_ckpt = root / "full" / "checkpoint-5"
    full = AutoModelForCausalLM.from_pretrained(base)
    with torch.no_grad():
        full.lm_head.weight.mul_(3.0)
    full.save_pretrained(full_ckpt)
    config = root / "run.yaml"
    config.write_text(
        f"name: tiny-eval\noutput_dir: {run_dir}\n"
        f"model: {{name: {base}, lora: {{r: 4, target_modules: [q_proj, v_proj]}}}}\n"
        "data: {source: 'synthetic:arithmetic?n=40', eval_size: 6}\n"
        "rewards: [{name: _eval_cli_tag, weight: 0.5}]\n"
        "profile: none\n"
        "training: {max_completion_length: 8, num_generations: 2, per_device_train_batch_size: 2}\n",
        encoding="utf-8",
    )
    yield {"config": config, "run_dir": run_dir, "lora": lora_ckpt, "full": full_ckpt}
    for table, before in zip((registry._REGISTRY, registry._ALIASES), saved):
        table.clear()
        table.update(before)


def cli(*args):
    from typer.testing import CliRunner

    from grpokit.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_eval_command_lora_checkpoint(eval_run):
    out = cli("eval", eval_run["config"], "--checkpoint", eval_run["lora"], "--k", 2, "--max-prompts", 3, "--accuracy", "none")
    assert out.exit_code == 0, out.output
    saved = json.loads((eval_run["run_dir"] / "eval.json").read_text())
    assert saved["checkpoint"] == str(eval_run["lora"])
    # It said "on 6 held-out prompts" when --max-prompts 3 evaluated 3.
    assert (saved["held_out_prompts"], saved["held_out_available"]) == (3, 6)
    assert "on 3 held-out prompts (of 6)" in out.output
    for side in ("before", "after"):
        assert saved[side]["prompts"] == 3 and saved[side]["samples_per_prompt"] == 2
        assert saved[side]["weights"] == {"eval_cli_tag": 0.5} and saved[side]["settings"]["max_new_tokens"] == 8
    assert saved["delta"]["format_rate"] is not None
    assert "reward eval_cli_tag" in out.output and "written:" in out.output


def test_eval_command_full_checkpoint_and_run_dir(eval_run, tmp_path):
    # A run directory resolves to its newest checkpoint; full weights load without the base's adapter.
    out = cli("eval", eval_run["config"], "--checkpoint", eval_run["full"].parent, "--k", 1, "--max-prompts", 2,
              "--no-before", "--output", tmp_path / "e.json", "--json")
    assert out.exit_code == 0, out.output
    saved = json.loads((tmp_path / "e.json").read_text())
    assert saved["checkpoint"] == str(eval_run["full"]) and saved["before"] is None and saved["delta"] is None


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--checkpoint", "/nonexistent/ckpt"], "checkpoint /nonexistent/ckpt not found"),  # a typo in the path
        (["--checkpoint", "{run_dir}", "--set", "data.eval_size=0"], "no prompts were held out"),  # nothing held out
    ],
)
def test_eval_command_errors_exit_2(eval_run, args, needle):
    args = [a.format(run_dir=eval_run["run_dir"]) for a in args]
    out = cli("eval", eval_run["config"], *args)
    assert out.exit_code == 2 and needle in out.output, out.output


@pytest.mark.parametrize(
    "completion, expected",
    [
        ('{"name": "Ana Kim", "age": 31}', 1.0),  # the object itself
        ('<answer>{"age": 31, "name": "Ana Kim"}</answer>', 1.0),  # key order does not matter; the tag is read first
        ('```json\n{"name": "Ana Kim", "age": 31}\n```', 1.0),  # a fenced block
        ('{"name": "Ana Kim", "age": "31"}', 0.0),  # a string is not the integer
        ('{"name": "Ana Kim"}', 0.0),  # a missing key
        ("no json here", 0.0),  # nothing to parse
    ],
)
def test_json_object_accuracy(completion, expected):
    # synthetic:json golds are JSON objects: "auto" accuracy compares parsed objects.
    gold = '{"name": "Ana Kim", "age": 31}'
    accuracy = default_accuracy([gold])
    assert accuracy.__name__ == "json_object_match"
    assert accuracy([completion], answer=[gold]) == [expected]


def test_has_format_is_linear_on_hostile_text(cpu_clock):
    text = "<reasoning>" * 100_000  # 1.1 MB of opening tags and no closing one
    with cpu_clock() as clock:
        assert has_format(text) is False
    assert clock.seconds < 0.5, clock.seconds  # CPU seconds: load does not inflate them


@pytest.mark.parametrize(
    "reward_names, has_rate",
    [
        (["numeric_match", "regex_format"], False),     # the demo: built-ins that pay a bare number, no tags asked for
        (["numeric_match", "soft_xml_format"], True),   # a tag-format reward: the rate is the share in that format
        (["numeric_match", "incremental_format"], True),  # any reward that checks tags counts
    ],
)
def test_format_rate_only_when_the_run_asks_for_tags(reward_names, has_rate):
    import grpokit.rewards as rewards

    funcs = [rewards.get(name) for name in reward_names]
    samples = [sample(["<reasoning>r</reasoning><answer>7</answer>", "7"], "7")]
    result = score_samples(samples, funcs, [1.0] * len(funcs), k=2)
    assert (result["format_rate"] is not None) is has_rate
    if has_rate:
        assert result["format_rate"] == pytest.approx(0.5)


def test_eval_on_three_prompts_gives_intervals_and_says_a_change_is_noise(eval_run):
    # Issue 35.10: eval on a 3-prompt held-out split printed changes with no interval or warning.
    out = cli("eval", eval_run["config"], "--checkpoint", eval_run["lora"], "--k", 1, "--max-prompts", 3,
              "--accuracy", "numeric_match")
    assert out.exit_code == 0, out.output
    assert "95% interval over 3 prompts (Wilson)" in out.output
    saved = json.loads((eval_run["run_dir"] / "eval.json").read_text())
    assert set(saved["accuracy_interval"]) == {"before", "after"}
    assert saved["accuracy_within_noise"] is True  # 3 prompts can tell no change from any
    assert "is within noise on 3 held-out prompts" in " ".join(out.output.split())


@pytest.mark.parametrize("before, after, n, noise, warned", [
    (0.33, 0.67, 3, True, True),      # one prompt of three: noise, and said so
    (0.0, 1.0, 3, False, False),      # all wrong to all right even on 3: a real change (p=0.014)
    (0.30, 0.35, 200, True, False),   # within noise, but 200 prompts: the interval says it, no warning
    (0.20, 0.60, 200, False, False),  # a clear gain
])
def test_accuracy_note(before, after, n, noise, warned):
    from grpokit.evaluate.intervals import accuracy_note

    note = accuracy_note({"accuracy": before, "prompts": n}, {"accuracy": after, "prompts": n})
    assert note["within_noise"] is noise and ("warning" in note["text"]) is warned
    lo, hi = note["intervals"]["after"]
    assert lo <= after <= hi


@pytest.mark.parametrize("correct, n, low, high", [
    (50, 100, 0.4038, 0.5962),  # the textbook middle case
    (0, 3, 0.0, 0.5615),        # none right: still a real upper bound (the normal interval has no width)
    (3, 3, 0.4385, 1.0),        # all right: the mirror image
    (7, 20, 0.1812, 0.5671),
])
def test_wilson_interval_by_hand(correct, n, low, high):
    # z = 1.96: centre (p + z^2/2n) / (1 + z^2/n), half-width z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n).
    from grpokit.evaluate.intervals import wilson

    assert wilson(correct / n, n) == (pytest.approx(low, abs=5e-4), pytest.approx(high, abs=5e-4))
