"""The second held-out health set: real runs chosen and labelled before the rules' second round of fixes.

The first held-out set (benchmarks/zoo/heldout.py) found four failure classes; the fixes for them were
made reading those runs, so that set is tuning evidence now. These cases are new: the config
`grpokit init math` writes, a full fine-tune, a resumed run with a KL penalty, fewer samples per
prompt, and mistakes users make that neither the zoo nor the first set holds (a near-zero sampling
temperature, a reward reading a column the data lacks, a reward slower than its timeout, a tool
recipe whose limit cuts the tool call, a learning rate 100x the demo's). Each label (healthy, or
the rule that must fire and be named first) was written from what the case is, and committed,
before any of them was run or scored.

    python -m benchmarks.health_zoo --set heldout2
"""
from __future__ import annotations

from pathlib import Path

from benchmarks.zoo.cases import Case

HERE = Path(__file__).resolve().parent
RECIPES = HERE.parents[1] / "configs"
PLUGINS = {"imports": [str(HERE / "heldout2_rewards.py")]}
DEMO_REWARDS = [{"name": "numeric_match", "weight": 1.0, "params": {"take": "first"}},
                {"name": "numeric_closeness", "weight": 0.5, "params": {"take": "first"}},
                {"name": "regex_format", "weight": 0.25}]


def cases() -> list[Case]:
    return [
        # Healthy: configs a user runs as written, each of which gives GRPO a spread to learn from.
        Case("heldout2-init-math", "healthy: the config `grpokit init math` writes (it learns: format 0.51 -> 0.9+ "
             "in 20 steps, 3 seeds), 10 steps", {"training": {"seed": 3, "max_steps": 10}}, 10,
             base=str(HERE / "heldout2_init_math.yaml")),
        Case("heldout2-full-finetune", "healthy: the demo recipe as a full fine-tune (no LoRA) at a full "
             "fine-tune's learning rate, 1e-5", {"model": {"lora": None}, "training": {"learning_rate": 1.0e-5, "seed": 4}}, 12),
        Case("heldout2-kl-resumed", "healthy: the demo recipe with a KL penalty (beta 0.04), 8 steps, then resumed to 16",
             {"training": {"beta": 0.04, "seed": 5}}, 8, resume_to=16),
        Case("heldout2-four-samples", "healthy: the demo recipe with 4 samples per prompt (4 prompts x 4 a step)",
             {"training": {"num_generations": 4, "seed": 6}}, 16),
        # Sick, each in a way a user gets there.
        Case("heldout2-cold-sampling", "sampling temperature 0.05 (set for 'accurate' answers): a prompt's 8 "
             "samples come out the same, so no group has a spread", {"training": {"temperature": 0.05}}, 6,
             expect=("no_learning_signal",), by_step=6, cause="no_learning_signal"),
        Case("heldout2-wrong-column", "a plugin reward that reads a `solution` column the data lacks and returns None "
             "on every row", {**PLUGINS, "rewards": [*DEMO_REWARDS, {"name": "heldout2_wrong_column", "weight": 1.0}]}, 4,
             expect=("reward_unscorable",), by_step=3, cause="reward_unscorable"),
        Case("heldout2-slow-reward", "a plugin reward that waits 3 s on a slow service per batch, with a 1 s timeout",
             {**PLUGINS, "rewards": [*DEMO_REWARDS, {"name": "heldout2_slow_lookup", "weight": 0.5, "timeout": 1.0}]}, 4,
             expect=("reward_hung",), by_step=2, cause="reward_hung"),
        Case("heldout2-tool-math-cut", "the tool-math recipe with max_completion_length 16 (a tool call alone is ~30 "
             "tokens): every turn is cut", {"training": {"max_completion_length": 16}}, 4,
             base=str(RECIPES / "tool-math-cpu.yaml"), expect=("truncation",), by_step=4, cause="truncation"),
        Case("heldout2-lr-100x", "learning rate 3e-2, 100x the demo's, gradient clipping left on: the policy breaks",
             {"training": {"learning_rate": 3.0e-2, "seed": 7}}, 6,
             expect=("diverged", "collapse"), by_step=6, cause="diverged"),
    ]
