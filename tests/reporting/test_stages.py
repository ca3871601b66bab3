"""A multi-stage run told right: every record names its stage, findings say which stage's step, the curves
mark where each stage began, and a run whose last stage finished reads "finished".

Each stage's trainer counts its own steps, so "step 2" alone names one place per stage: the report said
"(steps 2, 2)", drew stage two's alert at stage one's step 2, and called the finished run "still running".
"""
from __future__ import annotations

import json

import yaml

from grpokit.health.diagnose import diagnose, format_findings, load_run
from grpokit.health.run_status import post_mortem, write_status
from grpokit.reporting.report import stage_starts, stage_x, write_report
from grpokit.run_directory import layout

STAGES = ("format", "correctness")


def _log(stage, step):
    # Every completion cut at the limit: truncation holds from the first step of each stage. The rewards
    # still vary (an all-zero reward is no_learning_signal's, which names the cut itself).
    return {"step": step, "stage": stage, "loss": 0.0, "grad_norm": 0.1, "reward": 0.5, "reward_std": 0.3,
            "frac_reward_zero_std": 0.0, "completions/clipped_ratio": 1.0, "completions/mean_length": 8.0,
            "completions/max_length": 8.0}


def _two_stage_run(tmp_path, finished=True, live_alerts=True):
    config = {"name": "two", "training": {"max_steps": 2, "max_completion_length": 8, "logging_steps": 1},
              "stages": [{"name": s, "max_steps": 2, "training": {}} for s in STAGES], "health": {}}
    (tmp_path / layout.CONFIG).write_text(yaml.safe_dump(config))
    records = [_log(stage, step) for stage in STAGES for step in (1, 2)]
    (tmp_path / layout.METRICS).write_text("".join(json.dumps(r) + "\n" for r in records))
    if live_alerts:
        alerts = [{"step": 2, "stage": s, "rule": "truncation", "severity": "warning", "message": "cut",
                   "fix": "raise"} for s in STAGES]
        (tmp_path / layout.ALERTS).write_text("".join(json.dumps(a) + "\n" for a in alerts))
    for stage in STAGES if finished else STAGES[:1]:
        final = tmp_path / layout.CHECKPOINTS / stage / layout.FINAL
        final.mkdir(parents=True)
        (final / layout.STAGE_DONE).write_text(json.dumps({"step": 2, "max_steps": 2}))
    return tmp_path


def test_findings_name_each_stages_step(tmp_path):
    findings = diagnose(_two_stage_run(tmp_path))
    truncation = next(f for f in findings if f.rule == "truncation")
    assert truncation.stages == ["format", "correctness"], truncation
    text = format_findings([truncation])
    assert "(stage format step 2, stage correctness step 2)" in text, text  # was "(steps 2, 2)"


def test_the_replay_starts_each_stage_on_its_own_baseline(tmp_path):
    """Live, each stage had its own monitor; the replay too, so each stage's first steps are its own."""
    findings = diagnose(_two_stage_run(tmp_path, live_alerts=False))
    truncation = next(f for f in findings if f.rule == "truncation")
    assert truncation.count == 2 and truncation.sources == ["metrics"]  # one alert per stage, as live


def test_a_finished_multi_stage_run_reads_finished(tmp_path):
    run_dir = _two_stage_run(tmp_path)
    write_status(run_dir, {"state": "running", "pid": 2 ** 22 + 12345, "host": __import__("socket").gethostname(),
                           "step": 2, "updated": 0})
    # A status left "running" by a process that is gone, after the last stage's done marker: finished, not killed.
    assert load_run(run_dir).finished
    assert post_mortem(run_dir, finished=True) is None
    assert not any(f.rule in ("run_killed", "out_of_memory") for f in diagnose(run_dir))
    page = write_report(run_dir)["html"].read_text()
    assert "finished (all 2 stages)" in page and "still running" not in page


def test_an_unfinished_multi_stage_run_does_not_read_finished(tmp_path):
    run_dir = _two_stage_run(tmp_path, finished=False)
    assert not load_run(run_dir).finished
    page = write_report(run_dir)["html"].read_text()
    assert "not finished" in page


def test_a_raised_max_steps_makes_a_finished_run_unfinished_until_it_trains_them(tmp_path):
    run_dir = _two_stage_run(tmp_path)
    config = yaml.safe_load((run_dir / layout.CONFIG).read_text())
    config["stages"][1]["max_steps"] = 4
    (run_dir / layout.CONFIG).write_text(yaml.safe_dump(config))
    assert not load_run(run_dir).finished


def test_the_curves_mark_stage_boundaries_and_draw_alerts_in_their_stage(tmp_path):
    run = load_run(_two_stage_run(tmp_path))
    records = run.curve_metrics
    assert stage_starts(records) == [(0.5, "format"), (2.5, "correctness")]
    where = stage_x(records)
    assert where[("format", 2)] == 2 and where[("correctness", 2)] == 4
    from grpokit.reporting.report import _alert_steps

    assert sorted(_alert_steps(run, where)["truncation"]) == [2, 4]  # stage two's step 2 drawn at x 4


def test_the_alerts_table_has_the_stage(tmp_path):
    page = write_report(_two_stage_run(tmp_path))["html"].read_text()
    assert "<th>stage</th><th>step</th>" in page and "<td>correctness</td>" in page
