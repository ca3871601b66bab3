"""The rules on completion length: truncation (the limit hides the answer) and length_drift (a reward
pays for length)."""
from __future__ import annotations

from grpokit.config.health_params import LengthDrift, Truncation
from grpokit.health.evidence import Evidence, quiet
from grpokit.health.rule import Rule, RunFacts
from grpokit.health.checks.cut import cut_costs_answer, cut_pays, mean_against_spread
from grpokit.health.checks.trend import slope
from grpokit.health.signals import Signals


def check_truncation(s: Signals, p: Truncation, run: RunFacts) -> Evidence:
    # Two levels share one streak of steps at or above the lower one: most completions cut
    # (clipped_ratio) is confirmed after `patience`; half of them cut, which the first steps
    # of a healthy run also show before the model learns to stop, must last sustained_patience.
    h = s.history
    clipped = s.now("completions/clipped_ratio")
    if clipped is None or clipped < p.sustained_clipped_ratio:
        return quiet()
    # Where the run logs what the cut costs, a cut that leaves the answer (the model talks on after it)
    # is no harm, and one that earns more is a reward paying for length (length_drift says so): raising
    # the limit would feed it. With every completion cut there is no gap, but what the cut ones still earn
    # tells the same; runs from before both metrics keep the levels.
    gap = mean_against_spread(h, "completions/cut_answer_gap", p.sustained_patience, p.patience, p.cut_gap,
                              half_cut=p.sustained_clipped_ratio)
    length = s.now("completions/mean_length")
    full = bool(run.max_completion_length) and length is not None and length >= p.silent_fill * run.max_completion_length
    silent = silent_rewards(s, p.sustained_patience, p.patience) if full else []
    if gap is not None and not cut_costs_answer(*gap) and not silent:
        return quiet(("the cut leaves the answer", f"{clipped:.0%} cut, but cut completions score {gap[0]:+.2f} "
                      f"on the answer rewards against finished ones (costs the answer at <= {-gap[1]:.2f})"))
    # With every completion cut there is no finished one to compare with, but a cut that hides the answer
    # leaves the answer rewards at about 0 (a 2-token limit: 0.00), while a model that writes its answer line
    # and talks on keeps earning them (the words demo, seed 2: 100% cut from step 10 at 0.67 held-out accuracy).
    earned = mean_against_spread(h, "completions/cut_answer_score", p.sustained_patience, p.patience, p.cut_gap,
                                 half_cut=None) if gap is None else None
    if earned is not None and earned[0] > earned[1] and not silent:
        return quiet(("the answer fits before the cut", f"{clipped:.0%} cut, and the cut completions still earn "
                      f"{earned[0]:.2f} on the answer rewards (above {earned[1]:.2f})"))
    limit = f" of max_completion_length={run.max_completion_length}" if run.max_completion_length else ""
    extra = f", mean length {length:.0f}{limit}" if length is not None else ""
    message = f"{clipped:.0%} of completions hit the length limit{extra}"
    if silent:
        message += (f"; {', '.join(silent)} scored 0 on every completion of the last {len(h.recent(p.sustained_patience))} "
                    "logged steps: the limit may leave no room for what it pays")
    elif gap is not None:
        message += f"; cut completions score {gap[0]:+.2f} on the answer rewards against finished ones"
    recent = h.last("completions/clipped_ratio", run.capped(p.patience))
    if all(value >= p.clipped_ratio for value in recent):
        return Evidence(True, clipped, p.clipped_ratio, message, patience=p.patience)
    # Half cut explains nothing else: the other half could still differ. (Seen in the health zoo: a constant
    # reward on the demo, 56-81% cut, was named truncation and its no-signal alert was hidden.)
    return Evidence(True, clipped, p.sustained_clipped_ratio, message, patience=p.sustained_patience, explains=())


def silent_rewards(s: Signals, window: int, min_steps: int) -> list[str]:
    """The rewards that scored exactly 0, with no spread, on every completion of the last `window` logs (at
    least min_steps of them), on a step where not every reward is 0 (no_learning_signal speaks for that one):
    a reward no completion earned, cut or not.
    The cut gap cannot speak for it (0 against 0 says the cut costs nothing), and under a limit most
    completions hit, the limit is the first suspect: the words recipe at 5 tokens kept the number its answer
    rewards read but never had room for the restated sum (restated_expression 0 on all 4 steps, 63-75% cut)."""
    logs = s.history.recent(int(window))
    if len(logs) < max(1, int(min_steps)) or s.nothing_scores:
        return []

    def zero(logs_: dict, name: str) -> bool:
        mean, spread = logs_.get(f"rewards/{name}/mean"), logs_.get(f"rewards/{name}/std")
        return mean is not None and spread is not None and mean == 0 and spread == 0

    return [name for name in s.reward_names if all(zero(logs_, name) for logs_ in logs)]


