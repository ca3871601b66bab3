"""`grpokit train --dry-run` checks a recipe and starts nothing: no model, no reward worker process."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter, so no pool left by another test can be mistaken for one the dry run
# started; prints the pids of this process's live children once the command has returned.
CHILDREN = textwrap.dedent("""
    import glob, sys
    from typer.testing import CliRunner
    from grpokit.cli import app

    {action}
    kids = set()
    for path in glob.glob("/proc/self/task/*/children"):
        kids.update(open(path).read().split())
    print("children:", sorted(kids))
""")


def children_after(action: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", CHILDREN.format(action=action)], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(line for line in out.stdout.splitlines() if line.startswith("children:"))
    return eval(line.split(":", 1)[1])  # a list literal printed just above


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads child processes from /proc (Linux)")
def test_the_probe_sees_a_started_worker():
    # The check below can fail: a reward pool that has run once leaves its workers alive.
    started = ("from grpokit.rewards import get\n"
               "assert get('math_equivalence')(['<answer>2</answer>'], answer=['2']) == [1.0]")
    assert children_after(started)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads child processes from /proc (Linux)")
@pytest.mark.parametrize("recipe", ["math-multistage.yaml", "code-generation.yaml"])  # math and code sandboxes
def test_dry_run_starts_no_process(recipe):
    run = (f"result = CliRunner().invoke(app, ['train', 'configs/{recipe}', '--dry-run'])\n"
           "assert result.exit_code == 0, result.output")
    assert children_after(run) == []
