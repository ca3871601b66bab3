"""The rules on a policy thrown off course: non_finite (an overflow), diverged (noise without an
overflow) and kl_blowup (far from the reference model)."""
from __future__ import annotations

import math
from itertools import dropwhile, islice

from grpokit.config.health_params import Diverged, KlBlowup, NonFinite
from grpokit.health.evidence import Evidence, quiet
from grpokit.health.rule import Rule, RunFacts
from grpokit.health.signals import Signals


def check_non_finite(s: Signals, p: NonFinite, run: RunFacts) -> Evidence:
    for key in ("loss", "grad_norm"):
        if key not in s.latest:
            continue
        raw = s.latest[key]
        # TRL writes None for a metric whose every value was NaN; the Trainer's own loss is a float.
        try:
            bad = raw is None or not math.isfinite(float(raw))
        except (TypeError, ValueError):
            bad = True
        if bad:
            return Evidence(True, None, None, f"{key} is {raw!r}")
    return quiet()


def check_diverged(s: Signals, p: Diverged, run: RunFacts) -> Evidence:
    # A learning rate that blows the weights up need not give NaN: the model writes noise, and every
    # reward drops to nothing at once. Its entropy is no guide by itself: on the demo at learning rate 1.0
    # the step after the jump measured 0.0 to 4.0 in 15 runs against 1.53-1.55 at the first step (word salad,
    # one token repeated, both). What those runs shared: the reward fell from its start to 0 in one step
    # and no completion ended any more (clipped_ratio 0.5 -> 1.0). So the rule asks for a reward at
    # reward_frac of the first steps' or less, reached within two logged steps of half that start
    # or more (a slide over many steps is some other failure), and a policy moved far from the base model:
    # entropy entropy_rise times the start's or 1/entropy_rise of it, or nearly every
    # completion cut where the first steps were not. Runs that are not diverging stay well above that
    # share: 0.20 of their start at the lowest in the healthy fixtures, 0.16 where the fixed-answer
    # collapse dipped (entropy 0.38x there), 0.28 on the kl blow-up (every completion cut).
    h = s.history
    reward, start = s.now("reward"), h.before_now("reward")
    if reward is None or not start:
        return quiet()
    base = sum(start) / len(start)
    floor = p.reward_frac * base
    if base <= 0 or reward > floor:
        return quiet()
    # Back to where the reward fell (History keeps the whole run's: a diverged run stays diverged).
    before = list(islice(dropwhile(lambda v: v <= floor, h.newest_first("reward")), 2))
    if not before or max(before) < 0.5 * base:
        return quiet(("a slide, not a jump", f"the reward is {reward:.3g} against {base:.3g} at the start, but it "
                      "did not fall there within two logged steps"))
    noise = _fall_noise(s, run)
    if noise is not None and base - reward < p.noise_z * noise:
        return quiet(("within sampling noise", f"the reward fell to {reward:.3g} from {base:.3g}, "
                      f"{(base - reward) / noise:.2g} standard errors over {run.completions_per_step} completions "
                      f"a step (diverged at >= {p.noise_z})"))
    moved = _moved_from_start(s, p)
    if moved is None:
        return quiet(("the policy did not move", f"the reward fell to {reward:.3g} from {base:.3g}, but entropy "
                      "and the share cut are near the first steps'"))
    return Evidence(True, reward, floor, f"the reward fell to {reward:.3g} from {base:.3g} over the first steps while {moved}")


def _fall_noise(s: Signals, run: RunFacts) -> float | None:
    """The standard error of (first steps' mean reward - this step's): each step's reward_std over the
    completions it scored, or None where the run's completions per step or the spreads are unknown.
    A start of a few completions a step is mostly luck: tool-math at 1 prompt x 4 went 0.125 -> 0 -> 0.375
    on a healthy run, and json at 16 tokens 0.0104 -> 0, both within one standard error; the lr-1.0 demo
    (16 completions) fell 1.8. reward_std is the groups' own spread, without the spread between
    prompts: the error it gives is the smaller, the side that lets the rule fire."""
    n = run.completions_per_step
    spreads, now = s.history.before_now("reward_std"), s.now("reward_std")
    if not n or not spreads or now is None:
        return None
    start = sum(sd * sd for sd in spreads) / (len(spreads) ** 2 * n)
    noise = math.sqrt(start + now * now / n)
    return noise if noise > 0 else None


