"""Held-out health cases: real runs the health rules were never tuned on.

The zoo (benchmarks/zoo/cases.py) is the demo recipe with one thing made sick; the rules' thresholds
were set against it. These cases are other recipes (the words demo, kb-qa, json, tool-math), plugin
rewards with the bugs users write, a resumed run and a two-stage run. Each case's label (healthy, or
the rule that must fire and be named first) was written down, from what the case is, before any of
them was run or scored; a miss or a false alarm here is reported, not tuned away.

    python -m benchmarks.health_zoo --set heldout
"""
from __future__ import annotations

from pathlib import Path

from benchmarks.zoo.cases import Case

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RECIPES = ROOT / "configs"
PLUGINS = {"imports": [str(HERE / "heldout_rewards.py")]}
DEMO_REWARDS = [{"name": "numeric_match", "weight": 1.0, "params": {"take": "first"}},
                {"name": "numeric_closeness", "weight": 0.5, "params": {"take": "first"}},
                {"name": "regex_format", "weight": 0.25}]


def cases() -> list[Case]:
    words = str(RECIPES / "cpu-demo-transfer.yaml")
    return [
        # Healthy: recipes that learn, or at least give GRPO a spread, run as shipped.
        Case("heldout-words-seed7", "healthy: the words recipe as shipped (it learns: +35 to +54 points in 40 steps)",
             {"training": {"seed": 7}}, 20, base=words),
        Case("heldout-words-resumed", "healthy: the words recipe, 10 steps, then resumed to 20",
             {"training": {"seed": 8}}, 10, base=words, resume_to=20),
        Case("heldout-two-stage", "healthy: two stages, near-miss credit first (6 steps), then the demo's rewards (10)",
             {"training": {"seed": 9},
              "stages": [{"name": "near", "max_steps": 6,
                          "rewards": [{"name": "numeric_closeness", "weight": 1.0, "params": {"take": "first"}}]},
                         {"name": "exact", "max_steps": 10}]}, 16),
        Case("heldout-tool-math", "healthy: the tool-math recipe as shipped (few-shot prompts: the model calls the tool)",
             {}, 6, base=str(RECIPES / "tool-math-cpu.yaml")),
        # Sick, each in a way a user gets there.
        Case("heldout-kb-qa-prose", "the kb-qa recipe on the 135M model: it answers in prose without the tags, so "
             "every completion scores about alike", {}, 6, base=str(RECIPES / "kb-qa-cpu.yaml"),
             expect=("no_learning_signal",), by_step=6, cause="no_learning_signal"),
        Case("heldout-scores-prompt", "a plugin reward that scores the prompt, not the completion",
             {**PLUGINS, "rewards": [{"name": "heldout_scores_prompt", "weight": 1.0}]}, 6,
             expect=("no_learning_signal",), by_step=6, cause="no_learning_signal"),
        Case("heldout-words-truncated", "the words recipe with max_completion_length 5 (the sum and its result need 12 tokens)",
             {"training": {"max_completion_length": 5}}, 4, base=words,
             expect=("truncation",), by_step=4, cause="truncation"),
        Case("heldout-json-truncated", "the json recipe with max_completion_length 16 (an object of its fields needs ~40 tokens)",
             {"training": {"max_completion_length": 16}}, 4, base=str(RECIPES / "json-output.yaml"),
             expect=("truncation",), by_step=4, cause="truncation"),
        Case("heldout-reward-raises", "a plugin reward that raises on a completion without a digit (unguarded re.search)",
             {**PLUGINS, "rewards": [*DEMO_REWARDS, {"name": "heldout_first_int", "weight": 1.0}]}, 4,
             expect=("reward_unscorable",), by_step=4, cause="reward_unscorable"),
    ]
