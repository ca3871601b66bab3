"""The judge-reward rules (llm_judge): judge/<name>/* metrics."""
from __future__ import annotations

from grpokit.config.health_params import JudgeFailing, JudgeSlow
from grpokit.health.evidence import Evidence, quiet
from grpokit.health.rule import Rule, RunFacts
from grpokit.health.signals import Signals


def check_judge_failing(s: Signals, p: JudgeFailing, run: RunFacts) -> Evidence:
    worst = quiet()
    for name in s.judge_names:
        share = s.now(f"judge/{name}/failure_frac")
        if share is not None and share > p.failure_frac and (worst.value or 0) < share:
            error = s.latest.get(f"judge/{name}/first_error")
            detail = f" (first error: {error})" if error else ""
            worst = Evidence(True, share, p.failure_frac, f"judge {name!r} left {share:.0%} of completions unscored (None){detail}")
    return worst


def check_judge_slow(s: Signals, p: JudgeSlow, run: RunFacts) -> Evidence:
    for name in s.judge_names:
        share, latency = s.now(f"judge/{name}/step_share"), s.now(f"judge/{name}/latency_s")
        if share is not None and share >= p.step_share:
            timing = f", median request {latency:.2g}s" if latency is not None else ""
            return Evidence(True, share, p.step_share, f"judge {name!r} takes {share:.0%} of each step{timing}")
        if latency is not None and latency >= p.max_latency_s:
            return Evidence(True, latency, p.max_latency_s, f"judge {name!r} answers in {latency:.2g}s (median)")
    return quiet()


RULES = (
    Rule(
        params=JudgeFailing, severity="critical", title="The judge does not answer",
        reads=("judge/<name>/failure_frac", "judge/<name>/first_error"), check=check_judge_failing,
        explains=("reward_unscorable",),  # a judge that is down explains the judge reward's None scores
        looks_like="judge/<name>/failure_frac above 0; rewards/llm_judge/mean missing or based on few samples.",
        cause=("The judge endpoint is down, unreachable, rejects the key, runs out of the step's budget_s, or "
               "replies without a grade: those completions score None, so the step learns from the other rewards only."),
        fix=("Check the endpoint with `grpokit judge check URL` (or restart `grpokit judge serve`), make sure the "
             "variable named by api_key_env is exported, raise the judge's budget_s or timeout_s, or keep "
             "structured: true so the reply is held to JSON. The first error is in alerts.jsonl."),
        threshold="a judge's failure share > {failure_frac}",
        patience="{patience} logged steps in a row",
    ),
    Rule(
        params=JudgeSlow, severity="warning", title="The judge dominates step time",
        reads=("judge/<name>/step_share", "judge/<name>/latency_s"), check=check_judge_slow,
        looks_like="judge/<name>/step_share near 1, or judge/<name>/latency_s in tens of seconds.",
        cause=("Every step waits for the judge: requests queue behind a small concurrency limit, the judge model is "
               "large for its hardware, or group mode sends long prompts."),
        fix=("Raise the judge's concurrency (and the server's parallel slots), use a smaller or faster judge, "
             "lower max_chars, keep cache_size on for repeated completions, or give the judge its own GPU."),
        threshold="judging >= {step_share} of a step's wall time, or a median request >= {max_latency_s}s",
        patience="{patience} logged steps in a row",
    ),
)
