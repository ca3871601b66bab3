"""The report draws the judge's latency per step and its share of step time, only for runs that judged."""
from grpokit.health.rules import HealthConfig, replay
from grpokit.reporting.report import panels, write_report
from tests.helpers.synthetic_runs import history, write_run


def test_judge_panels_only_when_a_judge_logged():
    hc = HealthConfig(max_completion_length=100)
    assert not any(p.title.startswith("judge") for p in panels(history("healthy"), hc))
    by_title = {p.title: p for p in panels(history("judge_slow"), hc)}
    latency = by_title["judge latency per step (s)"]
    assert latency.keys == ["judge/llm_judge/latency_s", "judge/llm_judge/latency_max_s"] and latency.from_zero
    share = by_title["judge share of step time; unscored share"]
    assert share.band == (0.0, hc.params("judge_slow").step_share) and "judge_failing" in share.rules


def test_a_dead_judge_run_reports_one_alert(tmp_path):
    # The judge dies halfway: judge_failing (critical) fires once, at the first dead step, and the
    # report renders with the alert marked.
    alerts = replay(history("judge_failing", steps=40), HealthConfig())
    assert [(a.rule, a.step) for a in alerts] == [("judge_failing", 20)]
    write_run(tmp_path, "judge_failing", steps=40)
    assert "judge_failing" in write_report(tmp_path)["html"].read_text()
