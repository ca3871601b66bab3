"""The report shows each finding's evidence (the number against its threshold, where the rule stood
down) and the rules that stayed quiet although part of their condition held, with why."""
from __future__ import annotations

import shutil
from pathlib import Path

from grpokit.health.diagnose import diagnosis, format_findings
from grpokit.reporting.report import write_report

FIXTURES = Path(__file__).resolve().parents[1] / "health" / "fixtures"


def test_a_finding_shows_its_number_against_its_threshold_and_its_stand_downs():
    [collapse] = [f for f in diagnosis(FIXTURES / "collapse-fixed-answer").findings if f.rule == "collapse"]
    assert collapse.value < collapse.threshold  # entropy under entropy_drop x its start
    assert [(s["reason"], s["ranges"]) for s in collapse.stood_down] == [("each group has its own answer", [[6, 6]])]
    text = format_findings([collapse])
    assert f"measured: {collapse.value:.4g} against a threshold of {collapse.threshold:.4g}" in text
    assert "stood down (step 6): each group has its own answer" in text


def test_the_rules_that_stood_down_say_why():
    # The words demo: every completion cut from step 10 as the model writes its answer line and talks on.
    quiet = {(s.rule, s.reason): s for s in diagnosis(FIXTURES / "words-seed2-all-cut").stood_down}
    assert quiet[("truncation", "the answer fits before the cut")].where() == "steps 27-40"
    assert "held-out accuracy rose" in {reason for rule, reason in quiet if rule == "reward_stuck"}


def test_an_explained_symptom_names_its_cause():
    quiet = {(s.rule, s.reason) for s in diagnosis(FIXTURES / "collapse-fixed-answer").stood_down}
    assert ("no_learning_signal", "explained by collapse") in quiet


def test_the_html_report_shows_the_evidence(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "collapse-fixed-answer", run)
    html = write_report(run)["html"].read_text(encoding="utf-8")
    assert "<b>Measured:</b> 0.4338 against a threshold of 0.4613" in html
    assert "<b>Stood down</b> (step 6): each group has its own answer" in html
    assert "<h2>Rules that stood down</h2>" in html and "explained by collapse" in html
