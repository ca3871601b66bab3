"""The symptom -> cause -> fix table, as data.

One row per health rule. The live callback (health.py), the after-the-fact
diagnosis (diagnose.py), the HTML report and the docs all read this table, so a
fix is written once and every surface says the same thing.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Symptom:
    rule: str          # the health rule's id, also the `rule` field of alerts.jsonl
    title: str         # a short name a person recognises
    severity: str      # "critical" (the run is wasting compute) or "warning"
    metrics: tuple[str, ...]  # TRL metric names the rule reads
    looks_like: str    # what the curves show
    cause: str         # why it happens
    fix: str           # what to change, with grpokit config keys
    # When the live rule fires, as templates over HealthConfig fields ({clipped_ratio} -> 0.8),
    # and the `health:` keys that change it; docgen renders them with the defaults.
    threshold: str = ""
    patience: str = ""
    keys: tuple[str, ...] = ()


SYMPTOMS: tuple[Symptom, ...] = (
    Symptom(
        rule="no_learning_signal",
        title="No learning signal",
        severity="warning",
        metrics=("frac_reward_zero_std", "reward_std"),
        looks_like="frac_reward_zero_std near 1 or reward_std under 0.1 for several steps; loss near 0.",
        cause=(
            "Every completion in a group gets the same score, so every advantage is 0 and the "
            "gradient is empty: the task is too hard (all 0) or too easy (all 1), or the reward is binary "
            "and coarse."
        ),
        fix=(
            "Give partial credit (add a format reward such as incremental_format), use easier prompts or "
            "a curriculum (stages:), raise training.num_generations, or raise training.temperature."
        ),
        threshold="frac_reward_zero_std >= {zero_std_frac}, or reward_std < {min_reward_std}",
        patience="{no_signal_steps} logged steps in a row",
        keys=("zero_std_frac", "min_reward_std", "no_signal_steps"),
    ),
    Symptom(
        rule="truncation",
        title="Completions cut at the length limit",
        severity="warning",
        metrics=("completions/clipped_ratio", "completions/mean_length", "completions/cut_answer_gap",
                 "completions/cut_answer_score", "reward_std"),
        looks_like=("completions/clipped_ratio near 1, or at half or more step after step; mean_length equal to "
                    "max_completion_length; cut completions score lower on the answer than finished ones "
                    "(completions/cut_answer_gap below 0), or, with every completion cut, earn about nothing on "
                    "it (completions/cut_answer_score near 0)."),
        cause=(
            "max_completion_length is shorter than the answers the model writes, so completions end "
            "before the final answer and rewards that parse it score 0."
        ),
        fix=(
            "Raise training.max_completion_length, ask for shorter answers in data.system_prompt, add a "
            "length reward, or set training.mask_truncated_completions: true."
        ),
        threshold=("completions/clipped_ratio >= {clipped_ratio} (most cut), or >= {sustained_clipped_ratio} (half "
                   "cut); and, where the run logs completions/cut_answer_gap (the answer rewards, format and length "
                   "rewards left out, of cut minus finished completions of one prompt), its mean over the steps of the "
                   "last {sustained_truncation_steps} logs with >= {sustained_clipped_ratio} cut (where at least "
                   "{truncation_steps} logged it) <= -{cut_gap} x their reward_std: a cut that leaves the answer "
                   "is the model talking on after it, and one that earns more is a reward paying for length "
                   "(length_drift); with every completion cut (no gap), completions/cut_answer_score over those "
                   "logs > {cut_gap} x their reward_std says the answer fits before the cut, and the rule stands down"),
        patience=("{truncation_steps} logged steps in a row at >= {clipped_ratio}; "
                  "{sustained_truncation_steps} in a row at >= {sustained_clipped_ratio}"),
        keys=("clipped_ratio", "truncation_steps", "sustained_clipped_ratio", "sustained_truncation_steps", "cut_gap"),
    ),
    Symptom(
        rule="collapse",
        title="Collapse into one answer",
        severity="warning",
        metrics=("entropy", "completions/distinct_frac", "completions/shared_answer_frac"),
        looks_like="entropy falls to a fraction of its start; completions in a group become identical.",
        cause=(
            "The policy has become near-deterministic, often after a reward hack: one answer scores well "
            "and the model stops exploring. With identical completions reward_std goes to 0 as well."
        ),
        fix=(
            "Lower training.learning_rate, raise training.temperature, add a KL penalty "
            "(training.beta: 0.01-0.04), check the reward for a hack in completions.jsonl, and resume from "
            "a checkpoint before the fall."
        ),
        threshold=("entropy < {entropy_drop} x its start (median of the first 3 logs), "
                   "or completions/distinct_frac < {min_distinct_frac}; and at least {collapse_zero_std_frac} of "
                   "the groups (mean of the last {collapse_steps} logs) scored all their completions the same, and, "
                   "where a step has 2+ groups, at least {collapse_shared_frac} of the groups' usual completions are "
                   "one and the same (completions/shared_answer_frac). Without those, low entropy is a model sure of "
                   "its answers, not a collapse"),
        patience="{collapse_steps} logged steps in a row",
        keys=("entropy_drop", "min_distinct_frac", "collapse_zero_std_frac", "collapse_shared_frac", "collapse_steps"),
    ),
    Symptom(
        rule="kl_blowup",
        title="KL blow-up",
        severity="critical",
        metrics=("kl",),
        looks_like="kl above 0.5 and climbing.",
        cause=(
            "The policy has moved far from the reference model, usually a learning rate that is too high "
            "or a reward the model can hack; output quality tends to fall apart next."
        ),
        fix=(
            "Lower training.learning_rate (e.g. halve it), raise training.beta, lower "
            "training.max_grad_norm, and resume from the last checkpoint where kl was low."
        ),
        threshold="kl > {kl_max}",
        patience="{kl_steps} logged step(s) in a row",
        keys=("kl_max", "kl_steps"),
    ),
    Symptom(
        rule="non_finite",
        title="NaN or infinite loss / grad_norm",
        severity="critical",
        metrics=("loss", "grad_norm"),
        looks_like="loss or grad_norm is NaN or inf.",
        cause=(
            "A numerical overflow: fp16 without loss scaling, a learning rate that is too high, or a "
            "reward that returned inf/NaN. Every step after this one is wasted."
        ),
        fix=(
            "Use bf16 instead of fp16 (training.bf16: true, fp16: false), lower training.learning_rate, "
            "keep training.max_grad_norm at 1.0, and check rewards with `grpokit rewards test`. "
            "Resume from the last checkpoint."
        ),
        threshold="loss or grad_norm is NaN, inf or None",
        patience="at once (1 logged step)",
        keys=(),
    ),
    Symptom(
        rule="diverged",
        title="Training diverged: the model writes noise",
        severity="critical",
        metrics=("entropy", "reward", "completions/clipped_ratio"),
        looks_like=("the reward drops to about 0 in a step or two while entropy jumps far above or below the first "
                    "steps' or every completion runs to the length limit; completions.jsonl shows word salad or one "
                    "token repeated."),
        cause=(
            "An update far too large (a learning rate too high, gradient clipping off) threw the weights out of "
            "the region where the model writes language. Without an overflow nothing turns NaN, so the loss looks "
            "fine; every step after this one is wasted."
        ),
        fix=(
            "Lower training.learning_rate (LoRA: 1e-5 to 3e-4), keep training.max_grad_norm at 1.0, and restart "
            "or resume from a checkpoint from before the jump."
        ),
        threshold=("the reward <= {diverge_reward_frac} x the first 3 logged steps' mean, reached within 2 logged steps "
                   "of half that mean or more, while entropy is >= {diverge_entropy_rise} x the first steps' or <= "
                   "1/{diverge_entropy_rise} of it, or >= {clipped_ratio} of completions are cut where the first "
                   "steps had fewer"),
        patience="at once (1 logged step)",
        keys=("diverge_reward_frac", "diverge_entropy_rise"),
    ),
    Symptom(
        rule="reward_stuck",
        title="Reward stuck or falling",
        severity="warning",
        metrics=("reward", "reward_std"),
        looks_like="the reward curve is flat (or going down) over a window while reward_std is healthy.",
        cause=(
            "There is signal but the updates do not move the policy toward it: learning rate too low, "
            "too few steps, LoRA rank too small, or rewards that pull in opposite directions."
        ),
        fix=(
            "Raise training.learning_rate (LoRA usually wants 1e-5 to 1e-4), check each rewards/<name>/mean "
            "curve for a reward that fights the others, lower the weight of the format reward once it is "
            "learned, or raise model.lora.r."
        ),
        threshold=("the fitted rise of reward over the window < {stuck_min_gain} x the mean reward_std and the "
                   "window's mean reward (its steps after the first {stuck_baseline_steps}) no higher than the first "
                   "{stuck_baseline_steps} logs' (beyond twice the noise), no reward up beyond its own noise while none "
                   "fell; or a fitted fall larger than twice its standard error. Never while held-out accuracy "
                   "(eval.every) is up since the first evaluation by more than twice its binomial noise. A run that "
                   "learned early and plateaued is not stuck, and small batches (2 prompts a step) make a "
                   "flat-looking trend noise"),
        patience="a window of {stuck_window} logged steps (not capped: a shorter run never gets this alert)",
        keys=("stuck_window", "stuck_min_gain", "stuck_baseline_steps"),
    ),
    Symptom(
        rule="length_drift",
        title="Completion length drifting to the limit",
        severity="warning",
        metrics=("completions/mean_length", "completions/clipped_ratio", "completions/cut_answer_gap"),
        looks_like=("completions/mean_length climbs toward max_completion_length; completions cut at the limit "
                    "score higher than finished ones (completions/cut_answer_gap above 0)."),
        cause=(
            "Longer completions are being rewarded (or not penalised), so length grows each step and the "
            "completions end up cut at the limit. When the cut ones, the longest, out-score the finished ones, a "
            "reward pays for length itself: the model is gaming it, not running out of room."
        ),
        fix=(
            "Find the reward that pays for length (completions.jsonl: the long completions score highest) and "
            "fix or down-weight it; add max_length_penalty or soft_overlong_punishment to rewards, or use "
            "training.loss_type: dr_grpo to remove the length bias. Raise training.max_completion_length only if "
            "long answers are what you want: against a reward that pays for length, a higher limit feeds the hack."
        ),
        threshold=("mean completion length >= {length_limit_frac} x max_completion_length and rising over "
                   "the window; off when max_completion_length is under {length_min_limit} tokens (answers "
                   "that short are short by design, and the truncation alert covers them). Or, without the window, "
                   "completions/clipped_ratio >= {sustained_clipped_ratio} while cut completions out-score the "
                   "finished ones of their prompt: mean completions/cut_answer_gap over the steps of the last "
                   "{sustained_truncation_steps} logs with >= {sustained_clipped_ratio} cut (at least "
                   "{length_gap_steps} of them) >= {cut_gap} x their reward_std"),
        patience=("a window of {length_window} logged steps (not capped: a shorter run never gets the rising-length "
                  "alert); at once for cut completions out-scoring finished ones, whose gap rests on "
                  "{length_gap_steps} steps"),
        keys=("length_limit_frac", "length_window", "length_min_limit", "max_completion_length", "cut_gap",
              "length_gap_steps"),
    ),
    Symptom(
        rule="reward_unscorable",
        title="A reward returns None or fails for most samples",
        severity="warning",
        metrics=("rewards/<name>/mean", "rewards/<name>/none_frac", "rewards/<name>/error_frac"),
        looks_like="rewards/<name>/mean is missing (None) or the reward's None/error share is half or more.",
        cause=(
            "The reward cannot score the samples: the data set lacks the column it reads (answer, tests, "
            "schema...), the gold answers do not parse, or the reward raises."
        ),
        fix=(
            "Check data.answer_column and the columns the reward reads (`grpokit rewards list`), run "
            "`grpokit rewards test` on a few samples, and look at the first error in alerts.jsonl."
        ),
        threshold="a reward's None share or error share >= {max_none_frac}, or its mean is missing (None)",
        patience="{unscorable_steps} logged steps in a row",
        keys=("max_none_frac", "unscorable_steps"),
    ),
    Symptom(
        rule="out_of_memory",
        title="Out of memory",
        severity="critical",
        metrics=("memory/peak_gib", "memory/limit_gib"),
        looks_like=("memory/peak_gib climbs to memory/limit_gib; or the run stopped without finishing and its "
                    "run_status.json says an allocation failed, or the process is gone with memory near the limit."),
        cause=(
            "Training needs more memory than the limit that binds (the machine's RAM, a container's cgroup, "
            "ulimit -v, or the GPU): weights, gradients and optimizer state, the activations of "
            "per_device_train_batch_size x (prompt + completion) tokens and the generation cache add up past it. "
            "The kernel then kills the process without an error message, or an allocation fails."
        ),
        fix=(
            "Use LoRA (model.lora) instead of a full fine-tune, profile: memory (gradient checkpointing), lower "
            "training.per_device_train_batch_size (raise gradient_accumulation_steps to keep the batch) or "
            "max_completion_length, or pick a smaller model; `grpokit doctor CONFIG` prints the planned peak "
            "against the limit. Then `grpokit train CONFIG --resume` continues from the last checkpoint."
        ),
        threshold="memory/peak_gib >= {memory_limit_frac} x memory/limit_gib (the limit that binds: RAM, cgroup or ulimit -v)",
        patience="at once (1 logged step)",
        keys=("memory_limit_frac",),
    ),
    Symptom(
        rule="tool_calls_fail",
        title="Tool calls always fail",
        severity="warning",
        metrics=("tools/failure_frequency", "tools/call_frequency"),
        looks_like="tools/failure_frequency near 1 while the model does call tools.",
        cause=(
            "Every call errors: the model writes code that raises or runs past the tool's timeout, calls a tool "
            "with wrong argument names, or the tool cannot work (a search path with no documents)."
        ),
        fix=(
            "Read the tool messages in completions.jsonl; raise the tool's params.timeout, describe the tool "
            "and its arguments in data.system_prompt, add tool_call_success to rewards, or start from a model "
            "trained for tool calling."
        ),
        threshold="tools/failure_frequency >= {tool_failure_frac} (with calls made)",
        patience="{tool_failure_steps} logged steps in a row",
        keys=("tool_failure_frac", "tool_failure_steps"),
    ),
    Symptom(
        rule="tool_never_called",
        title="The model never calls its tools",
        severity="warning",
        metrics=("tools/call_frequency",),
        looks_like="tools/call_frequency at or near 0 step after step.",
        cause=(
            "The model does not know it has tools or how to call them (small models rarely call unprompted), "
            "or nothing rewards a call, so GRPO has no reason to try."
        ),
        fix=(
            "Say in data.system_prompt when to use the tool and show one call; add tool_call_success "
            "(weight 0.2-0.5) to rewards; use a tool-calling instruct model; keep malformed_tool_call to see "
            "calls that do not parse."
        ),
        threshold="tools/call_frequency < {min_tool_calls} calls per episode",
        patience="{no_tool_steps} logged steps in a row",
        keys=("min_tool_calls", "no_tool_steps"),
    ),
    Symptom(
        rule="tool_turn_limit",
        title="Episodes hit the turn limit",
        severity="warning",
        metrics=("rewards/tool_turn_limit/mean",),
        looks_like="rewards/tool_turn_limit/mean (a weight-0 diagnostic) at half or more.",
        cause=(
            "Episodes end on a tool call that never ran: the model keeps calling tools until "
            "environment.max_turns runs out, or the completion has no room left for the tool's output."
        ),
        fix=(
            "Raise environment.max_turns or training.max_completion_length, lower environment.max_output_chars, "
            "or reward answering (the correctness rewards score the final answer only)."
        ),
        threshold="share of episodes ending on an unanswered call >= {turn_limit_frac}",
        patience="{turn_limit_steps} logged steps in a row",
        keys=("turn_limit_frac", "turn_limit_steps"),
    ),
    Symptom(
        rule="judge_failing",
        title="The judge does not answer",
        severity="critical",
        metrics=("judge/<name>/failure_frac",),
        looks_like="judge/<name>/failure_frac above 0; rewards/llm_judge/mean missing or based on few samples.",
        cause=(
            "The judge endpoint is down, unreachable, rejects the key, runs out of the step's budget_s, or "
            "replies without a grade: those completions score None, so the step learns from the other rewards only."
        ),
        fix=(
            "Check the endpoint with `grpokit judge check URL` (or restart `grpokit judge serve`), make sure the "
            "variable named by api_key_env is exported, raise the judge's budget_s or timeout_s, or keep "
            "structured: true so the reply is held to JSON. The first error is in alerts.jsonl."
        ),
        threshold="a judge's failure share > {judge_failure_frac}",
        patience="{judge_failure_steps} logged steps in a row",
        keys=("judge_failure_frac", "judge_failure_steps"),
    ),
    Symptom(
        rule="judge_slow",
        title="The judge dominates step time",
        severity="warning",
        metrics=("judge/<name>/step_share", "judge/<name>/latency_s"),
        looks_like="judge/<name>/step_share near 1, or judge/<name>/latency_s in tens of seconds.",
        cause=(
            "Every step waits for the judge: requests queue behind a small concurrency limit, the judge model is "
            "large for its hardware, or group mode sends long prompts."
        ),
        fix=(
            "Raise the judge's concurrency (and the server's parallel slots), use a smaller or faster judge, "
            "lower max_chars, keep cache_size on for repeated completions, or give the judge its own GPU."
        ),
        threshold="judging >= {judge_step_share} of a step's wall time, or a median request >= {judge_max_latency_s}s",
        patience="{judge_slow_steps} logged steps in a row",
        keys=("judge_step_share", "judge_max_latency_s", "judge_slow_steps"),
    ),
)

BY_RULE: dict[str, Symptom] = {s.rule: s for s in SYMPTOMS}
RULES: tuple[str, ...] = tuple(BY_RULE)


def _cell(text: str) -> str:
    # A pipe inside a cell would split it into two columns.
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(symptoms: tuple[Symptom, ...] = SYMPTOMS) -> str:
    """The table as Markdown, for the docs and for `grpokit report`."""
    lines = [
        "| Rule | Symptom | Looks like | Cause | Fix |",
        "| --- | --- | --- | --- | --- |",
    ]
    for s in symptoms:
        lines.append(
            f"| `{s.rule}` ({s.severity}) | {_cell(s.title)} | {_cell(s.looks_like)} "
            f"| {_cell(s.cause)} | {_cell(s.fix)} |"
        )
    return "\n".join(lines) + "\n"
