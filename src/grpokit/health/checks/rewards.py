"""The rules on the rewards themselves: reward_unscorable (most samples unscored) and reward_hung (a
reward that never answered)."""
from __future__ import annotations

from grpokit.config.health_params import RewardHung, RewardUnscorable
from grpokit.health.evidence import Evidence, quiet
from grpokit.health.history import finite
from grpokit.health.rule import Rule, RunFacts
from grpokit.health.signals import Signals


def check_reward_unscorable(s: Signals, p: RewardUnscorable, run: RunFacts) -> Evidence:
    worst = quiet()
    for name in s.reward_names:
        mean_key = f"rewards/{name}/mean"
        if mean_key in s.latest and finite(s.latest[mean_key]) is None:
            return Evidence(True, 1.0, p.max_none_frac, f"reward {name!r} returned None for every sample this step")
        for kind, verb in (("error_frac", "raised an error on"), ("none_frac", "returned None for")):
            share = s.now(f"rewards/{name}/{kind}")
            # At the threshold counts: a reward that cannot score half its rows (every other) is broken.
            if share is not None and share >= p.max_none_frac and (worst.value or 0) < share:
                error = s.latest.get(f"rewards/{name}/first_error")
                detail = f" (first error: {error})" if error else ""
                worst = Evidence(True, share, p.max_none_frac, f"reward {name!r} {verb} {share:.0%} of samples{detail}")
    return worst


def check_reward_hung(s: Signals, p: RewardHung, run: RunFacts) -> Evidence:
    hung = [(name, s.now(f"rewards/{name}/timeouts")) for name in s.reward_names]
    hung = [(name, count) for name, count in hung if count]
    if not hung:
        return quiet()
    words = []
    for name, count in hung:
        # The first error's text reaches the live monitor only (metrics.jsonl keeps numbers).
        error = s.latest.get(f"rewards/{name}/first_error")
        words.append(f"reward {name!r} hung on {count:g} batch(es) this step and scored None for them"
                     + (f": {error}" if error else ""))
    return Evidence(True, float(sum(count for _, count in hung)), 0.0, "; ".join(words))


RULES = (
    Rule(
        params=RewardUnscorable, severity="warning", title="A reward returns None or fails for most samples",
        reads=("rewards/<name>/mean", "rewards/<name>/none_frac", "rewards/<name>/error_frac", "rewards/<name>/first_error"),
        check=check_reward_unscorable,
        # Unscored samples leave the groups alike, then the reward flat.
        explains=("no_learning_signal", "reward_stuck"),
        looks_like="rewards/<name>/mean is missing (None) or the reward's None/error share is half or more.",
        cause=("The reward cannot score the samples: the data set lacks the column it reads (answer, tests, "
               "schema...), the gold answers do not parse, or the reward raises."),
        fix=("Check data.answer_column and the columns the reward reads (`grpokit rewards list`), run "
             "`grpokit rewards test` on a few samples, and look at the first error in alerts.jsonl."),
        threshold="a reward's None share or error share >= {max_none_frac}, or its mean is missing (None)",
        patience="{patience} logged steps in a row",
    ),
    Rule(
        params=RewardHung, severity="warning", title="A reward hung: its watchdog gave up on it",
        reads=("rewards/<name>/timeouts", "rewards/<name>/first_error"), check=check_reward_hung,
        # A hang is why its batches scored None: the hang is the alert, on its step, not the unscored share.
        explains=("reward_unscorable",),
        looks_like="rewards/<name>/timeouts above 0 (the console printed \"reward ... hung\" at that step).",
        cause=("The reward did not answer within its timeout: a sandbox, judge or network call that never "
               "returned, or a reward far slower than the step. Its watchdog stopped waiting and those completions "
               "scored None, so the step learned from the other rewards only."),
        fix=("Run the reward alone on a few completions (`grpokit rewards test`) to see it hang; raise its "
             "rewards[].timeout if it is only slow, or set isolate: true so a hung call is killed; check the "
             "service it calls. The first error is in alerts.jsonl."),
        threshold="a reward's rewards/<name>/timeouts > 0 (a batch its watchdog gave up on)",
        patience="at once (1 logged step)",
    ),
)