def _moved_from_start(s: Signals, p: Diverged) -> str | None:
    """How this step's samples show a policy far from the first steps' (the base model's), or None."""
    h = s.history
    entropy, start = s.now("entropy"), h.before_now("entropy")
    if entropy is not None and start and sum(start) > 0:
        base = sum(start) / len(start)
        ratio = entropy / base
        if ratio >= p.entropy_rise or ratio <= 1 / p.entropy_rise:
            return f"entropy went to {entropy:.3g} from {base:.3g} ({ratio:.2g}x)"
    clipped, start = s.now("completions/clipped_ratio"), h.before_now("completions/clipped_ratio")
    if clipped is not None and start and clipped >= p.clipped_ratio and sum(start) / len(start) < p.clipped_ratio:
        return f"{clipped:.0%} of completions ran to the length limit ({sum(start) / len(start):.0%} at the start)"
    return None


def check_kl_blowup(s: Signals, p: KlBlowup, run: RunFacts) -> Evidence:
    kl = s.now("kl")
    if kl is not None and kl > p.kl_max:
        return Evidence(True, kl, p.kl_max, f"kl is {kl:.3g}, above {p.kl_max}")
    return quiet()


RULES = (
    Rule(
        params=KlBlowup, severity="critical", title="KL blow-up", reads=("kl",), check=check_kl_blowup,
        # With beta > 0 the KL measures how far the policy moved; diverged is its stand-in for runs that do not
        # log it. Both fired at step 3 of the kl-blowup zoo case (reward 0 and entropy 0.28x for one step, kl 7.9).
        explains=("reward_stuck", "diverged"),
        looks_like="kl above 0.5 and climbing.",
        cause=("The policy has moved far from the reference model, usually a learning rate that is too high "
               "or a reward the model can hack; output quality tends to fall apart next."),
        fix=("Lower training.learning_rate (e.g. halve it), raise training.beta, lower "
             "training.max_grad_norm, and resume from the last checkpoint where kl was low."),
        threshold="kl > {kl_max}",
        patience="{patience} logged step(s) in a row",
    ),
    Rule(
        params=NonFinite, severity="critical", title="NaN or infinite loss / grad_norm", reads=("loss", "grad_norm"),
        check=check_non_finite,
        # Every number after an overflow is noise: it explains whatever else those numbers show.
        explains=("no_learning_signal", "reward_stuck", "length_drift", "collapse", "kl_blowup", "diverged"),
        looks_like="loss or grad_norm is NaN or inf.",
        cause=("A numerical overflow: fp16 without loss scaling, a learning rate that is too high, or a "
               "reward that returned inf/NaN. Every step after this one is wasted."),
        fix=("Use bf16 instead of fp16 (training.bf16: true, fp16: false), lower training.learning_rate, "
             "keep training.max_grad_norm at 1.0, and check rewards with `grpokit rewards test`. "
             "Resume from the last checkpoint."),
        threshold="loss or grad_norm is NaN, inf or None",
        patience="at once (1 logged step)",
    ),
    Rule(
        params=Diverged, severity="critical", title="Training diverged: the model writes noise",
        reads=("entropy", "reward", "reward_std", "completions/clipped_ratio"), check=check_diverged,
        # Noise runs to the length limit, scores alike, and a blown-up model repeating one token is no
        # collapse to fix.
        explains=("no_learning_signal", "truncation", "reward_stuck", "collapse"),
        looks_like=("the reward drops to about 0 in a step or two while entropy jumps far above or below the first "
                    "steps' or every completion runs to the length limit; completions.jsonl shows word salad or one "
                    "token repeated."),
        cause=("An update far too large (a learning rate too high, gradient clipping off) threw the weights out of "
               "the region where the model writes language. Without an overflow nothing turns NaN, so the loss looks "
               "fine; every step after this one is wasted."),
        fix=("Lower training.learning_rate (LoRA: 1e-5 to 3e-4), keep training.max_grad_norm at 1.0, and restart "
             "or resume from a checkpoint from before the jump."),
        threshold=("the reward <= {reward_frac} x the first 3 logged steps' mean, reached within 2 logged steps "
                   "of half that mean or more, a fall of >= {noise_z} standard errors (each step's reward_std over "
                   "its completions, where the run's completions per step are known), while entropy is "
                   ">= {entropy_rise} x the first steps' or <= "
                   "1/{entropy_rise} of it, or >= {clipped_ratio} of completions are cut where the first "
                   "steps had fewer"),
        patience="at once (1 logged step)",
    ),
)
