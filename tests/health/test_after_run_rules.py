"""The rules read after the run (a reward that never varied, the loss notes, how the run ended) are
rows of the same table: their ids come from it, `grpokit report` runs them through it, and each can
be switched off like any live rule."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grpokit.health.diagnose import diagnose
from grpokit.health.table import BY_ID, STEP_RULES

FIXTURES = Path(__file__).parent / "fixtures"


def _with_health(tmp_path: Path, case: str, health: dict) -> Path:
    run = tmp_path / case
    shutil.copytree(FIXTURES / case, run)
    config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    config["health"] = health
    (run / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return run


def test_after_run_rules_are_table_rows_without_a_step_check():
    after = {rule_id for rule_id, rule in BY_ID.items() if rule.after_run is not None}
    assert after == {"reward_constant", "loss_zero", "loss_rising", "no_metrics", "run_interrupted", "run_failed",
                     "run_status_unknown", "run_killed", "out_of_memory"}
    assert after & set(STEP_RULES) == {"out_of_memory"}  # live on the peak, and after the run on run_status.json


@pytest.mark.parametrize("case,rule", [("no-signal-constant", "reward_constant"), ("no-signal-constant", "loss_zero"),
                                       ("tool-never-called", "run_killed"), ("hack-length", "loss_rising"),
                                       ("oom-full-finetune", "out_of_memory")])
def test_an_after_run_rule_can_be_switched_off(tmp_path, case, rule):
    assert rule in {f.rule for f in diagnose(FIXTURES / case)}
    assert rule not in {f.rule for f in diagnose(_with_health(tmp_path, case, {"rules": {rule: {"enabled": False}}}))}


def test_an_after_run_rule_takes_its_parameters(tmp_path):
    # zoo_constant is flat over the run's 6 logged steps: too few to say so once 10 are asked for.
    assert "reward_constant" in {f.rule for f in diagnose(FIXTURES / "no-signal-constant")}
    run = _with_health(tmp_path, "no-signal-constant", {"rules": {"reward_constant": {"min_steps": 10}}})
    assert "reward_constant" not in {f.rule for f in diagnose(run)}


def test_the_words_of_how_a_run_ended_are_its_rules_and_run_status_records_facts(tmp_path):
    import json
    import socket

    from grpokit.health.checks.run_end import ending_rule
    from grpokit.health.run_status import post_mortem, write_status

    write_status(tmp_path, {"state": "running", "pid": 2 ** 22 + 7, "host": socket.gethostname(), "step": 2,
                            "updated": 1.7e9, "memory": {"peak_gib": 2.9, "limit_gib": 3.0, "limit": "ulimit -v"}})
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"step": 2, "loss": 0.1, "reward": 0.5}) + "\n")
    facts = post_mortem(tmp_path)
    assert facts["how"] == "killed" and ending_rule(facts) == "out_of_memory"
    assert not {"rule", "title", "evidence", "cause", "fix", "severity"} & set(facts)
    rule = BY_ID["out_of_memory"]
    (killed,) = [e for e in rule.endings if e.how == "killed"]
    first = diagnose(tmp_path)[0]
    assert first.title == killed.title and first.fix == rule.fix
    assert first.cause.startswith(rule.cause) and "writes no error" in first.cause
    assert first.evidence.endswith("is gone; peak 2.90 GiB of a 3.00 GiB limit (ulimit -v)")
    # Every way post_mortem can name a rule has that rule's words.
    hows = {"run_interrupted": {"interrupted"}, "run_failed": {"failed"}, "run_status_unknown": {"elsewhere"},
            "run_killed": {"killed"}, "out_of_memory": {"failed", "killed"}}
    assert {r: {e.how for e in BY_ID[r].endings} for r in hows} == hows
