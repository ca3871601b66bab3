"""Every Python and shell snippet in SKILL.md and skill/*.md runs.

A block opts out only with `<!-- no-test: reason -->` on the line before its fence.
Python blocks of one page run in order in one fresh interpreter (later blocks
may use earlier names); shell blocks run one by one with bash -e in a scratch
directory, with this checkout's `grpokit` first on PATH.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [p for p in [ROOT / "SKILL.md", *sorted((ROOT / "skill").glob("*.md"))] if p.exists()]
FENCE = re.compile(r"^(?:<!--\s*no-test:\s*(?P<why>[^>]*?)\s*-->\s*\n)?```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```", re.DOTALL | re.MULTILINE)


def blocks(page: Path) -> list[tuple[str, str, str | None]]:
    return [(m["lang"], m["body"], m["why"]) for m in FENCE.finditer(page.read_text())]


def env() -> dict:
    e = dict(os.environ)
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), e.get("PATH", "")])
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), e.get("PYTHONPATH", "")])
    e["GRPOKIT_ROOT"] = str(ROOT)
    return e


def test_every_opt_out_gives_a_reason():
    for page in PAGES:
        for lang, _, why in blocks(page):
            assert why is None or why.strip(), f"{page.name}: a no-test marker needs a reason"


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=lambda p: p.name)
def test_python_snippets_run(page, tmp_path):
    code = [body for lang, body, why in blocks(page) if lang in ("python", "py") and why is None]
    if not code:
        pytest.skip(f"{page.name} has no Python snippets")
    script = tmp_path / "snippets.py"
    script.write_text("\n\n".join(code))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{page.name}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"


SHELL = [(p, i, body) for p in PAGES if p.exists() for i, (lang, body, why) in enumerate(blocks(p))
         if lang in ("bash", "sh", "shell", "console") and why is None]


@pytest.mark.parametrize("page,index,body", SHELL, ids=[f"{p.name}#{i}" for p, i, _ in SHELL])
def test_shell_snippets_run(page, index, body, tmp_path):
    # Snippets name recipes as a user in a checkout would: configs/<recipe>.yaml.
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=tmp_path, env=env(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{page.name} block {index}:\n{body}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
