"""The generated skill pages match the code they are generated from.

Checked in a fresh interpreter: other tests register throw-away rewards in this one.
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout


def test_generated_pages_are_current():
    # A reward or symptom changed without `python -m grpokit.docgen`: the docs would lie.
    proc = subprocess.run([sys.executable, "-m", "grpokit.docgen", "--check", "--root", str(ROOT)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_catalogue_lists_every_registered_reward():
    names = json.loads(fresh("import json; from grpokit.rewards import names; print(json.dumps(names()))"))
    assert len(names) >= 24
    page = (ROOT / "skill" / "rewards.md").read_text()
    for name in names:
        assert f"### `{name}`" in page


def test_troubleshooting_lists_every_health_rule():
    from grpokit.health.symptoms import SYMPTOMS

    page = (ROOT / "skill" / "troubleshooting.md").read_text()
    for symptom in SYMPTOMS:
        assert f"`{symptom.rule}`" in page


def test_every_after_run_rule_says_when_it_fires_with_its_parameters():
    from grpokit.config.health_params import LossRising
    from grpokit.docgen import alert_thresholds
    from grpokit.health.table import TABLE

    after = [rule for rule in TABLE if rule.after_run is not None]
    assert {r.id for r in after} >= {"reward_constant", "loss_zero", "loss_rising", "no_metrics", "run_interrupted",
                                     "run_failed", "run_killed", "run_status_unknown", "out_of_memory"}
    rows = {line.split(" | ")[0][3:].split("`")[0]: line for line in alert_thresholds().splitlines()
            if line.startswith("| `") and line.count(" | ") == 2}
    for rule in after:
        assert rule.describe_after_run(), f"{rule.id} has no threshold text"
        assert rule.describe_after_run() in rows[rule.id]
    # The text is filled from the parameters, as a live rule's is.
    assert "at least 9 logged steps" in TABLE[[r.id for r in TABLE].index("loss_rising")].describe_after_run(
        LossRising(min_steps=9))


def test_architecture_page_lists_what_the_code_has():
    # The generated blocks of docs/architecture.md: config keys, commands, run files, rewards.
    import dataclasses

    from grpokit.config.run_config import RewardSpec, RunConfig
    from grpokit.run_directory import layout

    page = (ROOT / "docs" / "architecture.md").read_text()
    for f in dataclasses.fields(RunConfig) + dataclasses.fields(RewardSpec):
        assert f"| `{f.name}` |" in page, f.name
    for name in layout.ALL:
        assert f"| `{name}` |" in page, name
    for command in ("train", "doctor", "report", "rewards probe", "judge check"):
        assert f"| `grpokit {command}` |" in page, command


def test_prose_that_names_code_is_checked(tmp_path):
    # Hand-written prose drifts: a wrong reward count, a module that moved, a dotted name that is gone.
    from grpokit import rewards
    from grpokit.docgen import prose_errors

    count = len(rewards.names())
    (tmp_path / "skill").mkdir()
    (tmp_path / "README.md").write_text(f"{count} rewards; {count - 2}+ reward functions; a config with 3 rewards.\n"
                                        "See `health/rules.py` and grpokit.rewards.registry.register.\n")
    (tmp_path / "skill" / "x.md").write_text(f"{count - 1} rewards. `health/nowhere.py`. grpokit.health.gone\n"
                                             "<!-- tests/journeys/test_gone.py runs these; so does tests/here.py -->\n")
    src = tmp_path / "src" / "grpokit" / "health"
    src.mkdir(parents=True)
    (src / "rules.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "here.py").write_text("")
    errors = prose_errors(tmp_path)
    assert len(errors) == 4, errors
    assert any("skill/x.md: names tests/journeys/test_gone.py" in e for e in errors)
    assert any(f"'{count - 1} rewards'" in e for e in errors)
    assert any("health/nowhere.py" in e for e in errors)
    assert any("grpokit.health.gone" in e for e in errors)
    assert not any("README.md" in e for e in errors)
