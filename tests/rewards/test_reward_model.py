"""reward_model: a sequence-classification checkpoint scores (prompt, completion) pairs in batches."""
from __future__ import annotations

import math

import pytest

from grpokit.rewards import RewardConfigError, get
from grpokit.rewards import reward_model as rm

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """A tiny causal LM, and tiny one- and two-label reward models built from it (offline, seconds)."""
    from grpokit.models.tiny import build_tiny_model, make_tiny_model
    from transformers import LlamaForSequenceClassification

    root = tmp_path_factory.mktemp("rm")
    paths = {"causal": make_tiny_model(root / "causal")}
    for labels in (1, 2):
        model, tokenizer = build_tiny_model(seed=3)
        model.config.num_labels = labels
        torch.manual_seed(labels)
        head = LlamaForSequenceClassification(model.config)
        head.model.load_state_dict(model.model.state_dict())
        head.config.pad_token_id = tokenizer.pad_token_id
        head.save_pretrained(root / f"rm{labels}")
        tokenizer.save_pretrained(root / f"rm{labels}")
        paths[f"rm{labels}"] = root / f"rm{labels}"
    return {k: str(v) for k, v in paths.items()}


TEXTS = ["The sum is 2.", "banana", "", "a much longer answer " * 8]
PROMPTS = ["What is 1 + 1?"] * 4


def test_scores_are_the_models_own_output(checkpoints):
    # One label: the score is the logit at the last real token, exactly what the model computes alone.
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    scores = get("reward_model", path=checkpoints["rm1"])(TEXTS[:1], prompts=PROMPTS[:1])
    tokenizer = AutoTokenizer.from_pretrained(checkpoints["rm1"])
    model = AutoModelForSequenceClassification.from_pretrained(checkpoints["rm1"]).eval()
    with torch.no_grad():
        expected = model(**tokenizer([f"{PROMPTS[0]}\n{TEXTS[0]}"], return_tensors="pt")).logits[0, 0].item()
    assert scores[0] == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("batch_size", [1, 3, 8])
def test_batching_does_not_change_scores(checkpoints, batch_size):
    # Padding inside a batch must not move a row's score: the head reads the last real token.
    one = get("reward_model", path=checkpoints["rm1"], batch_size=1)(TEXTS, prompts=PROMPTS)
    many = get("reward_model", path=checkpoints["rm1"], batch_size=batch_size)(TEXTS, prompts=PROMPTS)
    assert many == pytest.approx(one, abs=1e-4)


@pytest.mark.parametrize("path, squash, low, high", [
    ("rm1", True, 0.0, 1.0),        # a single logit through a sigmoid
    ("rm2", False, 0.0, 1.0),       # two labels: the probability of the last ("good") one
    ("causal", False, -math.inf, math.inf),  # a causal LM gets a fresh head: any finite number
])
def test_score_range(checkpoints, path, squash, low, high):
    scores = get("reward_model", path=checkpoints[path], squash=squash)(TEXTS, prompts=PROMPTS)
    assert all(s is not None and math.isfinite(s) and low <= s <= high for s in scores), scores


def test_fresh_value_head_is_seeded(checkpoints):
    # A checkpoint without a trained head scores the same after a reload (and so in every worker process).
    reward = get("reward_model", path=checkpoints["causal"])
    first = reward(TEXTS, prompts=PROMPTS)
    rm._LOADED.clear()
    assert get("reward_model", path=checkpoints["causal"])(TEXTS, prompts=PROMPTS) == first


def test_chat_prompts_go_through_the_template(checkpoints):
    # A message-list prompt is rendered with the tokenizer's chat template, so it scores unlike the bare text.
    reward = get("reward_model", path=checkpoints["rm1"])
    chat = reward(TEXTS[:1], prompts=[[{"role": "user", "content": PROMPTS[0]}]])
    plain = reward(TEXTS[:1], prompts=PROMPTS[:1])
    assert chat[0] is not None and chat != plain


@pytest.mark.parametrize("params, message", [
    ({"path": ""}, "path"),                              # nothing to load
    ({"path": "x", "batch_size": 0}, "batch_size"),      # an empty batch
    ({"path": "x", "dtype": "int8"}, "dtype"),           # not a float type
    ({"path": "x", "device": "tpu"}, "device"),          # not a device this reward knows
])
def test_bad_parameters_fail_at_construction(params, message):
    with pytest.raises(RewardConfigError, match=message):
        get("reward_model", **params)


def test_building_loads_nothing():
    # Building and pickling the reward never touches the checkpoint (config checks start no model).
    import pickle

    reward = get("reward_model", path="/nonexistent/reward-model")
    assert pickle.loads(pickle.dumps(reward)).__name__ == "reward_model"
