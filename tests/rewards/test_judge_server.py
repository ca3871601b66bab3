"""llm_judge against a real local judge: `transformers serve` running the bundled SmolLM2-135M.

The shared server starts once per test process (judge_local.py); the test that kills
a server mid-step starts its own.
"""
from __future__ import annotations

import os
import threading
import time

import pytest
from judge_local import judge_url, start_judge

from grpokit.rewards.reward_set import RewardSet
from grpokit.rewards.trainer_rewards import TrainerRewards
from grpokit.health.rules import HealthConfig, HealthMonitor
from grpokit.rewards import get
from grpokit.rewards.judge import stats
from grpokit.rewards.judge.preflight import unreachable

DOC = ("The town council voted on Tuesday to close the old library on Mill Street and move its books to the new "
       "community centre, which opens in March. Staff will keep their jobs.")
GOOD = "The council will move the Mill Street library into the new community centre in March."


@pytest.fixture(scope="module")
def url():
    return judge_url()


@pytest.mark.parametrize("mode", ["pointwise", "group"])
def test_scores_parse_into_the_unit_range(url, mode):
    # Replies parse every time (the worked example carries their shape): no None from a live judge, every score in [0, 1].
    judge = get("llm_judge", base_url=url, rubric="summary", mode=mode)
    completions = [GOOD, "Bananas are yellow.", "", "library " * 30]
    scores = judge(completions, prompts=[f"Summarize: {DOC}"] * 4)
    assert all(s is not None and 0.0 <= s <= 1.0 for s in scores), scores


# Clear cases: a relevant answer against an unrelated one, judged pointwise and side by side.
CLEAR = [
    # a faithful summary vs. text about something else
    (f"Summarize: {DOC}", GOOD, "My favourite colour is blue and I like to swim."),
    # the right answer to a question vs. a refusal to answer
    ("What is the capital of France?", "The capital of France is Paris.", "I do not know."),
    # an answer vs. an empty reply
    ("Name a primary colour.", "Red is a primary colour.", ""),
]


# The bundled 135M judge grades both sides of every clear case alike (all 0 pointwise, measured), so with it this
# check has nothing to compare and spent half a minute of every suite run on an xfail. It runs against a judge
# that can separate them: GRPOKIT_STRONG_JUDGE_URL=http://host:port/v1 (any OpenAI-compatible server).
@pytest.mark.skipif(not os.environ.get("GRPOKIT_STRONG_JUDGE_URL"),
                    reason="needs a judge that separates clear cases: set GRPOKIT_STRONG_JUDGE_URL")
def test_group_ranking_agrees_with_pointwise_on_clear_cases():
    url = os.environ["GRPOKIT_STRONG_JUDGE_URL"]
    # Where pointwise grades separate two completions clearly (>= 0.2 apart), the group ranking orders them the same way.
    pointwise = get("llm_judge", base_url=url, rubric="general")
    group = get("llm_judge", base_url=url, rubric="general", mode="group")
    separated = 0
    for prompt, first, second in CLEAR:
        p = pointwise([first, second], prompts=[prompt] * 2)
        g = group([first, second], prompts=[prompt] * 2)
        if abs(p[0] - p[1]) >= 0.2:
            separated += 1
            assert (g[0] - g[1]) * (p[0] - p[1]) > 0, (prompt, p, g)
    assert separated, "the judge at GRPOKIT_STRONG_JUDGE_URL separated no clear case pointwise"


def test_repeats_come_from_the_cache(url):
    # The second call asks the judge nothing: same scores, every completion a cache hit, no request timed.
    judge = get("llm_judge", base_url=url, rubric="summary")
    batch = [GOOD, "Bananas are yellow."]
    stats.drain()
    first = judge(batch, prompts=[DOC] * 2)
    assert stats.drain()["judge/llm_judge/cache_hit_frac"] == 0.0
    second = judge(batch, prompts=[DOC] * 2)
    metrics = stats.drain()
    assert second == first
    assert metrics["judge/llm_judge/cache_hit_frac"] == 1.0
    assert "judge/llm_judge/latency_s" not in metrics  # nothing was sent


def test_a_spent_budget_gives_none_not_zero(url):
    # budget_s bounds the step: whatever the judge has not answered by then is None, with the reason.
    judge = get("llm_judge", base_url=url, rubric="summary", concurrency=1, budget_s=0.01, cache_size=0)
    stats.drain()
    scores = judge([f"summary {i}" for i in range(6)], prompts=[DOC] * 6)
    assert None in scores
    assert "budget" in stats.drain()["judge/llm_judge/first_error"]


def test_killed_server_mid_step_gives_none_and_an_alert():
    # The judge dies while a step is being judged: the step finishes, unjudged completions are None
    # (never 0), the reward wrapper counts them and the health monitor raises judge_failing.
    server = start_judge()
    try:
        judge = get("llm_judge", base_url=server.url, concurrency=1, retries=1, backoff_s=0.05, cache_size=0)
        judge(["warm-up"], prompts=["Say hi."])  # the first request loads the model's caches
        tracker = TrainerRewards(RewardSet([judge]))
        tracked = tracker.funcs[0]
        stats.drain()
        killer = threading.Timer(0.6, server.kill)
        killer.start()
        completions = [f"Answer number {i}: the library moves in March." for i in range(12)]
        start = time.perf_counter()
        scores = tracked(completions, prompts=[DOC] * 12)
        killer.join()
        assert time.perf_counter() - start < 60
    finally:
        server.stop()
    assert scores[-1] is None and None in scores
    assert all(s is None or 0.0 <= s <= 1.0 for s in scores)
    logs = {"loss": 0.0, "reward": 0.5, "reward_std": 0.2, **tracker.window()}
    assert logs["judge/llm_judge/failure_frac"] > 0.2
    assert logs["rewards/llm_judge/none_frac"] == logs["judge/llm_judge/failure_frac"]
    alerts = HealthMonitor(HealthConfig()).observe(1, logs)
    assert [a.rule for a in alerts] == ["judge_failing"], alerts
    assert "unscored" in alerts[0].message and "grpokit judge check" in alerts[0].fix


def test_preflight_passes_a_live_judge(url):
    # doctor's check: a live endpoint has no problem to report.
    assert unreachable([get("llm_judge", base_url=url)]) == []
