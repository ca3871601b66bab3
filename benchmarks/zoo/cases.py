"""The health zoo's cases: short real runs of the bundled model, each sick in one named way, and healthy controls.

Each case is the demo recipe (configs/cpu-demo.yaml) with a few keys changed, so one case differs
from the healthy control only by what made it sick. `expect` lists the rules that must fire by
`by_step`; `cause` is the rule the report's diagnosis must name first. A healthy case expects no
warning or critical alert at all.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SICK_REWARDS = str(Path(__file__).resolve().parent / "sick_rewards.py")
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Case:
    name: str
    what: str                       # the one thing that is wrong (or "healthy control")
    changes: dict[str, Any]         # keys merged into the demo recipe
    steps: int                      # the case's step budget
    expect: tuple[str, ...] = ()    # rules that must fire (empty: healthy, none may warn)
    by_step: int | None = None      # ... at or before this step
    cause: str | None = None        # the diagnosis' first finding must be this rule
    predict: tuple[str, ...] = ()   # tools that must flag it before training: "doctor"
    memory_cap_gib: float | None = None  # RLIMIT_AS (ulimit -v) for the training process
    base: str | None = None         # a config path instead of the demo recipe
    skip: str | None = None         # why the case cannot run here
    judge: dict[str, Any] | None = None  # an llm_judge reward (weight, params); the harness serves it, sets base_url
    kill_judge_after_step: int | None = None  # SIGKILL that server once metrics.jsonl has logged this step
    eval_every: int = 0             # held-out evaluation every this many steps (0: none; it adds to a step's cost)
    resume_to: int | None = None    # after `steps`, `train --resume` with max_steps raised to this
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def healthy(self) -> bool:
        return not self.expect


def cases() -> list[Case]:
    demo_rewards = [{"name": "numeric_match", "weight": 1.0, "params": {"take": "first"}},
                    {"name": "numeric_closeness", "weight": 0.5, "params": {"take": "first"}},
                    {"name": "regex_format", "weight": 0.25}]
    imports = {"imports": [SICK_REWARDS]}
    return [
        *[Case(f"healthy-demo-seed{s}", "healthy control: the demo recipe", {"training": {"seed": s}}, 20)
          for s in (0, 1, 2)],
        # 20 steps like the other controls (it had 10; the budget was not why truncation fired: its first 10
        # steps all had half or more cut, which the uncapped patience also counts). Measured with held-out
        # evaluation: accuracy 0.28 at step 0, 0.53 at 10, 0.45 at 20, truncated 66% -> 23%. 50-88% of its
        # completions were cut in steps 1-10, but the cut ones carried the answer and talked on: they scored
        # +0.03 on the answer rewards against the finished ones of their prompt (reward_std 0.59).
        Case("healthy-demo-kl", "healthy control: the demo recipe with a KL penalty (beta 0.04)",
             {"training": {"beta": 0.04, "seed": 3}}, 20),
        # Learning rate 2e-3: at 5e-3 one run of three broke into empty completions by step 3 (reward 0,
        # entropy 1.9x), which diverged rightly named; at 2e-3 two trial runs and the zoo's collapsed to
        # " 1" for every question (steps 7, 9 and 7), entropy 1.53 -> 0.02.
        Case("collapse-fixed-answer", "a reward that pays one fixed answer (\"1\") whatever the question, and a high learning rate",
             {**imports, "rewards": [{"name": "zoo_fixed_string", "weight": 1.0}],
              "training": {"learning_rate": 2.0e-3}}, 12, expect=("collapse",), by_step=12, cause="collapse"),
        Case("no-signal-constant", "a reward that returns a constant: every group scores alike",
             {**imports, "rewards": [{"name": "zoo_constant", "weight": 1.0}]}, 6,
             expect=("no_learning_signal",), by_step=6, cause="no_learning_signal", predict=("doctor",)),
        Case("truncated-2-tokens", "max_completion_length 2: a sum needs 3-4 tokens, every completion is cut",
             {"training": {"max_completion_length": 2}}, 4, expect=("truncation",), by_step=4, cause="truncation",
             predict=("doctor",)),
        # The completions end up cut at the limit, but the cure is not a higher limit: the cut ones, the
        # longest, score more than the finished ones (completions/cut_answer_gap), so length_drift names the
        # reward paying for length and truncation (raise the limit) stands down.
        Case("hack-length", "a length-only reward the model games by talking longer (32-token limit)",
             {**imports, "rewards": [{"name": "zoo_length_hack", "weight": 1.0}],
              "training": {"max_completion_length": 32, "learning_rate": 1.0e-3}}, 6,
             expect=("length_drift",), by_step=6, cause="length_drift"),
        # Measured: lr 1.0 gave word salad or one word repeated (reward 0, every completion cut), never a NaN
        # loss or grad_norm (0.0 from step 2: every advantage is 0), so non_finite cannot be asked of it; a run
        # that overflows is a different case. CPU runs of this config are not reproducible, and the step-2
        # entropy against the first step's 1.53-1.55 was 3.15-4.02 in 4 runs and 0.0-2.16 in 11 others (two
        # more runs: 1.45 then 2.01, 1.93 for " authent authent ..."; 0.85 then 3.84). An entropy rise alone
        # missed those, so diverged now reads the reward gone in a step (0.21 -> 0 in both) with entropy 2x
        # or 1/2x the start's or every completion cut (0.5 -> 1.0): caught at step 2 in all three fixtures.
        Case("diverge-lr", "learning rate 1.0 (the highest the config accepts) without gradient clipping: the update blows the weights up",
             {"training": {"learning_rate": 1.0, "max_grad_norm": 0.0}}, 4,
             expect=("diverged",), by_step=3, cause="diverged"),
        # reward_stuck needs stuck_window (20) logged steps, so this is the zoo's longest case (24 steps:
        # 280 s wall, 200 CPU-s on the shared machine, 4 held-out evaluations included). Held-out
        # evaluation stays on (the demo's 32 prompts x 2): a run whose held-out accuracy rose is not stuck.
        # Measured: accuracy 0.28 at steps 0, 10, 20 and 24; reward 0.58 over the first 5 steps, 0.55 over
        # the window; reward_stuck at 20-24 and nothing else (length_drift had fired at step 2 on the base
        # model's first two cut gaps, +0.23 and +0.45, before it needed three).
        Case("stuck-low-lr", "learning rate 1e-7: the updates are too small to move the policy",
             {"training": {"learning_rate": 1.0e-7}}, 24, expect=("reward_stuck",), by_step=24,
             cause="reward_stuck", eval_every=10),
        Case("kl-blowup", "KL penalty on (beta 0.04) with a learning rate 10x the demo's",
             {"training": {"beta": 0.04, "learning_rate": 3.0e-3}}, 8, expect=("kl_blowup",), by_step=8,
             cause="kl_blowup"),
        Case("reward-half-none", "a plugin reward that returns None on half its rows",
             {**imports, "rewards": [*demo_rewards, {"name": "zoo_half_none", "weight": 0.5}]}, 4,
             expect=("reward_unscorable",), by_step=3, cause="reward_unscorable", predict=("doctor",)),
        Case("reward-half-raises", "a plugin reward that raises on half its rows",
             {**imports, "rewards": [*demo_rewards, {"name": "zoo_half_raises", "weight": 0.5}]}, 4,
             expect=("reward_unscorable",), by_step=3, cause="reward_unscorable", predict=("doctor",)),
        # Group mode asks the judge once per prompt (2 requests a step, ~15 s on one CPU thread; pointwise
        # took 55 s); the long timeout keeps a judge slowed by training on the same cores from failing
        # while alive, so steps 1-2 show a live judge and step 3 on a dead one.
        Case("judge-killed", "an llm_judge reward (the local judge, weight 0.5) whose server is SIGKILLed after step 2",
             {}, 8, expect=("judge_failing",), by_step=6, cause="judge_failing",
             judge={"weight": 0.5, "params": {"rubric": "qa", "mode": "group", "timeout_s": 120.0,
                                              "budget_s": 300.0}},
             kill_judge_after_step=2),
        Case("tool-never-called", "the tool recipe without its few-shot calls: the model never calls the python tool",
             {"data": {"source": "synthetic:arithmetic", "prompt_column": "question", "answer_column": "answer",
                       "eval_size": 0},
              "training": {"max_completion_length": 48}}, 4,
             expect=("tool_never_called",), by_step=4, cause="tool_never_called",
             base=str(ROOT / "configs" / "tool-math-cpu.yaml")),
        Case("oom-full-finetune", "the demo recipe under a 4 GiB address-space cap (ulimit -v) it does not fit in",
             {}, 2, expect=("out_of_memory",), by_step=1, cause="out_of_memory",
             predict=("doctor",), memory_cap_gib=4.0),
    ]