def check_length_drift(s: Signals, p: LengthDrift, run: RunFacts) -> Evidence:
    # Cut completions, the longest, out-earning the finished ones of their own prompt is the reward
    # paying for length, seen as soon as they hit the limit: no need to wait out the length window. The
    # gap rests on gap_steps steps, which is this reading's patience: on the untrained demo model
    # (learning rate 1e-7, 24 steps, mean gap about 0) the first two steps gave +0.23 and +0.45 against a
    # margin of 0.28, the first three +0.22 against 0.30. The length hack's first three: +0.33, +0.36, +0.04.
    h = s.history
    clipped = s.now("completions/clipped_ratio")
    gap = mean_against_spread(h, "completions/cut_answer_gap", p.gap_window, p.gap_steps, p.cut_gap,
                              half_cut=p.cut_clipped_ratio)
    if clipped is not None and clipped >= p.cut_clipped_ratio and gap is not None and cut_pays(*gap):
        return Evidence(True, gap[0], gap[1],
                        f"completions cut at the length limit ({clipped:.0%} of them) score {gap[0]:+.2f} more than "
                        f"the finished ones of the same prompt: the reward pays for length")
    limit = run.max_completion_length
    lengths = h.last("completions/mean_length", p.window)
    length = s.now("completions/mean_length")
    if not limit or length is None or len(lengths) < p.window:
        return quiet()
    if limit < p.min_limit:
        near = length >= p.limit_frac * limit and slope(lengths) > 0
        return quiet(("answers short by design", f"a {limit}-token limit is under min_limit={p.min_limit}: "
                      "truncation speaks for such runs")) if near else quiet()
    if length >= p.limit_frac * limit and slope(lengths) > 0:
        return Evidence(True, length, p.limit_frac * limit,
                        f"mean completion length rose to {length:.0f} of the {limit}-token limit")
    return quiet()


RULES = (
    Rule(
        params=Truncation, severity="warning", title="Completions cut at the length limit",
        reads=("completions/clipped_ratio", "completions/mean_length", "completions/cut_answer_gap",
               "completions/cut_answer_score", "reward_std", "rewards/<name>/mean", "rewards/<name>/std",
               "nothing_scores"),
        check=check_truncation,
        # Completions cut before the answer also give zero reward variance, then a flat reward.
        explains=("no_learning_signal", "reward_stuck", "length_drift"),
        looks_like=("completions/clipped_ratio near 1, or at half or more step after step; mean_length equal to "
                    "max_completion_length; cut completions score lower on the answer than finished ones "
                    "(completions/cut_answer_gap below 0), or, with every completion cut, earn about nothing on "
                    "it (completions/cut_answer_score near 0)."),
        cause=("max_completion_length is shorter than the answers the model writes, so completions end "
               "before the final answer and rewards that parse it score 0."),
        fix=("Raise training.max_completion_length, ask for shorter answers in data.system_prompt, add a "
             "length reward, or set training.mask_truncated_completions: true."),
        threshold=("completions/clipped_ratio >= {clipped_ratio} (most cut), or >= {sustained_clipped_ratio} (half "
                   "cut); and, where the run logs completions/cut_answer_gap (the answer rewards, format and length "
                   "rewards left out, of cut minus finished completions of one prompt), its mean over the steps of the "
                   "last {sustained_patience} logs with >= {sustained_clipped_ratio} cut (where at least "
                   "{patience} logged it) <= -{cut_gap} x their reward_std: a cut that leaves the answer "
                   "is the model talking on after it, and one that earns more is a reward paying for length "
                   "(length_drift); with every completion cut (no gap), completions/cut_answer_score over those "
                   "logs > {cut_gap} x their reward_std says the answer fits before the cut, and the rule stands down; "
                   "neither stand-down holds while a reward scored 0 with no spread on every completion of those logs "
                   "and the mean length is >= {silent_fill} x max_completion_length (no room for what it pays)"),
        patience=("{patience} logged steps in a row at >= {clipped_ratio}; "
                  "{sustained_patience} in a row at >= {sustained_clipped_ratio}"),
    ),
    Rule(
        params=LengthDrift, severity="warning", title="Completion length drifting to the limit",
        reads=("completions/mean_length", "completions/clipped_ratio", "completions/cut_answer_gap", "reward_std"),
        check=check_length_drift,
        looks_like=("completions/mean_length climbs toward max_completion_length; completions cut at the limit "
                    "score higher than finished ones (completions/cut_answer_gap above 0)."),
        cause=("Longer completions are being rewarded (or not penalised), so length grows each step and the "
               "completions end up cut at the limit. When the cut ones, the longest, out-score the finished ones, a "
               "reward pays for length itself: the model is gaming it, not running out of room."),
        fix=("Find the reward that pays for length (completions.jsonl: the long completions score highest) and "
             "fix or down-weight it; add max_length_penalty or soft_overlong_punishment to rewards, or use "
             "training.loss_type: dr_grpo to remove the length bias. Raise training.max_completion_length only if "
             "long answers are what you want: against a reward that pays for length, a higher limit feeds the hack."),
        threshold=("mean completion length >= {limit_frac} x max_completion_length and rising over "
                   "the window; off when max_completion_length is under {min_limit} tokens (answers "
                   "that short are short by design, and the truncation alert covers them). Or, without the window, "
                   "completions/clipped_ratio >= {cut_clipped_ratio} while cut completions out-score the "
                   "finished ones of their prompt: mean completions/cut_answer_gap over the steps of the last "
                   "{gap_window} logs with >= {cut_clipped_ratio} cut (at least "
                   "{gap_steps} of them) >= {cut_gap} x their reward_std"),
        patience=("a window of {window} logged steps (not capped: a shorter run never gets the rising-length "
                  "alert); at once for cut completions out-scoring finished ones, whose gap rests on "
                  "{gap_steps} steps"),
    ),
)
