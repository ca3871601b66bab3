"""Why the GRPO loss looks the way it does, in plain words: the report's note, the docs' section and
the loss rules' cause."""
from __future__ import annotations


def explain_loss(beta: float = 0.0, num_iterations: int = 1, part: str = "all") -> str:
    """Why the GRPO loss looks the way it does, in plain words.

    part: "start" (why it starts near 0), "rising" (why it goes up), "zero" (why
    it can be exactly 0), or "all".
    """
    start = (
        "GRPO's loss is not a measure of how good the model is. Each completion's advantage is its reward "
        "minus the mean reward of its group (divided by the group's std), so within every group the "
        "advantages add up to 0. On the first pass over a batch the new and old policies are the same, "
        "so the probability ratio is exactly 1 and the policy term is minus the average advantage: about 0. "
        "The gradient is not 0 -- it pushes up the completions that beat their group and down the rest -- "
        "but the number printed is."
    )
    rising = (
        "A rising loss is normal. With beta > 0 the loss includes beta times the KL divergence from the "
        "reference model, and KL grows as the model learns (that is the model moving), so the loss grows "
        f"with it{' (your beta is ' + format(beta, 'g') + ')' if beta else ''}. With the default token-level "
        "loss (loss_type dapo/bnpo/dr_grpo) long and short completions weigh differently, so the policy "
        "term drifts away from 0 when length and advantage are correlated. Judge the run by reward, "
        "reward_std and kl, not by loss."
    )
    zero = (
        "With beta = 0 there is no KL term, and with num_iterations = 1 every batch is used once, so the "
        "ratio is always 1 and the loss is minus the mean advantage. With a per-completion average "
        "(loss_type: grpo) that mean is exactly 0 at every step; with the token-level losses it is 0 up to "
        "length effects. It is also exactly 0 when every group has zero reward variance (all advantages 0), "
        "and then nothing is learned: check reward_std."
    )
    if beta == 0.0 and num_iterations == 1:
        zero = "Your run has beta = 0 and num_iterations = 1. " + zero
    parts = {"start": start, "rising": rising, "zero": zero}
    if part == "all":
        return "\n\n".join(parts.values())
    if part not in parts:
        raise ValueError(f"part must be one of {[*parts, 'all']}, got {part!r}")
    return parts[part]
