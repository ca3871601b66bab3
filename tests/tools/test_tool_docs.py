"""skill/tools.md's "Adding a tool" works as written: its my_tools.py and my_tools.yaml, used the way the page says.

test_skill_docs.py runs the page's Python blocks in one interpreter; this test takes
the two files the page tells a user (or a coding assistant) to write, puts them in
a fresh folder, and runs the page's check command on them, so the tool file, the
config and the command cannot drift apart.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "skill" / "tools.md"
FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```", re.DOTALL | re.MULTILINE)


def named_blocks() -> dict[str, str]:
    """Code blocks of the page whose first line is a comment naming a file (`# my_tools.py`)."""
    section = PAGE.read_text().split("## Adding a tool", 1)[1]
    out = {}
    for m in FENCE.finditer(section):
        first = m["body"].splitlines()[0]
        if first.startswith("# ") and first[2:].strip().endswith((".py", ".yaml")):
            out[first[2:].strip()] = m["body"]
    return out


def commands() -> list[str]:
    section = PAGE.read_text().split("## Adding a tool", 1)[1]
    [body] = [m["body"] for m in FENCE.finditer(section) if m["lang"] == "bash"]
    return [line.split("#")[0].strip() for line in body.splitlines() if line.strip()]


def grpokit(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "grpokit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_page_names_both_files_and_the_check():
    assert set(named_blocks()) == {"my_tools.py", "my_tools.yaml"}
    assert commands()[0] == "grpokit train my_tools.yaml --dry-run"


def test_dry_run_of_the_page_files_builds_the_tools(tmp_path):
    for name, body in named_blocks().items():
        (tmp_path / name).write_text(body)
    proc = grpokit(commands()[0].split()[1:], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "unit_price" in proc.stdout and "notebook" in proc.stdout


def test_a_broken_tool_from_the_page_is_an_exit_2_that_says_what_to_change(tmp_path):
    files = named_blocks()
    # The mistakes the page promises --dry-run catches: a param the tool does not take, a missing docstring.
    (tmp_path / "my_tools.py").write_text(files["my_tools.py"])
    (tmp_path / "my_tools.yaml").write_text(files["my_tools.yaml"].replace("{limit: 5}", "{limt: 5}"))
    proc = grpokit(["train", "my_tools.yaml", "--dry-run"], tmp_path)
    assert proc.returncode == 2 and "has no param(s) ['limt']" in proc.stdout + proc.stderr
    undocumented = re.sub(r'    """Price of one item.*?"""\n', "", files["my_tools.py"], flags=re.DOTALL)
    assert undocumented != files["my_tools.py"]
    (tmp_path / "my_tools.py").write_text(undocumented)
    (tmp_path / "my_tools.yaml").write_text(files["my_tools.yaml"])
    proc = grpokit(["train", "my_tools.yaml", "--dry-run"], tmp_path)
    assert proc.returncode == 2 and "needs a docstring" in proc.stdout + proc.stderr
