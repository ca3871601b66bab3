"""Health rules: each synthetic failure raises its alert and only its alert."""
import json
import math
from types import SimpleNamespace

import pytest

from grpokit.errors import ConfigError
from grpokit.health.callback import HealthCallback
from grpokit.rewards.reward_set import RewardSet
from grpokit.rewards.trainer_rewards import TrainerRewards
from grpokit.health.rules import HealthConfig, HealthMonitor, finite, replay
from grpokit.health.symptoms import RULES
from tests.helpers.synthetic_runs import MAX_COMPLETION_LENGTH, SCENARIOS, history

CFG = dict(max_completion_length=MAX_COMPLETION_LENGTH)

SCENARIO_CASES = [
    ("healthy", set()),                           # rising reward, healthy std/entropy: silence
    ("collapse", {"collapse"}),                   # entropy crash; zero std and flat reward are its consequences
    ("all_truncated", {"truncation"}),            # every completion cut; zero std is a consequence
    ("zero_std", {"no_learning_signal"}),         # every group scores the same; flat reward is a consequence
    ("kl_blowup", {"kl_blowup"}),                 # kl climbs past 0.5
    ("nan", {"non_finite"}),                      # loss/grad_norm NaN; NaN entropy must not look like collapse
    ("stuck_reward", {"reward_stuck"}),           # std healthy but reward flat
    ("length_drift", {"length_drift"}),           # length climbs toward the limit, not yet cut
    ("reward_unscorable", {"reward_unscorable"}), # one reward returns None for every sample
]


