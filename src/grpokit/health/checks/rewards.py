"""reward_unscorable: a reward that cannot score the samples."""
from __future__ import annotations

from grpokit.config.health_params import RewardUnscorable
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


RULES = (
    Rule(
        params=RewardUnscorable, severity="warning", title="A reward returns None or fails for most samples",
        reads=("rewards/<name>/mean", "rewards/<name>/none_frac", "rewards/<name>/error_frac"),
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
)
