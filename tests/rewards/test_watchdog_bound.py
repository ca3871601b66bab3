"""The watchdog stops a reward stuck in C code at its timeout, and never pays scores that came late."""
from __future__ import annotations

import re
import time

from grpokit.rewards.reward_set import RewardSet, call_reward
from grpokit.rewards.watchdog import isolated
from grpokit.sandbox import callworker

# A backtracking match that holds the interpreter lock for seconds to minutes: no thread
# can interrupt it, and even the thread waiting on it does not run until it ends.
STUCK = ("(a+)+$", "a" * 27 + "b")
SHORT = ("(a+)+$", "a" * 23 + "b")  # the same, 16 times shorter


def stuck_in_c(completions, **columns):
    re.match(*STUCK)
    return [1.0] * len(completions)


@isolated
def stuck_isolated(completions, **columns):
    return stuck_in_c(completions)


def short_stuck(completions, **columns):
    re.match(*SHORT)
    return [1.0] * len(completions)


def length(completions, **columns):
    return [float(len(c)) for c in completions]


def _seconds_stuck() -> float:
    start = time.monotonic()
    re.match(*SHORT)
    return time.monotonic() - start


def test_a_reward_stuck_in_c_is_killed_at_its_timeout():
    callworker.call(length, ["warm"], {}, timeout=60)  # a warm worker, as after the first batch of a run
    start = time.monotonic()
    scores, error = call_reward(stuck_isolated, ["a", "b"], {}, timeout=1.0)
    elapsed = time.monotonic() - start
    assert scores == [None, None]
    assert error.startswith("RewardTimeout"), error
    assert elapsed < 1.0 + 0.5, elapsed
    # The next call gets a fresh worker and scores.
    assert call_reward(length, ["ab"], {}, timeout=60, isolate=True) == ([2.0], None)


def test_isolation_from_the_reward_set_spec():
    rewards = RewardSet.from_specs([{"name": "regex_format", "params": {"pattern": "yes|no"}, "isolate": True, "timeout": 30}])
    assert rewards.isolate == [True]
    assert rewards.score(["yes", "maybe"]).scores["regex_format"] == [1.0, 0.0]


def test_a_thread_watched_call_that_overran_is_a_timeout():
    # Without isolation the wait cannot end before the C code lets go, but what comes late is not paid.
    took = _seconds_stuck()
    if took < 0.1:
        return  # a machine fast enough that the bait finishes in time proves nothing here
    scores, error = call_reward(short_stuck, ["a"], {}, timeout=took / 4)
    assert scores == [None]
    assert error.startswith("RewardTimeout") and "discarded" in error, error


def test_a_reward_that_raises_in_its_process_is_an_error():
    scores, error = call_reward(divide_by_zero, ["a"], {}, timeout=30, isolate=True)
    assert scores == [None] and "ZeroDivisionError" in error


def divide_by_zero(completions, **columns):
    return [1 / 0 for _ in completions]


def test_a_closure_cannot_be_isolated_and_says_so():
    def local(completions, **columns):
        return [0.0] * len(completions)

    scores, error = call_reward(isolated(local), ["a"], {}, timeout=30)
    assert scores == [None] and "pickled" in error, error


PLUGIN = '''
import re
from grpokit.rewards import register

@register("watchdog_test_plugin_stuck")
def watchdog_test_plugin_stuck(completions, **kw):
    re.match("(a+)+$", "a" * 28 + "b")
    return [1.0] * len(completions)
'''


def test_a_plugin_loaded_from_a_file_is_isolated_and_stopped(tmp_path):
    # A config's `imports:` loads a plugin under a name no import finds; its worker loads the file.
    from grpokit.config.plugins import load_imports

    path = tmp_path / "stuck_plugin.py"
    path.write_text(PLUGIN)
    load_imports([str(path)])
    rewards = RewardSet.from_specs([{"name": "watchdog_test_plugin_stuck", "isolate": True, "timeout": 1}])
    callworker.call(length, ["warm"], {}, timeout=60)
    start = time.monotonic()
    scored = rewards.score(["a"])
    assert time.monotonic() - start < 1.0 + 1.0  # the limit, plus loading the plugin in the worker
    assert scored.scores["watchdog_test_plugin_stuck"] == [None]
    assert scored.errors["watchdog_test_plugin_stuck"].startswith("RewardTimeout")
