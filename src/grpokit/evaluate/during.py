"""Held-out accuracy while training: a callback that samples the policy on prompts it never trains on.

The training reward can rise while the model learns only to please one reward
(format, length) or to memorise its prompts. Every `eval.every` steps this
callback samples `eval.samples` completions for `eval.prompts` held-out prompts
with the policy being trained, scores them with the run's rewards and writes one
record to metrics.jsonl:

    {"step": 20, "stage": null, "time": ..., "eval/accuracy": 0.41, "eval/reward": 0.93,
     "eval/rewards/numeric_match": 0.41, "eval/truncated_rate": 0.0, "eval/mean_length": 3.1, ...}

The first record is the starting point (step 0, before any update), so the
report draws held-out accuracy from where the run began. Sampling uses its own
seeded random stream (the training stream is saved and restored around it) and
the same prompts every time, so the points of one run are comparable.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from transformers import TrainerCallback

from grpokit.run_directory.ranks import is_main_process


def flat_metrics(result: dict) -> dict[str, Any]:
    """The metrics.jsonl fields of one evaluation result (see evaluate.score_samples)."""
    out: dict[str, Any] = {f"eval/{key}": result.get(key)
                           for key in ("accuracy", "reward", "format_rate", "mean_length", "truncated_rate")}
    for name, value in (result.get("rewards") or {}).items():
        out[f"eval/rewards/{name}"] = value
    out["eval/prompts"] = result.get("prompts")
    out["eval/samples_per_prompt"] = result.get("samples_per_prompt")
    return out


def accuracy_reward(specs, answer_format: Any = None) -> Any:
    """What decides "correct": the first correctness reward of the run, with its parameters, else "auto".

    A run that reads its answers a particular way (`take: first`, a tolerance, a
    column, the answer format's tag) must be judged the same way on held-out prompts.
    """
    from grpokit import rewards
    from grpokit.rewards.format_params import with_answer_format

    for spec in specs:
        if rewards.family(spec.name) == "correctness":
            return rewards.get(spec.name, **with_answer_format(spec.name, spec.params, answer_format))
    return "auto"


class HeldOutEvalCallback(TrainerCallback):
    """Evaluates the policy on held-out prompts at step 0 and every `every` steps (main process only)."""

    def __init__(self, rows: Sequence[dict], reward_funcs: Sequence, weights: Sequence[float], *, every: int, accuracy: Any,
                 metrics_path: Path, stage: str | None, samples: int, max_new_tokens: int, temperature: float,
                 seed: int, baseline: bool = True, console=None, answer_format: Any = None,
                 observers: Sequence[Callable[[dict], None]] = ()):
        self.rows = list(rows)
        self.reward_funcs, self.weights = list(reward_funcs), list(weights)
        self.every, self.samples, self.accuracy = every, samples, accuracy
        self.max_new_tokens, self.temperature, self.seed = max_new_tokens, temperature, seed
        self.metrics_path, self.stage, self.baseline, self.console = Path(metrics_path), stage, baseline, console
        self.answer_format = answer_format  # where "auto" accuracy reads answers; what format_rate counts
        self.history: list[dict] = []
        self.observers = list(observers)  # called with each record as it is written (the live health monitor)

    def on_train_begin(self, args, state, control, model=None, processing_class=None, **kwargs):
        if self.baseline and state.global_step == 0:
            self._evaluate(0, model, processing_class)
        return control

    def on_step_end(self, args, state, control, model=None, processing_class=None, **kwargs):
        step = state.global_step
        if step % self.every == 0 or step == state.max_steps:
            self._evaluate(step, model, processing_class)
        return control

    def _evaluate(self, step: int, model, tokenizer) -> None:
        if not is_main_process() or model is None or tokenizer is None:
            return
        import torch

        from grpokit.evaluate.generation import evaluate
        from grpokit.run_directory.jsonl import append_jsonl

        started = time.perf_counter()
        padding_side = getattr(tokenizer, "padding_side", None)
        progress = None
        if self.console is not None:
            # The step-0 evaluation runs before the first step's line: without these it is minutes of silence.
            self.console.print(f"  held-out evaluation at step {step}: {len(self.rows)} prompts x {self.samples} "
                               f"samples, up to {self.max_new_tokens} tokens each", highlight=False)

            def progress(done: int, total: int) -> None:
                self.console.print(f"  held-out at step {step}: {done}/{total} prompts", highlight=False)
        # Seeded sampling must not reset the stream training samples from.
        with torch.random.fork_rng(devices=[]):
            result = evaluate(model, tokenizer, self.rows, self.reward_funcs, self.weights, k=self.samples, accuracy=self.accuracy,
                              max_new_tokens=self.max_new_tokens, temperature=self.temperature,
                              batch_size=max(1, 64 // self.samples), seed=self.seed,
                              answer_format=self.answer_format, progress=progress)
        if padding_side is not None:
            tokenizer.padding_side = padding_side  # TRL pads its own batches as it set up
        record = {"step": step, "stage": self.stage, "time": time.time(), **flat_metrics(result),
                  "eval/seconds": round(time.perf_counter() - started, 2)}
        self.history.append(record)
        append_jsonl(self.metrics_path, record)
        for observe in self.observers:
            observe(record)
        if self.console is not None:
            acc = record.get("eval/accuracy")
            shown = f"accuracy {acc:.3f}" if isinstance(acc, float) else f"reward {record['eval/reward']:.3f}"
            self.console.print(f"  held-out ({len(self.rows)} prompts x {self.samples}) at step {step}: {shown}",
                               highlight=False)
