"""A run's life through `grpokit train --resume`, as a user types it, with the tiny model (2-4 steps).

Before: resuming a finished 2-step run with max_steps 4 printed `done` in 8 s, trained nothing, rewrote
config.yaml and left run_status.json "running" (the report then called it killed, maybe out of memory);
resuming with another data file was accepted; a finished two-stage run read "still running".
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from grpokit.models.tiny import make_tiny_model
from grpokit.health.diagnose import diagnose, load_run
from harness import grpokit, read_jsonl


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model", vocab_size=0, hidden_size=64,
                           num_attention_heads=4)


def _config(tiny, out: Path) -> dict:
    return {"name": "rs", "output_dir": str(out), "model": {"name": str(tiny), "lora": {"r": 4}},
            "data": {"source": "synthetic:arithmetic", "max_samples": 32, "eval_size": 0},
            "rewards": [{"name": "numeric_match"}], "profile": "cpu",
            "training": {"max_steps": 2, "num_generations": 4, "per_device_train_batch_size": 4,
                         "max_completion_length": 8, "save_steps": 1, "learning_rate": 0.01}}


def _files(run: Path) -> tuple[bytes, bytes]:
    return (run / "config.yaml").read_bytes(), (run / "run_status.json").read_bytes()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_resume_refuses_another_run_does_nothing_when_done_and_extends_when_asked(tiny, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    config = _config(tiny, tmp_path / "run")
    Path("rs.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    first = grpokit(["train", "rs.yaml"])
    assert first.exit_code == 0, first.output
    run = tmp_path / "run"
    before = _files(run)

    # Finished at max_steps: nothing to do, and nothing written.
    again = grpokit(["train", "rs.yaml", "--resume"])
    assert again.exit_code == 0, again.output
    assert "nothing to do" in again.output and "training.max_steps" in again.output, again.output
    assert _files(run) == before

    # Another data file and columns under the same name: refused, exit 2, what to do instead.
    Path("other.jsonl").write_text("".join(json.dumps({"q": f"{i} plus 1?", "a": str(i + 1)}) + "\n"
                                           for i in range(20)), encoding="utf-8")
    other = {**config, "data": {"source": "other.jsonl", "prompt_column": "q", "answer_column": "a", "eval_size": 0}}
    Path("other.yaml").write_text(yaml.safe_dump(other), encoding="utf-8")
    refused = grpokit(["train", "other.yaml", "--resume"])
    said = " ".join(refused.output.split())
    assert refused.exit_code == 2, refused.output
    assert "data.source: 'synthetic:arithmetic' -> 'other.jsonl'" in said and "data.prompt_column" in said, said
    assert "another `name:`" in said and "run/config.yaml --resume" in said, said
    assert _files(run) == before  # was: config.yaml named data the run never trained on

    # max_steps raised: the new steps are trained, once each, and the run ends finished.
    longer = grpokit(["train", "rs.yaml", "--resume", "--set", "training.max_steps=4"])
    assert longer.exit_code == 0, longer.output
    assert "extending run from step 2 to max_steps 4" in longer.output, longer.output
    steps = [r["step"] for r in read_jsonl(run / "metrics.jsonl") if "loss" in r]
    assert steps == [1, 2, 3, 4], steps  # was [1, 2]: nothing trained
    status = json.loads((run / "run_status.json").read_text())
    assert (status["state"], status["step"]) == ("finished", 4), status  # was running, step 0
    assert yaml.safe_load((run / "config.yaml").read_text())["training"]["max_steps"] == 4
    assert json.loads((run / "checkpoints" / "final" / "grpokit_stage_done.json").read_text())["step"] == 4
    findings = diagnose(run)
    assert not any(f.rule in ("run_killed", "out_of_memory") for f in findings), findings
    assert load_run(run).finished
    # The monitor went on from checkpoint-2: an alert of steps 1-2 is not raised again at 3-4.
    rules = [a["rule"] for a in read_jsonl(run / "alerts.jsonl")]
    assert len(rules) == len(set(rules)), rules


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_two_stage_run_records_its_stages_and_reads_finished(tiny, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    config = _config(tiny, tmp_path / "run")
    config["stages"] = [{"name": "format", "max_steps": 2}, {"name": "correctness", "max_steps": 2}]
    Path("two.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = grpokit(["train", "two.yaml"])
    assert result.exit_code == 0, result.output
    run = tmp_path / "run"
    for name in ("metrics.jsonl", "completions.jsonl", "alerts.jsonl"):
        records = read_jsonl(run / name)
        assert all(r.get("stage") in ("format", "correctness") for r in records), (name, records[:2])
    alerts = read_jsonl(run / "alerts.jsonl")
    # Every completion is cut at 8 tokens: each stage's monitor says so once, at its own step.
    assert len({(a["stage"], a["step"], a["rule"]) for a in alerts}) == len(alerts)
    report = grpokit(["report", "run"])
    assert report.exit_code == 0, report.output
    page = (run / "report.html").read_text()
    assert "finished (all 2 stages)" in page, page[:600]  # was "still running (or stopped before max_steps)"
    if {a["stage"] for a in alerts} == {"format", "correctness"}:
        assert "stage format step" in report.output and "stage correctness step" in report.output, report.output
    again = grpokit(["train", "two.yaml", "--resume"])
    assert again.exit_code == 0 and "nothing to do" in again.output, again.output
    assert "stages[1].max_steps" in again.output
