"""The health monitor survives a resume: its state goes into each checkpoint and comes back, so a run stopped
at any step and resumed raises the alerts one straight run raises on the same metrics, and the report's replay
of metrics.jsonl (which skips steps a resume redid) agrees with both.

The class of failure: monitor state that lives only in the process (baselines, patience streaks, the alerts
already raised, the held-out records). Before, a resumed run started a fresh monitor: truncation fired again,
and diverged measured "the first steps" as the first steps after the resume.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from grpokit.health.callback import HealthCallback
from grpokit.health.diagnose import health_config_for, load_run
from grpokit.health.rules import HealthMonitor, is_held_out_log, is_train_log, replay_monitor
from grpokit.run_directory.jsonl import read_records, without_redone
from grpokit.training.checkpoints import CompleteMarkerCallback

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "metrics.jsonl").is_file())


class _Quiet:
    def print(self, *args, **kwargs):
        pass


def _records(case):
    run = load_run(FIXTURES / case)
    hc = health_config_for(run.config, run.train_metrics)
    hc.enabled = True
    return run.curve_metrics, hc


def _alerts(monitor):
    return [(a.step, a.rule, a.message) for a in monitor.alerts]


def _feed(monitor, records):
    for i, record in enumerate(records, start=1):
        monitor.observe(int(record.get("step", i)), record)


@pytest.mark.parametrize("case", CASES)
def test_a_monitor_restored_at_any_step_raises_the_straight_runs_alerts(case):
    """Every real history of the health zoo, stopped after each of its records: the state through JSON (as a
    checkpoint holds it) and the rest of the records give the alerts and stretches of one uninterrupted monitor."""
    records, hc = _records(case)
    straight = replay_monitor(records, hc)
    for cut in range(1, len(records)):
        before = HealthMonitor(hc)
        _feed(before, records[:cut])
        resumed = HealthMonitor(hc)
        resumed.restore(json.loads(json.dumps(before.state(), default=str)))
        _feed(resumed, records[cut:])
        assert _alerts(resumed) == _alerts(straight), (case, cut)
        assert resumed.firing == straight.firing, (case, cut)


@pytest.mark.parametrize("case", ["diverge-lr", "words-seed2-all-cut", "stuck-low-lr"])
def test_a_fresh_monitor_after_a_resume_is_what_the_state_prevents(case):
    """The failure itself: a monitor that starts from nothing at the resume raises other alerts than the
    straight run on these histories (an alert raised again, or a baseline taken after the resume)."""
    records, hc = _records(case)
    straight = _alerts(replay_monitor(records, hc))
    differs = []
    for cut in range(1, len(records)):
        fresh = HealthMonitor(hc)
        _feed(fresh, records[:cut])
        after = HealthMonitor(hc)  # what a resume did before: a new monitor
        _feed(after, records[cut:])
        differs.append(_alerts(fresh) + _alerts(after) != straight)
    assert any(differs), case


def _state(step, zero=True):
    return SimpleNamespace(global_step=step, is_world_process_zero=zero, max_steps=30, logging_steps=1)


def test_the_callbacks_state_goes_into_the_checkpoint_before_its_marker_and_comes_back(tmp_path):
    records, hc = _records("words-seed2-all-cut")
    train = [r for r in records if is_train_log(r) or is_held_out_log(r)]
    args = SimpleNamespace(max_completion_length=hc.max_completion_length, output_dir=str(tmp_path / "ckpts"),
                           logging_steps=1)
    control = SimpleNamespace(should_save=False, should_training_stop=False)

    def run(cb, part):
        for record in part:
            if is_held_out_log(record):
                cb.observe_held_out(record)
            else:
                cb.on_log(args, _state(record["step"]), control, logs=dict(record))

    straight = HealthCallback(dataclasses.replace(hc), run_dir=tmp_path / "straight", console=_Quiet())
    straight.on_train_begin(args, _state(0), control)
    run(straight, train)

    cut = len(train) // 2
    first = HealthCallback(dataclasses.replace(hc), run_dir=tmp_path / "resumed", console=_Quiet())
    first.on_train_begin(args, _state(0), control)
    run(first, train[:cut])
    step = train[cut - 1]["step"]
    ckpt = tmp_path / "ckpts" / f"checkpoint-{step}"
    ckpt.mkdir(parents=True)
    CompleteMarkerCallback(states={"grpokit_health.json": first.state_dict}).on_save(args, _state(step), control)
    marker = json.loads((ckpt / "grpokit_complete.json").read_text())
    assert "grpokit_health.json" in marker["files"]  # written before the marker, so listed in it

    second = HealthCallback(dataclasses.replace(hc), run_dir=tmp_path / "resumed", console=_Quiet())
    assert second.restore(ckpt) == "checkpoint"
    second.on_train_begin(args, _state(step), control)
    run(second, train[cut:])
    assert _alerts(second.monitor) == _alerts(straight.monitor)
    written = [json.loads(x) for x in (tmp_path / "resumed" / "alerts.jsonl").read_text().splitlines()]
    once = [json.loads(x) for x in (tmp_path / "straight" / "alerts.jsonl").read_text().splitlines()]
    assert written == once and all("stage" in a for a in written)


def test_a_checkpoint_without_state_is_restored_by_replaying_its_stage(tmp_path):
    """Checkpoints saved before the state existed: the monitor is rebuilt from metrics.jsonl (this stage's
    records only, trimmed to the checkpoint), which is what it had seen."""
    records, hc = _records("diverge-lr")
    metrics = tmp_path / "metrics.jsonl"
    other = [{**r, "stage": "warmup"} for r in records]  # another stage's records must not count
    metrics.write_text("".join(json.dumps(r) + "\n" for r in other + [{**r, "stage": "main"} for r in records[:3]]))
    cb = HealthCallback(dataclasses.replace(hc), run_dir=tmp_path, console=_Quiet(), stage="main")
    assert cb.restore(tmp_path / "checkpoint-3", metrics) == "replay"
    expected = HealthMonitor(hc)
    _feed(expected, [{**r, "stage": "main"} for r in records[:3]])
    assert cb.monitor.state() == expected.state()


# Each case: the steps (and kinds) a run wrote, in order, and what its history is. "h" is a held-out
# evaluation record, a number a training log of that step.
REDONE = [
    ([1, 2, 3, 4, 3, 4, 5], [1, 2, 3, 4, 5]),                 # crashed at 4 after checkpoint-2, resumed, not trimmed
    ([1, 2, 3, 2, 3], [1, 2, 3]),
    # A step's held-out evaluation is written before its training log (on_step_end, then the log, then the save).
    ([("h", 0), 1, ("h", 2), 2, 3, 4, 3, ("h", 4), 4], [("h", 0), 1, ("h", 2), 2, 3, ("h", 4), 4]),
    ([("h", 0), 1, ("h", 2), 2, ("h", 2), 2], [("h", 0), 1, ("h", 2), 2]),  # redone from checkpoint-1: step 2 again
    ([1, 2, 3], [1, 2, 3]),                                    # a straight run is left alone
    ([("h", 0), 1, ("h", 1)], [("h", 0), 1, ("h", 1)]),          # a held-out record after its step's log
]


def _record(item, stage=None):
    if isinstance(item, tuple):
        return {"step": item[1], "stage": stage, "eval/accuracy": 0.5, "id": object.__repr__(item)}
    return {"step": item, "stage": stage, "loss": 0.0, "reward": float(item)}


def _shape(records):
    return [("h", r["step"]) if "eval/accuracy" in r else r["step"] for r in records]


@pytest.mark.parametrize("written, history", REDONE)
def test_replay_counts_each_redone_step_once(written, history):
    records = [_record(i) for i in written]
    assert _shape(without_redone(records)) == history
    # Stages count their own steps: stage two's step 1 after stage one's step 3 starts nothing over.
    staged = [_record(i, "one") for i in written] + [_record(i, "two") for i in written]
    assert _shape(without_redone(staged)) == history + history


def test_the_report_replays_what_the_resumed_run_logged(tmp_path):
    """metrics.jsonl with steps 3-4 logged twice (a crash after checkpoint-2, a resume): the replay sees
    the resumed run's values, once each, as the live monitor did."""
    records, _ = _records("diverge-lr")
    train = [r for r in records if is_train_log(r)]
    stale = [{**r, "reward": 123.0} for r in train[2:4]]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in train[:2] + stale + train[2:]))
    assert len(read_records(tmp_path / "metrics.jsonl")) == len(train) + 2
    run = load_run(tmp_path)
    assert [(r["step"], r["reward"]) for r in run.train_metrics] == [(r["step"], r["reward"]) for r in train]
