"""llm_judge without a server: reading replies, settings checked at construction, the cache, a dead endpoint."""
from __future__ import annotations

import pickle
import time

import pytest

from grpokit.rewards import RewardConfigError, get
from grpokit.rewards.judge import stats
from grpokit.rewards.judge.cache import VerdictCache, cache_key
from grpokit.rewards.judge.preflight import judges_in, unreachable
from grpokit.rewards.judge.rubrics import parse_score, parse_scores
from grpokit.integrations.judge_server import free_port


@pytest.mark.parametrize("reply, expected", [
    ('{"score": 7}', 7.0),               # the structured answer
    ('  {"score": 10}\n', 10.0),          # the top of the scale, with whitespace around it
    ('Sure! {"score": 3} Hope that helps', 3.0),  # JSON inside chatter
    ("Score: 8/10", 8.0),                 # a judge that ignored the JSON request: first number
    ('```json\n{"score": 6}\n```\nWhy: {brief}', 6.0),  # fenced, then more braces: the first object counts
    ('{"score": 11}', None),              # off the scale is not a grade
    ('{"score": -1}', None),              # below the scale neither
    ('{"score": true}', None),            # a boolean is not a grade
    ('{"score": "high"}', None),          # nor a word
    ("I cannot grade this.", None),       # no number at all
    ("", None),                           # an empty reply
])
def test_pointwise_reply(reply, expected):
    assert parse_score(reply, 10) == expected


@pytest.mark.parametrize("reply, size, expected", [
    ('{"scores": [1, 9, 5]}', 3, [1.0, 9.0, 5.0]),   # one grade per completion, in order
    ('{"scores": [1, 9]}', 3, None),                 # too few grades: which one is missing is unknowable
    ('{"scores": [1, 9, 5, 2]}', 3, None),           # too many
    ('{"scores": [1, 99, 5]}', 3, [1.0, None, 5.0]),  # one grade off the scale: that one is unreadable
    ('{"score": 4}', 1, None),                       # a pointwise reply to a group request
    ("1, 9, 5", 3, None),                            # grades without the JSON around them are not trusted
    ('{"scores": [1, 9, 5]} {"scores": [0]}', 3, [1.0, 9.0, 5.0]),  # a repeated object after the first
])
def test_group_reply(reply, size, expected):
    assert parse_scores(reply, 10, size) == expected


@pytest.mark.parametrize("scale", [5, 10])
@pytest.mark.parametrize("size", [1, 2, 7])
def test_the_worked_example_has_the_replys_shape(size, scale):
    # A server that ignores response_format learns the reply's shape, and a group's count, from the example
    # turn: its grades must parse as a real reply of the same size does, and sit on the request's scale.
    from grpokit.rewards.judge.rubrics import group_messages, pointwise_messages

    group = group_messages("r", scale, "p", [f"c{i}" for i in range(size)], None, 100)
    assert [m["role"] for m in group] == ["system", "user", "assistant", "user"]
    grades = parse_scores(group[2]["content"], scale, size)
    assert grades is not None and None not in grades and f'kind="response {size}"' in group[1]["content"]
    point = pointwise_messages("r", scale, "p", "c", None, 100)
    assert [m["role"] for m in point] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert {parse_score(m["content"], scale) for m in point[2::2]} == {0.0, float(scale)}  # both ends shown
    assert point[-1]["content"].endswith(f"0-{scale}>}}")


@pytest.mark.parametrize("params, message", [
    ({"base_url": "localhost:8090"}, "http"),             # no scheme: requests would go nowhere
    ({"mode": "pairwise"}, "mode"),                       # not a mode
    ({"concurrency": 0}, "concurrency"),                  # nothing could ever be sent
    ({"timeout_s": 0}, "timeout_s"),                      # every request would time out at once
    ({"budget_s": -5}, "budget_s"),                       # a negative budget
    ({"scale": 1.5}, "scale"),                            # grades are integers
    ({"api_key_env": "sk-abc=1"}, "NAME"),                # a key pasted where its variable's name belongs
    ({"api_key_env": "GRPOKIT_TEST_UNSET_KEY"}, "not set"),  # the variable is missing: fail before training
])
def test_bad_settings_fail_at_construction(params, message, monkeypatch):
    monkeypatch.delenv("GRPOKIT_TEST_UNSET_KEY", raising=False)
    with pytest.raises(RewardConfigError, match=message):
        get("llm_judge", **params)


