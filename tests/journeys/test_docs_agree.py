"""What SKILL.md says about the demo and the journeys matches the recipes and pages that exist."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _demo_sentence() -> str:
    text = " ".join((ROOT / "SKILL.md").read_text(encoding="utf-8").split())
    return re.search(r"`make demo` trains.*?\)", text).group(0)


def test_skill_describes_the_demo_with_the_recipe_stages():
    # SKILL.md said "format first, then correctness" while README and the recipe `make demo` trains (configs/cpu-demo-transfer.yaml) train one stage.
    stages = yaml.safe_load((ROOT / "configs" / "cpu-demo-transfer.yaml").read_text(encoding="utf-8")).get("stages") or []
    sentence = _demo_sentence()
    if not stages:
        assert "one stage" in sentence and "then correctness" not in sentence, sentence


def test_skill_links_every_journey_page():
    pages = sorted(p.name for p in (ROOT / "skill").glob("journey-*.md"))
    text = (ROOT / "SKILL.md").read_text(encoding="utf-8")
    assert pages and all(f"skill/{p}" in text for p in pages), pages
