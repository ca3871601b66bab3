"""The one reward wrapper TRL calls (TrainerRewards) and its watchdog: hangs, raises and wrong
counts score None for the batch, are counted, alerted, and never stop the step."""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from grpokit.rewards.reward_set import RewardConfigError, RewardSet, call_reward, check_specs
from grpokit.rewards.trainer_rewards import TrainerRewards
from grpokit.rewards.watchdog import call_with_timeout, RewardTimeout

FOREVER = threading.Event()  # never set: a reward waiting on it hangs for good


def hangs_on_one_row(completions, **kwargs):
    """A plugin reward that sleeps forever when it meets one particular completion."""
    if any("HANG" in c for c in completions):
        FOREVER.wait()
    return [1.0] * len(completions)


def raises(completions, **kwargs):
    raise KeyError("answer")


def one_short(completions, **kwargs):
    return [1.0] * (len(completions) - 1)


def length(completions, **kwargs):
    return [float(len(c)) for c in completions]


def test_a_hanging_reward_scores_none_and_the_step_goes_on():
    calls = TrainerRewards(RewardSet([hangs_on_one_row, length], timeouts=[0.3, None]))
    hang, other = calls.funcs
    batch = ["ok", "HANG", "fine", "ok"]
    start = time.perf_counter()
    assert hang(batch) == [None] * 4
    assert time.perf_counter() - start < 5  # the watchdog gave up after 0.3 s, not never
    assert other(batch) == [2.0, 4.0, 4.0, 2.0]  # the other reward still scores the batch
    assert hang(["ok", "ok"]) == [1.0, 1.0]  # and the hung reward scores the next batch it can
    window = calls.window()
    assert window["rewards/hangs_on_one_row/timeouts"] == 1
    assert window["rewards/hangs_on_one_row/error_frac"] == pytest.approx(4 / 6)
    assert window["rewards/hangs_on_one_row/first_error"].startswith("RewardTimeout: no scores within 0.3 s")


@pytest.mark.parametrize("reward, why", [(raises, "KeyError"), (one_short, "returned 3 scores for 4 completions")])
def test_a_raise_or_a_wrong_count_is_a_counted_none(reward, why):
    calls = TrainerRewards(RewardSet([reward]))
    assert calls.funcs[0](["a", "b", "c", "d"]) == [None] * 4
    window = calls.window()
    assert window[f"rewards/{reward.__name__}/error_frac"] == 1.0
    assert why in window[f"rewards/{reward.__name__}/first_error"]
    assert f"rewards/{reward.__name__}/timeouts" not in window


def test_observers_get_each_batch_once_every_reward_scored_with_trls_totals():
    seen = []
    calls = TrainerRewards(RewardSet([length, raises], [2.0, 5.0]), observers=[seen.append])
    state, completions = SimpleNamespace(global_step=3), ["ab", "c"]  # TRL hands every reward the same list
    calls.funcs[0](completions, prompts=["p", "p"], grpokit_row=[7, 7], trainer_state=state)
    assert seen == []  # waits for the batch's last reward
    calls.funcs[1](completions, prompts=["p", "p"], grpokit_row=[7, 7], trainer_state=state)
    [batch] = seen
    assert batch.scores == {"length": [2.0, 1.0], "raises": [None, None]}
    assert batch.totals == [4.0, 2.0]  # the reward that scored nothing drops out, as in TRL
    assert batch.private == {"grpokit_row": [7, 7]} and "grpokit_row" not in batch.columns
    assert "KeyError" in batch.errors["raises"]


def test_a_broken_observer_does_not_stop_the_step(capsys):
    def broken(batch):
        raise RuntimeError("disk full")

    calls = TrainerRewards(RewardSet([length]), observers=[broken])
    assert calls.funcs[0](["abc"]) == [3.0]
    assert "disk full" in capsys.readouterr().err


def test_names_are_the_reward_sets_and_repeat_with_a_suffix():
    calls = TrainerRewards(RewardSet([length, length], [1.0, 0.5]))
    assert [f.__name__ for f in calls.funcs] == ["length", "length_2"] == calls.names  # TRL's metric names
    assert calls.weights == [1.0, 0.5]


def test_scoring_outside_a_trainer_has_the_same_watchdog():
    rs = RewardSet([hangs_on_one_row], timeouts=[0.2])
    scored = rs.score(["HANG"])
    assert scored.scores["hangs_on_one_row"] == [None] and "RewardTimeout" in scored.errors["hangs_on_one_row"]
    assert call_reward(length, ["ab"], {}, timeout=None) == ([2.0], None)  # no timeout: the calling thread


