"""The generated skill pages match the code they are generated from."""
from pathlib import Path

from grpokit import docgen
from grpokit.rewards import names

ROOT = Path(__file__).resolve().parents[1]


def test_generated_pages_are_current():
    # A reward or symptom changed without `python -m grpokit.docgen`: the docs would lie.
    assert docgen.main(["--check", "--root", str(ROOT)]) == 0


def test_catalogue_lists_every_registered_reward():
    page = (ROOT / "skill" / "rewards.md").read_text()
    for name in names():
        assert f"### `{name}`" in page


def test_troubleshooting_lists_every_health_rule():
    from grpokit.symptoms import SYMPTOMS

    page = (ROOT / "skill" / "troubleshooting.md").read_text()
    for symptom in SYMPTOMS:
        assert symptom.fix.split(".")[0][:40] in page.replace("\\|", "|")