def test_the_key_is_read_from_the_environment_and_never_pickled(monkeypatch):
    monkeypatch.setenv("GRPOKIT_TEST_JUDGE_KEY", "sk-secret-value")
    judge = get("llm_judge", api_key_env="GRPOKIT_TEST_JUDGE_KEY")
    assert b"sk-secret-value" not in pickle.dumps(judge)
    assert judge.settings["settings"].api_key() == "sk-secret-value"


@pytest.mark.parametrize("change", [
    ("rubric", "summary"), ("completion", "other"), ("prompt", "another"), ("reference", "gold"), ("model", "m2"),
])
def test_cache_key_covers_what_was_judged(change):
    # Any change to what the judge saw, or who judged, asks the judge again.
    base = {"rubric": "general", "completion": "text", "prompt": "p", "reference": None, "model": "judge"}
    changed = dict(base, **{change[0]: change[1]})
    assert cache_key(*base.values()) != cache_key(*changed.values())


def test_cache_is_bounded_and_not_pickled():
    cache = VerdictCache(2)
    for key in "abc":
        cache.put(key, [1.0])
    assert cache.get("a") is None and cache.get("c") == [1.0]  # the oldest entry made room
    assert len(pickle.loads(pickle.dumps(cache))) == 0          # a copy in another process starts empty


def test_a_dead_endpoint_gives_none_counted_and_quickly(load_slack):
    # Nothing listens on the port: every completion is None (not 0), the failure is counted, retries are bounded.
    url = f"http://127.0.0.1:{free_port()}/v1"
    judge = get("llm_judge", base_url=url, retries=2, backoff_s=0.05)
    slack = load_slack(lambda: get("llm_judge", base_url=url, retries=0)(["a"], prompts=["p"]))
    stats.drain()
    start = time.perf_counter()
    assert judge(["a", "b", "c"], prompts=["p"] * 3) == [None, None, None]
    assert time.perf_counter() - start < 3.0 + slack  # no 30 s request timeout waited out
    metrics = stats.drain()
    assert metrics["judge/llm_judge/failure_frac"] == 1.0
    assert "Connect" in metrics["judge/llm_judge/first_error"]
    assert unreachable([judge]) and "does not answer" in unreachable([judge])[0]


def test_judges_are_found_through_wrappers():
    # doctor checks the endpoint of every judge in the reward set, wrapped or not.
    judge = get("llm_judge")

    def tracked(completions, **kwargs):
        return judge(completions, **kwargs)

    tracked.__wrapped__ = judge
    assert [s.base_url for s in judges_in([get("exact_match"), tracked])] == [judge.settings["settings"].base_url]


def test_judge_server_model_must_be_a_checkpoint_folder(tmp_path):
    # A GGUF file (what the llama.cpp server took) or an empty folder: the error says what to give instead.
    from grpokit.errors import ConfigError
    from grpokit.integrations.judge_server import JudgeServer, server_available

    if not server_available():
        pytest.skip("transformers' server packages are not installed (pip install 'grpokit[judge]')")
    gguf = tmp_path / "judge.gguf"
    gguf.write_bytes(b"GGUF")
    for name in (str(gguf), str(tmp_path)):
        with pytest.raises(ConfigError, match="transformers checkpoint.*bundled:smollm2-135m-instruct"):
            JudgeServer.for_model(name)
    # The server is bound to loopback and asked for the model by llm_judge's default name.
    (tmp_path / "config.json").write_text("{}")
    server = JudgeServer.for_model(str(tmp_path), port=0)
    command = server.command()
    assert command[command.index("--host") + 1] == "127.0.0.1" and "judge" in command
    assert server.url.startswith("http://127.0.0.1:") and server.environment()["HF_HUB_OFFLINE"] == "1"


def test_a_judge_timeout_says_what_timed_out_after_how_long_and_where():
    # Issue 35.10: "first error: ReadTimeout: " with nothing after (httpx's timeouts have no message).
    # A server that accepts the connection and never answers.
    import re
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    try:
        url = f"http://127.0.0.1:{port}/v1"
        judge = get("llm_judge", base_url=url, retries=0, timeout_s=0.5, budget_s=10)
        stats.drain()
        assert judge(["a"], prompts=["p"]) == [None]
        error = stats.drain()["judge/llm_judge/first_error"]
        assert re.fullmatch(rf"ReadTimeout after [\d.]+ s to {re.escape(url)}/chat/completions \(timeout_s: 0\.5\)",
                            error), error
    finally:
        server.close()
