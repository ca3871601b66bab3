"""What the health callback costs per training step.

    python -m benchmarks.health_overhead [--steps 12] [--rounds 3]

Two measurements, written to benchmarks/results/health_overhead.json:
1. on_log: the callback's own time per logged step (tracker flush + every rule),
   timed over a 500-step history with TRL 1.16's full set of GRPO log keys, plus
   the reward wrapper's cost per reward call (grpokit.rewards.trainer_rewards).
2. real steps: a tiny GRPOTrainer run (2-layer random Llama, CPU) with and without
   the callback, runs alternated, median step times compared. The tiny model is
   the worst case: real models make each step far longer and the callback's share
   smaller.
The overhead figure is (on_log + tracker) time / median step time of the run without it;
the A/B step-time ratio is reported too but on a shared 2-core machine its noise is
larger than the effect.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT))  # tests.helpers.synthetic_runs

from grpokit.health.callback import HealthCallback  # noqa: E402
from grpokit.rewards.reward_set import RewardSet  # noqa: E402
from grpokit.rewards.trainer_rewards import TrainerRewards  # noqa: E402
from grpokit.training.callbacks import RewardStatsCallback  # noqa: E402
from tests.helpers.synthetic_runs import history  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "health_overhead.json"

# Keys TRL 1.16's GRPOTrainer logs besides the synthetic history's (so the dict is full-size).
EXTRA_KEYS = ("completions/min_terminated_length", "completions/max_terminated_length", "clip_ratio/low_mean",
              "clip_ratio/low_min", "clip_ratio/high_mean", "clip_ratio/high_max", "step_time", "epoch")


class _Quiet:
    def print(self, *a, **k):
        pass


def time_on_log(steps: int = 500) -> dict:
    records = history("healthy", steps=steps)
    for r in records:
        for k in EXTRA_KEYS:
            r.setdefault(k, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        cb = HealthCallback({"max_completion_length": 128}, run_dir=tmp, console=_Quiet())
        control = SimpleNamespace(should_save=False, should_training_stop=False)
        times = []
        for r in records:
            state = SimpleNamespace(global_step=r["step"], is_world_process_zero=True)
            logs = dict(r)
            t = time.perf_counter()
            cb.on_log(None, state, control, logs=logs)
            times.append(time.perf_counter() - t)
    # The reward wrapper (watchdog thread included): one batch of 8 groups x 8 completions of ~300 characters.
    tracker = TrainerRewards(RewardSet([lambda completions, **kw: [0.0] * len(completions)]))
    (wrapped,) = tracker.funcs
    completions = [("step by step " * 25) + str(i % 5) for i in range(64)]
    prompts = [f"prompt {i // 8}" for i in range(64)]
    wrap_times = []
    for _ in range(200):
        t = time.perf_counter()
        wrapped(completions, prompts=prompts)
        wrap_times.append(time.perf_counter() - t)
        tracker.window()
    return {
        "keys_per_log": len(records[0]),
        "history_steps": steps,
        "on_log_median_us": statistics.median(times) * 1e6,
        "on_log_p95_us": sorted(times)[int(0.95 * len(times))] * 1e6,
        "tracker_per_reward_call_median_us": statistics.median(wrap_times) * 1e6,
    }


def _tiny_trainer_parts():
    from datasets import Dataset

    from grpokit.models.tiny import build_tiny_model

    model, tok = build_tiny_model(hidden_size=64, num_attention_heads=4, num_key_value_heads=2)
    data = Dataset.from_list([{"prompt": f"what is {i} + {i} ?", "answer": str(2 * i)} for i in range(64)])
    return model, tok, data


def length_reward(completions, **kwargs):
    return [len(c) / 10 for c in completions]


def time_training(steps: int, with_health: bool, out_dir: str) -> tuple[list[float], float]:
    """(step times after warm-up, seconds the health callback spent in on_log during the run)."""
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.times, self._t = [], None

        def on_step_begin(self, args, state, control, **kw):
            self._t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            self.times.append(time.perf_counter() - self._t)

    model, tok, data = _tiny_trainer_parts()
    timer = StepTimer()
    callbacks = [timer]
    funcs = [length_reward]
    health = None
    if with_health:
        calls = TrainerRewards(RewardSet(funcs))
        health = HealthCallback({}, run_dir=out_dir, console=_Quiet(), reward_calls=calls)
        funcs = calls.funcs
        callbacks += [RewardStatsCallback(calls), health]
    args = GRPOConfig(output_dir=out_dir, per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=12, max_steps=steps, logging_steps=1, report_to="none",
                      use_cpu=True, save_strategy="no", learning_rate=1e-4, disable_tqdm=True, seed=0)
    trainer = GRPOTrainer(model=model, reward_funcs=funcs, args=args, train_dataset=data, processing_class=tok,
                          callbacks=callbacks)
    trainer.train()
    # The first steps include warm-up.
    return timer.times[2:], (health.seconds / steps if health is not None else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-training", action="store_true")
    args = parser.parse_args()
    result = {"on_log": time_on_log()}
    per_step_cost = (result["on_log"]["on_log_median_us"] + result["on_log"]["tracker_per_reward_call_median_us"]) / 1e6
    if not args.skip_training:
        base, ours, in_run = [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.rounds):  # alternate so machine load hits both alike
                base += time_training(args.steps, False, f"{tmp}/base{i}")[0]
                times, per_step = time_training(args.steps, True, f"{tmp}/ours{i}")
                ours += times
                in_run.append(per_step)
        base_med, ours_med = statistics.median(base), statistics.median(ours)
        result["training"] = {
            "model": "2-layer random Llama (hidden 64), CPU, 4 completions x 12 tokens per step",
            "steps_timed_per_arm": len(base),
            "step_median_s_without": base_med,
            "step_median_s_with": ours_med,
            "ab_ratio_with_over_without": ours_med / base_med,
            # Measured inside the real runs: the callback's own on_log time per step.
            "health_on_log_s_per_step_in_run": statistics.median(in_run),
            "in_run_overhead_fraction": statistics.median(in_run) / base_med,
        }
        result["overhead_fraction_of_tiny_step"] = per_step_cost / base_med
    # A real CPU step of the default 135M model takes seconds; a GPU step of a 1.5B model about as long.
    result["overhead_fraction_of_1s_step"] = per_step_cost / 1.0
    result["under_1_percent"] = result.get("overhead_fraction_of_tiny_step", result["overhead_fraction_of_1s_step"]) < 0.01
    result["command"] = "python -m benchmarks.health_overhead " + " ".join(sys.argv[1:])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
