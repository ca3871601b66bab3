"""A real multi-turn GRPO rollout with tools, on the tiny test model, through grpokit.training.trainer.

Generation is scripted (the random tiny model would never write a tool call): the
trainer's single-turn generator is replaced by one that returns fixed replies
chosen by what the conversation so far holds. Everything else is TRL's own tool
loop and grpokit's environment: the call is parsed, run in the sandbox, its
output goes into the next turn's prompt, the rewards score the trajectory, and
training steps run on the real model.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpokit.config.run_config import from_dict

pytestmark = pytest.mark.slow


def call(name: str, **arguments) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


class Script:
    """Replies by role (the rollout's index mod 4) and by what the conversation already shows."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.prompts: list[tuple[int, str]] = []  # (training step, conversation so far) for every generation

    def reply(self, text: str, index: int, step: int) -> str:
        turn = text.count("<tool_response>")
        if turn == 0:
            role = index % 4
            if role == 0:  # a python session over two calls; at step 2 it asks for a variable of step 1
                return call("python", code="print(x)") if step > 0 else call("python", code="x = 6 * 7\nprint(x)")
            if role == 1:
                return call("python", code="while True:\n    pass")  # hostile: hangs
            if role == 2:
                return call("calculator", expression="6 * 7")
            return "The answer is 42"
        if turn == 1 and "x = 6 * 7" in text:
            return call("python", code="print(x + 1)")  # uses the state of the same episode
        return "The answer is 42"

    def __call__(self, trainer, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        step = trainer.state.global_step
        out = []
        for index, ids in enumerate(prompt_ids):
            text = self.tokenizer.decode(ids, skip_special_tokens=False)
            self.prompts.append((step, text))
            reply = self.reply(text, index, step) + self.tokenizer.eos_token
            out.append(self.tokenizer(reply, add_special_tokens=False)["input_ids"])
        return out, None


@pytest.fixture(scope="module")
def chatml_tiny(tmp_path_factory):
    from grpokit.models.tiny import build_tiny_model

    model, tokenizer = build_tiny_model(chat_format="chatml", hidden_size=32)
    # The tool instructions a ChatML tool template adds run to ~1,000 byte-level tokens.
    model.config.max_position_embeddings = 4096
    path = tmp_path_factory.mktemp("tiny-chatml") / "model"
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path, tokenizer


def test_multi_turn_rollout_runs_tools_in_the_sandbox(chatml_tiny, tmp_path, monkeypatch):
    from trl import GRPOTrainer

    from grpokit.training.trainer import train

    path, tokenizer = chatml_tiny
    script = Script(tokenizer)
    monkeypatch.setattr(GRPOTrainer, "_generate_single_turn",
                        lambda self, *a, **k: script(self, *a, **k))
    cfg = from_dict({
        "name": "tools", "output_dir": str(tmp_path / "run"), "profile": "cpu",
        "model": {"name": str(path), "lora": {"r": 4}},
        "data": {"source": "synthetic:arithmetic", "max_samples": 16, "eval_size": 0},
        "rewards": [{"name": "numeric_match"}, {"name": "tool_call_success", "weight": 0.5}],
        "tools": [{"name": "python", "params": {"timeout": 1.0}}, {"name": "calculator"}],
        "environment": {"max_turns": 3},
        "training": {"max_steps": 2, "num_generations": 4, "per_device_train_batch_size": 4,
                     "max_completion_length": 400, "save_steps": 100, "learning_rate": 0.01},
    })
    run_dir = train(cfg)

    first_step = [text for step, text in script.prompts if step == 0]
    # The chat template shows the model its tools.
    assert '"name": "python"' in first_step[0] and '"name": "calculator"' in first_step[0]
    follow_ups = [t for t in first_step if "<tool_response>" in t]
    # The python call ran in the sandbox and its output is in the next turn's prompt ...
    assert any("<tool_response>\n42\n</tool_response>" in t and "x = 6 * 7" in t for t in follow_ups)
    # ... and the second call of that episode saw the first call's variable.
    assert any("<tool_response>\n43\n</tool_response>" in t for t in follow_ups)
    # Hostile code came back to the model as an error message.
    assert any("while True" in t and "{'error': " in t and "TimeoutError" in t for t in follow_ups)
    assert any('"expression": "6 * 7"' in t and "<tool_response>\n42\n</tool_response>" in t for t in follow_ups)
    # A new episode (step 2) starts with an empty session: the variable of step 1 is gone.
    second_step = [text for step, text in script.prompts if step == 1 and "<tool_response>" in text]
    assert any('"code": "print(x)"' in t and "{'error': " in t and "NameError: name" in t for t in second_step)

    # completions.jsonl keeps the whole trajectory, readable: each call, its output, the final answer.
    samples = [json.loads(line) for line in Path(run_dir / "completions.jsonl").read_text().splitlines()]
    session = next(s["completion"] for s in samples if s["step"] == 1 and "x = 6 * 7" in s["completion"])
    assert session == ("[call python] code:\nx = 6 * 7\nprint(x)\n[python output]\n42\n"
                       "[call python] code:\nprint(x + 1)\n[python output]\n43\n[assistant]\nThe answer is 42")
    hostile = next(s["completion"] for s in samples if s["step"] == 1 and "while True" in s["completion"])
    assert "[python output]\n{'error': " in hostile and "TimeoutError" in hostile

    metrics = [json.loads(line) for line in Path(run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2]
    first = metrics[0]
    # TRL's tool metrics and grpokit's trajectory rewards, per step.
    assert first["tools/call_frequency"] == pytest.approx(4 / 4)  # 2 + 1 + 1 + 0 calls over 4 rollouts
    assert first["tools/failure_frequency"] == pytest.approx(1 / 4)  # the hostile one of 4 calls
    assert first["rewards/tool_call_success/mean"] == pytest.approx((1 + 0 + 1 + 0) / 4)
    assert first["rewards/tool_turn_limit/mean"] == 0.0 and first["rewards/malformed_tool_call/mean"] == 0.0
    assert first["rewards/numeric_match/mean"] is not None
    # Time inside tool calls: at least the hostile call's 1 s timeout, a share of the step below 1.
    assert first["tools/seconds"] >= 1.0 and 0 < first["tools/time_share"] < 1
