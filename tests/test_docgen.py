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