def test_call_with_timeout_returns_raises_and_gives_up():
    assert call_with_timeout(length, ["abc"], {}, 5) == [3.0]
    with pytest.raises(KeyError):
        call_with_timeout(raises, ["a"], {}, 5)
    with pytest.raises(RewardTimeout):
        call_with_timeout(hangs_on_one_row, ["HANG"], {}, 0.1)


@pytest.mark.parametrize("timeout", [0, -1, "5", True, float("inf")])
def test_a_bad_timeout_says_what_to_write(timeout):
    with pytest.raises(RewardConfigError, match=r"rewards\[0\]\.timeout must be a positive number of seconds"):
        check_specs([{"name": "numeric_match", "timeout": timeout}])


def test_a_hang_raises_an_alert_on_its_step(tmp_path):
    from grpokit.health.callback import HealthCallback
    from grpokit.training.callbacks import RewardStatsCallback

    calls = TrainerRewards(RewardSet([hangs_on_one_row], timeouts=[0.2]))
    stats = RewardStatsCallback(calls)
    health = HealthCallback({}, run_dir=tmp_path, console=SimpleNamespace(print=lambda *a, **k: None),
                            reward_calls=calls)
    calls.funcs[0](["HANG", "ok"])
    logs = {"loss": 0.1, "reward": 0.5, "reward_std": 0.1}
    control = SimpleNamespace(should_save=False, should_training_stop=False)
    state = SimpleNamespace(global_step=1, is_world_process_zero=True)
    for callback in (stats, health):
        callback.on_log(SimpleNamespace(), state, control, logs=logs)
    assert logs["rewards/hangs_on_one_row/timeouts"] == 1
    [alert] = health.monitor.alerts
    assert alert.rule == "reward_hung" and "hung" in alert.message and alert.step == 1
    assert "hung" in (tmp_path / "alerts.jsonl").read_text()


def test_debug_reward_reports_a_hang_instead_of_hanging(monkeypatch):
    from grpokit.rewards import debug

    monkeypatch.setattr(debug, "DEFAULT_TIMEOUT", 0.2)
    result = debug.debug_reward([hangs_on_one_row, length, length], ["ok", "HANG"], show=False)
    assert result.names == ["hangs_on_one_row", "length", "length_2"]  # the names a run logs
    [finding] = result.findings("hangs_on_one_row")
    assert finding.severity == "error" and "no scores within 0.2 s" in finding.message
    assert result.scores["length"] == [2.0, 4.0]


def test_the_callers_grad_mode_and_context_reach_the_reward():
    import contextvars

    torch = pytest.importorskip("torch")
    var = contextvars.ContextVar("var", default="unset")
    seen = []

    def peeks(completions, **kwargs):
        seen.append((torch.is_grad_enabled(), var.get()))
        return [0.0] * len(completions)

    var.set("caller's")
    with torch.no_grad():  # TRL scores under no_grad; a reward running a model must not build a graph
        call_with_timeout(peeks, ["a"], {}, 5)
    call_with_timeout(peeks, ["a"], {}, 5)
    assert seen == [(False, "caller's"), (True, "caller's")]


def test_reward_numbers_reach_the_logs_without_health(tmp_path):
    # health.enabled: false runs no HealthCallback; the judge's numbers and the None shares still reach the logs.
    from grpokit.rewards.judge import stats
    from grpokit.training.callbacks import RewardStatsCallback

    calls = TrainerRewards(RewardSet([length]))
    stats_callback = RewardStatsCallback(calls)
    state = SimpleNamespace(global_step=1, is_world_process_zero=True)
    stats_callback.on_train_begin(SimpleNamespace(), state, None)
    calls.funcs[0](["ab", "cd"])
    stats.record("llm_judge", completions=4, failed=1, cached=0, seconds=0.5, latencies=[0.1, 0.2],
                 first_error="ReadTimeout")
    logs = {"loss": 0.1, "reward": 1.0}
    stats_callback.on_log(SimpleNamespace(), state, None, logs=logs)
    assert logs["judge/llm_judge/failure_frac"] == 0.25 and logs["rewards/length/none_frac"] == 0.0
    assert "judge/llm_judge/first_error" not in logs  # text stays out of the logs; health reads it from the window
    assert calls.last_window["judge/llm_judge/first_error"] == "ReadTimeout"
