"""The health zoo's judge case without training: when the judge is killed, and the config it trains on."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import yaml

from benchmarks.health_zoo import case_config
from benchmarks.zoo.cases import cases
from benchmarks.zoo.judge import KillAfterStep, last_logged_step


def _log(path: Path, step: int, **extra) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"step": step, "loss": 0.1, "reward": 0.5, **extra}) + "\n")


def test_last_logged_step_counts_training_logs_only(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    assert last_logged_step(metrics) is None  # not written yet
    _log(metrics, 1)
    with open(metrics, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"step": 5, "eval_reward": 0.2}) + "\n")  # an eval log is no step done
        fh.write('{"step": 7, "loss"')  # a line the trainer is still writing
    assert last_logged_step(metrics) == 1


def test_the_judge_is_killed_once_the_step_is_logged_not_before(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    killed = threading.Event()
    killer = KillAfterStep(metrics, 2, killed.set, poll_s=0.01)
    killer.start()
    try:
        _log(metrics, 1)
        time.sleep(0.1)
        assert not killed.is_set()
        _log(metrics, 2)
        assert killed.wait(5)
        killer.join(5)
        assert killer.killed_after == 2 and killer.killed_at is not None
    finally:
        killer.stop()


def test_stop_ends_the_watch_without_killing(tmp_path):
    killed = threading.Event()
    killer = KillAfterStep(tmp_path / "metrics.jsonl", 2, killed.set, poll_s=0.01)
    killer.start()
    killer.stop()
    assert not killer.is_alive() and not killed.is_set() and killer.killed_after is None


def test_the_judge_case_adds_its_judge_to_the_demo_rewards(tmp_path):
    case = next(c for c in cases() if c.name == "judge-killed")
    assert case.skip is None and case.kill_judge_after_step is not None
    raw = yaml.safe_load(case_config(case, tmp_path, "http://127.0.0.1:9999/v1").read_text(encoding="utf-8"))
    names = [r["name"] for r in raw["rewards"]]
    assert names == ["numeric_match", "numeric_closeness", "regex_format", "llm_judge"]
    assert raw["rewards"][-1]["params"]["base_url"] == "http://127.0.0.1:9999/v1"
