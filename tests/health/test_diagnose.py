"""Diagnosis of run directories: findings from metrics, alerts, and the loss explanation."""
import json

import pytest

from grpokit.health.diagnose import DERIVED, diagnose, explain_loss, format_findings, load_run, read_jsonl
from grpokit.health.symptoms import SYMPTOMS, to_markdown
from tests.helpers.synthetic_runs import SCENARIOS, write_run


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_diagnose_names_the_one_problem(tmp_path, scenario):
    # The run dir carries max_completion_length in config.yaml, as a real run does.
    write_run(tmp_path, scenario)
    expected = SCENARIOS[scenario][0]
    # A reward that never varied is named too (a note derived from the problem, listed after it).
    problems = [f.rule for f in diagnose(tmp_path) if f.severity != "info" and f.rule not in DERIVED]
    assert problems == ([expected] if expected else [])


def test_findings_carry_cause_fix_and_steps(tmp_path):
    write_run(tmp_path, "kl_blowup")
    (finding,) = [f for f in diagnose(tmp_path) if f.rule == "kl_blowup"]
    assert finding.severity == "critical"
    # kl goes over kl_max at step 30; kl_steps (3) steps in a row confirm it: one step can spike on a small batch.
    assert finding.first_step == 32 and "learning_rate" in finding.fix
    assert "kl" in format_findings([finding])


def test_partial_last_line_is_tolerated(tmp_path):
    # A run still writing metrics.jsonl: the half line is skipped, the rest diagnosed.
    write_run(tmp_path, "all_truncated", partial_last_line=True)
    run = load_run(tmp_path)
    assert run.skipped_lines == 1 and len(run.metrics) == 60
    assert [f.rule for f in diagnose(run) if f.severity != "info"] == ["truncation"]


def test_live_alerts_are_merged(tmp_path):
    # The tracker's reward errors only reach alerts.jsonl; the diagnosis must show them.
    write_run(tmp_path, "healthy")
    alert = {"step": 7, "rule": "reward_unscorable", "severity": "warning", "message": "boom", "fix": "x"}
    (tmp_path / "alerts.jsonl").write_text(json.dumps(alert) + "\n" + '{"rule": "made_up"}\n')
    (finding,) = [f for f in diagnose(tmp_path) if f.severity != "info"]
    assert finding.rule == "reward_unscorable" and finding.first_step == 7 and finding.sources == ["alerts"]


def test_empty_dir_says_no_metrics(tmp_path):
    assert [f.rule for f in diagnose(tmp_path)] == ["no_metrics"]


def test_zero_loss_is_explained(tmp_path):
    # zero_std writes loss == 0 at every step: the diagnosis explains it (info), not as an error.
    write_run(tmp_path, "zero_std")
    notes = {f.rule: f for f in diagnose(tmp_path)}
    assert notes["loss_zero"].severity == "info"
    assert "beta" in notes["loss_zero"].cause


def test_rising_loss_is_called_normal(tmp_path):
    write_run(tmp_path, "healthy")
    path = tmp_path / "metrics.jsonl"
    records, _ = read_jsonl(path)
    for r in records:
        r["loss"] = 0.001 * r["step"]  # beta * kl rising with the step
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    rules = [f.rule for f in diagnose(tmp_path)]
    assert rules == ["loss_rising"]


@pytest.mark.parametrize("part,needle", [
    ("start", "add up to 0"),       # advantages are zero-mean in each group
    ("rising", "KL"),               # beta * KL grows as the model moves
    ("zero", "num_iterations = 1"), # ratio is 1 on a single pass
])
def test_explain_loss_parts(part, needle):
    assert needle in explain_loss(part=part)


def test_explain_loss_mentions_the_users_beta():
    assert "0.04" in explain_loss(beta=0.04, part="rising")
    with pytest.raises(ValueError):
        explain_loss(part="nonsense")


def test_table_markdown_has_every_rule():
    md = to_markdown()
    assert md.count("\n") == len(SYMPTOMS) + 2
    for s in SYMPTOMS:
        assert f"`{s.rule}`" in md


def test_length_limit_read_off_the_metrics(tmp_path):
    # config.yaml without max_completion_length (a profile default): the limit is where clipping happened.
    write_run(tmp_path, "length_drift")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("\n".join(l for l in cfg.read_text().splitlines() if "max_completion_length" not in l))
    records, _ = read_jsonl(tmp_path / "metrics.jsonl")
    for r in records:
        if r["completions/clipped_ratio"] > 0:
            r["completions/max_length"] = 128.0  # clipped completions are exactly at the limit
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert [f.rule for f in diagnose(tmp_path) if f.severity != "info"] == ["length_drift"]
