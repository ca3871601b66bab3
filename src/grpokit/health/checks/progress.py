"""reward_stuck: a signal the updates do not follow."""
from __future__ import annotations

from grpokit.config.health_params import RewardStuck
from grpokit.health.evidence import Evidence, quiet
from grpokit.health.rule import Rule, RunFacts
from grpokit.health.checks.trend import progress
from grpokit.health.signals import Signals


def check_reward_stuck(s: Signals, p: RewardStuck, run: RunFacts) -> Evidence:
    # A flat window alone is also what a run that learned early and plateaued looks like, and with a
    # small batch (2 prompts a step) the per-step reward is mostly which prompts came up: a healthy demo
    # seed whose adapter went 0.18 -> 0.48 held-out had a training reward no higher after 20 steps than in
    # its first 5 (1.13; it drew easy prompts first). So the reward is stuck when it has not risen over the
    # window AND its mean after the first baseline_steps is no higher than theirs (beyond noise); or
    # when it fell by more than the noise allows. Not when the run shows it learns where the noise is
    # smaller: a held-out accuracy up beyond its sampling noise since the first evaluation, or one reward
    # up beyond its own noise while none fell (the format reward the demo learns in a few steps, which
    # the correctness rewards' prompt-to-prompt swing hides in the total).
    h = s.history
    pr = progress(h, "reward", p.window, p.baseline_steps)
    stds = h.last("reward_std", p.window)
    if pr is None or not stds:
        return quiet()
    held = s.held_out_rise
    if held is not None and held[1] - held[0] > held[2]:
        return quiet(("held-out accuracy rose", f"{held[0]:.2f} -> {held[1]:.2f}, beyond its noise {held[2]:.2f}"))
    spread = sum(stds) / len(stds)
    needed = p.min_gain * spread
    seen = f"; held-out accuracy {held[0]:.2f} -> {held[1]:.2f}, within its noise {held[2]:.2f}" if held else ""
    if pr.gain < -(needed + 2 * pr.gain_se):
        return Evidence(True, pr.gain, -(needed + 2 * pr.gain_se),
                        f"reward fell over the last {p.window} logged steps (fitted change {pr.gain:+.3g}, "
                        f"more than twice its noise {pr.gain_se:.2g}; reward_std {spread:.3g}){seen}")
    if pr.gain < needed and pr.rise < needed + pr.rise_noise:
        rose = _a_reward_rose(s, p)
        if rose:
            return quiet(("a reward rose", f"{rose} rose beyond its own noise while none fell"))
        return Evidence(True, pr.gain, needed,
                        f"reward did not rise over the last {p.window} logged steps (fitted change {pr.gain:+.3g}, "
                        f"reward_std {spread:.3g}) and is no higher than over the first {p.baseline_steps} "
                        f"({pr.mean:.3g} vs {pr.baseline:.3g}){seen}")
    return quiet()


def _a_reward_rose(s: Signals, p: RewardStuck) -> str:
    """The first of the run's rewards that rose beyond its own noise since the first steps, where none
    fell beyond it; "" otherwise."""
    rose = ""
    for name in s.reward_names:
        pr = progress(s.history, f"rewards/{name}/mean", p.window, p.baseline_steps)
        if pr is None:
            continue
        stds = s.history.last(f"rewards/{name}/std", p.window)
        margin = p.min_gain * (sum(stds) / len(stds) if stds else 0.0) + pr.rise_noise
        if pr.rise <= -margin:
            return ""  # rewards pulling against each other: the total staying flat is the problem
        rose = rose or (name if pr.rise >= margin else "")
    return rose


RULES = (
    Rule(
        params=RewardStuck, severity="warning", title="Reward stuck or falling",
        reads=("reward", "reward_std", "rewards/<name>/mean", "rewards/<name>/std", "held_out_rise"),
        check=check_reward_stuck,
        looks_like="the reward curve is flat (or going down) over a window while reward_std is healthy.",
        cause=("There is signal but the updates do not move the policy toward it: learning rate too low, "
               "too few steps, LoRA rank too small, or rewards that pull in opposite directions."),
        fix=("Raise training.learning_rate (LoRA usually wants 1e-5 to 1e-4), check each rewards/<name>/mean "
             "curve for a reward that fights the others, lower the weight of the format reward once it is "
             "learned, or raise model.lora.r."),
        threshold=("the fitted rise of reward over the window < {min_gain} x the mean reward_std and the "
                   "window's mean reward (its steps after the first {baseline_steps}) no higher than the first "
                   "{baseline_steps} logs' (beyond twice the noise), no reward up beyond its own noise while none "
                   "fell; or a fitted fall larger than twice its standard error. Never while held-out accuracy "
                   "(eval.every) is up since the first evaluation by more than twice its binomial noise. A run that "
                   "learned early and plateaued is not stuck, and small batches (2 prompts a step) make a "
                   "flat-looking trend noise"),
        patience="a window of {window} logged steps (not capped: a shorter run never gets this alert)",
    ),
)
