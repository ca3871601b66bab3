"""Notes read off the whole finished history: a reward that never varied, and the loss curve's two
most-asked questions (exactly 0, going up). And a run with nothing logged yet."""
from __future__ import annotations

import math
from typing import Any

from grpokit.config.health_params import LossRising, LossZero, NoMetrics, RewardConstant
from grpokit.health.evidence import RunReading
from grpokit.health.history import finite
from grpokit.health.loss_words import explain_loss
from grpokit.health.rule import Rule


def reward_constant(s: Any, p: RewardConstant) -> list[RunReading]:
    """A reward that gave every completion the same score at every logged step: it taught nothing."""
    train = s.train
    weights = {}
    for spec in s.config.get("rewards") or []:
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            weights[spec["name"]] = finite(spec.get("weight", 1.0))
    out = []
    names = list(dict.fromkeys(k[len("rewards/"):-len("/mean")] for r in train for k in r
                               if k.startswith("rewards/") and k.endswith("/mean")))
    for name in names:
        rows = [r for r in train if f"rewards/{name}/mean" in r]
        means = [finite(r.get(f"rewards/{name}/mean")) for r in rows]
        stds = [finite(r.get(f"rewards/{name}/std")) for r in rows]
        # TRL logs each reward's std beside its mean; without it a flat mean could still hide spread.
        if len(rows) < p.min_steps or any(m is None for m in means) or any(v is None for v in stds):
            continue
        if max(means) - min(means) > 1e-9 or any(v > 1e-9 for v in stds):
            continue
        steps = [int(finite(r.get("step")) or i) for i, r in enumerate(rows, start=1)]
        diagnostic = weights.get(name) == 0.0
        out.append(RunReading(
            True, value=means[0], message=f"rewards/{name}/mean was {means[0]:.3f} with std 0 at every logged step "
                                          f"({steps[0]}-{steps[-1]}, {len(rows)} steps)",
            severity="info" if diagnostic else "warning", title=f"Reward {name} never varied",
            fix=f"Compare completions.jsonl with what {name} expects (`grpokit rewards test {name} ...`); give partial "
                "credit, use easier prompts, fix the format it parses, or drop it" +
                (" (weight 0: a logged diagnostic, so this is only a note)" if diagnostic else ""),
            first_step=steps[0], last_step=steps[-1], count=len(rows), ranges=[[steps[0], steps[-1]]],
            source="metrics"))
    return out


def _losses(s: Any) -> list[float]:
    return [v for v in (finite(r.get("loss")) for r in s.train) if v is not None]


def _training(s: Any) -> tuple[float, int]:
    training = s.config.get("training") or {}
    beta = finite(training.get("beta")) if isinstance(training, dict) else None
    iters = finite(training.get("num_iterations")) if isinstance(training, dict) else None
    return beta or 0.0, int(iters or 1)


def loss_zero(s: Any, p: LossZero) -> list[RunReading]:
    losses = _losses(s)
    if len(losses) < p.min_steps or not all(v == 0.0 for v in losses):
        return []
    beta, iters = _training(s)
    return [RunReading(True, value=0.0, message=f"loss == 0 at all {len(losses)} logged steps",
                       cause=explain_loss(beta=beta, num_iterations=iters, part="zero"))]


def loss_rising(s: Any, p: LossRising) -> list[RunReading]:
    losses = _losses(s)
    if len(losses) < p.min_steps or all(v == 0.0 for v in losses):
        return []
    half = len(losses) // 2
    early, late = sum(losses[:half]) / half, sum(losses[half:]) / (len(losses) - half)
    spread = max(1e-12, max(abs(v) for v in losses))
    mean = sum(losses) / len(losses)
    noise = math.sqrt(sum((v - mean) ** 2 for v in losses) / len(losses))
    # A real trend, not step-to-step noise: twice the standard error of a half's mean.
    if late - early > 0.1 * spread and late - early > 2 * noise / math.sqrt(half):
        beta, iters = _training(s)
        return [RunReading(True, value=late - early, threshold=max(0.1 * spread, 2 * noise / math.sqrt(half)),
                           message=f"mean loss {early:.3g} in the first half, {late:.3g} in the second",
                           cause=explain_loss(beta=beta, num_iterations=iters, part="rising"))]
    return []


def no_metrics(s: Any, p: NoMetrics) -> list[RunReading]:
    # A run that died before its first log: the post-mortem says why, and this note would only repeat it.
    if s.train or s.ending is not None:
        return []
    return [RunReading(True, message=f"{s.run.run_dir / 'metrics.jsonl'} has no training steps", first_step=None)]


RULES = (
    Rule(params=RewardConstant, severity="warning", title="A reward never varied", check=None,
         reads=("rewards/<name>/mean", "rewards/<name>/std"), after_run=reward_constant,
         looks_like="rewards/<name>/mean flat with std 0 at every logged step.",
         cause="A reward that gives every completion the same score adds nothing to any advantage, so it teaches "
               "nothing: the task is beyond the model (always 0), the reward cannot read what the model writes (a "
               "format or length mismatch: see truncation), or it pays everything alike.",
         fix="Compare completions.jsonl with what the reward expects (`grpokit rewards test`).",
         threshold="rewards/<name>/mean the same and rewards/<name>/std 0 (within 1e-9) at every logged step, "
                   "over at least {min_steps} logged steps of that reward"),
    Rule(params=LossZero, severity="info", title="The loss is exactly 0", check=None, reads=("loss",),
         after_run=loss_zero, looks_like="loss == 0 at every logged step.", cause="",
         threshold="loss == 0 at every logged step, over at least {min_steps} logged steps",
         fix="Nothing to fix if reward_std is above 0: watch reward, not loss. If reward_std is 0 too, see "
             "'No learning signal'."),
    Rule(params=LossRising, severity="info", title="The loss goes up (this is normal in GRPO)", check=None,
         reads=("loss",), after_run=loss_rising, looks_like="the second half's mean loss above the first's.",
         cause="", fix="Nothing, as long as reward rises and kl stays under 0.5.",
         threshold="the second half's mean loss above the first half's by more than 0.1 x the largest absolute loss and "
                   "more than twice the standard error of a half's mean, over at least {min_steps} logged steps"),
    Rule(params=NoMetrics, severity="info", title="No training metrics yet", check=None, reads=("metrics.jsonl",),
         after_run=no_metrics, looks_like="metrics.jsonl has no training steps.",
         threshold="metrics.jsonl has no training step and run_status.json names no ending",
         cause="The run has not logged its first step yet, or this is not a run directory.",
         fix="Wait for the first logging step (training.logging_steps), or check the path."),
)