@pytest.mark.parametrize("scenario,expected", SCENARIO_CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_failure_raises_only_its_alert(scenario, expected, seed):
    alerts = replay(history(scenario, seed=seed), HealthConfig(**CFG))
    assert {a.rule for a in alerts} == expected, [a.message for a in alerts]


@pytest.mark.parametrize("scenario,expected", SCENARIO_CASES)
def test_each_failure_raises_only_its_alert_when_the_run_length_is_known(scenario, expected):
    # The live callback knows the run's length (patience capped for short runs); 60 steps keep every rule.
    alerts = replay(history(scenario), HealthConfig(expected_logged_steps=60, **CFG))
    assert {a.rule for a in alerts} == expected, [a.message for a in alerts]


def _clipped(ratios):
    # Logs with a healthy learning signal, so truncation is the only thing to see.
    return [{"step": i, "loss": 0.0, "reward": 0.3 + 0.01 * i, "reward_std": 0.35, "frac_reward_zero_std": 0.0,
             "completions/clipped_ratio": r, "completions/mean_length": 80.0}
            for i, r in enumerate(ratios, start=1)]


@pytest.mark.parametrize(
    "ratios, expected_logs, alert_steps",
    [
        # The reported case: 3 steps, 50-75% cut. A short run has no time to recover: alert on step 2.
        ([0.5, 0.75, 0.625], 3, [2]),
        # The measured demo's first 3 steps (benchmarks/results/demo_format_task.json): alert once 2 in a row are high.
        ([0.375, 0.5, 0.75], 3, [3]),
        # Without the run's length the same 3 logs wait for the long-run patience (10): nothing yet.
        ([0.5, 0.75, 0.625], None, []),
        # Every completion cut: confirmed after truncation_steps=2 whatever the run's length.
        ([1.0, 1.0, 1.0], None, [2]),
        # Half cut for a long stretch of a long run: sustained_truncation_steps=10.
        ([0.6] * 30, 200, [10]),
        # ... and on a 30-step run, a quarter of it (8 logged steps).
        ([0.6] * 30, 30, [8]),
        # The early-run pattern of a healthy 30-step run (half cut for 4 steps, then falling) stays quiet.
        ([0.4, 0.5, 0.75, 0.5, 0.75, 0.4, 0.1] + [0.1] * 23, 30, []),
        # Below the lower level nothing fires, however long it lasts.
        ([0.45] * 30, 30, []),
    ],
)
def test_truncation_alerts_on_short_runs(ratios, expected_logs, alert_steps):
    alerts = replay(_clipped(ratios), HealthConfig(expected_logged_steps=expected_logs, max_completion_length=96))
    assert [(a.rule, a.step) for a in alerts] == [("truncation", s) for s in alert_steps], [a.message for a in alerts]


@pytest.mark.parametrize(
    "zero_std, fires",
    [
        (0.25, False),  # entropy at 10% of its start, yet groups still disagree: a model sure of its answers (the demo)
        (0.5, True),    # half the groups scored alike as well: the groups stopped teaching, that is collapse
        (1.0, True),    # every group identical
    ],
)
def test_collapse_needs_groups_that_stopped_teaching(zero_std, fires):
    steps = 20
    metrics = [{"step": i + 1, "loss": 0.0, "entropy": 1.0 if i < 5 else 0.1, "completions/distinct_frac": 0.9,
                "frac_reward_zero_std": 0.0 if i < 5 else zero_std} for i in range(steps)]
    alerts = replay(metrics, HealthConfig(expected_logged_steps=steps))
    assert ("collapse" in {a.rule for a in alerts}) is fires, [a.message for a in alerts]


@pytest.mark.parametrize(
    "limit, start, end, fires",
    [
        (128, 60.0, 125.0, True),   # free text climbing toward a long limit: the drift the rule exists for
        (6, 3.5, 5.9, False),       # one-number answers under a 6-token limit (the demo): a token of noise, not drift
        (31, 14.0, 30.0, False),    # just under length_min_limit: short by design, truncation speaks for it
        (32, 14.0, 31.0, True),     # at length_min_limit the rule is back on
    ],
)
def test_length_drift_needs_room_to_drift(limit, start, end, fires):
    steps = 16
    metrics = [{"step": i + 1, "loss": 0.0, "completions/mean_length": start + (end - start) * i / (steps - 1),
                "completions/clipped_ratio": 0.0} for i in range(steps)]
    alerts = replay(metrics, HealthConfig(max_completion_length=limit, expected_logged_steps=steps))
    assert ("length_drift" in {a.rule for a in alerts}) is fires, [a.message for a in alerts]


def test_measured_demo_run_raises_no_truncation_alert():
    # The earlier 30-step CPU demo (format task, 96 tokens) cut 50-62% of completions for its first 4 steps, then learned to
    # stop: that is healthy, and skill/healthy-values.md says no alert fired on it.
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "demo_format_task.json"
    metrics = json.loads(demo.read_text())["metrics"]
    alerts = replay(metrics, HealthConfig(max_completion_length=96, expected_logged_steps=len(metrics)))
    assert [(a.rule, a.step) for a in alerts] == []
    assert max(m["completions/clipped_ratio"] for m in metrics[:4]) >= 0.5  # the case this guards


@pytest.mark.parametrize(
    "key, expected_logs, patience",
    [
        (("no_learning_signal", "patience"), None, 5),   # run length unknown: the configured value
        (("no_learning_signal", "patience"), 200, 5),    # long run: unchanged
        (("no_learning_signal", "patience"), 3, 2),      # 3-step run: 2 in a row instead of never
        (("truncation", "sustained_patience"), 30, 8),   # a quarter of a 30-step run
        (("truncation", "sustained_patience"), 1, 1),    # never more than the whole run
        (("judge_failing", "patience"), 3, 1),           # never more than configured
    ],
)
def test_patience_is_capped_on_short_runs(key, expected_logs, patience):
    config = HealthConfig(expected_logged_steps=expected_logs)
    assert config.capped(getattr(config.params(key[0]), key[1])) == patience


def test_callback_learns_the_run_length(tmp_path):
    cb = HealthCallback({}, run_dir=tmp_path, console=_QuietConsole())
    args = SimpleNamespace(max_completion_length=64, output_dir=str(tmp_path), logging_steps=1)
    state = SimpleNamespace(global_step=0, is_world_process_zero=True, max_steps=12, logging_steps=2)
    cb.on_train_begin(args, state, SimpleNamespace())
    assert cb.config.expected_logged_steps == 6  # 12 steps, a log every 2


def test_every_threshold_is_documented():
    # skill/troubleshooting.md renders each row's threshold and patience with its rule's defaults;
    # a parameter no row names would be a knob users cannot find.
    from grpokit.health.symptoms import BY_RULE
    from grpokit.health.table import STEP_RULES

    for rule in STEP_RULES.values():
        words = rule.threshold + rule.patience
        names = set(rule.params.names()) - {"enabled", "patience"}
        assert {n for n in names if "{" + n + "}" not in words} == set(), rule.id
        assert set(BY_RULE[rule.id].keys) == names | {"patience"}
        assert "{" not in "".join(rule.describe()), rule.id


def test_every_rule_has_a_scenario():
    # A rule without a synthetic history is a rule nobody has seen fire.
    assert {SCENARIOS[s][0] for s in SCENARIOS} - {None} == set(RULES)


def test_alert_fires_once_while_the_condition_persists():
    # 40 steps of clipped_ratio=1 is one problem, not 39 alerts.
    alerts = replay(history("all_truncated", steps=40), HealthConfig(**CFG))
    assert len(alerts) == 1
    assert alerts[0].step == 2  # truncation_steps=2: confirmed on the second log
    assert alerts[0].fix and "max_completion_length" in alerts[0].fix


def test_realert_after_many_steps():
    # A condition still there after realert_steps is repeated so it does not scroll away.
    alerts = replay(history("all_truncated", steps=60), HealthConfig(realert_steps=20, **CFG))
    assert [a.step for a in alerts] == [2, 22, 42]


def test_patience_counts_consecutive_steps():
    monitor = HealthMonitor(HealthConfig.from_dict({"rules": {"no_learning_signal": {"patience": 3}}}))
    zero = {"reward": 0.0, "reward_std": 0.0, "frac_reward_zero_std": 1.0, "loss": 0.0}
    ok = {"reward": 0.5, "reward_std": 0.5, "frac_reward_zero_std": 0.1, "loss": 0.0}
    fired = [bool(monitor.observe(i, rec)) for i, rec in enumerate([zero, zero, ok, zero, zero, zero], 1)]
    # interrupted streak at step 3 resets the count; fires on the third in a row (step 6)
    assert fired == [False, False, False, False, False, True]


def test_disabled_rule_is_silent():
    alerts = replay(history("kl_blowup"), HealthConfig(disable=["kl_blowup"], **CFG))
    assert alerts == []


def test_eval_and_summary_logs_are_ignored():
    monitor = HealthMonitor()
    # eval metrics carry an eval_ prefix; the end-of-training summary has train_runtime
    assert monitor.observe(1, {"eval_loss": float("nan"), "eval_reward": 0.0}) == []
    assert monitor.observe(2, {"train_runtime": 1.0, "train_loss": float("nan")}) == []


def test_none_loss_from_trl_counts_as_non_finite():
    # TRL logs None for a metric whose values were all NaN.
    alerts = HealthMonitor().observe(1, {"loss": None, "reward": 0.1, "reward_std": 0.5})
    assert [a.rule for a in alerts] == ["non_finite"]
    assert alerts[0].severity == "critical"


@pytest.mark.parametrize("raw,expected", [
    (1, 1.0),               # int is fine
    ("0.5", 0.5),           # a string number from a hand-written jsonl
    (float("nan"), None),   # NaN is missing for trend rules
    (float("inf"), None),   # inf too
    (None, None),           # TRL's all-NaN metric
    (True, None),           # a bool is not a measurement
    ("x", None),            # junk
])
def test_finite(raw, expected):
    assert finite(raw) == expected


@pytest.mark.parametrize("data,needle", [
    ({"kl_maxx": 1.0}, "kl_max"),                  # typo names the nearest key
    ({"clipped_ration": 0.5}, "clipped_ratio"),    # another typo
    ({"clipped_ratio": 1.5}, "between 0 and 1"),   # a share above 1 is meaningless
    ({"no_signal_steps": 0}, "at least 1"),        # zero patience would fire on nothing
    ({"disable": ["kl"]}, "kl_blowup"),            # unknown rule id lists the real ones
    ({"kl_max": "high"}, "must be a number"),      # caught at load, not as a TypeError mid-run
    ({"stop_on_critical": "yes"}, "true or false"),  # a string is not a bool
    ({"sustained_clipped_ratio": 0.97}, "must not exceed health.rules.truncation.clipped_ratio"),  # the slow level is the lower one
    ({"expected_logged_steps": 0}, "at least 1"),  # a run of no logs has nothing to cap
    ({"cut_gap": -0.5}, "0 or more"),              # a margin: the sign is the rule's (costs or pays)
])
def test_health_config_errors(data, needle):
    with pytest.raises(ConfigError, match=needle):
        HealthConfig.from_dict(data)


def test_health_config_coerces_yaml_values():
    hc = HealthConfig.from_dict({"kl_max": "0.3", "no_signal_steps": 3.0, "disable": "reward_stuck"})
    assert hc.params("kl_blowup").kl_max == 0.3 and hc.params("no_learning_signal").patience == 3
    assert hc.disable == ["reward_stuck"]


def _state(step, zero=True):
    return SimpleNamespace(global_step=step, is_world_process_zero=zero)


def test_callback_writes_alerts_and_stops_after_saving(tmp_path):
    cb = HealthCallback({"stop_on_critical": True}, run_dir=tmp_path, console=_QuietConsole())
    args = SimpleNamespace(max_completion_length=128, output_dir=str(tmp_path / "out"))
    control = SimpleNamespace(should_save=False, should_training_stop=False)
    cb.on_train_begin(args, _state(0), control)
    assert cb.config.max_completion_length == 128  # picked up from GRPOConfig
    for record in history("nan"):
        control = cb.on_log(args, _state(record["step"]), control, logs=dict(record))
        if control.should_training_stop:
            break
    assert control.should_save and control.should_training_stop
    assert cb.stopped_by.rule == "non_finite"
    lines = [json.loads(x) for x in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    assert [x["rule"] for x in lines] == ["non_finite"]
    assert lines[0]["step"] == 36 and lines[0]["fix"]


def test_callback_writes_nothing_off_rank_zero(tmp_path):
    # Every rank runs the rules (they must agree on stopping) but only rank 0 writes.
    cb = HealthCallback(CFG, run_dir=tmp_path, console=_QuietConsole())
    control = SimpleNamespace(should_save=False, should_training_stop=False)
    for record in history("all_truncated", steps=40):
        cb.on_log(None, _state(record["step"], zero=False), control, logs=dict(record))
    assert not (tmp_path / "alerts.jsonl").exists()
    assert [a.rule for a in cb.monitor.alerts] == ["truncation"]


def test_callback_default_does_not_stop(tmp_path):
    cb = HealthCallback(CFG, run_dir=tmp_path, console=_QuietConsole())
    control = SimpleNamespace(should_save=False, should_training_stop=False)
    for record in history("nan"):
        cb.on_log(None, _state(record["step"]), control, logs=dict(record))
    assert not control.should_training_stop


class _QuietConsole:
    def __init__(self):
        self.lines = []

    def print(self, text):
        self.lines.append(text)


def test_tracker_counts_none_errors_and_distinct():
    def half_none(completions, **kw):
        return [None if i % 2 else 1.0 for i in range(len(completions))]

    def broken(completions, **kw):
        raise KeyError("answer")

    tracker = TrainerRewards(RewardSet([half_none, broken]))
    wrapped = tracker.funcs
    assert [f.__name__ for f in wrapped] == ["half_none", "broken"]  # TRL names metrics by __name__
    prompts = ["p1"] * 4 + ["p2"] * 4
    completions = ["a", "a", "a", "a", "x", "y", "z", "w"]  # group 1 collapsed, group 2 diverse
    wrapped[0](completions, prompts=prompts)
    assert wrapped[1](completions, prompts=prompts) == [None] * 8  # a crash becomes a counted None
    stats = tracker.window()
    assert stats["rewards/half_none/none_frac"] == 0.5
    assert stats["rewards/broken/error_frac"] == 1.0
    assert "KeyError" in stats["rewards/broken/first_error"]
    assert stats["completions/distinct_frac"] == pytest.approx((0.25 + 1.0) / 2)
    assert tracker.window() == {}  # counts restart after each log


def test_tracker_counts_a_gold_the_reward_cannot_read():
    # math_equivalence gives None, not 0, for a gold with no math in it; the tracker's none_frac shows it.
    from grpokit.rewards import get

    tracker = TrainerRewards(RewardSet([get("math_equivalence")]))
    [wrapped] = tracker.funcs
    assert wrapped(["\\boxed{42}"] * 4, answer=["42", "Answer is forty two.", "42", "42"]) == [1.0, None, 1.0, 1.0]
    assert tracker.window()["rewards/math_equivalence/none_frac"] == 0.25


def test_tracker_stats_reach_the_rules(tmp_path):
    # A reward that raises on every call shows up as reward_unscorable with its error.
    from grpokit.training.callbacks import RewardStatsCallback

    def needs_answer(completions, answer, **kw):
        return [1.0 for _ in completions]

    calls = TrainerRewards(RewardSet([needs_answer]))
    stats, cb = RewardStatsCallback(calls), HealthCallback(CFG, run_dir=tmp_path, console=_QuietConsole(), reward_calls=calls)
    (wrapped,) = calls.funcs
    control = SimpleNamespace(should_save=False, should_training_stop=False)
    for record in history("healthy", steps=5):
        wrapped(["a", "b"], prompts=["p", "p"])  # no answer column -> TypeError
        logs = dict(record)
        for callback in (stats, cb):  # the order train() gives them
            callback.on_log(None, _state(record["step"]), control, logs=logs)
        assert logs["rewards/needs_answer/error_frac"] == 1.0 and "rewards/needs_answer/first_error" not in logs
    rules = [a.rule for a in cb.monitor.alerts]
    assert rules == ["reward_unscorable"]
    assert "TypeError" in cb.monitor.alerts[0].message


def test_replay_tolerates_nan_everywhere():
    # A record of nothing but NaN must not crash any rule.
    nan = float("nan")
    record = {k: nan for k in history("healthy", steps=1)[0]}
    alerts = replay([record] * 30, HealthConfig(**CFG))
    # NaN loss is critical; NaN reward means also say the rewards cannot score
    assert {a.rule for a in alerts} == {"non_finite", "reward_unscorable"}
    assert all(math.isnan(v) for v in record.values())  # the rules did not mutate the record


def test_the_wrapper_runs_async_rewards_to_completion():
    # The wrapper is a plain function to TRL, so an async reward is awaited inside it: TRL gets scores, not a coroutine.
    async def slow(completions, **kw):
        return [1.0] * len(completions)

    (wrapped,) = TrainerRewards(RewardSet([slow])).funcs
    assert wrapped(["a", "b"]) == [1.0, 1.0]


def test_from_config_is_what_train_calls(tmp_path):
    # train.py builds the callback as HealthCallback.from_config(cfg.health, run_dir); a typo must fail loudly.
    cb = HealthCallback.from_config({"kl_max": 0.3}, tmp_path)
    assert cb.config.params("kl_blowup").kl_max == 0.3 and cb.run_dir == tmp_path
    with pytest.raises(ConfigError, match="kl_max"):
        HealthCallback.from_config({"kl_mx": 0.3}, tmp_path)
